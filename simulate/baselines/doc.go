// Package baselines holds the schedulers that ASTRAEA is compared with, each
// behind [simulate.Policy] so that the simulator runs every one of them on the
// same trace, the same cluster and the same overhead model:
//
//   - [FIFO]: the reference, one global queue in submission order.
//   - [YARNCS]: Hadoop YARN's capacity scheduler, a static capacity per tenant
//     (virtual cluster), FIFO inside it, no preemption.
//   - [HiveD]: HiveD (OSDI '20), guaranteed cells per virtual cluster and
//     low-priority opportunistic jobs on idle cells.
//   - [AlloX]: AlloX (EuroSys '20) on homogeneous GPUs, shortest remaining
//     processing time first among the tenants furthest below their fair share.
//   - [Tiresias]: Tiresias-L (NSDI '19), two-dimensional least attained service
//     with discretised priority queues and starvation promotion.
//   - [Themis]: Themis (NSDI '20), finish-time fairness with leases.
//   - [GandivaFair]: Gandiva_fair (EuroSys '20), gang-aware stride scheduling of
//     tenant tickets.
//
// Every file names its source paper, what is modelled, what is simplified and
// where each default comes from. All policies are deterministic: ties break by
// (submit time, job id) and tenants by name; the only randomness (Themis's
// estimate error) is derived from the job id and a seed.
//
// A policy value keeps state between ticks (attained-service offsets, stride
// passes, cell bindings), so it serves one simulation: build a fresh one per
// run. [All] returns the table of names and constructors that the command's
// "-policy all" walks; there is no package-level registry.
package baselines
