package sched

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/astraea-sched/astraea/ledger"
	"pgregory.net/rapid"
)

// A tree in which every tenant is a child of the cluster decides exactly
// as the flat round does.
func TestPropertyFlatTreeDecidesAsWithout(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		flat, _, _ := s.run(t, s.in.Candidates, nil)
		s.opts.Parent = func(ledger.TenantID) (ledger.TenantID, bool) { return "", true }
		tree, _, _ := s.run(t, s.in.Candidates, nil)
		for i := range tree.Tenants {
			if tree.Tenants[i].Depth != 1 {
				t.Fatalf("tenant %s at depth %d", tree.Tenants[i].ID, tree.Tenants[i].Depth)
			}
			tree.Tenants[i].Depth = 0
		}
		if len(tree.Subtrees) != 0 {
			t.Fatalf("subtrees %v in a flat tree", tree.Subtrees)
		}
		tree.Subtrees = nil
		if fmt.Sprint(flat) != fmt.Sprint(tree) {
			t.Fatalf("flat\n%+v\ntree\n%+v", flat, tree)
		}
	})
}

// treeOf gives the scenario's tenants T0…T3 random parents among the inner
// nodes G0 (under the cluster), G1 and G2 (each under the cluster or G0),
// and accounts for the inner nodes.
func treeOf(t *rapid.T, acc *accounts) map[ledger.TenantID]ledger.TenantID {
	parent := map[ledger.TenantID]ledger.TenantID{"G0": ""}
	for _, g := range []ledger.TenantID{"G1", "G2"} {
		parent[g] = rapid.SampledFrom([]ledger.TenantID{"", "G0"}).Draw(t, "parent of "+string(g))
	}
	for k := range 4 {
		parent[ledger.TenantID(fmt.Sprint("T", k))] = rapid.SampledFrom([]ledger.TenantID{"", "G0", "G1", "G2"}).Draw(t, "parent")
	}
	for _, g := range []ledger.TenantID{"G0", "G1", "G2"} {
		fair := ledger.GPUSeconds(rapid.SampledFrom([]float64{0, 3600, 7200, 14400}).Draw(t, "fair"))
		alloc := ledger.GPUSeconds(900 * rapid.IntRange(0, 16).Draw(t, "alloc"))
		acc.tenant(g, alloc, fair, 1)
	}
	return parent
}

// In the fair stage the walk is right at every level: when a tenant is
// picked, no subtree beside one on its path, at any level, that is still
// in play (a tenant of it is picked later in the stage) goes before it by
// ρ with every grant so far pre-credited on the whole path.
func TestPropertyTreeWalkPicksTheLowestAtEveryLevel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		s.opts.AdvanceFairShare = false
		acc := s.in.Accounts.(*accounts)
		parent := treeOf(t, acc)
		s.opts.Parent = func(id ledger.TenantID) (ledger.TenantID, bool) {
			p, ok := parent[id]
			return p, ok
		}
		res, _, steps := s.run(t, s.in.Candidates, nil)
		path := func(id ledger.TenantID) []ledger.TenantID { // leaf first
			var p []ledger.TenantID
			for ; id != ""; id = parent[id] {
				p = append(p, id)
			}
			return p
		}
		credit := map[ledger.TenantID]ledger.GPUSeconds{}
		state := func(id ledger.TenantID) *TenantState {
			a := acc.tenants[id]
			a.Alloc += credit[id]
			a.Rho = ledger.Ratio(a.Alloc, a.FairShare)
			return &TenantState{ID: id, Account: a}
		}
		for k, st := range steps {
			if st.Stage != Fair {
				break
			}
			mine := path(st.Tenant.ID)
			for _, later := range steps[k+1:] {
				if later.Stage != Fair {
					break
				}
				theirs := path(later.Tenant.ID)
				// the children of the deepest common ancestor
				i, j := len(mine)-1, len(theirs)-1
				for i >= 0 && j >= 0 && mine[i] == theirs[j] {
					i, j = i-1, j-1
				}
				if i < 0 || j < 0 {
					continue // the same tenant
				}
				if c := ByRho(state(theirs[j]), state(mine[i])); c < 0 {
					t.Fatalf("step %d picked %s under %s, but %s (ρ %v) goes before %s (ρ %v) and is still in play",
						st.N, st.Tenant.ID, mine[i+1:], theirs[j], state(theirs[j]).Account.Rho, mine[i], state(mine[i]).Account.Rho)
				}
			}
			if st.Granted {
				for _, id := range path(st.Tenant.ID) {
					credit[id] += preCredit(&s.opts, st.Job.Demand, lease)
				}
			}
		}
		// A subtree's counts are its tenants' grants (renewals too), and
		// its account its start plus their pre-credits.
		grants, gpus := map[ledger.TenantID]int{}, map[ledger.TenantID]ledger.GPUs{}
		all := map[ledger.TenantID]ledger.GPUSeconds{} // backfill's too
		for _, g := range res.Grants {
			for _, id := range path(g.Tenant) {
				grants[id]++
				gpus[id] += g.Demand
				all[id] += preCredit(&s.opts, g.Demand, lease)
			}
		}
		for _, sub := range res.Subtrees {
			want := acc.tenants[sub.ID]
			want.Alloc += all[sub.ID]
			if math.Abs(float64(sub.End.Alloc-want.Alloc)) > 1e-9*max(1, math.Abs(float64(want.Alloc))) || sub.Depth < 1 || sub.Depth > 2 {
				t.Fatalf("subtree %+v: alloc %v after pre-credits, want %v", sub, sub.End.Alloc, want.Alloc)
			}
			if sub.Grants != grants[sub.ID] || sub.GPUs != gpus[sub.ID] {
				t.Fatalf("subtree %s: %d grants of %d GPUs, its tenants have %d of %d", sub.ID, sub.Grants, sub.GPUs, grants[sub.ID], gpus[sub.ID])
			}
		}
	})
}

// The worked example of the walk: ops (ρ 0.8) goes before ai (ρ 1), though
// vision under ai has the lowest ρ of all tenants; with ops served, the
// walk turns to ai and, under it, to vision, whose 8-GPU job does not fit,
// then nlp. When nothing under ai fits, ai leaves play, and its result
// says so with its level.
func TestTreeWalkExample(t *testing.T) {
	acc := newAccounts()
	acc.tenant("ai", 7200, 7200, 1)     // ρ 1
	acc.tenant("ops", 2880, 3600, 1)    // ρ 0.8
	acc.tenant("vision", 1800, 3600, 1) // ρ 0.5
	acc.tenant("nlp", 5400, 3600, 1)    // ρ 1.5
	for _, j := range []ledger.JobID{"ops1", "ops2", "v1", "n1", "n2"} {
		acc.job(j, 1)
	}
	parents := map[ledger.TenantID]ledger.TenantID{"ai": "", "ops": "", "vision": "ai", "nlp": "ai"}
	cl := cluster(t, 1, 8)
	in := Input{Accounts: acc, Lease: lease, Placer: cl, Candidates: []Candidate{
		{Job: "ops1", Tenant: "ops", Demand: 2, Submit: t0},
		{Job: "v1", Tenant: "vision", Demand: 8, Submit: t0},
		{Job: "n1", Tenant: "nlp", Demand: 4, Submit: t0},
		{Job: "n2", Tenant: "nlp", Demand: 4, Submit: t0.Add(1)},
	}}
	var order []ledger.TenantID
	res, err := Round(in, Options{
		NoBackfill: true,
		Parent:     func(id ledger.TenantID) (ledger.TenantID, bool) { p, ok := parents[id]; return p, ok },
		Trace:      func(s Step) { order = append(order, s.Tenant.ID) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(order); got != "[ops vision nlp nlp]" {
		t.Errorf("Phase 1 order %s, want [ops vision nlp nlp]", got)
	}
	var granted []ledger.JobID
	for _, g := range res.Grants {
		granted = append(granted, g.Job)
	}
	if got := fmt.Sprint(granted); got != "[ops1 n1]" {
		t.Errorf("grants %s", got)
	}
	if len(res.Subtrees) != 1 {
		t.Fatalf("subtrees %+v", res.Subtrees)
	}
	ai := res.Subtrees[0]
	if ai.ID != "ai" || ai.Depth != 1 || ai.Grants != 1 || ai.GPUs != 4 || !ai.OutOfPlay || ai.Last != "nlp" {
		t.Errorf("ai: %+v", ai)
	}
	if want := ledger.GPUSeconds(7200 + 4*900); ai.End.Alloc != want {
		t.Errorf("ai pre-credited to %v, want %v", ai.End.Alloc, want)
	}
	if s := ai.String(); !strings.HasPrefix(s, "ai (level 1) out of play: nothing under it fits; last nlp: does not fit: needs 4 GPUs") {
		t.Errorf("ai: %q", s)
	}
	for _, tr := range res.Tenants {
		if want := map[ledger.TenantID]int{"ops": 1, "vision": 2, "nlp": 2}[tr.ID]; tr.Depth != want {
			t.Errorf("%s at depth %d, want %d", tr.ID, tr.Depth, want)
		}
	}
}

func TestTreeRejections(t *testing.T) {
	acc := newAccounts()
	acc.tenant("a", 0, 1, 1)
	acc.tenant("b", 0, 1, 1)
	acc.job("a1", 1)
	acc.job("b1", 1)
	for name, tc := range map[string]struct {
		parents map[ledger.TenantID]ledger.TenantID
		want    error
	}{
		"a tenant with candidates above another": {map[ledger.TenantID]ledger.TenantID{"a": "", "b": "a"}, ErrInvalidInput},
		"an ancestor without an account":         {map[ledger.TenantID]ledger.TenantID{"a": "x", "x": "", "b": ""}, ErrUnknownTenant},
		"a tenant whose parent is unknown":       {map[ledger.TenantID]ledger.TenantID{"a": ""}, ErrUnknownTenant},
		"parents in a cycle":                     {map[ledger.TenantID]ledger.TenantID{"a": "x", "x": "y", "y": "x", "b": ""}, ErrInvalidInput},
	} {
		t.Run(name, func(t *testing.T) {
			if name == "parents in a cycle" {
				acc.tenant("x", 0, 1, 1)
				acc.tenant("y", 0, 1, 1)
				defer delete(acc.tenants, "x")
				defer delete(acc.tenants, "y")
			}
			in := Input{Accounts: acc, Lease: lease, Placer: cluster(t, 1, 8), Candidates: []Candidate{
				{Job: "a1", Tenant: "a", Demand: 1, Submit: t0}, {Job: "b1", Tenant: "b", Demand: 1, Submit: t0}}}
			_, err := Round(in, Options{Parent: func(id ledger.TenantID) (ledger.TenantID, bool) { p, ok := tc.parents[id]; return p, ok }})
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
}
