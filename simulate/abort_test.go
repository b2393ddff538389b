package simulate

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// aborter grants pending jobs as greedy does and aborts every running job
// at abortAt.
type aborter struct {
	greedy
	abortAt int // seconds after t0
}

// NextWakeup asks for the tick of the abort, at which nothing else
// happens.
func (a *aborter) NextWakeup(s *State) time.Time {
	if s.Now.Before(ts(a.abortAt)) {
		return ts(a.abortAt)
	}
	return time.Time{}
}

func (a *aborter) Schedule(s *State) (Decision, error) {
	if s.Now.Equal(ts(a.abortAt)) {
		return abortAll(s), nil
	}
	return a.greedy.Schedule(s)
}

// abortAll is the decision that aborts every running job.
func abortAll(s *State) Decision {
	var d Decision
	for _, r := range s.Running {
		d.Abort = append(d.Abort, r.Job.ID)
	}
	return d
}

// TestAbortLosesTheLeasesWork: a 100 s job started at 0 and aborted at 50
// s keeps nothing (its lease began at 0) and resumes at the next tick,
// 60 s, after a 30 s cold start: it ends at 60 + 30 + 100 = 190 s, having
// held 50 s of lost work and 30 s of cold start, and writes no
// checkpoint.
func TestAbortLosesTheLeasesWork(t *testing.T) {
	cfg := testConfig(1, 8, "a")
	cfg.Lease = sec(300)
	r := mustRun(t, cfg, src(tj("j", "a", 2, 0, 100)), &aborter{greedy: greedy{lease: sec(300)}, abortAt: 50})
	if len(r.Run.Jobs) != 1 {
		t.Fatalf("jobs %+v", r.Run.Jobs)
	}
	j := r.Run.Jobs[0]
	if !j.End.Equal(ts(190)) || j.Lost != sec(50) || j.ColdStart != sec(30) || j.Checkpoint != 0 || j.Preemptions != 1 {
		t.Fatalf("job %+v; want the end at 190 s, 50 s lost, a 30 s cold start, no checkpoint, one preemption", j)
	}
	st := r.Stats
	if st.Preemptions != 1 || st.Checkpoints != 0 || st.LostGPUSeconds != 100 {
		t.Fatalf("stats: %d preemptions, %d checkpoints, %v GPU·s lost; want 1, 0, 100", st.Preemptions, st.Checkpoints, st.LostGPUSeconds)
	}
}

// abortTwice aborts and preempts the same job in one decision.
type abortTwice struct{ aborter }

func (a *abortTwice) Schedule(s *State) (Decision, error) {
	d, err := a.aborter.Schedule(s)
	if len(d.Abort) > 0 {
		d.Preempt = append(d.Preempt, d.Abort...)
	}
	return d, err
}

func TestAbortIsCheckedAsPreempt(t *testing.T) {
	cfg := testConfig(1, 8, "a")
	_, err := Run(cfg, src(tj("j", "a", 2, 0, 100)), &abortTwice{aborter{greedy: greedy{lease: sec(300)}, abortAt: 50}})
	if !errors.Is(err, ErrBadDecision) || !strings.Contains(err.Error(), "preempted twice") {
		t.Fatalf("a job preempted and aborted at once: %v", err)
	}
	_, err = Run(cfg, src(tj("j", "a", 2, 0, 100)), pendingAborter{})
	if !errors.Is(err, ErrBadDecision) || !strings.Contains(err.Error(), "not running") {
		t.Fatalf("an abort of a pending job: %v", err)
	}
}

// pendingAborter aborts the pending jobs, which is a bad decision.
type pendingAborter struct{}

func (pendingAborter) Name() string { return "pending-aborter" }

func (pendingAborter) Schedule(s *State) (Decision, error) {
	var d Decision
	for _, p := range s.Pending {
		d.Abort = append(d.Abort, p.Job.ID)
	}
	return d, nil
}
