package ledger

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
	"unsafe"
)

// cpuTimer reports the CPU nanoseconds per op ("cpu-ns/op") beside the wall
// time, which a loaded machine inflates.
type cpuTimer struct {
	b     *testing.B
	start int64
}

func startCPU(b *testing.B) cpuTimer {
	b.ReportAllocs()
	b.ResetTimer()
	return cpuTimer{b, cpuNanos()}
}

func (c cpuTimer) stop() {
	c.b.StopTimer()
	if d := cpuNanos() - c.start; d > 0 && c.b.N > 0 {
		c.b.ReportMetric(float64(d)/float64(c.b.N), "cpu-ns/op")
	}
}

// benchLedger builds a cluster of 1,000 tenants: tenant "big" with `jobs`
// active jobs (demands 1, 2, 4 and 8: four θ-groups), every other tenant
// with two active jobs, half the jobs running. Its 250,000 GPUs hold the
// running jobs of either size (about 126,000 GPUs at 100k jobs): a cluster
// running more than it has would make every event of the larger one also
// record GPUs allocated beyond capacity, which the smaller one never does.
func benchLedger(b *testing.B, mode Mode, jobs int) (*Ledger, []JobID, time.Time) {
	b.Helper()
	l, err := New(Config{Mode: mode, Capacity: 250_000, Start: t0})
	if err != nil {
		b.Fatal(err)
	}
	at := t0
	tick := func() time.Time { at = at.Add(time.Millisecond); return at }
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	for i := range 1000 {
		id := TenantID(fmt.Sprintf("tenant-%04d", i))
		if i == 0 {
			id = "big"
		}
		must(l.AddTenant(tick(), id, float64(1+i%3)))
		if i > 0 {
			for k := range 2 {
				j := JobID(fmt.Sprintf("%s/%d", id, k))
				must(l.Submit(tick(), j, id, GPUs(1<<k), 1))
				if k == 0 {
					must(l.Start(tick(), j))
				}
			}
		}
	}
	ids := make([]JobID, jobs)
	for i := range ids {
		ids[i] = JobID(fmt.Sprintf("big/%06d", i))
		must(l.Submit(tick(), ids[i], "big", GPUs(1<<(i%4)), 1))
		if i%2 == 0 {
			must(l.Start(tick(), ids[i]))
		}
	}
	return l, ids, at
}

// workingSet is the number of jobs the working-set variant of
// BenchmarkEventStartStop cycles through: the jobs of a burst of a
// scheduler's rounds, few enough that their records stay in cache.
const workingSet = 1024

// BenchmarkEventStartStop measures one Start or Stop of a job in the tenant
// with 10k or 100k active jobs, the clock moving 1 ms per event. The work of
// an event does not grow with the jobs of the tenant (no loop, no search
// depends on them); what grows is the memory an event reaches at random.
//
// Three variants separate the ledger's own cost from the memory's.
// "jobs=N" picks a job at random among all N, so most events miss the
// cache. "jobs=N/working-set=1024" picks at random among 1,024 jobs
// scattered through the tenant (records, table slots and ids all over the
// heap, but few enough to stay cached, as the jobs of a burst of rounds
// are): the ledger's own cost at that scale, which is what must not grow
// from 10k to 100k. "jobs=N/same-job" repeats the event on one job.
// "jobs=N/batch=100" applies the events of "jobs=N" a hundred at one time
// through StopAll and StartAll, whose lookups overlap.
//
// How the heap was laid out while the ledger was built also shows in the
// working-set variant: the collections of a build reuse freed memory, so
// the history pages the events go on to allocate land scattered through
// the heap. "jobs=N/working-set=1024/built-without-collector" is the same
// run on a ledger built with the collector off (it is on again, after one
// full collection, before the timer starts), so that the two figures
// together tell the layout's share from the ledger's.
//
// So that the figures explain themselves, each run also reports "load-ns":
// the latency of one dependent load at a random address in a buffer as large
// as the heap of the freshly built ledger (its records and tables: what a
// random event reaches into; the history appended later is only written at
// its tail), measured in the same run. A Start or Stop
// of a random job cannot avoid a few such loads (the job table, the job
// record, the page its breakpoint goes to, and the caller's id string, which
// is hashed), while the same-job variant repeats the event on one job of the
// same ledger, everything in cache: the fixed cost of an event at that
// scale.
func BenchmarkEventStartStop(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			l, ids, at := benchLedger(b, DemandAware, n)
			heap := liveHeap()
			toggleRandom(b, l, at, ids, func(k int) bool { return k%2 == 0 })
			reportLoadLatency(b, heap)
		})
		b.Run(fmt.Sprintf("jobs=%d/working-set=%d", n, workingSet), func(b *testing.B) {
			l, ids, at := benchLedger(b, DemandAware, n)
			toggleWorkingSet(b, l, at, ids)
		})
		b.Run(fmt.Sprintf("jobs=%d/working-set=%d/built-without-collector", n, workingSet), func(b *testing.B) {
			gc := debug.SetGCPercent(-1)
			l, ids, at := benchLedger(b, DemandAware, n)
			debug.SetGCPercent(gc)
			runtime.GC()
			toggleWorkingSet(b, l, at, ids)
		})
		b.Run(fmt.Sprintf("jobs=%d/batch=%d", n, eventBatch), func(b *testing.B) {
			l, ids, at := benchLedger(b, DemandAware, n)
			toggleBatches(b, l, at, ids, func(k int) bool { return k%2 == 0 })
		})
		b.Run(fmt.Sprintf("jobs=%d/same-job", n), func(b *testing.B) {
			l, ids, at := benchLedger(b, DemandAware, n)
			toggleRandom(b, l, at, ids[:1], func(int) bool { return true }) // job 0 starts out running
		})
	}
}

// scattered lays ids out in toggleRandom's scattered order (stride 7919),
// each with whether it runs at the start.
func scattered(ids []JobID, running func(int) bool) ([]JobID, []bool) {
	n := len(ids)
	seq := make([]JobID, n)
	on := make([]bool, n)
	for i := range seq {
		k := (i * 7919) % n
		seq[i], on[i] = ids[k], running(k)
	}
	return seq, on
}

// eventBatch is how many events BenchmarkEventStartStop's batch variant
// applies at one time: a round's grants and releases.
const eventBatch = 100

// toggleBatches is toggleRandom with the events applied eventBatch at a
// time, each batch at one time by a StopAll and a StartAll; an op is still
// one event.
func toggleBatches(b *testing.B, l *Ledger, at time.Time, ids []JobID, running func(int) bool) {
	seq, on := scattered(ids, running)
	starts, stops := make([]JobID, 0, eventBatch), make([]JobID, 0, eventBatch)
	c := startCPU(b)
	for i, k := 0, 0; i < b.N; i += eventBatch {
		at = at.Add(time.Millisecond)
		starts, stops = starts[:0], stops[:0]
		for range eventBatch {
			if on[k] {
				stops = append(stops, seq[k])
			} else {
				starts = append(starts, seq[k])
			}
			on[k] = !on[k]
			if k++; k == len(seq) {
				k = 0
			}
		}
		if err := l.StopAll(at, stops); err != nil {
			b.Fatal(err)
		}
		if err := l.StartAll(at, starts); err != nil {
			b.Fatal(err)
		}
	}
	c.stop()
}

// toggleWorkingSet is toggleRandom on workingSet jobs of ids (built by
// benchLedger) picked at random.
func toggleWorkingSet(b *testing.B, l *Ledger, at time.Time, ids []JobID) {
	set := rand.New(rand.NewPCG(3, 4)).Perm(len(ids))[:workingSet]
	sub := make([]JobID, workingSet)
	for i, k := range set {
		sub[i] = ids[k]
	}
	toggleRandom(b, l, at, sub, func(i int) bool { return set[i]%2 == 0 })
}

// toggleRandom times b.N events, each a Stop of a running job or a Start of
// a stopped one, on jobs of ids picked in a fixed scattered order (stride
// 7919); running(i) tells whether ids[i] runs at the start. The order is
// laid out before the timer starts, so that the loop reads its next id and
// state sequentially: a caller has the id of its event at hand, and what is
// timed is the ledger's work (hashing the id's bytes, finding the record,
// appending), not a cache miss on the benchmark's own slice or a division
// per event.
func toggleRandom(b *testing.B, l *Ledger, at time.Time, ids []JobID, running func(int) bool) {
	seq, on := scattered(ids, running)
	n := len(seq)
	c := startCPU(b)
	for i, k := 0, 0; i < b.N; i++ {
		at = at.Add(time.Millisecond)
		var err error
		if on[k] {
			err = l.Stop(at, seq[k])
		} else {
			err = l.Start(at, seq[k])
		}
		if err != nil {
			b.Fatal(err)
		}
		on[k] = !on[k]
		if k++; k == n {
			k = 0
		}
	}
	c.stop()
}

// liveHeap returns the bytes of heap in use (not forcing a collection, which
// would change the state the timed loop starts from).
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// reportLoadLatency reports as "load-ns" the time of one dependent load at a
// random cache line of a buffer of the given size (at most 1 GiB): what a
// cache miss costs on this machine at the benchmark's working-set size. It
// runs after the timer has stopped.
func reportLoadLatency(b *testing.B, size uint64) {
	const line = 8 // int64s per 64-byte cache line
	lines := int(min(size, 1<<30) / 64)
	if lines < 2 {
		return
	}
	next := make([]int64, lines*line)
	perm := rand.New(rand.NewPCG(1, 2)).Perm(lines)
	for i, p := range perm {
		next[p*line] = int64(perm[(i+1)%lines] * line)
	}
	p := int64(0)
	for range lines { // touch every line once, so no page fault is timed
		p = next[p]
	}
	const steps = 1 << 20
	start := cpuNanos() // CPU time, like cpu-ns/op: a busy machine would inflate wall time
	for range steps {
		p = next[p]
	}
	d := cpuNanos() - start
	if p < 0 {
		b.Fatal("unreachable")
	}
	if d > 0 {
		b.ReportMetric(float64(d)/steps, "load-ns")
	}
}

// BenchmarkEventSubmitFinish measures a Submit of a new job plus the Finish
// of an old one (two events per op) in the tenant with 10k or 100k active
// jobs: each changes the tenant's x_j, so every θ-group gets a breakpoint,
// but no job is touched.
func BenchmarkEventSubmitFinish(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, mode := range []Mode{DemandAware, QuotaShare} {
			b.Run(fmt.Sprintf("jobs=%d/%v", n, mode), func(b *testing.B) {
				l, ids, at := benchLedger(b, mode, n)
				fresh, ids := freshIDs(b, ids)
				c := startCPU(b)
				submitFinish(b, l, fresh, ids, at, false)
				c.stop()
			})
		}
	}
}

// freshIDs returns b.N new job ids, and ids followed by them: the order in
// which submitFinish finishes jobs.
func freshIDs(b *testing.B, ids []JobID) (fresh, all []JobID) {
	fresh = make([]JobID, b.N)
	for i := range fresh {
		fresh[i] = JobID(fmt.Sprintf("new/%d", i))
	}
	return fresh, append(ids, fresh...)
}

// submitFinish runs b.N cycles of Submit of fresh[i] (tenant "big") and
// Finish of ids[i], Forgetting it at once if forget; the clock moves 1 ms
// per cycle from at.
func submitFinish(b *testing.B, l *Ledger, fresh, ids []JobID, at time.Time, forget bool) {
	for i := 0; i < b.N; i++ {
		at = at.Add(time.Millisecond)
		if err := l.Submit(at, fresh[i], "big", GPUs(1<<(i%4)), 1); err != nil {
			b.Fatal(err)
		}
		if err := l.Finish(at, ids[i], Completed); err != nil {
			b.Fatal(err)
		}
		if forget {
			if err := l.Forget(ids[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkEventSubmitFinishForget measures the cycle of a long-lived
// ledger: Submit a new job, Finish an old one and, with forget=true, Forget
// it at once (three events per op), in the tenant with 10k active jobs. It
// reports the heap each cycle leaves behind ("retained-B/op", after a
// collection): with Forget only the tenant's and the cluster's breakpoints,
// a few bytes (fewer than a fresh pending job's record saves over a running
// old one's, so the figure comes out negative), without it the finished
// job's whole record as well (about 300 bytes), in a job table that grows
// and is slower to reach.
func BenchmarkEventSubmitFinishForget(b *testing.B) {
	for _, forget := range []bool{false, true} {
		b.Run(fmt.Sprintf("forget=%v", forget), func(b *testing.B) {
			l, ids, at := benchLedger(b, DemandAware, 10_000)
			fresh, ids := freshIDs(b, ids)
			runtime.GC()
			before := liveHeap()
			c := startCPU(b)
			submitFinish(b, l, fresh, ids, at, forget)
			c.stop()
			runtime.GC()
			// signed: a cycle may leave less than it found
			b.ReportMetric(float64(int64(liveHeap())-int64(before))/float64(b.N), "retained-B/op")
			runtime.KeepAlive(l)
		})
	}
}

// BenchmarkEventCapacity measures SetCapacity with 1,000 tenants: every
// quota changes, O(T·G).
func BenchmarkEventCapacity(b *testing.B) {
	l, _, at := benchLedger(b, DemandAware, 10_000)
	c := startCPU(b)
	for i := 0; i < b.N; i++ {
		at = at.Add(time.Second)
		if err := l.SetCapacity(at, GPUs(250_000+i%2)); err != nil {
			b.Fatal(err)
		}
	}
	c.stop()
}

// BenchmarkQueryDeepHistory measures a tenant and a job account over a
// one-hour window in the middle of a history of 1M breakpoints, and View
// lookups at Now().
func BenchmarkQueryDeepHistory(b *testing.B) {
	l, err := New(Config{Capacity: 64, Start: t0})
	if err != nil {
		b.Fatal(err)
	}
	_ = l.AddTenant(t0, "t", 1)
	_ = l.AddTenant(t0, "u", 1)
	_ = l.Submit(t0, "j", "t", 8, 1)
	_ = l.Submit(t0, "k", "t", 4, 1)
	const events = 1_000_000
	for i := 1; i <= events; i++ {
		at := t0.Add(time.Duration(i) * time.Second)
		if i%2 == 1 {
			err = l.Start(at, "j")
		} else {
			err = l.Stop(at, "j")
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	from := t0.Add(events / 2 * time.Second)
	to := from.Add(time.Hour)
	b.Run("TenantAccount", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := l.TenantAccount("t", from, to); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("JobAccount", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := l.JobAccount("j", from, to); err != nil {
				b.Fatal(err)
			}
		}
	})
	v := l.View(l.Now())
	b.Run("View.TenantAccount", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, ok := v.TenantAccount("t"); !ok {
				b.Fatal("missing")
			}
		}
	})
	// what a scheduler asks of every candidate, every round: ρ_job over
	// the job's life so far
	b.Run("View.JobAccount", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, ok := v.JobAccount("j"); !ok {
				b.Fatal("missing")
			}
		}
	})
}

// BenchmarkEventStartStopHot toggles one job of a one-tenant ledger: the
// fixed cost of an event when every record it touches is in cache, to set
// beside BenchmarkEventStartStop, whose extra cost is memory latency.
func BenchmarkEventStartStopHot(b *testing.B) {
	l, err := New(Config{Capacity: 64, Start: t0})
	if err != nil {
		b.Fatal(err)
	}
	_ = l.AddTenant(t0, "t", 1)
	_ = l.Submit(t0, "j", "t", 8, 1)
	at := t0
	c := startCPU(b)
	for i := 0; i < b.N; i++ {
		at = at.Add(time.Millisecond)
		if i%2 == 0 {
			err = l.Start(at, "j")
		} else {
			err = l.Stop(at, "j")
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	c.stop()
}

// floorRec stands for a job record in BenchmarkLookupFloor: as large as the
// ledger's, allocated one by one like it.
type floorRec struct {
	on bool
	_  [unsafe.Sizeof(job{}) - 1]byte
}

// BenchmarkLookupFloor is the least an event on a job named by its id can
// cost at the scale of BenchmarkEventStartStop: find the record in a map
// keyed by the same ids and write one byte of it, on the same jobs in the
// same order (all N at random, or the same 1,024 scattered ones). No ledger
// can do less per event, so the part of BenchmarkEventStartStop's figures
// that grows from 10k to 100k jobs is measured here, apart from the
// ledger's own work.
func BenchmarkLookupFloor(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		ids := make([]JobID, n)
		recs := make(map[JobID]*floorRec, n)
		for i := range ids {
			ids[i] = JobID(fmt.Sprintf("big/%06d", i))
			recs[ids[i]] = new(floorRec)
		}
		run := func(b *testing.B, ids []JobID) {
			c := startCPU(b)
			for i := 0; i < b.N; i++ {
				r, ok := recs[ids[(i*7919)%len(ids)]]
				if !ok {
					b.Fatal("unknown id")
				}
				r.on = !r.on
			}
			c.stop()
		}
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) { run(b, ids) })
		b.Run(fmt.Sprintf("jobs=%d/working-set=%d", n, workingSet), func(b *testing.B) {
			set := rand.New(rand.NewPCG(3, 4)).Perm(n)[:workingSet]
			sub := make([]JobID, workingSet)
			for i, k := range set {
				sub[i] = ids[k]
			}
			run(b, sub)
		})
	}
}

// BenchmarkViewJobAccount asks a View for the lifetime account of every job
// of the tenant with 10k or 100k active jobs (benchLedger), in a shuffled
// order laid out before timing: what a scheduling round asks of each of its
// candidates. An op is one lookup. The work is O(1) at Now() (the last
// breakpoint of the job's alloc series and of its θ-group's series); what
// grows from 10k to 100k is the memory each lookup reaches (table slot, job
// record, θ-group), as in BenchmarkEventStartStop.
func BenchmarkViewJobAccount(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			v, order := shuffledView(b, n)
			c := startCPU(b)
			k := 0
			for i := 0; i < b.N; i++ {
				if _, ok := v.JobAccount(order[k]); !ok {
					b.Fatal("unknown id")
				}
				if k++; k == len(order) { // no division per lookup
					k = 0
				}
			}
			c.stop()
		})
	}
}

// BenchmarkViewAppendJobAccounts is BenchmarkViewJobAccount through
// AppendJobAccounts, 100 ids at a time (a tenant's candidates in a large
// round); an op is still one account.
func BenchmarkViewAppendJobAccounts(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			v, order := shuffledView(b, n)
			const batch = 100
			order = order[:len(order)/batch*batch]
			dst := make([]Account, 0, batch)
			c := startCPU(b)
			k := 0
			for i := 0; i < b.N; i += batch {
				var ok bool
				if dst, ok = v.AppendJobAccounts(dst[:0], order[k:k+batch]); !ok {
					b.Fatal("unknown id")
				}
				if k += batch; k == len(order) {
					k = 0
				}
			}
			c.stop()
		})
	}
}

// shuffledView returns the View at Now() of benchLedger's ledger with n
// jobs in its large tenant and those jobs' ids in a shuffled order, after
// a collection.
func shuffledView(b *testing.B, n int) (View, []JobID) {
	l, ids, _ := benchLedger(b, QuotaShare, n)
	order := make([]JobID, len(ids))
	for i, k := range rand.New(rand.NewPCG(5, 6)).Perm(len(ids)) {
		order[i] = ids[k]
	}
	runtime.GC()
	return l.View(l.Now()), order
}
