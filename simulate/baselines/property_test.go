package baselines

import (
	"fmt"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// genTrace draws a small random trace on tenants a, b, c.
func genTrace(t *rapid.T) []trace.Job {
	n := rapid.IntRange(1, 12).Draw(t, "jobs")
	jobs := make([]trace.Job, n)
	submit := 0
	for i := range jobs {
		submit += rapid.IntRange(0, 600).Draw(t, "gap")
		jobs[i] = job(fmt.Sprintf("j%02d", i),
			rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "tenant"),
			rapid.SampledFrom([]int{1, 2, 3, 4, 8, 12, 16}).Draw(t, "gpus"),
			submit,
			rapid.IntRange(0, 4000).Draw(t, "duration"))
	}
	return jobs
}

// TestPropertyEveryPolicy runs every policy on random traces with the
// engine's invariant checks at every tick, and checks each policy's own
// promise at every decision.
func TestPropertyEveryPolicy(t *testing.T) {
	quotas := map[string]float64{"a": 0.5, "b": 0.25, "c": 0.25}
	caps := Capacities(quotas, 16)
	rapid.Check(t, func(t *rapid.T) {
		jobs := genTrace(t)
		for _, e := range All() {
			p, err := e.New()
			if err != nil {
				t.Fatal(err)
			}
			opportunistic := make(map[string]bool) // HiveD's view after the previous tick
			obs := &observer{Policy: p, onTick: func(s *simulate.State, d simulate.Decision) {
				switch pol := p.(type) {
				case *FIFO, *YARNCS, *AlloX:
					if len(d.Preempt) > 0 {
						t.Fatalf("%s preempted %v at %v", e.Name, d.Preempt, s.Now)
					}
					if _, ok := pol.(*YARNCS); ok {
						for tn, u := range usage(s, d) {
							if u > caps[tn] && !yarnAlone(s, d, tn, caps[tn]) {
								t.Fatalf("yarn-cs: tenant %s holds %d GPUs, capacity %d, at %v", tn, u, caps[tn], s.Now)
							}
						}
					}
				case *HiveD:
					for _, id := range d.Preempt {
						if !opportunistic[id] {
							t.Fatalf("hived preempted guaranteed job %s at %v", id, s.Now)
						}
					}
					clear(opportunistic)
					for _, js := range s.Running {
						opportunistic[js.Job.ID] = pol.Opportunistic(js.Job.ID)
					}
					for _, g := range d.Grants {
						opportunistic[g.Job] = pol.Opportunistic(g.Job)
					}
				}
			}}
			cfg := simConfig(2, 8, quotas)
			res, err := simulate.Run(cfg, trace.FromJobs(jobs), obs)
			if err != nil {
				t.Fatalf("%s: %v", e.Name, err)
			}
			for _, r := range res.Run.Jobs {
				if !r.Finished() {
					t.Fatalf("%s: job %s never finished", e.Name, r.ID)
				}
			}
			again, _ := e.New()
			res2, err := simulate.Run(cfg, trace.FromJobs(jobs), again)
			if err != nil {
				t.Fatalf("%s, second run: %v", e.Name, err)
			}
			if !reflect.DeepEqual(res.Run.Jobs, res2.Run.Jobs) {
				t.Fatalf("%s: two runs of the same trace differ", e.Name)
			}
		}
	})
}

// yarnAlone reports whether tenant tn's only job is one larger than its whole
// capacity (the documented exception).
func yarnAlone(s *simulate.State, d simulate.Decision, tn string, capacity int) bool {
	n, big := 0, true
	for _, js := range append(append([]*simulate.JobState{}, s.Running...), s.Pending...) {
		if js.Job.Tenant != tn {
			continue
		}
		held := js.Status == simulate.Running
		for _, g := range d.Grants {
			if g.Job == js.Job.ID {
				held = true
			}
		}
		if held {
			n++
			big = big && js.Job.GPUs > capacity
		}
	}
	return n == 1 && big
}

// TestPropertyTraitsMatchExhaustive runs every policy, under each
// placement mode and with a spread slowdown or none, on random traces with
// the engine's shortcuts (the Traits each policy declares) and without
// them (simulate.Config.Exhaustive): simulate.CompareExhaustive must find
// the runs identical.
func TestPropertyTraitsMatchExhaustive(t *testing.T) {
	quotas := map[string]float64{"a": 0.5, "b": 0.25, "c": 0.25}
	for _, m := range []placement.Mode{placement.Strict, placement.FewestNodes, placement.FirstFit} {
		t.Run(m.String(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				jobs := genTrace(t)
				cfg := simConfig(rapid.IntRange(2, 4).Draw(t, "nodes"), 8, quotas)
				cfg.Placement = m
				cfg.SpreadSlowdown = rapid.SampledFrom([]float64{1, 0.8, 0.5}).Draw(t, "spreadSlowdown")
				for _, e := range All() {
					if _, err := simulate.CompareExhaustive(cfg, func() trace.Source { return trace.FromJobs(jobs) }, e.New); err != nil {
						t.Fatalf("%s: %v", e.Name, err)
					}
				}
			})
		})
	}
}
