package metrics_test

import (
	"fmt"
	"os"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/simulate/metrics"
)

// Two jobs of one tenant on a 8-GPU cluster: the first ran at once, the
// second waited an hour behind it and received less than its fair share.
func ExampleSummarize() {
	t0 := time.Date(2024, 3, 1, 8, 0, 0, 0, time.UTC)
	run := metrics.Run{
		Policy: "astraea",
		Jobs: []metrics.JobRecord{
			{ID: "a", Tenant: "team", GPUs: 8, Submit: t0, FirstStart: t0, End: t0.Add(time.Hour), Run: time.Hour, Rho: 1},
			{ID: "b", Tenant: "team", GPUs: 8, Submit: t0, FirstStart: t0.Add(time.Hour), End: t0.Add(2 * time.Hour), Run: time.Hour, Rho: 0.5},
		},
		Tenants: []metrics.TenantInterval{
			{Tenant: "team", From: t0, To: t0.Add(time.Hour), Account: ledger.Account{Alloc: 8 * 3600, FairShare: 8 * 3600, Rho: 1}},
			{Tenant: "team", From: t0.Add(time.Hour), To: t0.Add(2 * time.Hour), Account: ledger.Account{Alloc: 8 * 3600, FairShare: 8 * 3600, Rho: 1}},
		},
		Util: []metrics.UtilPoint{{At: t0, Used: 8, Capacity: 8}},
		End:  t0.Add(2 * time.Hour),
	}
	s := metrics.Summarize(run, metrics.SummaryConfig{Intervals: []time.Duration{time.Hour}})
	fmt.Printf("sharing-loss jobs %.0f %%, average JCT %.0f s, slowdown %.1f, utilization %.0f %%\n",
		100*s.SharingLossJobs, s.JCT.Mean, s.Slowdown.Mean, 100*s.Utilization)
	metrics.WriteTable(os.Stdout, s)
	// Output:
	// sharing-loss jobs 50 %, average JCT 5400 s, slowdown 1.5, utilization 100 %
	// metric                                             astraea
	// jobs (finished)                                      2 (2)
	// sharing-loss jobs (ρ_job < 0.95)                   50.00 %
	// tenant loss intervals 1h (ρ < 1)               0.00 % of 2
	// avg JCT s                                           5400.0
	// p50 JCT s                                           3600.0
	// p90 JCT s                                           7200.0
	// p99 JCT s                                           7200.0
	// avg queueing s                                      1800.0
	// p50 queueing s                                         0.0
	// p90 queueing s                                      3600.0
	// p99 queueing s                                      3600.0
	// avg slowdown                                         1.500
	// p50 slowdown                                         1.000
	// p90 slowdown                                         2.000
	// p99 slowdown                                         2.000
	// utilization                                       100.00 %
	// Jain's index of tenant ρ                             1.000
	// preemptions (jobs)                                   0 (0)
	// overhead, direct (of Σ JCT)                         0.00 %
	//   checkpoint / cold start / lost  0.00 % / 0.00 % / 0.00 %
}

// The quotas a run used, printed beside its results.
func ExampleWriteQuotas() {
	metrics.WriteQuotas(os.Stdout, map[string]float64{"vcJsw": 256, "vcvGl": 160, "vcgkz": 8})
	// Output:
	// tenant  weight    share
	// vcJsw      256  60.38 %
	// vcgkz        8   1.89 %
	// vcvGl      160  37.74 %
}
