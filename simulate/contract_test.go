package simulate

// What the engine holds a policy to: the traits it declares
// (CompareExhaustive), the state it must leave alone (Config.Check) and
// renewals in place.

import (
	"errors"
	"strings"
	"testing"

	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// idleLiar declares IdleWhenNothingFits yet acts at a tick at which
// nothing fits: at its third call it aborts every running job.
type idleLiar struct {
	greedy
	calls int
}

func (l *idleLiar) Traits() Traits { return Traits{IdleWhenNothingFits: true} }

func (l *idleLiar) Schedule(s *State) (Decision, error) {
	l.calls++
	if l.calls == 3 {
		return abortAll(s), nil
	}
	return l.greedy.Schedule(s)
}

// TestCompareExhaustiveFindsABrokenTrait: a policy that does not honour a
// trait it declares gives a different run without the shortcuts, and
// CompareExhaustive says so with ErrShortcut naming the policy; an honest
// policy gives none.
func TestCompareExhaustiveFindsABrokenTrait(t *testing.T) {
	cfg := testConfig(1, 8, "x")
	jobs := []trace.Job{tj("a", "x", 8, 0, 1000), tj("b", "x", 8, 5, 100)}
	newSrc := func() trace.Source { return src(jobs...) }
	_, err := CompareExhaustive(cfg, newSrc, func() (Policy, error) {
		return &idleLiar{greedy: greedy{lease: sec(3600)}}, nil
	})
	if !errors.Is(err, ErrShortcut) || !strings.Contains(err.Error(), "greedy") {
		t.Fatalf("a policy breaking IdleWhenNothingFits: %v, want ErrShortcut naming it", err)
	}
	if _, err := CompareExhaustive(cfg, newSrc, func() (Policy, error) {
		return &greedy{lease: sec(3600)}, nil
	}); err != nil {
		t.Fatalf("an honest policy: %v", err)
	}
}

// leaseWriter writes to the state it was given, which a policy must not:
// at its second call it moves a running job's lease end by a second.
type leaseWriter struct {
	greedy
	calls int
}

func (l *leaseWriter) Schedule(s *State) (Decision, error) {
	l.calls++
	if l.calls == 2 && len(s.Running) > 0 {
		s.Running[0].LeaseEnd = s.Running[0].LeaseEnd.Add(sec(1))
	}
	return l.greedy.Schedule(s)
}

// TestCheckFindsAMovedLeaseEnd: with Config.Check, a running job whose
// lease end no longer matches the engine's record stops the run with
// ErrInvariant naming the job.
func TestCheckFindsAMovedLeaseEnd(t *testing.T) {
	cfg := testConfig(1, 8, "x")
	jobs := []trace.Job{tj("a", "x", 8, 0, 1000), tj("b", "x", 8, 5, 100)}
	_, err := Run(cfg, src(jobs...), &leaseWriter{greedy: greedy{lease: sec(3600)}})
	if !errors.Is(err, ErrInvariant) || !strings.Contains(err.Error(), "running job a has lease end") {
		t.Fatalf("a moved lease end: %v, want ErrInvariant naming job a", err)
	}
}

// mover renews every expiring job on other GPUs of its node, which a
// renewal must not do.
type mover struct{ greedy }

func (m *mover) Schedule(s *State) (Decision, error) {
	d, err := m.greedy.Schedule(s)
	for _, r := range s.Running {
		if r.LeaseEnd.IsZero() || r.LeaseEnd.After(s.Now) || len(r.Placement.Slots) != 1 {
			continue
		}
		sl := r.Placement.Slots[0]
		moved := placement.Placement{Slots: []placement.Slot{{Node: sl.Node, GPUs: []int{sl.GPUs[0] + 1}}}}
		d.Grants = append(d.Grants, Grant{Job: r.Job.ID, Placement: moved, Lease: m.lease, Renew: true})
	}
	return d, err
}

// TestRenewalMustNotMove: a renewal whose placement differs from the
// job's is a bad decision naming the job.
func TestRenewalMustNotMove(t *testing.T) {
	_, err := Run(testConfig(1, 8, "x"), src(tj("a", "x", 1, 0, 1000)), &mover{greedy{lease: sec(60)}})
	if !errors.Is(err, ErrBadDecision) || !strings.Contains(err.Error(), "job a: renewal moves the job") {
		t.Fatalf("a renewal on other GPUs: %v, want ErrBadDecision saying it moves job a", err)
	}
}
