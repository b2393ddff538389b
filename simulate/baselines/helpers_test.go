package baselines

import (
	"slices"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/metrics"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// t0 is the origin of every hand-built trace.
var t0 = time.Date(2020, 9, 7, 0, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func job(id, tenant string, gpus, submit, dur int) trace.Job {
	return trace.Job{ID: id, Tenant: tenant, GPUs: gpus, Submit: at(submit), Duration: time.Duration(dur) * time.Second}
}

// observer wraps a policy and sees every state and decision.
type observer struct {
	simulate.Policy
	onTick func(s *simulate.State, d simulate.Decision)
}

func (o *observer) Schedule(s *simulate.State) (simulate.Decision, error) {
	d, err := o.Policy.Schedule(s)
	if err == nil && o.onTick != nil {
		o.onTick(s, d)
	}
	return d, err
}

func (o *observer) NextWakeup(s *simulate.State) time.Time {
	if w, ok := o.Policy.(simulate.Waker); ok {
		return w.NextWakeup(s)
	}
	return time.Time{}
}

// simConfig is the reference configuration on nodes × gpus with every
// invariant checked at every tick.
func simConfig(nodes, gpus int, quotas map[string]float64) simulate.Config {
	cfg := simulate.DefaultConfig(nodes, gpus, quotas)
	cfg.Start = t0
	cfg.Check = true
	cfg.CheckEvery = 1
	return cfg
}

func run(t *testing.T, cfg simulate.Config, p simulate.Policy, jobs ...trace.Job) *simulate.Result {
	t.Helper()
	slices.SortStableFunc(jobs, func(a, b trace.Job) int { return a.Submit.Compare(b.Submit) })
	res, err := simulate.Run(cfg, trace.FromJobs(jobs), p)
	if err != nil {
		t.Fatalf("%s: %v", p.Name(), err)
	}
	if got, want := len(res.Run.Jobs), len(jobs); got != want {
		t.Fatalf("%s: %d job records, want %d", p.Name(), got, want)
	}
	return res
}

func record(t *testing.T, res *simulate.Result, id string) metrics.JobRecord {
	t.Helper()
	for _, j := range res.Run.Jobs {
		if j.ID == id {
			return j
		}
	}
	t.Fatalf("no record of job %s", id)
	return metrics.JobRecord{}
}

// usage returns GPUs held per tenant after decision d is applied to s.
func usage(s *simulate.State, d simulate.Decision) map[string]int {
	out := make(map[string]int)
	gone := make(map[string]bool)
	for _, id := range d.Preempt {
		gone[id] = true
	}
	renewed := make(map[string]bool)
	for _, g := range d.Grants {
		if g.Renew {
			renewed[g.Job] = true
		}
	}
	tenant := make(map[string]*simulate.JobState)
	for _, js := range s.Running {
		tenant[js.Job.ID] = js
		lapsed := !js.LeaseEnd.IsZero() && !js.LeaseEnd.After(s.Now) && !renewed[js.Job.ID]
		if !gone[js.Job.ID] && !lapsed {
			out[js.Job.Tenant] += js.Job.GPUs
		}
	}
	for _, js := range s.Pending {
		tenant[js.Job.ID] = js
	}
	for _, g := range d.Grants {
		if !g.Renew {
			js := tenant[g.Job]
			out[js.Job.Tenant] += js.Job.GPUs
		}
	}
	return out
}

// mustPolicy(NewX(cfg))(t) fails the test when the constructor does.
func mustPolicy[P simulate.Policy](p P, err error) func(*testing.T) P {
	return func(t *testing.T) P {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
}
