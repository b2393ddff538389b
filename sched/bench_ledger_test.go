package sched

import (
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
)

// BenchmarkRoundLedgerView is BenchmarkRound/busy90 with the accounts read
// from a real ledger (Eq. 16) through its View instead of a map: the
// round's cost as a scheduler embedding the ledger would see it. Every
// candidate was submitted over the last hour; the running ones started at
// submission.
func BenchmarkRoundLedgerView(b *testing.B) {
	cl, in := benchRound(b, 0.9)
	now := t0
	start := now.Add(-time.Hour)
	l, err := ledger.New(ledger.Config{Mode: ledger.QuotaShare, Capacity: ledger.GPUs(cl.Capacity()), Start: start})
	if err != nil {
		b.Fatal(err)
	}
	seen := map[ledger.TenantID]bool{}
	for _, c := range in.Candidates {
		if !seen[c.Tenant] {
			seen[c.Tenant] = true
			if err := l.AddTenant(start, c.Tenant, 1); err != nil {
				b.Fatal(err)
			}
		}
	}
	step := time.Hour / time.Duration(len(in.Candidates)+1)
	at := start
	for _, c := range in.Candidates {
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
	in.Accounts = l.View(now)
	runRoundBench(b, in, nil, nil, func() placement.Placer { return cl.Clone() })
}
