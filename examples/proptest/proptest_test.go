package proptest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"pgregory.net/rapid"
)

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// violation returns what property the step that started started broke, or
// "": run is the state after the step, v the ledger's view at the decision,
// and fitting the tenants that had a waiting job fitting the free GPUs
// before it.
func violation(run *Run, v ledger.View, fitting []ledger.TenantID, started []Job) string {
	if err := run.Ledger.Check(); err != nil {
		return fmt.Sprintf("the ledger is inconsistent: %v", err)
	}
	for _, j := range run.Pending() {
		if j.GPUs <= run.Free() {
			return fmt.Sprintf("not work-conserving: job %s (%d GPUs) waits with %d GPUs free", j.ID, j.GPUs, run.Free())
		}
	}
	if len(started) > 0 {
		first, _ := v.TenantAccount(started[0].Tenant)
		for _, t := range fitting {
			if a, _ := v.TenantAccount(t); a.Rho < first.Rho {
				return fmt.Sprintf("Phase 1 rule: started %s of %s (ρ %v) before a job of %s (ρ %v)", started[0].ID, started[0].Tenant, first.Rho, t, a.Rho)
			}
		}
	}
	return ""
}

// play runs the scheduler over the workload (arrivals per step) and returns
// the first property a step breaks, or "". An error is the run's own.
func play(s Scheduler, capacity ledger.GPUs, weights map[ledger.TenantID]float64, arrivals [][]Job) (string, error) {
	run, err := NewRun(t0, capacity, time.Minute, weights)
	if err != nil {
		return "", err
	}
	for _, step := range arrivals {
		// What the decision sees: the time of the step, and the waiting
		// jobs once the step's finishes and arrivals are in. StepWith
		// does those first, so they are read through a scheduler that
		// records them and then asks s.
		rec := &recorder{s: s}
		started, err := run.StepWith(rec, step)
		if err != nil {
			return "", err
		}
		if why := violation(run, rec.view, rec.fitting, started); why != "" {
			return fmt.Sprintf("at %v: %s", run.Now().Sub(t0), why), nil
		}
	}
	return "", nil
}

// recorder passes a decision on to s and keeps what it was made from.
type recorder struct {
	s       Scheduler
	view    ledger.View
	fitting []ledger.TenantID
}

func (r *recorder) Decide(v ledger.View, pending []Job, free ledger.GPUs) []int {
	r.view = v
	for _, j := range pending {
		if j.GPUs <= free {
			r.fitting = append(r.fitting, j.Tenant)
		}
	}
	return r.s.Decide(v, pending, free)
}

// workload draws a cluster, its tenants and their jobs, step by step.
func workload(t *rapid.T) (ledger.GPUs, map[ledger.TenantID]float64, [][]Job) {
	capacity := ledger.GPUs(rapid.IntRange(4, 16).Draw(t, "capacity"))
	weights := map[ledger.TenantID]float64{}
	tenants := rapid.IntRange(2, 4).Draw(t, "tenants")
	var ids []ledger.TenantID
	for k := range tenants {
		id := ledger.TenantID(fmt.Sprintf("t%d", k))
		ids = append(ids, id)
		weights[id] = float64(rapid.IntRange(1, 4).Draw(t, "weight"))
	}
	steps := rapid.IntRange(1, 40).Draw(t, "steps")
	arrivals := make([][]Job, steps)
	n := 0
	for s := range arrivals {
		for range rapid.IntRange(0, 3).Draw(t, "arrivals") {
			n++
			arrivals[s] = append(arrivals[s], Job{
				ID:     ledger.JobID(fmt.Sprintf("j%d", n)),
				Tenant: rapid.SampledFrom(ids).Draw(t, "tenant"),
				GPUs:   ledger.GPUs(rapid.IntRange(1, int(capacity)).Draw(t, "gpus")),
				Steps:  rapid.IntRange(1, 10).Draw(t, "length"),
			})
		}
	}
	return capacity, weights, arrivals
}

// TestLowestRhoKeepsTheProperties is the test to copy: your scheduler in
// place of LowestRho.
func TestLowestRhoKeepsTheProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		capacity, weights, arrivals := workload(t)
		why, err := play(LowestRho{}, capacity, weights, arrivals)
		if err != nil || why != "" {
			t.Fatal(why, err)
		}
	})
}

// TestFIFOBreaksThePhase1Rule: the same properties catch a plain FIFO
// queue, and a scheduler that serves the highest ρ first. Tenant a's big job runs first; a's second job was queued before
// b's, so when the cluster frees FIFO starts it, although b, served
// nothing so far, has the lower ρ. With a small job behind a blocked big
// one, FIFO is not work-conserving either.
func TestFIFOBreaksThePhase1Rule(t *testing.T) {
	weights := map[ledger.TenantID]float64{"a": 1, "b": 1}
	rule := [][]Job{
		{{ID: "a1", Tenant: "a", GPUs: 8, Steps: 2}, {ID: "a2", Tenant: "a", GPUs: 8, Steps: 2}, {ID: "b1", Tenant: "b", GPUs: 8, Steps: 2}},
		nil,
		nil,
	}
	blocked := [][]Job{
		{{ID: "a1", Tenant: "a", GPUs: 6, Steps: 3}, {ID: "b1", Tenant: "b", GPUs: 4, Steps: 1}, {ID: "a2", Tenant: "a", GPUs: 2, Steps: 1}},
	}
	// b is served its share first; then a, served nothing, has a job
	// that fits, and a scheduler that serves the highest ρ first starts
	// b's next job.
	reversed := [][]Job{
		{{ID: "a1", Tenant: "a", GPUs: 8, Steps: 1}, {ID: "b1", Tenant: "b", GPUs: 4, Steps: 1}},
		{{ID: "b2", Tenant: "b", GPUs: 4, Steps: 1}},
	}
	for _, c := range []struct {
		s        Scheduler
		arrivals [][]Job
		want     string // "": keeps every property
	}{
		{FIFO{}, rule, "Phase 1 rule"},
		{LowestRho{}, rule, ""},
		{FIFO{}, blocked, "not work-conserving"},
		{LowestRho{}, blocked, ""},
		{highestRho{}, reversed, "Phase 1 rule"},
		{LowestRho{}, reversed, ""},
	} {
		why, err := play(c.s, 8, weights, c.arrivals)
		if err != nil || (c.want == "") != (why == "") || !strings.Contains(why, c.want) {
			t.Errorf("%T: %q, %v; want %q", c.s, why, err, c.want)
		}
	}
}

// TestRunRefusesImpossibleDecisions: a decision naming a job twice, a
// job that does not exist, or more GPUs than are free is ErrDecision, and
// nothing of it is carried out: no job starts, in the run or its ledger.
func TestRunRefusesImpossibleDecisions(t *testing.T) {
	for name, picks := range map[string][]int{
		"a job named twice":       {0, 0},
		"an index out of range":   {2},
		"a negative index":        {-1},
		"more GPUs than are free": {0, 1},
	} {
		t.Run(name, func(t *testing.T) {
			run, err := NewRun(t0, 8, time.Minute, map[ledger.TenantID]float64{"a": 1})
			if err != nil {
				t.Fatal(err)
			}
			jobs := []Job{{ID: "j1", Tenant: "a", GPUs: 6, Steps: 1}, {ID: "j2", Tenant: "a", GPUs: 6, Steps: 1}}
			_, err = run.StepWith(fixed(picks), jobs)
			if !errors.Is(err, ErrDecision) {
				t.Fatalf("error %v, want ErrDecision", err)
			}
			if run.Free() != 8 || len(run.Pending()) != 2 {
				t.Fatalf("after a refused decision: %d GPUs free, %d waiting", run.Free(), len(run.Pending()))
			}
			for _, id := range []ledger.JobID{"j1", "j2"} {
				if info, ok := run.Ledger.Job(id); !ok || info.Running {
					t.Fatalf("job %s after a refused decision: %+v, %v", id, info, ok)
				}
			}
		})
	}
}

// highestRho starts the job of the highest-ρ tenant first (the Phase 1
// rule reversed), then fills the free GPUs first fit.
type highestRho struct{}

func (highestRho) Decide(v ledger.View, pending []Job, free ledger.GPUs) []int {
	best := -1
	for i, j := range pending {
		if j.GPUs <= free && (best < 0 || lowerRho(v, pending[best].Tenant, j.Tenant)) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	picks := []int{best}
	free -= pending[best].GPUs
	for i, j := range pending {
		if i != best && j.GPUs <= free {
			picks = append(picks, i)
			free -= j.GPUs
		}
	}
	return picks
}

type fixed []int

func (f fixed) Decide(ledger.View, []Job, ledger.GPUs) []int { return f }
