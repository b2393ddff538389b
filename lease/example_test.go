package lease_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/astraea-sched/astraea/lease"
)

// A job's life under leases: started, renewed in place, preempted with a
// checkpoint, restored with a cold start, completed mid-lease. Usage splits
// the time it held GPUs into progress and overhead.
func ExampleTable() {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

	tb, _ := lease.NewTable(lease.Config{Lease: 900 * time.Second})
	_ = tb.Submit(at(0), "a1")
	_ = tb.Start(at(0), "a1")                     // pending → running, lease [0, 900)
	_ = tb.Renew(at(900), "a1", 0)                // renewed in place: no cold start
	_ = tb.Checkpoint(at(1800), "a1")             // not renewed: checkpoint signal
	_ = tb.Release(at(1810), "a1", 4*time.Second) // GPUs free; 4 s of a partial iteration lost
	_ = tb.Restore(at(2500), "a1", 30*time.Second)
	_ = tb.Finish(at(2900), "a1", lease.Completed) // mid-lease: billed to 2900, not 3400

	in, _ := tb.Info("a1")
	u := in.Usage
	fmt.Println(in.State, "held", u.Held, "progress", u.Progress, "overhead", u.Overhead())
	fmt.Println("checkpoint", u.Checkpoint, "cold start", u.ColdStart, "lost", u.Lost)

	err := tb.Start(at(3000), "a1")
	fmt.Println(errors.Is(err, lease.ErrInvalidTransition), err)
	// Output:
	// completed held 36m50s progress 36m6s overhead 44s
	// checkpoint 10s cold start 30s lost 4s
	// true lease: start job "a1" at 2024-01-01T00:50:00Z: invalid transition completed → running
}

// One lease boundary in virtual time, as in the paper's worked example: A1's
// lease ends and it is not renewed; it checkpoints and releases its GPUs,
// and only then does B1 start. A later boundary restores A1 with a cold start.
func ExampleCoordinator_Boundary() {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	tb, _ := lease.NewTable(lease.Config{Lease: 900 * time.Second})
	sim, _ := lease.NewSim(lease.SimConfig{
		Checkpoint: 10 * time.Second,
		ColdStart:  30 * time.Second,
		Iteration:  7 * time.Second,
	})
	co, _ := lease.NewCoordinator(tb, sim, lease.CoordinatorConfig{Grace: time.Minute})
	for _, id := range []string{"A1", "B1"} {
		_ = tb.Submit(t0, lease.JobID(id))
		_ = sim.Add(lease.JobID(id), 2*time.Hour)
	}
	show := func(out lease.Outcome) {
		for _, d := range out.Decisions {
			fmt.Printf("%s %s at +%v (lost %v, cold start %v)\n", d.Job, d.Action, d.At.Sub(t0), d.Lost, d.ColdStart)
		}
	}
	out, _ := co.Boundary(t0, lease.Plan{Start: []lease.Grant{{Job: "A1", GPUs: 8}}})
	show(out)
	t1 := t0.Add(900 * time.Second)
	fmt.Println("expired:", tb.Expired(t1))
	out, _ = co.Boundary(t1, lease.Plan{
		Preempt: []lease.Grant{{Job: "A1", GPUs: 8}},
		Start:   []lease.Grant{{Job: "B1", GPUs: 8}},
	})
	show(out)
	t2 := out.StartAt.Add(900 * time.Second)
	out, _ = co.Boundary(t2, lease.Plan{
		Preempt: []lease.Grant{{Job: "B1", GPUs: 8}},
		Start:   []lease.Grant{{Job: "A1", GPUs: 8}},
	})
	show(out)
	in, _ := tb.InfoAt(out.StartAt.Add(time.Hour), "A1")
	fmt.Println("A1", in.State, "progress", in.Usage.Progress, "overhead", in.Usage.Overhead())
	// Output:
	// A1 started at +0s (lost 0s, cold start 0s)
	// expired: [A1]
	// A1 preempted at +15m10s (lost 4s, cold start 0s)
	// B1 started at +15m10s (lost 0s, cold start 0s)
	// B1 preempted at +30m20s (lost 4s, cold start 0s)
	// A1 restored at +30m20s (lost 0s, cold start 30s)
	// A1 running progress 1h14m26s overhead 44s
}

// One job's progress in virtual time with 30 s iterations: a renewal
// checkpoint, a preemption that loses the partial iteration, a restore with a
// cold start. Usage splits the held time; CompletesAt moves with the lost
// work and the overheads.
func ExampleProgress() {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	cfg := lease.SimConfig{Checkpoint: 10 * time.Second, ColdStart: 30 * time.Second, Iteration: 30 * time.Second}

	p, _ := lease.NewProgress(1000 * time.Second)
	_ = p.Start(at(0))
	end, _ := p.CompletesAt()
	fmt.Println("started, completes at", end.Sub(t0))

	pause, _ := p.Renew(at(900), cfg) // 900 s of work, paused to 910 s
	fmt.Println("renewed, paused", pause, "durable", p.Durable())

	_ = p.Signal(at(1005)) // 995 s of work: 33 iterations and 5 s
	r, _ := p.Release(at(1060), cfg)
	fmt.Println("released at", r.At.Sub(t0), "lost", r.Lost, "kept", p.At(r.At))

	_, _ = p.Restore(at(1200), cfg)
	end, _ = p.CompletesAt()
	fmt.Println("restored, completes at", end.Sub(t0), "state", p.State(at(1210)))

	u := p.Usage(end)
	fmt.Println("held", u.Held, "progress", u.Progress, "checkpoint", u.Checkpoint, "cold start", u.ColdStart, "lost", u.Lost)

	err := p.Signal(at(100))
	fmt.Println(errors.Is(err, lease.ErrTimeBackwards))
	// Output:
	// started, completes at 16m40s
	// renewed, paused 10s durable 15m0s
	// released at 16m55s lost 5s kept 16m30s
	// restored, completes at 20m40s state restoring
	// held 17m35s progress 16m40s checkpoint 20s cold start 30s lost 5s
	// true
}

// A gang spread over more nodes than it needs runs at half rate: its
// 1,000 s of work take 2,000 s held, half of them Spread. Resumed on the
// nodes it needs, it runs at full rate again.
func ExampleProgress_SetRate() {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	cfg := lease.SimConfig{Checkpoint: 10 * time.Second, ColdStart: 30 * time.Second}
	p, _ := lease.NewProgress(1000 * time.Second)
	_ = p.SetRate(0.5) // placed spread
	_ = p.Start(t0)
	end, _ := p.CompletesAt()
	fmt.Println("spread, completes after", end.Sub(t0))

	_ = p.Signal(t0.Add(600 * time.Second)) // preempted with 300 s of work done
	r, _ := p.Release(t0.Add(time.Hour), cfg)
	_ = p.SetRate(1) // resumed on the nodes it needs
	_, _ = p.Restore(r.At, cfg)
	end, _ = p.CompletesAt()
	u := p.Usage(end)
	fmt.Println("resumed, completes after", end.Sub(t0), "held", u.Held, "spread", u.Spread)
	// Output:
	// spread, completes after 33m20s
	// resumed, completes after 22m20s held 22m20s spread 5m0s
}
