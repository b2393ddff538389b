package simulate

import (
	"errors"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/lease"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// TestEveryJobIsSimulatedOrExcluded: however far apart the submissions,
// each job read either runs or is excluded with a reason; none is lost.
func TestEveryJobIsSimulatedOrExcluded(t *testing.T) {
	early := time.Date(1680, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(id string, when time.Time) trace.Job {
		return trace.Job{ID: id, Tenant: "x", GPUs: 1, Submit: when, Duration: time.Minute}
	}
	tests := []struct {
		name     string
		start    time.Time // Config.Start; zero: the first submission
		jobs     []trace.Job
		ran      int
		excluded int
	}{
		{"jobs 300 and 500 years after the first", time.Time{},
			[]trace.Job{at("a", early), at("b", early.AddDate(300, 0, 0)), at("c", early.AddDate(500, 0, 0))}, 1, 2},
		{"a job just inside the horizon", time.Time{},
			[]trace.Job{at("a", t0), at("b", t0.Add(Horizon))}, 2, 0},
		{"a job just past the horizon", time.Time{},
			[]trace.Job{at("a", t0), at("b", t0.Add(Horizon+time.Second))}, 1, 1},
		{"every job past the horizon of the start", early,
			[]trace.Job{at("a", early.AddDate(300, 0, 0)), at("b", early.AddDate(300, 0, 0))}, 0, 2},
		{"a job after the last time Unix nanoseconds hold", time.Time{},
			[]trace.Job{at("a", time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)), at("b", time.Date(2263, 1, 1, 0, 0, 0, 0, time.UTC))}, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(1, 8, "x")
			cfg.Start = tt.start
			cfg.Intervals = nil // centuries of hourly intervals would only cost time
			r, err := Run(cfg, src(tt.jobs...), &greedy{})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Run.Jobs) != tt.ran || r.Stats.Excluded != tt.excluded || r.Run.Excluded[ExcludedBeyondHorizon] != tt.excluded {
				t.Fatalf("%d ran, %d excluded (%v), want %d and %d", len(r.Run.Jobs), r.Stats.Excluded, r.Run.Excluded, tt.ran, tt.excluded)
			}
			for _, x := range r.Excluded {
				if x.Reason != ExcludedBeyondHorizon {
					t.Errorf("job %s excluded for %q", x.ID, x.Reason)
				}
			}
		})
	}
}

// TestTheEnginesLimitsAreNotInvariants: a job kept waiting for longer than
// the progress model counts fails the run with ErrHorizon, naming the job,
// not with ErrInvariant, which the docs reserve for engine bugs.
func TestTheEnginesLimitsAreNotInvariants(t *testing.T) {
	long := lease.MaxSpan * 3 / 5
	jobs := []trace.Job{
		{ID: "a", Tenant: "x", GPUs: 8, Submit: t0, Duration: long},
		{ID: "b", Tenant: "y", GPUs: 8, Submit: t0.Add(time.Second), Duration: long},
	}
	cfg := DefaultConfig(1, 8, map[string]float64{"x": 1, "y": 1})
	cfg.Lease, cfg.Intervals = 90*24*time.Hour, nil // a few hundred leases, not millions
	// The two jobs take turns at every lease end.
	_, err := Run(cfg, src(jobs...), preemptFor{})
	if !errors.Is(err, ErrHorizon) || errors.Is(err, ErrInvariant) {
		t.Fatalf("%v, want ErrHorizon", err)
	}
}
