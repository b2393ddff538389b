package lease

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// recorder wraps Effects and logs every call, so tests can check order.
type recorder struct {
	fx  *Sim
	log []string
}

func (r *recorder) Checkpoint(at time.Time, job ledger.JobID) error {
	r.log = append(r.log, fmt.Sprintf("signal %s %v", job, at.Sub(t0)))
	return r.fx.Checkpoint(at, job)
}

func (r *recorder) WaitReleased(job ledger.JobID, deadline time.Time) (ReleaseReport, error) {
	rep, err := r.fx.WaitReleased(job, deadline)
	r.log = append(r.log, fmt.Sprintf("released %s %v", job, rep.At.Sub(t0)))
	return rep, err
}

func (r *recorder) Start(at time.Time, job ledger.JobID) error {
	r.log = append(r.log, fmt.Sprintf("start %s %v", job, at.Sub(t0)))
	return r.fx.Start(at, job)
}

func (r *recorder) Restore(at time.Time, job ledger.JobID) (time.Duration, error) {
	r.log = append(r.log, fmt.Sprintf("restore %s %v", job, at.Sub(t0)))
	return r.fx.Restore(at, job)
}

func (r *recorder) Renew(at time.Time, job ledger.JobID) (time.Duration, error) {
	r.log = append(r.log, fmt.Sprintf("renew %s %v", job, at.Sub(t0)))
	return r.fx.Renew(at, job)
}

func sec(n int) time.Duration { return time.Duration(n) * time.Second }

type world struct {
	tb  *Table
	sim *Sim
	rec *recorder
	co  *Coordinator
}

func newWorld(t fataler, cfg Config, sc SimConfig, grace time.Duration) *world {
	t.Helper()
	tb := newTable(t, cfg)
	sim, err := NewSim(sc)
	must(t, err)
	rec := &recorder{fx: sim}
	co, err := NewCoordinator(tb, rec, CoordinatorConfig{Grace: grace})
	must(t, err)
	return &world{tb, sim, rec, co}
}

// The coordinator hands back the very table it drives, and the table the
// configuration it was built with (what a caller reads to compute lease
// ends of its own).
func TestCoordinatorTableAndConfig(t *testing.T) {
	cfg := Config{Lease: 15 * time.Minute, MinRuntime: time.Minute}
	w := newWorld(t, cfg, SimConfig{}, time.Minute)
	if w.co.Table() != w.tb {
		t.Fatal("Coordinator.Table is not the table it was built on")
	}
	if got := w.tb.Config(); got.Lease != cfg.Lease || got.MinRuntime != cfg.MinRuntime {
		t.Fatalf("Table.Config() = %+v, built with %+v", got, cfg)
	}
}

func (w *world) add(t fataler, at time.Time, id ledger.JobID, work time.Duration) {
	t.Helper()
	must(t, w.tb.Submit(at, id))
	must(t, w.sim.Add(id, work))
}

func (w *world) sameProgress(t fataler, at time.Time, id ledger.JobID) {
	t.Helper()
	p, _, _ := w.sim.Progress(id, at)
	in, err := w.tb.InfoAt(at, id)
	must(t, err)
	if in.Usage.Progress != p {
		t.Fatalf("job %s at %v: table progress %v, sim progress %v", id, at.Sub(t0), in.Usage.Progress, p)
	}
}

// The paper's worked example (section 11): A1 and A2 start; A2 completes
// mid-lease and is billed only to its completion; at the lease end A1 is not
// renewed, checkpoints and releases, and only then B1 starts; a lease later
// A1 is restored with a cold start.
func TestBoundaryWorkedExample(t *testing.T) {
	w := newWorld(t, Config{Lease: sec(900)}, SimConfig{Checkpoint: sec(30), ColdStart: sec(60), Iteration: sec(7), NoRenewalCheckpoint: true}, sec(120))
	w.add(t, t0, "A1", sec(3000))
	w.add(t, t0, "A2", sec(500))
	w.add(t, t0, "B1", sec(1000))
	out, err := w.co.Boundary(t0, Plan{Start: []Grant{{"A1", 8}, {"A2", 4}}})
	must(t, err)
	if !out.StartAt.Equal(t0) {
		t.Fatalf("StartAt = %v", out.StartAt)
	}
	done, ok := w.sim.CompletesAt("A2")
	if !ok || !done.Equal(t0.Add(sec(500))) {
		t.Fatalf("A2 completes at %v %v", done, ok)
	}
	must(t, w.tb.Finish(done, "A2", Completed))
	must(t, w.sim.Finish("A2"))
	if in, _ := w.tb.Info("A2"); in.Usage.Held != sec(500) {
		t.Fatalf("A2 held %v, want 500s (not its lease end)", in.Usage.Held)
	}

	tL := t0.Add(sec(900))
	if exp := w.tb.Expired(tL); len(exp) != 1 || exp[0] != "A1" {
		t.Fatalf("Expired = %v", exp)
	}
	w.rec.log = nil
	out, err = w.co.Boundary(tL, Plan{Preempt: []Grant{{"A1", 8}}, Start: []Grant{{"B1", 8}}})
	must(t, err)
	wantLog := []string{"signal A1 15m0s", "released A1 15m30s", "start B1 15m30s"}
	if fmt.Sprint(w.rec.log) != fmt.Sprint(wantLog) {
		t.Fatalf("effects = %q, want %q", w.rec.log, wantLog)
	}
	if !out.StartAt.Equal(tL.Add(sec(30))) || len(out.Decisions) != 2 {
		t.Fatalf("outcome = %+v", out)
	}
	a1, _ := w.tb.Info("A1")
	// 900 s of running is 128 whole iterations of 7 s plus 4 s in flight.
	want := Usage{Held: sec(930), Progress: sec(896), Checkpoint: sec(30), Lost: sec(4)}
	if a1.State != Suspended || a1.Usage != want {
		t.Fatalf("A1 = %v %+v, want suspended %+v", a1.State, a1.Usage, want)
	}
	w.sameProgress(t, out.StartAt, "A1")

	tL2 := out.StartAt.Add(sec(900))
	out, err = w.co.Boundary(tL2, Plan{Preempt: []Grant{{"B1", 8}}, Start: []Grant{{"A1", 8}}})
	must(t, err)
	if d := out.Decisions[1]; d.Action != Restored || d.ColdStart != sec(60) || !d.At.Equal(tL2.Add(sec(30))) {
		t.Fatalf("restore decision = %+v", d)
	}
	ready := out.StartAt.Add(sec(60))
	in, err := w.tb.InfoAt(ready, "A1")
	must(t, err)
	if in.State != Running || in.Usage.ColdStart != sec(60) || !in.LeaseStart.Equal(out.StartAt) {
		t.Fatalf("A1 after cold start = %+v", in)
	}
	end, _ := w.sim.CompletesAt("A1")
	if want := ready.Add(sec(3000 - 896)); !end.Equal(want) {
		t.Fatalf("A1 completes at %v, want %v", end.Sub(t0), want.Sub(t0))
	}
	must(t, w.tb.Finish(end, "A1", Completed))
	a1, _ = w.tb.Info("A1")
	if a1.Usage.Progress != sec(3000) || a1.Usage.Overhead() != sec(30+4+60) {
		t.Fatalf("A1 final usage %+v", a1.Usage)
	}
	check(t, w.tb)
}

func TestBoundaryForcedRelease(t *testing.T) {
	// The flush takes 50 s but the grace is 20 s: at the deadline the job is
	// stopped and the last flushed snapshot (from its renewal) stands.
	w := newWorld(t, Config{Lease: sec(100)}, SimConfig{Checkpoint: sec(50), Iteration: sec(10)}, sec(20))
	w.add(t, t0, "j", sec(10000))
	w.add(t, t0, "k", sec(10000))
	_, err := w.co.Boundary(t0, Plan{Start: []Grant{{"j", 1}}})
	must(t, err)
	// Renewal at 105 s: 105 s of progress, 100 s durable (whole iterations);
	// it pauses 50 s to flush.
	out, err := w.co.Boundary(t0.Add(sec(105)), Plan{Renew: []ledger.JobID{"j"}})
	must(t, err)
	if out.Decisions[0].Flush != sec(50) {
		t.Fatalf("renewal flush = %v", out.Decisions[0].Flush)
	}
	// Preempt at 300 s: progress 105 + 145 = 250 s; forced at 320 s; lost 150 s.
	out, err = w.co.Boundary(t0.Add(sec(300)), Plan{Preempt: []Grant{{"j", 1}}, Start: []Grant{{"k", 1}}})
	must(t, err)
	d := out.Decisions[0]
	if !d.Forced || d.Lost != sec(150) || !d.At.Equal(t0.Add(sec(320))) || !out.StartAt.Equal(d.At) {
		t.Fatalf("decision = %+v, StartAt %v", d, out.StartAt.Sub(t0))
	}
	in, _ := w.tb.Info("j")
	want := Usage{Held: sec(320), Progress: sec(100), Checkpoint: sec(50 + 20), Lost: sec(150)}
	if in.Usage != want {
		t.Fatalf("usage = %+v, want %+v", in.Usage, want)
	}
	w.sameProgress(t, out.StartAt, "j")
	check(t, w.tb)
}

func TestBoundaryGuard(t *testing.T) {
	w := newWorld(t, Config{Lease: sec(100), MinRuntime: sec(250)}, SimConfig{Checkpoint: sec(5)}, sec(60))
	for _, id := range []ledger.JobID{"old", "young", "p1", "p2", "p3"} {
		w.add(t, t0, id, sec(10000))
	}
	_, err := w.co.Boundary(t0, Plan{Start: []Grant{{"old", 4}}})
	must(t, err)
	_, err = w.co.Boundary(t0.Add(sec(200)), Plan{Renew: []ledger.JobID{"old"}, Start: []Grant{{"young", 4}}})
	must(t, err)
	// At 300 s, "old" ran 300 s (preemptible), "young" 100 s (guarded).
	out, err := w.co.Boundary(t0.Add(sec(300)), Plan{
		Preempt: []Grant{{"old", 4}, {"young", 4}},
		Start:   []Grant{{"p1", 4}, {"p2", 2}, {"p3", 2}},
	})
	must(t, err)
	got := map[ledger.JobID]Decision{}
	for _, d := range out.Decisions {
		got[d.Job] = d
	}
	if d := got["young"]; d.Action != Renewed || d.Reason != ReasonGuarded || d.Detail == "" {
		t.Fatalf("young: %+v", d)
	}
	if d := got["old"]; d.Action != Preempted {
		t.Fatalf("old: %+v", d)
	}
	if got["p1"].Action != Started || got["p2"].Action != Deferred || got["p3"].Action != Deferred || got["p3"].Reason != ReasonGPUsKept {
		t.Fatalf("starts: %+v", out.Decisions)
	}
	if in, _ := w.tb.Info("p2"); in.State != Pending {
		t.Fatalf("deferred p2 is %v", in.State)
	}
	check(t, w.tb)
}

func TestBoundaryRejectsBadPlans(t *testing.T) {
	tests := map[string]struct {
		plan Plan
		want error
	}{
		"an unknown job":                    {Plan{Start: []Grant{{"nobody", 1}}}, ErrUnknownJob},
		"renewing a pending job":            {Plan{Renew: []ledger.JobID{"pend"}}, ErrInvalidTransition},
		"preempting a suspended job":        {Plan{Preempt: []Grant{{"susp", 1}}}, ErrInvalidTransition},
		"starting a running job":            {Plan{Start: []Grant{{"run", 1}}}, ErrInvalidTransition},
		"starting a completed job":          {Plan{Start: []Grant{{"done", 1}}}, ErrInvalidTransition},
		"a job listed twice":                {Plan{Renew: []ledger.JobID{"run"}, Preempt: []Grant{{"run", 1}}}, ErrInvalidValue},
		"a negative GPU count":              {Plan{Start: []Grant{{"pend", -1}}}, ErrInvalidValue},
		"a bad entry after good ones first": {Plan{Renew: []ledger.JobID{"run"}, Start: []Grant{{"pend", 1}, {"done", 1}}}, ErrInvalidTransition},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, Config{}, SimConfig{Checkpoint: sec(1)}, sec(10))
			for _, id := range []ledger.JobID{"pend", "susp", "run", "done"} {
				w.add(t, t0, id, sec(5000))
			}
			_, err := w.co.Boundary(t0, Plan{Start: []Grant{{"susp", 1}, {"run", 1}, {"done", 1}}})
			must(t, err)
			_, err = w.co.Boundary(t1, Plan{Preempt: []Grant{{"susp", 1}}})
			must(t, err)
			must(t, w.tb.Finish(t1, "done", Completed))
			before := map[ledger.JobID]Info{}
			for id := range w.tb.Jobs() {
				before[id], _ = w.tb.Info(id)
			}
			w.rec.log = nil
			_, err = w.co.Boundary(t2, tc.plan)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if len(w.rec.log) != 0 {
				t.Fatalf("side effects ran: %q", w.rec.log)
			}
			for id := range w.tb.Jobs() {
				if in, _ := w.tb.Info(id); in != before[id] {
					t.Fatalf("job %s changed: %+v → %+v", id, before[id], in)
				}
			}
		})
	}
}

// errNoNode is the cause of a failing start.
var errNoNode = errors.New("no such node")

type failing struct {
	*recorder
	failStart bool
}

func (f failing) Start(at time.Time, job ledger.JobID) error {
	if f.failStart {
		return errNoNode
	}
	return f.recorder.Start(at, job)
}

func TestBoundaryEffectFailure(t *testing.T) {
	tb := newTable(t, Config{})
	sim, _ := NewSim(SimConfig{})
	co, err := NewCoordinator(tb, failing{&recorder{fx: sim}, true}, CoordinatorConfig{})
	must(t, err)
	must(t, tb.Submit(t0, "a"))
	must(t, sim.Add("a", sec(10)))
	_, err = co.Boundary(t0, Plan{Start: []Grant{{"a", 1}}})
	var le *Error
	if !errors.Is(err, ErrEffect) || !errors.Is(err, errNoNode) || !errors.As(err, &le) || le.Job != "a" || le.Cause != errNoNode {
		t.Fatalf("err = %v", err)
	}
	if in, _ := tb.Info("a"); in.State != Pending {
		t.Fatalf("state = %v", in.State)
	}
	if _, err := NewCoordinator(tb, sim, CoordinatorConfig{Grace: -1}); !errors.Is(err, ErrConfig) {
		t.Fatalf("negative grace: %v", err)
	}
	if _, err := NewCoordinator(tb, sim, CoordinatorConfig{Grace: MaxSpan + 1}); !errors.Is(err, ErrConfig) {
		t.Fatalf("grace past MaxSpan: %v", err)
	}
	if _, err := NewSim(SimConfig{ColdStart: -1}); !errors.Is(err, ErrConfig) {
		t.Fatalf("negative cold start: %v", err)
	}
}

func TestDecisionJSON(t *testing.T) {
	b, err := json.Marshal(Decision{Job: "a", Action: Renewed, Reason: ReasonGuarded, At: t0})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"Action":"renewed"`, `"Reason":"guarded by minimum runtime"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
}
