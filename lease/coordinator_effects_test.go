package lease

import (
	"errors"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// scripted is Effects that report what the test says: each release as
// release, each cold start as cold.
type scripted struct {
	release ReleaseReport
	cold    time.Duration
}

func (s scripted) Checkpoint(time.Time, ledger.JobID) error { return nil }
func (s scripted) WaitReleased(ledger.JobID, time.Time) (ReleaseReport, error) {
	return s.release, nil
}
func (s scripted) Start(time.Time, ledger.JobID) error { return nil }
func (s scripted) Restore(time.Time, ledger.JobID) (time.Duration, error) {
	return s.cold, nil
}

// NewCoordinator needs both a table and effects: either one missing is
// ErrConfig.
func TestNewCoordinatorNeedsTableAndEffects(t *testing.T) {
	tb := newTable(t, Config{})
	for name, c := range map[string]struct {
		tb *Table
		fx Effects
	}{
		"without a table":    {nil, scripted{}},
		"without effects":    {tb, nil},
		"without either one": {nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := NewCoordinator(c.tb, c.fx, CoordinatorConfig{}); !errors.Is(err, ErrConfig) {
				t.Fatalf("%v, want ErrConfig", err)
			}
		})
	}
}

// A release the effects report outside [at, deadline] is an effect that
// failed: the boundary stops with ErrEffect naming the job, and the job
// stays checkpointing, the last step that succeeded. A release at the
// deadline itself is a forced one, and accepted.
func TestBoundaryRefusesAReleaseOutsideItsWindow(t *testing.T) {
	const grace = time.Minute
	for _, tt := range []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"a release before the signal", t1.Add(-time.Nanosecond), false},
		{"a release after the deadline", t1.Add(grace + time.Nanosecond), false},
		{"a release at the signal", t1, true},
		{"a release at the deadline", t1.Add(grace), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tb := newTable(t, Config{})
			must(t, tb.Submit(t0, "a"))
			must(t, tb.Start(t0, "a"))
			co, err := NewCoordinator(tb, scripted{release: ReleaseReport{At: tt.at}}, CoordinatorConfig{Grace: grace})
			must(t, err)
			_, err = co.Boundary(t1, Plan{Preempt: []Grant{{"a", 1}}})
			in, _ := tb.Info("a")
			if tt.ok {
				must(t, err)
				if in.State != Suspended || !in.Since.Equal(tt.at) {
					t.Fatalf("job %v since %v, want suspended at %v", in.State, in.Since, tt.at)
				}
				return
			}
			var e *Error
			if !errors.Is(err, ErrEffect) || !errors.As(err, &e) || e.Job != "a" {
				t.Fatalf("%v, want ErrEffect naming job a", err)
			}
			if in.State != Checkpointing {
				t.Fatalf("job %v, want checkpointing", in.State)
			}
			check(t, tb)
		})
	}
}

// A cold start the effects report that the table cannot count is refused
// by the table: the boundary stops with ErrInvalidValue naming the job,
// which stays suspended.
func TestBoundaryRefusesAColdStartOutOfRange(t *testing.T) {
	for _, tt := range []struct {
		name string
		cold time.Duration
		ok   bool
	}{
		{"a negative cold start", -time.Nanosecond, false},
		{"a cold start past MaxSpan", MaxSpan + 1, false},
		{"a cold start of MaxSpan", MaxSpan, true},
		{"no cold start", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tb := newTable(t, Config{})
			for _, s := range []step{submit(t0), start(t0), ckpt(t1), release(t2, 0)} {
				must(t, s(tb))
			}
			co, err := NewCoordinator(tb, scripted{cold: tt.cold}, CoordinatorConfig{})
			must(t, err)
			_, err = co.Boundary(t3, Plan{Start: []Grant{{"j", 1}}})
			in, _ := tb.Info("j")
			if tt.ok {
				must(t, err)
				if !in.ReadyAt.Equal(t3.Add(tt.cold)) || in.Restores != 1 {
					t.Fatalf("job %+v, want restored at %v, ready %v later", in, t3, tt.cold)
				}
				return
			}
			var e *Error
			if !errors.Is(err, ErrInvalidValue) || !errors.As(err, &e) || e.Job != "j" {
				t.Fatalf("%v, want ErrInvalidValue naming job j", err)
			}
			if in.State != Suspended || in.Restores != 0 {
				t.Fatalf("job %v after %d restores, want suspended", in.State, in.Restores)
			}
			check(t, tb)
		})
	}
}
