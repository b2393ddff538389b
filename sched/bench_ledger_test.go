package sched

import (
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
)

// BenchmarkRoundLedgerView is BenchmarkRound with the accounts read from a
// real ledger (Eq. 16) through its View instead of a map: the round's cost
// as a scheduler embedding the ledger would see it, on the 90 %-busy
// cluster (by Round) and on the idle one (by a Rounder that ran it
// before). Every candidate was submitted over the last hour; the running
// ones started at submission.
func BenchmarkRoundLedgerView(b *testing.B) {
	for _, bc := range []struct {
		name string
		busy float64
		x    func() *Rounder
	}{
		{"busy90", 0.9, func() *Rounder { return nil }},
		{"idle/rounder", 0, func() *Rounder { return new(Rounder) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cl, in := benchRound(b, bc.busy)
			in.Accounts = ledgerView(b, cl, in.Candidates)
			runRoundBench(b, in, nil, bc.x(), func() placement.Placer { return cl.Clone() })
		})
	}
}

// ledgerView returns the View at t0 of a ledger of cl's capacity in which
// every candidate was submitted over the hour before t0, each tenant with
// weight 1, and the running ones started at submission.
func ledgerView(b *testing.B, cl *placement.Cluster, cands []Candidate) ledger.View {
	now := t0
	start := now.Add(-time.Hour)
	l, err := ledger.New(ledger.Config{Mode: ledger.QuotaShare, Capacity: ledger.GPUs(cl.Capacity()), Start: start})
	if err != nil {
		b.Fatal(err)
	}
	seen := map[ledger.TenantID]bool{}
	for _, c := range cands {
		if !seen[c.Tenant] {
			seen[c.Tenant] = true
			if err := l.AddTenant(start, c.Tenant, 1); err != nil {
				b.Fatal(err)
			}
		}
	}
	step := time.Hour / time.Duration(len(cands)+1)
	at := start
	for _, c := range cands {
		at = at.Add(step)
		if err := l.Submit(at, c.Job, c.Tenant, c.Demand, 1); err != nil {
			b.Fatal(err)
		}
		if c.Running {
			if err := l.Start(at, c.Job); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := l.Advance(now); err != nil {
		b.Fatal(err)
	}
	return l.View(now)
}
