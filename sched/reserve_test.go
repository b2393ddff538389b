package sched

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
)

// starving is two 8-GPU nodes full of tenant b's sixteen 1-GPU jobs, whose
// leases end one a minute, and tenant a's 16-GPU gang, which never fits
// what one lease end frees. a is owed more than b, so every round tries
// the gang first and sends a out of play.
type starving struct {
	c   *placement.Cluster
	acc *accounts
	run map[ledger.JobID]placement.Placement // b's jobs that hold GPUs
}

func newStarving(t *testing.T) *starving {
	t.Helper()
	s := &starving{c: cluster(t, 2, 8), acc: newAccounts(), run: map[ledger.JobID]placement.Placement{}}
	s.acc.tenant("a", 0, 1000, 1)
	s.acc.tenant("b", 2000, 1000, 1)
	s.acc.job("gang", 0)
	for i := range 16 {
		id := ledger.JobID(fmt.Sprintf("b%02d", i))
		p := placement.Placement{Slots: []placement.Slot{slot(fmt.Sprintf("node-%d", 1+i/8), i%8)}}
		if err := s.c.Allocate(string(id), p); err != nil {
			t.Fatal(err)
		}
		s.acc.job(id, 2)
		s.run[id] = p
	}
	return s
}

// input is the round at minute m: the gang pending (while it waits) and b's
// job whose lease ends then, if it still runs.
func (s *starving) input(m int, gangWaits bool) Input {
	var cands []Candidate
	if gangWaits {
		cands = append(cands, Candidate{Job: "gang", Tenant: "a", Demand: 16, Submit: t0})
	}
	id := ledger.JobID(fmt.Sprintf("b%02d", m%16))
	if p, ok := s.run[id]; ok {
		cands = append(cands, Candidate{Job: id, Tenant: "b", Demand: 1, Submit: t0, Running: true, Placement: p, Leases: 1})
	}
	return Input{Accounts: s.acc, Candidates: cands, Lease: lease, Placer: s.c}
}

func TestReserverHoldsNodesForAStarvingGang(t *testing.T) {
	s := newStarving(t)
	rv := &Reserver{After: 5 * time.Minute}
	var x Rounder
	gangAt := -1
	for m := 0; m < 60 && gangAt < 0; m++ {
		now := t0.Add(time.Duration(m) * time.Minute)
		before, held := rv.Held()
		res, err := rv.Round(&x, now, s.input(m, true), Options{})
		if err != nil {
			t.Fatal(err)
		}
		verifyCluster(t, s.c)
		for n := range s.c.Nodes() {
			if n.Draining {
				t.Fatalf("minute %d: node %s left draining", m, n.ID)
			}
		}
		for _, r := range res.Released {
			if exp := ledger.JobID(fmt.Sprintf("b%02d", m%16)); r.Job != exp {
				t.Fatalf("minute %d: %s released; only %s's lease ends", m, r.Job, exp)
			}
			delete(s.run, r.Job)
			if want := (Reason{Code: Held, By: "gang", LargestFree: -1, FreeTotal: -1}); held && r.Reason != want {
				t.Errorf("minute %d: %s released for %#v, want %#v", m, r.Job, r.Reason, want)
			}
		}
		for _, g := range res.Grants {
			switch {
			case g.Job == "gang":
				if !held || g.Stage != Reserved || g.Kind != New || g.Placement.GPUs() != 16 || res.Grants[0].Job != "gang" {
					t.Fatalf("minute %d: gang granted %+v (held %v)", m, g, held)
				}
				if g.TenantRhoBefore != 0 || !(g.TenantRhoAfter > 0) {
					t.Errorf("minute %d: gang's tenant ρ %v → %v, want 0 → positive", m, g.TenantRhoBefore, g.TenantRhoAfter)
				}
				gangAt = m
			case held:
				t.Fatalf("minute %d: %s granted (%v) while the nodes are held for the gang", m, g.Job, g.Kind)
			}
		}
		if m < 5 {
			if _, ok := rv.Held(); ok {
				t.Fatalf("minute %d: a hold before the gang waited 5 minutes", m)
			}
			if len(res.Grants) != 1 || res.Grants[0].Kind != Renewed {
				t.Fatalf("minute %d: grants %+v, want b's renewal only", m, res.Grants)
			}
		}
		if h, ok := rv.Held(); ok && !held {
			if m != 5 || h.Job != "gang" || !slices.Equal(h.Nodes, []string{"node-1", "node-2"}) || !h.Since.Equal(now) {
				t.Fatalf("minute %d: hold %+v", m, h)
			}
		}
		_ = before
	}
	// Held at minute 5, b's jobs leave as their leases end (minutes 6 to
	// 21), and the gang goes at the next round.
	if gangAt != 22 {
		t.Fatalf("gang granted at minute %d, want 22", gangAt)
	}
	if _, ok := rv.Held(); ok {
		t.Fatal("hold still in force after the gang's grant")
	}
}

// TestReserverRenewsJobsOffTheHeldNodes: while node-1 and node-2 are held
// for the gang, an expiring job on node-3 is renewed where it is (its
// tenant goes before b, whose jobs leaving the held nodes would take it).
func TestReserverRenewsJobsOffTheHeldNodes(t *testing.T) {
	s := newStarving(t)
	if err := s.c.AddNode(placement.Node{ID: "node-3", GPUs: 8}); err != nil {
		t.Fatal(err)
	}
	c8 := placement.Placement{Slots: []placement.Slot{slot("node-3", 0, 1, 2, 3, 4, 5, 6, 7)}}
	if err := s.c.Allocate("c8", c8); err != nil {
		t.Fatal(err)
	}
	s.acc.tenant("c", 500, 1000, 1) // served before b, whose expiring job would take node-3
	s.acc.job("c8", 0.5)
	rv := &Reserver{After: time.Minute}
	var x Rounder
	for m := range 4 { // held at minute 1; c8's lease ends at minute 3
		in := s.input(m, true)
		if m == 3 {
			in.Candidates = append(in.Candidates, Candidate{Job: "c8", Tenant: "c", Demand: 8, Submit: t0, Running: true, Placement: c8, Leases: 1})
		}
		res, err := rv.Round(&x, t0.Add(time.Duration(m)*time.Minute), in, Options{})
		if err != nil {
			t.Fatalf("minute %d: %v", m, err)
		}
		for _, r := range res.Released {
			if r.Job == "c8" {
				t.Fatalf("minute %d: c8 released (%v) from a node that is not held", m, r.Reason)
			}
			delete(s.run, r.Job)
		}
		if m == 1 {
			if h, ok := rv.Held(); !ok || !slices.Equal(h.Nodes, []string{"node-1", "node-2"}) {
				t.Fatalf("hold %+v (%v), want node-1 and node-2", h, ok)
			}
		}
		if m == 3 && !slices.ContainsFunc(res.Grants, func(g Grant) bool { return g.Job == "c8" && g.Kind == Renewed }) {
			t.Fatalf("grants %+v: c8 not renewed in place", res.Grants)
		}
	}
	// Once more, with c served after b: b03, leaving the held nodes,
	// preempts c8. Released lists both, in input order.
	in := s.input(4, true)
	in.Candidates = append(in.Candidates, Candidate{Job: "c8", Tenant: "c", Demand: 8, Submit: t0, Running: true, Placement: c8, Leases: 2})
	s.acc.tenant("c", 5000, 1000, 1)
	res, err := rv.Round(&x, t0.Add(4*time.Minute), in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Released {
		got = append(got, fmt.Sprintf("%s %v", r.Job, r.Reason.Code))
	}
	if want := []string{"b04 held", "c8 preempted"}; !slices.Equal(got, want) {
		t.Fatalf("released %v, want %v", got, want)
	}
	verifyCluster(t, s.c)
}

// TestReserverAdvancesFairShares: with Options.AdvanceFairShare the
// rounds of a reservation, the one that grants the gang ahead of the round
// included, still read every tenant's fair rate.
func TestReserverAdvancesFairShares(t *testing.T) {
	s := newStarving(t)
	rv := &Reserver{After: time.Minute}
	var x Rounder
	for m := range 30 {
		res, err := rv.Round(&x, t0.Add(time.Duration(m)*time.Minute), s.input(m, true), Options{AdvanceFairShare: true})
		if err != nil {
			t.Fatalf("minute %d: %v", m, err)
		}
		for _, r := range res.Released {
			delete(s.run, r.Job)
		}
		for _, g := range res.Grants {
			if g.Job == "gang" {
				if g.Stage != Reserved {
					t.Fatalf("gang granted in stage %v", g.Stage)
				}
				return
			}
		}
	}
	t.Fatal("the gang was never granted")
}

// TestReserverHoldsNothingWhenEverythingFits: with no tenant out of play
// there is no blocked pick to wait for, however long the rounds go on.
func TestReserverHoldsNothingWhenEverythingFits(t *testing.T) {
	c := cluster(t, 2, 8)
	acc := newAccounts()
	acc.tenant("a", 0, 1000, 1)
	acc.job("small", 0)
	rv := &Reserver{After: time.Minute}
	for m := range 5 {
		in := Input{Accounts: acc, Lease: lease, Placer: c.Clone(), Candidates: []Candidate{{Job: "small", Tenant: "a", Demand: 1, Submit: t0}}}
		res, err := rv.Round(nil, t0.Add(time.Duration(m)*time.Minute), in, Options{})
		if err != nil {
			t.Fatalf("minute %d: %v", m, err)
		}
		if len(res.Grants) != 1 {
			t.Fatalf("minute %d: grants %+v", m, res.Grants)
		}
		if h, ok := rv.Held(); ok {
			t.Fatalf("minute %d: hold %+v with nothing blocked", m, h)
		}
	}
}

func TestReserverRejects(t *testing.T) {
	s := newStarving(t)
	for _, tc := range []struct {
		name string
		rv   *Reserver
		in   Input
		want error
	}{
		{"no After", &Reserver{}, s.input(0, true), ErrInvalidInput},
		{"a placer that cannot hold", &Reserver{After: time.Minute}, func() Input {
			in := s.input(0, true)
			in.Placer = opaquePlacer{s.c}
			return in
		}(), ErrCannotHold},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.rv.Round(nil, t0, tc.in, Options{}); !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
}

// TestReserverLeavesNothingOnError makes rounds fail while a hold is in
// force, before and once the held nodes are ready: the cluster and the
// hold stay as they were.
func TestReserverLeavesNothingOnError(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ready bool
		want  error
		bad   func(in *Input)
	}{
		{"a duplicate job, nodes not ready", false, ErrDuplicateJob, dupPending},
		{"a duplicate job, nodes ready", true, ErrDuplicateJob, dupPending},
		// The second release of the same job from the held nodes fails
		// after the first succeeded.
		{"a held job listed twice", false, ErrPlacer, func(in *Input) {
			in.Candidates = append(in.Candidates, in.Candidates[len(in.Candidates)-1])
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStarving(t)
			rv := &Reserver{After: time.Minute}
			var x Rounder
			for m := range 3 { // held at minute 1
				res, err := rv.Round(&x, t0.Add(time.Duration(m)*time.Minute), s.input(m, true), Options{})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range res.Released {
					delete(s.run, r.Job)
				}
			}
			if tc.ready {
				for id := range maps.Clone(s.run) {
					if _, err := s.c.Release(string(id)); err != nil {
						t.Fatal(err)
					}
					delete(s.run, id)
				}
			}
			h, ok := rv.Held()
			if !ok {
				t.Fatal("no hold")
			}
			allocs := maps.Collect(s.c.Allocations())
			in := s.input(3, true)
			tc.bad(&in)
			if _, err := rv.Round(&x, t0.Add(3*time.Minute), in, Options{}); !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if got := maps.Collect(s.c.Allocations()); !maps.EqualFunc(got, allocs, placement.Placement.Equal) {
				t.Fatalf("allocations changed by a failed round:\n%v\n%v", got, allocs)
			}
			for n := range s.c.Nodes() {
				if n.Draining {
					t.Fatalf("node %s left draining by a failed round", n.ID)
				}
			}
			if h2, ok := rv.Held(); !ok || h2.Job != h.Job || !slices.Equal(h2.Nodes, h.Nodes) {
				t.Fatalf("hold %+v after a failed round, want %+v", h2, h)
			}
			verifyCluster(t, s.c)
		})
	}
}

// dupPending adds a pending job twice to in.
func dupPending(in *Input) {
	x := Candidate{Job: "x", Tenant: "b", Demand: 1, Submit: t0}
	in.Candidates = append(in.Candidates, x, x)
}

func TestReserverNeverHoldsForAGangNoNodesHold(t *testing.T) {
	c := cluster(t, 1, 8)
	acc := newAccounts()
	acc.tenant("a", 0, 1000, 1)
	acc.job("huge", 0)
	rv := &Reserver{After: time.Minute}
	for m := range 5 {
		in := Input{Accounts: acc, Lease: lease, Placer: c, Candidates: []Candidate{{Job: "huge", Tenant: "a", Demand: 16, Submit: t0}}}
		res, err := rv.Round(nil, t0.Add(time.Duration(m)*time.Minute), in, Options{})
		if err != nil {
			t.Fatalf("minute %d: %v", m, err)
		}
		if len(res.Waiting) != 1 || res.Waiting[0].Reason.Code != NoFit {
			t.Fatalf("minute %d: waiting %+v", m, res.Waiting)
		}
		if h, ok := rv.Held(); ok {
			t.Fatalf("minute %d: hold %+v for a gang larger than the cluster", m, h)
		}
	}
	verifyCluster(t, c)
}

// The held gang's grant counts in its own tenant's result, also when the
// round of the other candidates has results for other tenants: at the
// gang's round, tenant c's job waits beside it.
func TestReserverCountsTheHeldGrantInItsTenant(t *testing.T) {
	s := newStarving(t)
	s.acc.tenant("c", 0, 1000, 1)
	s.acc.job("c1", 0)
	rv := &Reserver{After: 5 * time.Minute}
	var x Rounder
	for m := 0; m < 60; m++ {
		in := s.input(m, true)
		if m == 22 { // the gang's round (TestReserverHoldsNodesForAStarvingGang)
			in.Candidates = append(in.Candidates, Candidate{Job: "c1", Tenant: "c", Demand: 1, Submit: t0})
		}
		res, err := rv.Round(&x, t0.Add(time.Duration(m)*time.Minute), in, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Released {
			delete(s.run, r.Job)
		}
		if len(res.Grants) == 0 || res.Grants[0].Job != "gang" {
			continue
		}
		if m != 22 {
			t.Fatalf("gang granted at minute %d, want 22", m)
		}
		byID := map[ledger.TenantID]TenantResult{}
		for _, tr := range res.Tenants {
			byID[tr.ID] = tr
		}
		if a := byID["a"]; a.Grants != 1 || a.GPUs != 16 {
			t.Errorf("tenant a's result %+v, want the gang's grant of 16 GPUs", a)
		}
		if c, ok := byID["c"]; !ok || c.Grants != 0 || c.GPUs != 0 || c.Start != s.acc.tenants["c"] {
			t.Errorf("tenant c's result %+v (present %v), want no grant and its account as it was", c, ok)
		}
		return
	}
	t.Fatal("the gang was never granted")
}
