package sched

import (
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

func TestLongWaitFirst(t *testing.T) {
	now := t0.Add(10 * time.Hour)
	r := LongWaitFirst(now, 6*time.Hour)
	old := Candidate{Job: "old", Submit: t0, WaitingSince: t0.Add(time.Hour)}                            // waited 9 h
	older := Candidate{Job: "older", Submit: t0.Add(-time.Hour), WaitingSince: t0}                       // waited 10 h, submitted earlier
	fresh := Candidate{Job: "fresh", Submit: t0.Add(9 * time.Hour), WaitingSince: t0.Add(9 * time.Hour)} // waited 1 h
	running := Candidate{Job: "run", Submit: t0.Add(-2 * time.Hour), WaitingSince: t0, Running: true}
	unknown := Candidate{Job: "unknown", Submit: t0}
	acc := ledger.Account{Rho: 1}
	for _, c := range []struct {
		name string
		a, b Candidate
		want int
	}{
		{"a job that waited long ranks above one that did not", old, fresh, 1},
		{"among jobs that waited long the earlier submission goes first", older, old, 1},
		{"a running job never counts as waiting", running, old, -1},
		{"a job without a waiting time never counts as waiting", unknown, old, -1},
		{"jobs that did not wait long tie, for the next level to order", fresh, running, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := r(&c.a, acc).Compare(r(&c.b, acc)); got != c.want {
				t.Errorf("compare %s with %s = %d, want %d", c.a.Job, c.b.Job, got, c.want)
			}
		})
	}
	// Exactly at the threshold counts.
	at := Candidate{Job: "at", Submit: t0, WaitingSince: now.Add(-6 * time.Hour)}
	if r(&at, acc).Compare(r(&fresh, acc)) != 1 {
		t.Error("a job that waited exactly the threshold does not count")
	}
}

func TestTenantsFirst(t *testing.T) {
	starved := func(s *TenantState) bool { return s.GPUs < 2 }
	order := TenantsFirst(starved, nil)
	lowRho := &TenantState{ID: "a", Account: ledger.Account{Rho: 0.1}, GPUs: 4}
	highRho := &TenantState{ID: "b", Account: ledger.Account{Rho: 0.9}, GPUs: 0}
	alsoStarved := &TenantState{ID: "c", Account: ledger.Account{Rho: 0.5}, GPUs: 1}
	if order(highRho, lowRho) != -1 || order(lowRho, highRho) != 1 {
		t.Error("a tenant for which first holds is not served before a lower ρ")
	}
	if order(alsoStarved, highRho) != -1 {
		t.Error("within the first group the ρ order does not decide")
	}
	// In a round: tenant B (ρ 0.9, holding nothing) is served before A
	// (ρ 0.1) although A's ρ is lower; once B holds 8 GPUs it leaves the
	// first group.
	cl := cluster(t, 2, 8)
	acc := newAccounts()
	acc.tenant("A", 10, 100, 8)
	acc.tenant("B", 90, 100, 8)
	acc.job("A1", 0.5)
	acc.job("B1", 0.5)
	acc.job("B2", 0.5)
	in := Input{Accounts: acc, Lease: lease, Placer: cl, Candidates: []Candidate{
		{Job: "A1", Tenant: "A", Demand: 8, Submit: t0},
		{Job: "B1", Tenant: "B", Demand: 8, Submit: t0},
		{Job: "B2", Tenant: "B", Demand: 8, Submit: t0},
	}}
	res, err := Round(in, Options{TenantOrder: TenantsFirst(func(s *TenantState) bool { return s.ID == "B" && s.GPUs < 8 }, nil), NoBackfill: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []ledger.JobID
	for _, g := range res.Grants {
		got = append(got, g.Job)
	}
	if len(got) != 2 || got[0] != "B1" || got[1] != "A1" {
		t.Errorf("grants %v, want B1 (B first while it holds nothing) then A1 (ρ order)", got)
	}
}
