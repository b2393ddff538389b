package sched

import (
	"errors"
	"fmt"
	"testing"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
)

// errInjected is the cause of every injected fault.
var errInjected = errors.New("injected fault")

// faults counts the placer calls of a round and fails call number fail (0
// based) — and the more calls after it, if any — with an error that is not
// "does not fit", noting the allocation the first failed call was about
// ("" for a placement).
type faults struct {
	calls, fail int
	more        int
	injected    bool
	op, id      string
	named       string // the allocation a fault of namingFaultyPlacer named
}

func (f *faults) next(op, id string) error {
	f.calls++
	if k := f.calls - 1 - f.fail; k > 0 && k <= f.more {
		return fmt.Errorf("%s %q: %w %d", op, id, errInjected, f.fail+k)
	}
	if f.calls-1 == f.fail {
		f.injected, f.op, f.id = true, op, id
		return fmt.Errorf("%s %q: %w %d", op, id, errInjected, f.fail)
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
	if err := p.f.next("place", ""); err != nil {
		return placement.Placement{}, err
	}
	return p.c.Place(d)
}
func (p faultyPlacer) Fits(d int) bool { return p.c.Fits(d) }
func (p faultyPlacer) Allocate(id string, pl placement.Placement) error {
	if err := p.f.next("allocate", id); err != nil {
		return err
	}
	return p.c.Allocate(id, pl)
}
func (p faultyPlacer) Release(id string) (placement.Placement, error) {
	if err := p.f.next("release", id); err != nil {
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
	if err := p.f.next("place without", ""); err != nil {
		return placement.Placement{}, err
	}
	return p.c.PlaceWithout(d, ids)
}

// namingFaultyPlacer's PlaceWithout fails as a *placement.Error naming the
// first allocation it was to look without: a fault that names a running
// job, but not as unknown, so the round must still name the job it was
// placing.
type namingFaultyPlacer struct{ faultyPlacer }

func (p namingFaultyPlacer) PlaceWithout(d int, ids []string) (placement.Placement, error) {
	if err := p.f.next("place without", ""); err != nil {
		if len(ids) > 0 && p.f.named == "" {
			p.f.named = ids[0]
		}
		return placement.Placement{}, &placement.Error{Op: "place", Allocation: p.f.named, Err: err}
	}
	return p.c.PlaceWithout(d, ids)
}

// A Placer that fails in a way other than "does not fit" fails the round
// with ErrPlacer wherever the failure happens, wrapping the Placer's error
// and naming the candidate the failed call was about, and the round leaves
// the Placer as it was: no error is swallowed, or replaced by a later one,
// on any path. Every placer call of
// rounds with renewals, preemptions, lapsing leases and optimistic looks is
// failed in turn, for each face a Placer can have.
func TestEveryPlacerFailureFailsTheRound(t *testing.T) {
	faces := map[string]func(c *placement.Cluster, f *faults) placement.Placer{
		"a bare Placer":          func(c *placement.Cluster, f *faults) placement.Placer { return faultyPlacer{c, f} },
		"a Placer with a Cloner": func(c *placement.Cluster, f *faults) placement.Placer { return cloningFaultyPlacer{faultyPlacer{c, f}} },
		"a Placer with PlaceWithout": func(c *placement.Cluster, f *faults) placement.Placer {
			return withoutFaultyPlacer{faultyPlacer{c, f}}
		},
		"a Placer with PlaceWithout whose faults name an allocation": func(c *placement.Cluster, f *faults) placement.Placer {
			return namingFaultyPlacer{faultyPlacer{c, f}}
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
	// A's pending job looks first (its ρ is the lowest) and displaces E1,
	// B's job of the highest ρ, so the expiring jobs left — E4 first — are
	// renewed with the optimistic view in place.
	{"renewals after an optimistic look",
		map[ledger.TenantID][3]float64{"A": {50, 100, 12}, "B": {150, 100, 12}},
		map[ledger.JobID]ledger.Rho{"E1": 3, "E2": 0.5, "E3": 0.6, "E4": 2, "N1": 0.1},
		func(e1, e2, e3, e4 placement.Placement) []Candidate {
			return []Candidate{
				{Job: "E1", Tenant: "B", Demand: 8, Running: true, Placement: e1, Leases: 3},
				{Job: "E2", Tenant: "A", Demand: 4, Running: true, Placement: e2, Leases: 1},
				{Job: "E3", Tenant: "A", Demand: 4, Running: true, Placement: e3, Leases: 1},
				{Job: "E4", Tenant: "B", Demand: 8, Running: true, Placement: e4, Leases: 2},
				{Job: "N1", Tenant: "A", Demand: 8, Submit: t0},
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
		if !errors.Is(err, ErrPlacer) || !errors.Is(err, errInjected) {
			t.Fatalf("placer call %d (%s %q) failed: round returned %v, want ErrPlacer wrapping the fault", fail, f.op, f.id, err)
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("placer call %d failed: %T is not an *Error", fail, err)
		}
		c := sc.cands(e1, e2, e3, e4)
		if e.Index < 0 || e.Index >= len(c) || c[e.Index].Job != e.Job || c[e.Index].Tenant != e.Tenant {
			t.Fatalf("placer call %d failed: %v names candidate %d as %q of %q", fail, err, e.Index, e.Job, e.Tenant)
		}
		// A failed allocation or release names its job (a failed placement
		// names the job being placed, which the Placer is not told).
		if f.id != "" && string(e.Job) != f.id {
			t.Fatalf("placer call %d (%s %q) failed: %v names job %q", fail, f.op, f.id, err, e.Job)
		}
		if f.named != "" && string(e.Job) == f.named {
			t.Fatalf("placer call %d (%s) failed: %v names %q, the allocation in the fault, not the job being placed", fail, f.op, err, e.Job)
		}
		if err := changedAllocation(cl, before, ids...); err != nil {
			t.Fatalf("placer call %d failed: %v", fail, err)
		}
		verifyCluster(t, cl)
	}
}

// placerRound runs a round of the candidates on p, tenant A under-served
// (its jobs go first) and B over-served.
func placerRound(t *testing.T, p placement.Placer, rho map[ledger.JobID]ledger.Rho, cands []Candidate) error {
	t.Helper()
	acc := newAccounts()
	acc.tenant("A", 50, 100, 12)
	acc.tenant("B", 150, 100, 12)
	for id, r := range rho {
		acc.job(id, r)
	}
	_, err := Round(Input{Accounts: acc, Lease: lease, Placer: p, Candidates: cands}, Options{})
	return err
}

// changedAllocation names the first of ids whose allocation on cl is not
// the one before holds (or nil).
func changedAllocation(cl *placement.Cluster, before map[string]placement.Placement, ids ...string) error {
	for _, id := range ids {
		p, ok := cl.Allocation(id)
		if q, was := before[id]; ok != was || ok && !samePlacement(p, q) {
			return fmt.Errorf("%s holds %v (%v), before the round %v (%v)", id, p, ok, q, was)
		}
	}
	return nil
}

// unchanged fails the test unless cl holds the allocations before did.
func unchanged(t *testing.T, cl *placement.Cluster, before map[string]placement.Placement, ids ...string) {
	t.Helper()
	if err := changedAllocation(cl, before, ids...); err != nil {
		t.Fatal(err)
	}
	verifyCluster(t, cl)
}

// An optimistic look fails on a running candidate the Placer does not hold
// (a caller that lost track of a job, with a Placer that cannot be asked up
// front): the round fails with ErrPlacer naming that candidate, wrapping
// the Placer's ErrUnknownAllocation — not blaming the pending job that was
// looking — on each path a look can take, and leaves the Placer as it was.
func TestLookAtAnUnknownRunningJobNamesIt(t *testing.T) {
	faces := map[string]func(c *placement.Cluster, f *faults) placement.Placer{
		"releasing for a moment": func(c *placement.Cluster, f *faults) placement.Placer { return faultyPlacer{c, f} },
		"in a copy":              func(c *placement.Cluster, f *faults) placement.Placer { return cloningFaultyPlacer{faultyPlacer{c, f}} },
		"by PlaceWithout":        func(c *placement.Cluster, f *faults) placement.Placer { return withoutFaultyPlacer{faultyPlacer{c, f}} },
	}
	for name, face := range faces {
		t.Run(name, func(t *testing.T) {
			cl := cluster(t, 2, 8)
			e1, _ := cl.Place(8)
			must(t, cl.Allocate("E1", e1))
			ghost, _ := cl.Place(8) // what G claims to hold, never allocated
			before := map[string]placement.Placement{"E1": e1}
			err := placerRound(t, face(cl, &faults{fail: -1}), map[ledger.JobID]ledger.Rho{"E1": 2, "G": 3, "N1": 0}, []Candidate{
				{Job: "E1", Tenant: "B", Demand: 8, Running: true, Placement: e1, Leases: 1},
				{Job: "G", Tenant: "B", Demand: 8, Running: true, Placement: ghost, Leases: 1},
				{Job: "N1", Tenant: "A", Demand: 16, Submit: t0}, // fits only if both expiring jobs go
			})
			var e *Error
			if !errors.Is(err, ErrPlacer) || !errors.Is(err, placement.ErrUnknownAllocation) || !errors.As(err, &e) {
				t.Fatalf("round returned %v, want ErrPlacer wrapping ErrUnknownAllocation", err)
			}
			if e.Job != "G" || e.Index != 1 || e.Tenant != "B" {
				t.Fatalf("%v names candidate %d (%q of %q), want 1 (G of B)", err, e.Index, e.Job, e.Tenant)
			}
			unchanged(t, cl, before, "E1", "G", "N1")
		})
	}
}

// Without a copy of the Placer a round looks by releasing the undecided
// expiring jobs for a moment. When the Placer refuses one of those releases
// and then refuses to give back a job already released, the round reports
// the job it could not give back (the Placer was left without it, which
// the undo repairs) and wraps the Placer's error, and the Placer ends as it
// was.
func TestFailedRestoreAfterAFailedReleaseIsReported(t *testing.T) {
	cl := cluster(t, 3, 8)
	e1, _ := cl.Place(8)
	must(t, cl.Allocate("E1", e1))
	e2, _ := cl.Place(8)
	must(t, cl.Allocate("E2", e2))
	e3, _ := cl.Place(8)
	must(t, cl.Allocate("E3", e3)) // the cluster is full
	before := map[string]placement.Placement{"E1": e1, "E2": e2, "E3": e3}
	// The calls: Place(16) finds no room, Release(E1) and Release(E2) for
	// the look — the second fails — and Allocate(E1) to give E1 back, which
	// fails too.
	f := &faults{fail: 2, more: 1}
	err := placerRound(t, faultyPlacer{cl, f}, map[ledger.JobID]ledger.Rho{"E1": 2, "E2": 3, "E3": 0.5, "N1": 0}, []Candidate{
		{Job: "E1", Tenant: "B", Demand: 8, Running: true, Placement: e1, Leases: 1},
		{Job: "E2", Tenant: "B", Demand: 8, Running: true, Placement: e2, Leases: 1},
		{Job: "E3", Tenant: "A", Demand: 8, Running: true, Placement: e3, Leases: 1},
		{Job: "N1", Tenant: "A", Demand: 16, Submit: t0},
	})
	if f.op != "release" || f.id != "E2" {
		t.Fatalf("the first fault hit %s %q, want the release of E2: the round no longer takes this path", f.op, f.id)
	}
	var e *Error
	if !errors.Is(err, ErrPlacer) || !errors.Is(err, errInjected) || !errors.As(err, &e) {
		t.Fatalf("round returned %v, want ErrPlacer wrapping the fault", err)
	}
	if e.Job != "E1" || e.Index != 0 {
		t.Fatalf("%v names candidate %d (%q), want 0 (E1, which the Placer was left without)", err, e.Index, e.Job)
	}
	unchanged(t, cl, before, "E1", "E2", "E3", "N1")
}

// A Placer that refuses a step of Plan's undo fails the plan with ErrPlacer
// naming the job whose undo it refused, wrapping its error; the rest of
// the undo is done.
func TestPlanReportsARefusedUndo(t *testing.T) {
	setup := func() (*placement.Cluster, []Candidate) {
		cl := cluster(t, 2, 8)
		e1, _ := cl.Place(8)
		must(t, cl.Allocate("E1", e1))
		return cl, []Candidate{
			{Job: "E1", Tenant: "B", Demand: 8, Running: true, Placement: e1, Leases: 1},
			{Job: "N1", Tenant: "A", Demand: 8, Submit: t0},
			{Job: "N2", Tenant: "A", Demand: 8, Submit: t0.Add(1)}, // takes E1's node
		}
	}
	rhos := map[ledger.JobID]ledger.Rho{"E1": 2, "N1": 0, "N2": 0}
	plan := func(p placement.Placer, cands []Candidate) (Result, error) {
		acc := newAccounts()
		acc.tenant("A", 0, 3600, 8)
		acc.tenant("B", 36000, 3600, 8) // far above its share: A stays first
		for id, rho := range rhos {
			acc.job(id, rho)
		}
		var x Rounder
		return x.Plan(Input{Accounts: acc, Candidates: cands, Lease: lease, Placer: p}, Options{Reward: NewJobFirst})
	}
	cl, cands := setup()
	count := &faults{fail: -1}
	res, err := plan(faultyPlacer{cl, count}, cands)
	if err != nil || len(res.Released) != 1 || len(res.Grants) != 2 {
		t.Fatalf("plan: %+v, %v; want N1 and N2 granted, E1 released", res, err)
	}
	before := map[string]placement.Placement{"E1": cands[0].Placement}
	unchanged(t, cl, before, "E1", "N1", "N2")
	// The undo's three calls are the last: release N1, release N2,
	// allocate E1. What each refusal leaves held: the job refused its
	// release, and E1 if its GPUs are free again.
	held := []map[string]bool{{"N1": true, "E1": true}, {"N2": true}, {}}
	for k, job := range []string{"N1", "N2", "E1"} {
		cl, cands := setup()
		f := &faults{fail: count.calls - 3 + k}
		_, err := plan(faultyPlacer{cl, f}, cands)
		var e *Error
		if !errors.Is(err, ErrPlacer) || !errors.Is(err, errInjected) || !errors.As(err, &e) || string(e.Job) != job {
			t.Fatalf("undo fault %d: %v, want ErrPlacer naming %s", k, err, job)
		}
		for _, id := range []string{"E1", "N1", "N2"} {
			if _, ok := cl.Allocation(id); ok != held[k][id] {
				t.Errorf("undo fault %d: %s held %v, want %v", k, id, ok, held[k][id])
			}
		}
	}
}
