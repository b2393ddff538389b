package sched

import (
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// A round reads a real ledger through its View; with AdvanceFairShare the
// fair share of every tenant moves one lease ahead at the tenant's current
// rate (Eq. 16: the quota, 8 GPUs here).
func TestRoundReadsLedgerView(t *testing.T) {
	t1 := t0.Add(3600 * time.Second)
	l := abLedger(t, 16) // A holds its quota for an hour, B nothing
	for _, step := range []error{l.Stop(t1, "a"), l.Advance(t1)} {
		if step != nil {
			t.Fatal(step)
		}
	}
	for _, advance := range []bool{false, true} {
		cl := cluster(t, 1, 8)
		res, err := Round(Input{Accounts: l.View(t1), Lease: lease, Placer: cl, Candidates: []Candidate{
			{Job: "a", Tenant: "A", Demand: 8, Submit: t0, Leases: 4},
			{Job: "b", Tenant: "B", Demand: 8, Submit: t0},
		}}, Options{AdvanceFairShare: advance})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Grants) != 1 || res.Grants[0].Job != "b" {
			t.Fatalf("grants %+v, want b (tenant B is owed everything)", res.Grants)
		}
		b := res.Tenants[1].Start
		wantFair := ledger.GPUSeconds(8 * 3600)
		if advance {
			wantFair += 8 * 900
		}
		if b.Alloc != 0 || b.FairShare != wantFair {
			t.Fatalf("advance=%v: B starts at %+v, want fair %v", advance, b, wantFair)
		}
		if err := l.Check(); err != nil {
			t.Fatal(err)
		}
	}
}

// A round's outcome recorded in the ledger as the README shows: the
// released jobs stop with one StopAll, then the new grants start with one
// StartAll. Here the expiring job of the tenant that is owed less is
// preempted for the other tenant's pending job, and afterwards the ledger
// runs exactly the jobs that hold GPUs in the placer.
func TestRoundRecordedWithStopAllStartAll(t *testing.T) {
	t1 := t0.Add(3600 * time.Second)
	l := abLedger(t, 8) // A holds every GPU for an hour, B is owed its quota
	if err := l.Advance(t1); err != nil {
		t.Fatal(err)
	}
	cl := cluster(t, 1, 8)
	q, err := cl.Place(8)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Allocate("a", q); err != nil {
		t.Fatal(err)
	}
	res, err := Round(Input{Accounts: l.View(t1), Lease: lease, Placer: cl, Candidates: []Candidate{
		{Job: "a", Tenant: "A", Demand: 8, Submit: t0, Leases: 4, Running: true, Placement: q},
		{Job: "b", Tenant: "B", Demand: 8, Submit: t0},
	}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var stop, start []ledger.JobID
	for _, r := range res.Released {
		stop = append(stop, r.Job)
	}
	for _, g := range res.Grants {
		if g.Kind == New {
			start = append(start, g.Job)
		}
	}
	if err := l.StopAll(t1, stop); err != nil {
		t.Fatal(err)
	}
	if err := l.StartAll(t1, start); err != nil {
		t.Fatal(err)
	}
	for _, id := range []ledger.JobID{"a", "b"} {
		info, _ := l.Job(id)
		_, holds := cl.Allocation(string(id))
		if info.Running != holds {
			t.Fatalf("job %s: ledger running %v, placer holds %v (released %v, started %v)", id, info.Running, holds, stop, start)
		}
	}
	if info, _ := l.Job("b"); !info.Running {
		t.Fatalf("b, owed its whole quota, was not started: grants %+v", res.Grants)
	}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
}

// abLedger returns an Eq. 16 ledger of the given capacity with two equal
// tenants, A and B, each with one 8-GPU job submitted at t0: A's job a
// running from t0, B's job b pending.
func abLedger(t *testing.T, capacity ledger.GPUs) *ledger.Ledger {
	t.Helper()
	l, err := ledger.New(ledger.Config{Mode: ledger.QuotaShare, Capacity: capacity, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []error{
		l.AddTenant(t0, "A", 1),
		l.AddTenant(t0, "B", 1),
		l.Submit(t0, "a", "A", 8, 1),
		l.Start(t0, "a"),
		l.Submit(t0, "b", "B", 8, 1),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	return l
}
