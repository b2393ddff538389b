package sched

import (
	"errors"
	"fmt"
	"testing"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
)

// faults counts the placer calls of a round and fails call number fail (0
// based) with an error that is not "does not fit".
type faults struct {
	calls, fail int
	injected    bool
}

func (f *faults) next(op string) error {
	f.calls++
	if f.calls-1 == f.fail {
		f.injected = true
		return fmt.Errorf("%s: injected fault %d", op, f.fail)
	}
	return nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// faultyPlacer is a Placer and nothing more (no optional face), so the
// round takes its generic paths; its calls share one fault counter.
type faultyPlacer struct {
	c *placement.Cluster
	f *faults
}

func (p faultyPlacer) Place(d int) (placement.Placement, error) {
	if err := p.f.next("place"); err != nil {
		return placement.Placement{}, err
	}
	return p.c.Place(d)
}
func (p faultyPlacer) Fits(d int) bool { return p.c.Fits(d) }
func (p faultyPlacer) Allocate(id string, pl placement.Placement) error {
	if err := p.f.next("allocate"); err != nil {
		return err
	}
	return p.c.Allocate(id, pl)
}
func (p faultyPlacer) Release(id string) (placement.Placement, error) {
	if err := p.f.next("release"); err != nil {
		return placement.Placement{}, err
	}
	return p.c.Release(id)
}

// cloningFaultyPlacer also has a Cloner face: the optimistic view is a
// faulty copy sharing the counter.
type cloningFaultyPlacer struct{ faultyPlacer }

func (p cloningFaultyPlacer) ClonePlacer() placement.Placer {
	return faultyPlacer{c: p.c.Clone(), f: p.f}
}

// withoutFaultyPlacer has placement.Cluster's PlaceWithout face.
type withoutFaultyPlacer struct{ faultyPlacer }

func (p withoutFaultyPlacer) PlaceWithout(d int, ids []string) (placement.Placement, error) {
	if err := p.f.next("place without"); err != nil {
		return placement.Placement{}, err
	}
	return p.c.PlaceWithout(d, ids)
}

// A Placer that fails in a way other than "does not fit" fails the round
// with ErrPlacer wherever the failure happens, and the round leaves the
// Placer as it was: no error is swallowed on any path. Every placer call of
// rounds with renewals, preemptions, lapsing leases and optimistic looks is
// failed in turn, for each face a Placer can have.
func TestEveryPlacerFailureFailsTheRound(t *testing.T) {
	faces := map[string]func(c *placement.Cluster, f *faults) placement.Placer{
		"a bare Placer":          func(c *placement.Cluster, f *faults) placement.Placer { return faultyPlacer{c, f} },
		"a Placer with a Cloner": func(c *placement.Cluster, f *faults) placement.Placer { return cloningFaultyPlacer{faultyPlacer{c, f}} },
		"a Placer with PlaceWithout": func(c *placement.Cluster, f *faults) placement.Placer {
			return withoutFaultyPlacer{faultyPlacer{c, f}}
		},
	}
	for name, face := range faces {
		for _, opts := range []Options{{}, {NoBackfill: true}} {
			for _, sc := range scenarios {
				t.Run(fmt.Sprintf("%s, %s, NoBackfill %v", name, sc.name, opts.NoBackfill), func(t *testing.T) { placerFaults(t, face, opts, sc) })
			}
		}
	}
}

// A placer-fault scenario: tenants' (alloc, fair, rate), jobs' ρ, and the
// candidates (E1–E4 run on a full cluster of three 8-GPU nodes: 8, 4, 4, 8).
type faultScenario struct {
	name    string
	tenants map[ledger.TenantID][3]float64
	rho     map[ledger.JobID]ledger.Rho
	cands   func(e1, e2, e3, e4 placement.Placement) []Candidate
}

var scenarios = []faultScenario{
	{"preemptions and renewals",
		map[ledger.TenantID][3]float64{"A": {50, 100, 12}, "B": {150, 100, 12}}, // A under-served: its pending jobs preempt B's
		map[ledger.JobID]ledger.Rho{"E1": 2, "E2": 1.5, "E3": 0.3, "E4": 3, "N1": 0.1, "N2": 0.9, "N3": 0},
		func(e1, e2, e3, e4 placement.Placement) []Candidate {
			return []Candidate{
				{Job: "E1", Tenant: "B", Demand: 8, Running: true, Placement: e1, Leases: 3},
				{Job: "E2", Tenant: "B", Demand: 4, Running: true, Placement: e2, Leases: 1},
				{Job: "E3", Tenant: "A", Demand: 4, Running: true, Placement: e3, Leases: 1},
				{Job: "E4", Tenant: "B", Demand: 8, Running: true, Placement: e4, Leases: 2},
				{Job: "N1", Tenant: "A", Demand: 8, Submit: t0},
				{Job: "N2", Tenant: "A", Demand: 4, Submit: t0},
				{Job: "N3", Tenant: "B", Demand: 8, Submit: t0},
			}
		}},
	{"a small job looking among expiring ones",
		map[ledger.TenantID][3]float64{"A": {90, 100, 4}, "B": {100, 100, 8}},
		map[ledger.JobID]ledger.Rho{"E1": 2, "E2": 0.5, "E3": 0.4, "E4": 3, "N1": 0},
		func(e1, e2, e3, e4 placement.Placement) []Candidate {
			return []Candidate{
				{Job: "E1", Tenant: "B", Demand: 8, Running: true, Placement: e1, Leases: 3},
				{Job: "E2", Tenant: "B", Demand: 4, Running: true, Placement: e2, Leases: 1},
				{Job: "E3", Tenant: "A", Demand: 4, Running: true, Placement: e3, Leases: 1},
				{Job: "E4", Tenant: "B", Demand: 8, Running: true, Placement: e4, Leases: 2},
				{Job: "N1", Tenant: "B", Demand: 2, Submit: t0},
			}
		}},
}

func placerFaults(t *testing.T, face func(c *placement.Cluster, f *faults) placement.Placer, opts Options, sc faultScenario) {
	ids := []string{"E1", "E2", "E3", "E4", "N1", "N2", "N3"}
	for fail := 0; ; fail++ {
		cl := cluster(t, 3, 8)
		e1, _ := cl.Place(8)
		must(t, cl.Allocate("E1", e1))
		e2, _ := cl.Place(4)
		must(t, cl.Allocate("E2", e2))
		e3, _ := cl.Place(4)
		must(t, cl.Allocate("E3", e3))
		e4, _ := cl.Place(8)
		must(t, cl.Allocate("E4", e4)) // the cluster is full
		before := map[string]placement.Placement{}
		for _, id := range ids {
			if p, ok := cl.Allocation(id); ok {
				before[id] = p
			}
		}
		acc := newAccounts()
		for id, v := range sc.tenants {
			acc.tenant(id, ledger.GPUSeconds(v[0]), ledger.GPUSeconds(v[1]), v[2])
		}
		for id, rho := range sc.rho {
			acc.job(id, rho)
		}
		f := &faults{fail: fail}
		_, err := Round(Input{Accounts: acc, Lease: lease, Placer: face(cl, f), Candidates: sc.cands(e1, e2, e3, e4)}, opts)
		if !f.injected {
			if err != nil {
				t.Fatalf("round without a fault: %v", err)
			}
			if fail < 4 {
				t.Fatalf("only %d placer calls: the round does not exercise the paths", fail)
			}
			return
		}
		if !errors.Is(err, ErrPlacer) {
			t.Fatalf("placer call %d failed: round returned %v, want ErrPlacer", fail, err)
		}
		for _, id := range ids {
			p, ok := cl.Allocation(id)
			if q, was := before[id]; ok != was || ok && !samePlacement(p, q) {
				t.Fatalf("placer call %d failed: %s holds %v (%v), before the round %v (%v)", fail, id, p, ok, q, was)
			}
		}
		verifyCluster(t, cl)
	}
}
