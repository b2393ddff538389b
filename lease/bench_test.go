package lease

import (
	"fmt"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// benchWorld has n jobs: a third renewed at every boundary, a third
// preempted, a third restored in their place; the roles of the last two
// swap at every boundary, so the state cycles and the benchmark can run
// boundary after boundary.
func benchWorld(b *testing.B, n int) (*Coordinator, [3][]Grant) {
	tb := newTable(b, Config{Lease: 900 * time.Second})
	sim, err := NewSim(SimConfig{Checkpoint: 10 * time.Second, ColdStart: 30 * time.Second, Iteration: 7 * time.Second})
	must(b, err)
	co, err := NewCoordinator(tb, sim, CoordinatorConfig{Grace: time.Minute})
	must(b, err)
	var sets [3][]Grant
	for i := range n {
		id := ledger.JobID(fmt.Sprintf("job-%06d", i))
		must(b, tb.Submit(t0, id))
		must(b, sim.Add(id, 1e6*time.Hour))
		sets[i%3] = append(sets[i%3], Grant{Job: id, GPUs: 8})
	}
	// Sets 0 and 1 run; set 2 runs and is preempted, to start suspended.
	_, err = co.Boundary(t0, Plan{Start: append(append(append([]Grant(nil), sets[0]...), sets[1]...), sets[2]...)})
	must(b, err)
	_, err = co.Boundary(t0.Add(time.Hour), Plan{Renew: ids(sets[0]), Preempt: sets[2]})
	must(b, err)
	return co, sets
}

func ids(gs []Grant) []ledger.JobID {
	out := make([]ledger.JobID, len(gs))
	for i, g := range gs {
		out[i] = g.Job
	}
	return out
}

// BenchmarkBoundary10k runs one lease boundary over 10,000 jobs: 3,334
// renewals, 3,333 checkpoint/release and 3,333 restores, with the
// simulated effects. Boundary is O(k log k) in the jobs of the plan.
func BenchmarkBoundary10k(b *testing.B) {
	co, sets := benchWorld(b, 10000)
	renew := ids(sets[0])
	running, waiting := sets[1], sets[2]
	at := t0.Add(2 * time.Hour)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		out, err := co.Boundary(at, Plan{Renew: renew, Preempt: running, Start: waiting})
		if err != nil {
			b.Fatal(err)
		}
		running, waiting = waiting, running
		at = out.StartAt.Add(time.Hour)
	}
	b.ReportMetric(float64(len(sets[0])+len(sets[1])+len(sets[2])), "jobs/boundary")
}

// BenchmarkTableEvent measures one transition on a table of 10,000 jobs:
// O(1), a map lookup and a copy of the job record.
func BenchmarkTableEvent(b *testing.B) {
	tb := newTable(b, Config{Lease: 900 * time.Second})
	const n = 10000
	jobs := make([]ledger.JobID, n)
	for i := range jobs {
		jobs[i] = ledger.JobID(fmt.Sprintf("job-%06d", i))
		must(b, tb.Submit(t0, jobs[i]))
		must(b, tb.Start(t0, jobs[i]))
	}
	at := t0
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		at = at.Add(time.Second)
		if err := tb.Renew(at, jobs[i%n], 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExpired lists the expired leases among 10,000 running jobs:
// O(n log n).
func BenchmarkExpired(b *testing.B) {
	tb := newTable(b, Config{Lease: 900 * time.Second})
	for i := range 10000 {
		id := ledger.JobID(fmt.Sprintf("job-%06d", i))
		must(b, tb.Submit(t0, id))
		must(b, tb.Start(t0.Add(time.Duration(i)*time.Second/10), id))
	}
	at := t0.Add(1400 * time.Second) // about half have expired
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if len(tb.Expired(at)) == 0 {
			b.Fatal("nothing expired")
		}
	}
}

// BenchmarkProgressCycle: one job's full lease cycle on a Progress — a
// renewal, a signal, a release, a restore — and the progress and
// completion queries a simulator makes at each event, at full rate and at
// a rate below one (a spread gang). Every call is O(1) and allocates
// nothing. The job starts afresh before its life reaches MaxSpan.
func BenchmarkProgressCycle(b *testing.B) {
	for _, rate := range []float64{1, 0.8} {
		b.Run(fmt.Sprintf("rate=%v", rate), func(b *testing.B) {
			cfg := SimConfig{Checkpoint: 10 * time.Second, ColdStart: 30 * time.Second, Iteration: 7 * time.Second}
			var p Progress
			var at time.Time
			fresh := func() {
				var err error
				p, err = NewProgress(MaxSpan / 2)
				must(b, err)
				must(b, p.SetRate(rate))
				at = t0
				must(b, p.Start(at))
			}
			fresh()
			b.ReportAllocs()
			for b.Loop() {
				if at.Sub(t0) > MaxSpan/4 {
					fresh()
				}
				at = at.Add(900 * time.Second)
				if _, err := p.Renew(at, cfg); err != nil {
					b.Fatal(err)
				}
				at = at.Add(900 * time.Second)
				if err := p.Signal(at); err != nil {
					b.Fatal(err)
				}
				r, err := p.Release(at.Add(time.Minute), cfg)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Restore(r.At, cfg); err != nil {
					b.Fatal(err)
				}
				if _, ok := p.CompletesAt(); !ok || p.At(at) < 0 {
					b.Fatal("not running")
				}
			}
		})
	}
}
