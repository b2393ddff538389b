package lease

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

func TestUsageAddIsFieldWise(t *testing.T) {
	u := Usage{Held: 15, Progress: 1, Checkpoint: 2, ColdStart: 4, Lost: 8}
	v := Usage{Held: 1500, Progress: 100, Checkpoint: 200, ColdStart: 400, Lost: 800}
	want := Usage{Held: 1515, Progress: 101, Checkpoint: 202, ColdStart: 404, Lost: 808}
	if got := u.Add(v); got != want {
		t.Fatalf("Add = %+v, want %+v", got, want)
	}
	if err := want.Check(); err != nil {
		t.Fatal(err)
	}
}

// Renewals, Preemptions (checkpoint signals) and Restores each count their
// own events, across several cycles.
func TestEventCounters(t *testing.T) {
	tb := newTable(t, Config{})
	must(t, tb.Submit(t0, "j"))
	must(t, tb.Start(t0, "j"))
	must(t, tb.Renew(t0.Add(10*time.Second), "j", 0))
	for i := range 2 {
		at := t0.Add(time.Duration(100*(i+1)) * time.Second)
		must(t, tb.Checkpoint(at, "j"))
		must(t, tb.Release(at.Add(5*time.Second), "j", 0))
		must(t, tb.Restore(at.Add(10*time.Second), "j", 3*time.Second))
	}
	in, _ := tb.Info("j")
	if in.Renewals != 1 || in.Preemptions != 2 || in.Restores != 2 {
		t.Fatalf("renewals %d, preemptions %d, restores %d; want 1, 2, 2", in.Renewals, in.Preemptions, in.Restores)
	}
	check(t, tb)
}

// Expired lists running jobs whose lease has ended: a restored job whose cold
// start ended before its lease did is one; a job still restoring is not, until
// its cold start ends.
func TestExpiredAndRestoringJobs(t *testing.T) {
	tb := newTable(t, Config{Lease: 150 * time.Second})
	suspend := func(id ledger.JobID) {
		must(t, tb.Submit(t0, id))
		must(t, tb.Start(t0, id))
		must(t, tb.Checkpoint(t0, id))
		must(t, tb.Release(t0, id, 0))
	}
	suspend("quick")
	suspend("slow")
	suspend("exact")
	must(t, tb.Restore(t0, "quick", 50*time.Second)) // running from 50 s, lease to 150 s
	must(t, tb.Restore(t0, "slow", 300*time.Second)) // lease to 150 s, restoring until 300 s
	must(t, tb.Restore(t0, "exact", 150*time.Second))
	for _, tc := range []struct {
		at   time.Duration
		want []ledger.JobID
	}{
		{149 * time.Second, nil},
		{150 * time.Second, []ledger.JobID{"exact", "quick"}},
		{299 * time.Second, []ledger.JobID{"exact", "quick"}},
		{300 * time.Second, []ledger.JobID{"exact", "quick", "slow"}},
	} {
		if got := tb.Expired(t0.Add(tc.at)); !slices.Equal(got, tc.want) {
			t.Errorf("Expired(%v) = %v, want %v", tc.at, got, tc.want)
		}
	}
	for _, tc := range []struct {
		id   ledger.JobID
		at   time.Duration
		want State
	}{
		{"slow", 299 * time.Second, Restoring},
		{"slow", 300 * time.Second, Running},
		{"quick", 49 * time.Second, Restoring},
		{"quick", 50 * time.Second, Running},
	} {
		if in, err := tb.InfoAt(t0.Add(tc.at), tc.id); err != nil || in.State != tc.want {
			t.Errorf("%s at %v: %v, %v; want %v", tc.id, tc.at, in.State, err, tc.want)
		}
	}
	check(t, tb)
}

// Progress through a checkpoint, a suspension and a cold start: State at
// each boundary, and Usage when the job ends from Checkpointing or from a
// cold start (Restoring).
func TestProgressThroughCheckpointAndRestore(t *testing.T) {
	cfg := SimConfig{Checkpoint: 20 * time.Second, ColdStart: 30 * time.Second}
	s := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	newRunning := func(t *testing.T) Progress {
		p, err := NewProgress(1000 * time.Second)
		must(t, err)
		must(t, p.Start(s(0)))
		must(t, p.Signal(s(100)))
		return p
	}

	t.Run("a clean release is checkpointing until the flush ends", func(t *testing.T) {
		p := newRunning(t)
		r, err := p.Release(s(200), cfg)
		must(t, err)
		if !r.At.Equal(s(120)) || r.Lost != 0 || r.Forced {
			t.Fatalf("release %+v, want at 120 s, nothing lost", r)
		}
		for _, c := range []struct {
			at   int
			want State
		}{{100, Checkpointing}, {119, Checkpointing}, {120, Suspended}, {150, Suspended}} {
			if got := p.State(s(c.at)); got != c.want {
				t.Errorf("State(%d s) = %v, want %v", c.at, got, c.want)
			}
		}
		if u := p.Usage(s(150)); u != (Usage{Held: sec(120), Progress: sec(100), Checkpoint: sec(20)}) {
			t.Errorf("Usage = %+v", u)
		}
		if _, err := p.Restore(s(200), cfg); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			at   int
			want State
		}{{200, Restoring}, {229, Restoring}, {230, Running}} {
			if got := p.State(s(c.at)); got != c.want {
				t.Errorf("State(%d s) = %v, want %v", c.at, got, c.want)
			}
		}
		if u := p.Usage(s(215)); u != (Usage{Held: sec(135), Progress: sec(100), Checkpoint: sec(20), ColdStart: sec(15)}) {
			t.Errorf("Usage during the cold start = %+v", u)
		}
		must(t, p.Finish(s(220), Failed))
		if u := p.Usage(s(300)); u != (Usage{Held: sec(140), Progress: sec(100), Checkpoint: sec(20), ColdStart: sec(20)}) {
			t.Errorf("Usage after failing in the cold start = %+v", u)
		}
		if got := p.State(s(300)); got != Failed {
			t.Errorf("State = %v, want Failed", got)
		}
	})
	t.Run("a forced release loses the work since the last snapshot", func(t *testing.T) {
		p := newRunning(t)
		r, err := p.Release(s(110), cfg)
		must(t, err)
		if !r.At.Equal(s(110)) || r.Lost != sec(100) || !r.Forced {
			t.Fatalf("release %+v, want forced at 110 s losing 100 s", r)
		}
		if u := p.Usage(s(110)); u != (Usage{Held: sec(110), Checkpoint: sec(10), Lost: sec(100)}) {
			t.Errorf("Usage = %+v", u)
		}
	})
	t.Run("ending while checkpointing bills the flush so far", func(t *testing.T) {
		p := newRunning(t)
		if got := p.State(s(105)); got != Checkpointing {
			t.Fatalf("State = %v, want Checkpointing", got)
		}
		if u := p.Usage(s(105)); u != (Usage{Held: sec(105), Progress: sec(100), Checkpoint: sec(5)}) {
			t.Errorf("Usage while checkpointing = %+v", u)
		}
		must(t, p.Finish(s(110), Cancelled))
		if u := p.Usage(s(200)); u != (Usage{Held: sec(110), Progress: sec(100), Checkpoint: sec(10)}) {
			t.Errorf("Usage = %+v", u)
		}
	})
}

// Check finds each kind of corruption it documents. Every case breaks one
// invariant of a table behind the API's back.
func TestTableCheckFindsCorruption(t *testing.T) {
	build := func(t *testing.T) *Table {
		tb := newTable(t, Config{})
		for _, id := range []ledger.JobID{"pending", "running", "suspended", "restoring", "done"} {
			must(t, tb.Submit(t0, id))
		}
		for _, id := range []ledger.JobID{"running", "suspended", "restoring", "done"} {
			must(t, tb.Start(t0, id))
		}
		for _, id := range []ledger.JobID{"suspended", "restoring"} {
			must(t, tb.Checkpoint(t1, id))
			must(t, tb.Release(t1, id, 0))
		}
		must(t, tb.Restore(t2, "restoring", time.Hour))
		must(t, tb.Finish(t2, "done", Completed))
		check(t, tb)
		return tb
	}
	for _, tc := range []struct {
		name    string
		corrupt func(tb *Table)
	}{
		{"a running job missing from the lease index", func(tb *Table) { tb.jobs["running"].leaseEnd = t5 }},
		{"a job stored under another id", func(tb *Table) { tb.jobs["running"].id = "other" }},
		{"a job in an invalid state", func(tb *Table) { tb.jobs["done"].state = 99 }},
		{"inconsistent usage", func(tb *Table) { tb.jobs["done"].usage.Held++ }},
		{"negative work at risk", func(tb *Table) { tb.jobs["running"].atRisk = -1 }},
		{"more work at risk than progress", func(tb *Table) { tb.jobs["running"].atRisk = time.Hour }},
		{"a last event before the submit", func(tb *Table) { tb.jobs["pending"].last = t0.Add(-time.Second) }},
		{"a lease of the wrong length", func(tb *Table) {
			j := tb.jobs["restoring"]
			tb.leases.Delete(keyOf(j))
			j.leaseStart = j.leaseStart.Add(time.Second)
			tb.leases.ReplaceOrInsert(keyOf(j))
		}},
		{"a lease on a job that holds no GPUs", func(tb *Table) { tb.jobs["suspended"].leaseStart = t1 }},
		{"a flush on a job that holds no GPUs", func(tb *Table) { tb.jobs["done"].pause = time.Second }},
		{"a restoring job past its ready time", func(tb *Table) { tb.jobs["restoring"].readyAt = t2 }},
		{"a pending job with usage", func(tb *Table) { tb.jobs["pending"].usage = Usage{Held: 1, Progress: 1} }},
		{"inconsistent usage of forgotten jobs", func(tb *Table) { tb.retired = Usage{Held: 1} }},
		{"a stray lease index entry", func(tb *Table) { tb.leases.ReplaceOrInsert(leaseKey{t5.UnixNano(), "ghost"}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := build(t)
			tc.corrupt(tb)
			if err := tb.Check(); err == nil {
				t.Fatal("Check found nothing")
			}
		})
	}
}

// A rejected renewal pauses nothing: its duration is 0 beside the error.
func TestRejectedRenewalReturnsNoPause(t *testing.T) {
	cfg := SimConfig{Checkpoint: 20 * time.Second}
	p, err := NewProgress(time.Hour)
	must(t, err)
	if d, err := p.Renew(t0, cfg); err == nil || d != 0 {
		t.Errorf("renewing a pending job: %v, %v; want 0 and an error", d, err)
	}
	sim, err := NewSim(cfg)
	must(t, err)
	if d, err := sim.Renew(t0, "unknown"); err == nil || d != 0 {
		t.Errorf("renewing an unknown job: %v, %v; want 0 and an error", d, err)
	}
}

// Without a minimum runtime no job is guarded, and no guard end is reported.
func TestNoMinimumRuntimeGuardsNothing(t *testing.T) {
	tb := newTable(t, Config{})
	must(t, tb.Submit(t0, "j"))
	must(t, tb.Start(t0, "j"))
	if until, ok := tb.Guarded(t0, "j"); ok || !until.IsZero() {
		t.Errorf("Guarded = %v, %v; want zero, false", until, ok)
	}
}

// Usage.Check rejects a negative field even when the fields still add up.
func TestUsageCheckRejectsNegativeFields(t *testing.T) {
	for _, u := range []Usage{
		{Held: -1, Progress: -1},
		{Held: 0, Progress: -1, Lost: 1},
		{Held: 0, Progress: 1, Checkpoint: -1},
		{Held: 0, Progress: 1, ColdStart: -1},
		{Held: 0, Progress: 1, Lost: -1},
	} {
		if err := u.Check(); err == nil {
			t.Errorf("%+v passes Check", u)
		}
	}
	if err := (Usage{Held: 3, Progress: 1, Lost: 2}).Check(); err != nil {
		t.Error(err)
	}
}

// A Progress that has ended accepts no second Finish.
func TestProgressFinishesOnce(t *testing.T) {
	p, err := NewProgress(time.Hour)
	must(t, err)
	must(t, p.Start(t0))
	must(t, p.Finish(t1, Cancelled))
	if err := p.Finish(t2, Failed); !errors.Is(err, ErrInvalidTransition) {
		t.Errorf("second Finish: %v, want ErrInvalidTransition", err)
	}
	if got := p.State(t2); got != Cancelled {
		t.Errorf("State = %v, want the first final state", got)
	}
}
