package metrics

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// bigRun is a run of the size of the Philly two-week reference: 31,903 jobs,
// 11 tenants with 1 h, 6 h and 24 h intervals over 14 days, and one
// occupancy point per job start or end.
func bigRun() Run {
	rng := rand.New(rand.NewPCG(1, 2))
	r := Run{Policy: "astraea", End: at(14 * 86400)}
	for i := range 31903 {
		submit := rng.IntN(14 * 86400)
		run := time.Duration(1+rng.IntN(86400)) * time.Second
		start := at(submit + rng.IntN(3600))
		r.Jobs = append(r.Jobs, JobRecord{ID: fmt.Sprint(i), Tenant: fmt.Sprint("vc", i%11), GPUs: 1 + rng.IntN(8),
			Submit: at(submit), FirstStart: start, End: start.Add(run), Run: run, Rho: ledger.Rho(0.9 + 0.2e-3*float64(rng.IntN(1000)))})
		r.Util = append(r.Util, UtilPoint{At: at(submit), Used: rng.IntN(1680), Capacity: 1680})
	}
	for _, l := range []time.Duration{time.Hour, 6 * time.Hour, 24 * time.Hour} {
		for from := at(0); from.Before(r.End); from = from.Add(l) {
			for k := range 11 {
				r.Tenants = append(r.Tenants, TenantInterval{Tenant: fmt.Sprint("vc", k), From: from, To: from.Add(l),
					Account: acct(float64(rng.IntN(100000)), 50000)})
			}
		}
	}
	return r
}

// BenchmarkSummarize summarises a Philly-sized run: O(J log J + T + U log U).
func BenchmarkSummarize(b *testing.B) {
	r := bigRun()
	b.ReportAllocs()
	for b.Loop() {
		Summarize(r, SummaryConfig{})
	}
}

// BenchmarkWriteFigures writes the four figures and the per-tenant figure
// of a Philly-sized run (lines reduced to at most 1,000 points).
func BenchmarkWriteFigures(b *testing.B) {
	r := bigRun()
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteFigures(dir, r); err != nil {
			b.Fatal(err)
		}
	}
}
