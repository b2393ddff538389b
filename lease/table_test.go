package lease

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

var (
	t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 = t0.Add(100 * time.Second)
	t2 = t0.Add(200 * time.Second)
	t3 = t0.Add(300 * time.Second)
	t4 = t0.Add(400 * time.Second)
	t5 = t0.Add(500 * time.Second)
)

const testLease = 900 * time.Second

func newTable(t fataler, cfg Config) *Table {
	t.Helper()
	if cfg.Lease == 0 {
		cfg.Lease = testLease
	}
	tb, err := NewTable(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func must(t fataler, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func check(t fataler, tb *Table) {
	t.Helper()
	if err := tb.Check(); err != nil {
		t.Fatal(err)
	}
}

// step is one event applied to job "j".
type step func(tb *Table) error

func submit(at time.Time) step { return func(tb *Table) error { return tb.Submit(at, "j") } }
func start(at time.Time) step  { return func(tb *Table) error { return tb.Start(at, "j") } }
func renew(at time.Time, flush time.Duration) step {
	return func(tb *Table) error { return tb.Renew(at, "j", flush) }
}
func ckpt(at time.Time) step { return func(tb *Table) error { return tb.Checkpoint(at, "j") } }
func release(at time.Time, lost time.Duration) step {
	return func(tb *Table) error { return tb.Release(at, "j", lost) }
}
func restore(at time.Time, cold time.Duration) step {
	return func(tb *Table) error { return tb.Restore(at, "j", cold) }
}
func finish(at time.Time, s State) step {
	return func(tb *Table) error { return tb.Finish(at, "j", s) }
}

func TestTransitions(t *testing.T) {
	tests := map[string]struct {
		steps []step
		state State
		usage Usage
	}{
		"a submitted job is pending and holds nothing": {
			steps: []step{submit(t0)}, state: Pending,
		},
		"a started job runs and its running time is progress": {
			steps: []step{submit(t0), start(t1), renew(t2, 0)}, state: Running,
			usage: Usage{Held: 100 * time.Second, Progress: 100 * time.Second},
		},
		"a renewal flush counts as checkpoint overhead, not progress": {
			steps: []step{submit(t0), start(t0), renew(t1, 30*time.Second), renew(t2, 0)}, state: Running,
			usage: Usage{Held: 200 * time.Second, Progress: 170 * time.Second, Checkpoint: 30 * time.Second},
		},
		"a checkpointed job holds its GPUs until it releases them": {
			steps: []step{submit(t0), start(t0), ckpt(t1), release(t2, 10*time.Second)}, state: Suspended,
			usage: Usage{Held: 200 * time.Second, Progress: 90 * time.Second, Checkpoint: 100 * time.Second, Lost: 10 * time.Second},
		},
		"a restored job pays its cold start and then runs without another call": {
			steps: []step{submit(t0), start(t0), ckpt(t1), release(t1, 0), restore(t2, 50*time.Second), renew(t3, 0)},
			state: Running,
			usage: Usage{Held: 200 * time.Second, Progress: 150 * time.Second, ColdStart: 50 * time.Second},
		},
		"a restoring job is still restoring before its cold start ends": {
			steps: []step{submit(t0), start(t0), ckpt(t1), release(t1, 0), restore(t2, 500*time.Second), finish(t3, Cancelled)},
			state: Cancelled,
			usage: Usage{Held: 200 * time.Second, Progress: 100 * time.Second, ColdStart: 100 * time.Second},
		},
		"a job that finishes mid-lease is billed only to its finish": {
			steps: []step{submit(t0), start(t0), finish(t1, Completed)}, state: Completed,
			usage: Usage{Held: 100 * time.Second, Progress: 100 * time.Second},
		},
		"a job may complete while it checkpoints": {
			steps: []step{submit(t0), start(t0), ckpt(t1), finish(t2, Completed)}, state: Completed,
			usage: Usage{Held: 200 * time.Second, Progress: 100 * time.Second, Checkpoint: 100 * time.Second},
		},
		"a pending job can be cancelled": {
			steps: []step{submit(t0), finish(t1, Cancelled)}, state: Cancelled,
		},
		"a suspended job can fail": {
			steps: []step{submit(t0), start(t0), ckpt(t1), release(t1, 0), finish(t2, Failed)}, state: Failed,
			usage: Usage{Held: 100 * time.Second, Progress: 100 * time.Second},
		},
		"a zero cold start runs at once": {
			steps: []step{submit(t0), start(t0), ckpt(t1), release(t1, 0), restore(t2, 0), ckpt(t3)}, state: Checkpointing,
			usage: Usage{Held: 200 * time.Second, Progress: 200 * time.Second},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tb := newTable(t, Config{})
			for i, s := range tc.steps {
				if err := s(tb); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				check(t, tb)
			}
			in, _ := tb.Info("j")
			if in.State != tc.state {
				t.Errorf("state = %v, want %v", in.State, tc.state)
			}
			if in.Usage != tc.usage {
				t.Errorf("usage = %+v, want %+v", in.Usage, tc.usage)
			}
		})
	}
}

func TestIllegalTransitions(t *testing.T) {
	tests := map[string]struct {
		setup []step
		bad   step
		want  error
		to    State
	}{
		"a pending job cannot be renewed":          {[]step{submit(t0)}, renew(t1, 0), ErrInvalidTransition, Running},
		"a pending job cannot be checkpointed":     {[]step{submit(t0)}, ckpt(t1), ErrInvalidTransition, Checkpointing},
		"a pending job cannot be restored":         {[]step{submit(t0)}, restore(t1, 0), ErrInvalidTransition, Restoring},
		"a pending job cannot complete":            {[]step{submit(t0)}, finish(t1, Completed), ErrInvalidTransition, Completed},
		"a running job cannot start again":         {[]step{submit(t0), start(t0)}, start(t1), ErrInvalidTransition, Running},
		"a running job cannot release unsignalled": {[]step{submit(t0), start(t0)}, release(t1, 0), ErrInvalidTransition, Suspended},
		"a running job cannot be restored":         {[]step{submit(t0), start(t0)}, restore(t1, 0), ErrInvalidTransition, Restoring},
		"a checkpointing job cannot be renewed":    {[]step{submit(t0), start(t0), ckpt(t1)}, renew(t2, 0), ErrInvalidTransition, Running},
		"a checkpointing job cannot be signalled twice": {
			[]step{submit(t0), start(t0), ckpt(t1)}, ckpt(t2), ErrInvalidTransition, Checkpointing},
		"a suspended job cannot be started fresh": {
			[]step{submit(t0), start(t0), ckpt(t1), release(t1, 0)}, start(t2), ErrInvalidTransition, Running},
		"a suspended job cannot complete": {
			[]step{submit(t0), start(t0), ckpt(t1), release(t1, 0)}, finish(t2, Completed), ErrInvalidTransition, Completed},
		"a restoring job cannot be checkpointed before its cold start ends": {
			[]step{submit(t0), start(t0), ckpt(t1), release(t1, 0), restore(t2, time.Hour)}, ckpt(t3), ErrInvalidTransition, Checkpointing},
		"a restoring job cannot complete": {
			[]step{submit(t0), start(t0), ckpt(t1), release(t1, 0), restore(t2, time.Hour)}, finish(t3, Completed), ErrInvalidTransition, Completed},
		"a completed job never restarts": {
			[]step{submit(t0), start(t0), finish(t1, Completed)}, start(t2), ErrInvalidTransition, Running},
		"a completed job is never restored": {
			[]step{submit(t0), start(t0), finish(t1, Completed)}, restore(t2, 0), ErrInvalidTransition, Restoring},
		"a cancelled job cannot fail later": {
			[]step{submit(t0), finish(t0, Cancelled)}, finish(t1, Failed), ErrInvalidTransition, Failed},
		"an event earlier than the job's last is rejected": {
			[]step{submit(t0), start(t2)}, ckpt(t1), ErrTimeBackwards, Checkpointing},
		"a lost-work figure above the work at risk is rejected": {
			[]step{submit(t0), start(t0), ckpt(t1)}, release(t2, 101*time.Second), ErrInvalidValue, Suspended},
		"negative lost work is rejected": {
			[]step{submit(t0), start(t0), ckpt(t1)}, release(t2, -1), ErrInvalidValue, Suspended},
		"a negative cold start is rejected": {
			[]step{submit(t0), start(t0), ckpt(t1), release(t1, 0)}, restore(t2, -1), ErrInvalidValue, Restoring},
		"a negative renewal flush is rejected": {
			[]step{submit(t0), start(t0)}, renew(t1, -1), ErrInvalidValue, Running},
		"finishing in a non-final state is rejected": {
			[]step{submit(t0), start(t0)}, finish(t1, Suspended), ErrInvalidValue, Suspended},
		"a duplicate submit is rejected": {[]step{submit(t0)}, submit(t1), ErrDuplicateJob, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tb := newTable(t, Config{})
			for i, s := range tc.setup {
				must(t, s(tb))
				_ = i
			}
			before, _ := tb.Info("j")
			err := tc.bad(tb)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var le *Error
			if !errors.As(err, &le) || le.Job != "j" || le.State != before.State || le.To != tc.to {
				t.Errorf("error %#v does not name job j, state %v and target %v", le, before.State, tc.to)
			}
			msg := err.Error()
			if !strings.Contains(msg, `job "j"`) || !strings.Contains(msg, before.State.String()) {
				t.Errorf("message %q does not name the job and its state %v", msg, before.State)
			}
			if tc.to != 0 && le.State != 0 && !strings.Contains(msg, before.State.String()+" → "+tc.to.String()) {
				t.Errorf("message %q does not name the attempted transition", msg)
			}
			after, _ := tb.Info("j")
			if after != before {
				t.Errorf("rejected event changed the job:\n before %+v\n after  %+v", before, after)
			}
			check(t, tb)
		})
	}
}

func TestUnknownJob(t *testing.T) {
	tb := newTable(t, Config{})
	for name, f := range map[string]func() error{
		"start":      func() error { return tb.Start(t0, "x") },
		"renew":      func() error { return tb.Renew(t0, "x", 0) },
		"checkpoint": func() error { return tb.Checkpoint(t0, "x") },
		"release":    func() error { return tb.Release(t0, "x", 0) },
		"restore":    func() error { return tb.Restore(t0, "x", 0) },
		"finish":     func() error { return tb.Finish(t0, "x", Failed) },
		"forget":     func() error { return tb.Forget("x") },
	} {
		if err := f(); !errors.Is(err, ErrUnknownJob) {
			t.Errorf("%s of an unknown job: err = %v, want ErrUnknownJob", name, err)
		}
	}
	if err := tb.Submit(t0, ""); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("empty ID: err = %v", err)
	}
}

func TestConfigRejected(t *testing.T) {
	for name, cfg := range map[string]Config{
		"a zero lease":             {},
		"a negative lease":         {Lease: -time.Second},
		"a negative minimum guard": {Lease: time.Second, MinRuntime: -1},
	} {
		if _, err := NewTable(cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: err = %v, want ErrConfig", name, err)
		}
	}
}

func TestMinRuntimeGuard(t *testing.T) {
	tb := newTable(t, Config{MinRuntime: 250 * time.Second})
	must(t, tb.Submit(t0, "j"))
	must(t, tb.Start(t0, "j"))
	if until, g := tb.Guarded(t1, "j"); !g || !until.Equal(t0.Add(250*time.Second)) {
		t.Fatalf("Guarded(t1) = %v, %v", until, g)
	}
	err := tb.Checkpoint(t2, "j")
	if !errors.Is(err, ErrGuarded) {
		t.Fatalf("checkpoint at t2: %v, want ErrGuarded", err)
	}
	// Renewal does not reset the guard clock.
	must(t, tb.Renew(t2, "j", 0))
	if _, g := tb.Guarded(t3, "j"); g {
		t.Fatal("still guarded at t3 after 300s of running")
	}
	must(t, tb.Checkpoint(t3, "j"))
	must(t, tb.Release(t3, "j", 0))
	// After a restore the guard counts from the end of the cold start.
	must(t, tb.Restore(t3, "j", 100*time.Second)) // running from t4
	if _, g := tb.Guarded(t5, "j"); !g {
		t.Fatal("not guarded 100s after the cold start ended")
	}
	if err := tb.Checkpoint(t5, "j"); !errors.Is(err, ErrGuarded) {
		t.Fatalf("checkpoint at t5: %v", err)
	}
	must(t, tb.Checkpoint(t4.Add(250*time.Second), "j"))
	check(t, tb)
}

type billLog struct {
	events []string
	fail   bool
}

func (b *billLog) Start(at time.Time, job ledger.JobID) error {
	if b.fail {
		return errors.New("ledger down")
	}
	b.events = append(b.events, "start "+string(job)+" "+at.Sub(t0).String())
	return nil
}

func (b *billLog) Stop(at time.Time, job ledger.JobID) error {
	if b.fail {
		return errors.New("ledger down")
	}
	b.events = append(b.events, "stop "+string(job)+" "+at.Sub(t0).String())
	return nil
}

func TestBilling(t *testing.T) {
	b := &billLog{}
	tb := newTable(t, Config{Billing: b})
	for _, s := range []step{submit(t0), start(t0), renew(t1, 0), ckpt(t2), release(t3, 0), restore(t4, 10*time.Second), finish(t5, Completed)} {
		if err := s(tb); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"start j 0s", "stop j 5m0s", "start j 6m40s", "stop j 8m20s"}
	if len(b.events) != len(want) {
		t.Fatalf("billing = %q, want %q", b.events, want)
	}
	for i := range want {
		if b.events[i] != want[i] {
			t.Fatalf("billing = %q, want %q", b.events, want)
		}
	}
	// A billing failure rejects the transition and leaves the table unchanged.
	must(t, tb.Submit(t0, "k"))
	b.fail = true
	err := tb.Start(t1, "k")
	if !errors.Is(err, ErrEffect) {
		t.Fatalf("err = %v, want ErrEffect", err)
	}
	if in, _ := tb.Info("k"); in.State != Pending {
		t.Fatalf("state after failed billing = %v", in.State)
	}
}

func TestExpiredAndTotals(t *testing.T) {
	tb := newTable(t, Config{Lease: 150 * time.Second})
	for _, id := range []ledger.JobID{"b", "a", "c"} {
		must(t, tb.Submit(t0, id))
	}
	must(t, tb.Start(t0, "b"))
	must(t, tb.Start(t0, "a"))
	must(t, tb.Start(t1, "c"))
	got := tb.Expired(t2)
	if len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("Expired(t2) = %v, want [a b]", got)
	}
	if next, ok := tb.NextExpiry(); !ok || !next.Equal(t0.Add(150*time.Second)) {
		t.Fatalf("NextExpiry = %v, %v", next, ok)
	}
	must(t, tb.Finish(t2, "a", Completed))
	must(t, tb.Forget("a"))
	if err := tb.Forget("b"); !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("forget running: %v", err)
	}
	u := tb.Totals(t3)
	// a: 200s, b: 300s, c: 200s
	if u.Held != 700*time.Second || u.Progress != 700*time.Second {
		t.Fatalf("totals = %+v", u)
	}
	in, err := tb.InfoAt(t3, "b")
	if err != nil || in.Usage.Held != 300*time.Second {
		t.Fatalf("InfoAt = %+v, %v", in, err)
	}
	if _, err := tb.InfoAt(t0, "c"); !errors.Is(err, ErrTimeBackwards) {
		t.Fatalf("InfoAt before last event: %v", err)
	}
	check(t, tb)
}

func TestStateText(t *testing.T) {
	for s := Pending; s <= Cancelled; s++ {
		b, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back State
		if err := back.UnmarshalText(b); err != nil || back != s {
			t.Fatalf("%v round trip = %v, %v", s, back, err)
		}
	}
	if _, err := State(0).MarshalText(); !errors.Is(err, ErrInvalidValue) {
		t.Fatal("zero state encoded")
	}
	var s State
	if err := s.UnmarshalText([]byte("sleeping")); !errors.Is(err, ErrInvalidValue) {
		t.Fatal("unknown name decoded")
	}
}

// fataler is what the test helpers need from *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func FuzzStateText(f *testing.F) {
	for s := Pending; s <= Cancelled; s++ {
		f.Add(s.String())
	}
	f.Add("")
	f.Add("State(0)")
	f.Fuzz(func(t *testing.T, in string) {
		s := Suspended
		if err := s.UnmarshalText([]byte(in)); err != nil {
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("untyped error %v", err)
			}
			if s != Suspended {
				t.Fatalf("%q: rejected, yet the state changed to %v", in, s)
			}
			return
		}
		out, err := s.MarshalText()
		if err != nil || string(out) != in {
			t.Fatalf("%q → %v → %q, %v", in, s, out, err)
		}
	})
}

// TestTransitionMatrix applies every event to a job in every state and
// checks it against the transition table of the package documentation.
func TestTransitionMatrix(t *testing.T) {
	setups := map[State][]step{
		Pending:       {submit(t0)},
		Running:       {submit(t0), start(t0)},
		Checkpointing: {submit(t0), start(t0), ckpt(t1)},
		Suspended:     {submit(t0), start(t0), ckpt(t1), release(t1, 0)},
		Restoring:     {submit(t0), start(t0), ckpt(t1), release(t1, 0), restore(t1, time.Hour)},
		Completed:     {submit(t0), start(t0), finish(t1, Completed)},
		Failed:        {submit(t0), finish(t1, Failed)},
		Cancelled:     {submit(t0), finish(t1, Cancelled)},
	}
	events := []struct {
		name  string
		do    step
		to    State
		legal []State
	}{
		{"start", start(t2), Running, []State{Pending}},
		{"renew", renew(t2, 0), Running, []State{Running}},
		{"checkpoint", ckpt(t2), Checkpointing, []State{Running}},
		{"release", release(t2, 0), Suspended, []State{Checkpointing}},
		{"restore", restore(t2, 0), Running, []State{Suspended}},
		{"complete", finish(t2, Completed), Completed, []State{Running, Checkpointing}},
		{"fail", finish(t2, Failed), Failed, []State{Pending, Running, Checkpointing, Suspended, Restoring}},
		{"cancel", finish(t2, Cancelled), Cancelled, []State{Pending, Running, Checkpointing, Suspended, Restoring}},
	}
	for from := Pending; from <= Cancelled; from++ {
		for _, ev := range events {
			legal := slices.Contains(ev.legal, from)
			verb := "is rejected"
			if legal {
				verb = "is accepted"
			}
			t.Run(fmt.Sprintf("%s of a %s job %s", ev.name, from, verb), func(t *testing.T) {
				tb := newTable(t, Config{})
				for _, s := range setups[from] {
					must(t, s(tb))
				}
				if in, _ := tb.Info("j"); in.State != from {
					t.Fatalf("setup reached %v, want %v", in.State, from)
				}
				err := ev.do(tb)
				in, _ := tb.Info("j")
				switch {
				case legal && err != nil:
					t.Fatalf("rejected: %v", err)
				case legal && in.State != ev.to:
					t.Fatalf("state %v, want %v", in.State, ev.to)
				case !legal && !errors.Is(err, ErrInvalidTransition):
					t.Fatalf("err = %v, want ErrInvalidTransition", err)
				case !legal && in.State != from:
					t.Fatalf("rejected event moved the job to %v", in.State)
				}
				check(t, tb)
			})
		}
	}
}
