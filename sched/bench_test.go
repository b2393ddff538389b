package sched

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
)

// benchRound builds a round at the scale of a large shared cluster:
// 10,000 nodes × 8 GPUs, 1,000 tenants, 100,000 candidates. busy is the
// fraction of GPUs held by running jobs before the round; a fiftieth of
// the running jobs expire now and are candidates, the rest of the
// candidates are pending. Demands follow a production-like mix (mostly 1
// GPU, some 2-8, a few 16-32).
func benchRound(b testing.TB, busy float64) (*placement.Cluster, Input) {
	const (
		nodes      = 10_000
		tenants    = 1_000
		candidates = 100_000
	)
	rng := rand.New(rand.NewPCG(1, 2))
	ns := make([]placement.Node, nodes)
	for i := range ns {
		ns[i] = placement.Node{ID: fmt.Sprintf("node-%05d", i), GPUs: 8, Topology: []string{fmt.Sprintf("rack-%03d", i/40)}}
	}
	cl, err := placement.NewCluster(ns)
	if err != nil {
		b.Fatal(err)
	}
	demand := func() int {
		switch x := rng.IntN(100); {
		case x < 60:
			return 1
		case x < 75:
			return 2
		case x < 85:
			return 4
		case x < 97:
			return 8
		case x < 99:
			return 16
		default:
			return 32
		}
	}
	acc := newAccounts()
	for k := range tenants {
		fair := ledger.GPUSeconds(1e6 * (1 + rng.Float64()))
		acc.tenant(ledger.TenantID(fmt.Sprintf("tenant-%04d", k)), ledger.GPUSeconds(rng.Float64())*2*fair, fair, 80)
	}
	t := func() ledger.TenantID { return ledger.TenantID(fmt.Sprintf("tenant-%04d", rng.IntN(tenants))) }
	var cands []Candidate
	target := int(busy * float64(cl.Capacity()))
	for j := 0; cl.Capacity()-cl.Free() < target; j++ {
		id := ledger.JobID(fmt.Sprintf("run-%06d", j))
		d := demand()
		q, err := cl.Place(d)
		if err != nil {
			continue
		}
		if err := cl.Allocate(string(id), q); err != nil {
			b.Fatal(err)
		}
		if j%50 == 0 {
			acc.job(id, ledger.Rho(rng.Float64()*2))
			cands = append(cands, Candidate{Job: id, Tenant: t(), Demand: ledger.GPUs(d), Submit: t0.Add(-time.Duration(rng.IntN(1e6)) * time.Second), Running: true, Placement: q, Leases: 1 + rng.IntN(20)})
		}
	}
	for j := 0; len(cands) < candidates; j++ {
		id := ledger.JobID(fmt.Sprintf("job-%06d", j))
		acc.job(id, ledger.Rho(rng.Float64()))
		cands = append(cands, Candidate{Job: id, Tenant: t(), Demand: ledger.GPUs(demand()), Submit: t0.Add(-time.Duration(rng.IntN(1e6)) * time.Second), Leases: rng.IntN(2)})
	}
	return cl, Input{Accounts: acc, Candidates: cands, Lease: lease}
}

// BenchmarkRound measures one round with 1,000 tenants, 100,000 candidates
// and 10,000 nodes (80,000 GPUs), from an idle cluster and from one that is
// 90 % busy. The clone of the cluster each iteration needs is excluded.
func BenchmarkRound(b *testing.B) {
	for _, bc := range []struct {
		name   string
		busy   float64
		reward Reward
	}{
		{"idle/neg-rho", 0, nil},
		{"idle/new-job-first", 0, NewJobFirst},
		{"busy90/neg-rho", 0.9, nil},
		{"busy90/new-job-first", 0.9, NewJobFirst},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cl, in := benchRound(b, bc.busy)
			runRoundBench(b, in, bc.reward, nil, func() placement.Placer { return cl.Clone() })
		})
		// The same round by a Rounder that ran it before: the steady cost
		// of a scheduler that keeps one, without the round's allocations.
		b.Run(bc.name+"/rounder", func(b *testing.B) {
			cl, in := benchRound(b, bc.busy)
			runRoundBench(b, in, bc.reward, new(Rounder), func() placement.Placer { return cl.Clone() })
		})
		if bc.busy == 0 {
			// The same round on a topology-free pool of GPUs: the round's
			// own cost without consolidated placement.
			b.Run("pool-"+bc.name, func(b *testing.B) {
				cl, in := benchRound(b, bc.busy)
				pool := newPool(cl)
				runRoundBench(b, in, bc.reward, nil, func() placement.Placer { return pool.ClonePlacer() })
			})
		}
	}
}

// runRoundBench runs the round b.N times on fresh copies of the placer, by
// Round, or by x if not nil, which first runs it once untimed: a Rounder's
// first round sizes its buffers, and the figure is its steady cost. Besides
// the mean CPU time a round takes it reports the median, which a noisy
// machine disturbs less.
func runRoundBench(b *testing.B, in Input, reward Reward, x *Rounder, fresh func() placement.Placer) {
	if x != nil {
		in.Placer = fresh()
		if _, err := x.Round(in, Options{Reward: reward}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	var grants, waiting int
	var cpu time.Duration
	var cpus []time.Duration
	n := 0
	for b.Loop() {
		b.StopTimer()
		in.Placer = fresh()
		runtime.GC() // start every round from a collected heap, as a steady scheduler would
		c0 := cpuTime()
		b.StartTimer()
		var res Result
		var err error
		if x != nil {
			res, err = x.Round(in, Options{Reward: reward})
		} else {
			res, err = Round(in, Options{Reward: reward})
		}
		b.StopTimer()
		d := cpuTime() - c0
		cpu += d
		cpus = append(cpus, d)
		n++
		b.StartTimer()
		if err != nil {
			b.Fatal(err)
		}
		grants, waiting = len(res.Grants), len(res.Waiting)
	}
	b.ReportMetric(float64(grants), "grants")
	b.ReportMetric(float64(waiting), "waiting")
	// CPU time of the process (user + system) per round: on a loaded machine
	// it is a steadier figure than wall time. Run with -cpu 1 so that it
	// counts one core.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
	slices.Sort(cpus)
	b.ReportMetric(float64(cpus[len(cpus)/2].Nanoseconds()), "p50-cpu-ns")
}

// pool is a placer without topology: one pool of GPUs, placements name no
// real GPU (only idle rounds use it: with expiring jobs the round's
// preemption needs real GPU identities). Benchmarks use it to separate the round's own cost from the
// cost of consolidated placement.
type pool struct {
	free int
	held map[string]int
}

func newPool(cl *placement.Cluster) *pool {
	p := &pool{free: cl.Free(), held: map[string]int{}}
	for id, q := range cl.Allocations() {
		p.held[id] = q.GPUs()
	}
	return p
}

func (p *pool) ClonePlacer() placement.Placer {
	q := &pool{free: p.free, held: make(map[string]int, len(p.held))}
	for id, n := range p.held {
		q.held[id] = n
	}
	return q
}

func (p *pool) Free() int { return p.free }

func (p *pool) Place(d int) (placement.Placement, error) {
	if d > p.free {
		return placement.Placement{}, &placement.NoFitError{Demand: d, LargestFree: p.free, FreeTotal: p.free}
	}
	return placement.Placement{Slots: []placement.Slot{{Node: "pool", GPUs: make([]int, d)}}}, nil
}

func (p *pool) Fits(d int) bool { return d <= p.free }

func (p *pool) Allocate(id string, q placement.Placement) error {
	if _, dup := p.held[id]; dup {
		return placement.ErrDuplicateAllocation
	}
	p.held[id] = q.GPUs()
	p.free -= q.GPUs()
	return nil
}

func (p *pool) Release(id string) (placement.Placement, error) {
	n, ok := p.held[id]
	if !ok {
		return placement.Placement{}, placement.ErrUnknownAllocation
	}
	delete(p.held, id)
	p.free += n
	return placement.Placement{Slots: []placement.Slot{{Node: "pool", GPUs: make([]int, n)}}}, nil
}

// cpuTime is the CPU time the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkReserverRound runs the 90 %-busy round of BenchmarkRound under a
// hold: a Reserver whose After is a nanosecond holds nodes for the most
// under-served blocked gang in its second round (not timed), then each timed
// round runs under that hold on a fresh copy of the cluster (its nodes
// drained, their expiring jobs released and tried elsewhere). "plain" is
// the same round without a Reserver. The difference is the Reserver's own
// cost: O(candidates) per round.
func BenchmarkReserverRound(b *testing.B) {
	cl, in := benchRound(b, 0.9)
	prep := Reserver{After: time.Nanosecond}
	for k := range 2 { // the blocked pick is watched, then held
		first := in
		first.Placer = cl.Clone()
		if _, err := prep.Round(nil, t0.Add(time.Duration(k)*time.Second), first, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	h, ok := prep.Held()
	if !ok {
		b.Fatal("the first round held nothing")
	}
	for _, reserve := range []bool{false, true} {
		name := "plain"
		if reserve {
			name = "held"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var x Rounder
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				round := in
				round.Placer = cl.Clone()
				rv := prep // the same hold, on a fresh copy of the cluster
				runtime.GC()
				c0 := cpuTime()
				b.StartTimer()
				var err error
				if reserve {
					_, err = rv.Round(&x, t0.Add(time.Minute), round, Options{})
				} else {
					_, err = x.Round(round, Options{})
				}
				b.StopTimer()
				cpu += cpuTime() - c0
				b.StartTimer()
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(len(h.Nodes)), "held-nodes")
		})
	}
}

// simPlacer is a cluster seen the way a discrete-event simulator hands it
// to a round every tick: Place, Allocate, Release, Free and PlaceWithout,
// but no Clone and no Allocation, so that the round takes its optimistic
// look by PlaceWithout and checks no running candidate against the
// cluster.
type simPlacer struct{ c *placement.Cluster }

func (p simPlacer) Place(d int) (placement.Placement, error)        { return p.c.Place(d) }
func (p simPlacer) Fits(d int) bool                                 { return p.c.Fits(d) }
func (p simPlacer) Allocate(id string, q placement.Placement) error { return p.c.Allocate(id, q) }
func (p simPlacer) Release(id string) (placement.Placement, error)  { return p.c.Release(id) }
func (p simPlacer) Free() int                                       { return p.c.Free() }
func (p simPlacer) PlaceWithout(d int, ids []string) (placement.Placement, error) {
	return p.c.PlaceWithout(d, ids)
}

// smallRound builds the round of one tick of a simulated 140-node cluster:
// 140 nodes × 8 GPUs all busy but 24, 30 tenants, and 12 candidates of 8
// tenants, 4 of them running jobs whose leases expire now (with their
// placements) and 8 pending, of demands 1 to 8 GPUs.
func smallRound(b testing.TB) (*placement.Cluster, Input) {
	const (
		nodes   = 140
		tenants = 30
	)
	rng := rand.New(rand.NewPCG(3, 4))
	ns := make([]placement.Node, nodes)
	for i := range ns {
		ns[i] = placement.Node{ID: fmt.Sprintf("node-%03d", i), GPUs: 8}
	}
	cl, err := placement.NewCluster(ns)
	if err != nil {
		b.Fatal(err)
	}
	acc := newAccounts()
	for k := range tenants {
		fair := ledger.GPUSeconds(1e6 * (1 + rng.Float64()))
		acc.tenant(ledger.TenantID(fmt.Sprintf("tenant-%02d", k)), ledger.GPUSeconds(rng.Float64())*2*fair, fair, 80)
	}
	demands := []int{1, 1, 1, 1, 2, 2, 4, 8}
	t := func(j int) ledger.TenantID { return ledger.TenantID(fmt.Sprintf("tenant-%02d", (j*7)%8)) }
	var cands []Candidate
	target := cl.Capacity() - 24
	for j := 0; cl.Capacity()-cl.Free() < target; j++ {
		id := ledger.JobID(fmt.Sprintf("run-%05d", j))
		d := demands[rng.IntN(len(demands))]
		q, err := cl.Place(d)
		if err != nil {
			continue
		}
		if err := cl.Allocate(string(id), q); err != nil {
			b.Fatal(err)
		}
		if j%100 == 7 && len(cands) < 4 {
			acc.job(id, ledger.Rho(rng.Float64()*2))
			cands = append(cands, Candidate{Job: id, Tenant: t(j), Demand: ledger.GPUs(d), Submit: t0.Add(-time.Duration(rng.IntN(1e6)) * time.Second), Running: true, Placement: q, Leases: 1 + rng.IntN(20)})
		}
	}
	for j := 0; len(cands) < 12; j++ {
		id := ledger.JobID(fmt.Sprintf("job-%05d", j))
		acc.job(id, ledger.Rho(rng.Float64()))
		cands = append(cands, Candidate{Job: id, Tenant: t(j), Demand: ledger.GPUs(demands[rng.IntN(len(demands))] * (1 + 3*(j%2))), Submit: t0.Add(-time.Duration(rng.IntN(1e6)) * time.Second), Leases: rng.IntN(2)})
	}
	return cl, Input{Accounts: acc, Candidates: cands, Lease: lease, Placer: simPlacer{cl}}
}

// BenchmarkRoundSmall measures the fixed cost of a small round, the round a
// discrete-event simulator runs at every tick: 12 candidates (4 of them
// expiring running jobs) of 8 tenants out of 30, on 140 nodes × 8 GPUs all busy
// but 24, through a Placer without Clone (simPlacer), by a Rounder reused
// from round to round, rewarding new jobs first. Each iteration runs the
// round and then undoes it on the cluster (grants released, preempted and
// released jobs allocated again), so that every round starts from the same
// state; the undo, O(grants + releases) placer calls, is included. A
// round's cost is O(candidates × (log candidates + log tenants + π)) for
// placer operations of cost π, plus what does not depend on the
// candidates, which this benchmark exposes.
func BenchmarkRoundSmall(b *testing.B) {
	cl, in := smallRound(b)
	var x Rounder
	opts := Options{Reward: NewJobFirst}
	b.ReportAllocs()
	var grants, waiting, released int
	for b.Loop() {
		res, err := x.Round(in, opts)
		if err != nil {
			b.Fatal(err)
		}
		grants, waiting, released = len(res.Grants), len(res.Waiting), len(res.Released)
		if err := undoSmall(cl, res); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(grants), "grants")
	b.ReportMetric(float64(waiting), "waiting")
	b.ReportMetric(float64(released), "released")
}

// undoSmall restores cl as it was before the round that returned res.
func undoSmall(cl *placement.Cluster, res Result) error {
	for _, g := range res.Grants {
		if g.Kind == New {
			if _, err := cl.Release(string(g.Job)); err != nil {
				return err
			}
		}
	}
	for _, r := range res.Released {
		if err := cl.Allocate(string(r.Job), r.Placement); err != nil {
			return err
		}
	}
	return nil
}
