// Package metrics turns a simulation run into the paper's figures of merit
// and writes them out.
//
// A [Run] is what a simulator records: one [JobRecord] per job, the tenants'
// accounts over fixed intervals ([TenantInterval]), cluster occupancy over
// time ([UtilPoint]) and the quotas used. [Summarize] reduces it to a
// [Summary]:
//
//   - sharing-loss jobs: the share of jobs with ρ_job < 0.95;
//   - tenant sharing-loss intervals: for each interval length (1 h, 6 h and
//     24 h by default) the share of (tenant, interval) pairs with
//     ρ_tenant < 1;
//   - JCT, queueing delay and slowdown: mean and p50/p90/p99;
//   - utilization: ∫used ÷ ∫capacity;
//   - Jain's fairness index of the tenants' whole-run ρ;
//   - preemptions; [PreemptionOverhead] compares two summaries (with and
//     without overheads) as the relative increase of the average JCT.
//
// Outputs: [WriteTable] (an aligned text table, one column per policy),
// [WriteQuotas] (the tenant quotas a run used), [WriteJSON] (summaries as
// JSON; [Summary] carries json tags and ρ is JSON-safe), [WriteCSV] (per-job, per-tenant and utilization CSVs)
// and [WriteFigures] (SVG: ρ_job CDF, slowdown CDF, tenant ρ over time,
// utilization over time, policies overlaid). Every output is deterministic:
// rows are sorted and numbers have a fixed format.
package metrics
