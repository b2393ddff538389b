// Package kueue is a controller that gives Kueue long-term GPU-time
// fairness without forking it: it records the Workloads Kueue admits in an
// astraea ledger and writes each queue's spec.fairSharing.weight from the
// queue's ρ (GPU·seconds received ÷ GPU·seconds owed).
//
// # What it records
//
// A tenant is a LocalQueue ("namespace/name", ByLocalQueue) or a
// ClusterQueue (ByClusterQueue). A Workload asking for GPUs (Demand) is a
// ledger job of its queue's tenant:
//
//   - created → ledger Submit at its creation time;
//   - Admitted condition true → Start at the condition's transition time;
//   - Admitted false again (evicted, preempted, deactivated) → Stop;
//   - Finished condition true → Finish (Completed if it succeeded, else
//     Failed); deleted while active → Finish as Cancelled.
//
// Recording is idempotent (see Recorder): each step is applied only when
// the ledger's state of the job says it is due, so duplicate events and
// restarts never count anything twice. After a restart the ledger comes
// back from a snapshot (Options.Snapshot) brought up to date from the API
// server, or, without one, is rebuilt from the Workloads' conditions
// (Rebuild).
//
// # What it writes
//
// Every Options.Period the controller syncs the ledger's capacity (the
// ClusterQueues' GPU nominal quotas, or Options.Capacity) and tenants (their
// shares from ShareAnnotation), and writes each tenant's queue weight
// through WeightMap: share × base × clamp(1/ρ, 1/R, R), with hysteresis.
//
// # What it reports
//
// Registered on a prometheus.Registerer (the manager's metrics endpoint in
// cmd/astraea-kueue): the ledger's accounts through the collector of
// integrations/prometheus (per tenant astraea_tenant_alloc_gpu_seconds,
// astraea_tenant_fair_share_gpu_seconds, astraea_tenant_rho and the current
// weight, quota, demand and allocation; the capacity), and per tenant
// astraea_kueue_fair_sharing_weight, the queue's weight after the last
// sync. All are gauges: under a half-life or a window the totals fall.
package kueue
