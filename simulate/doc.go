// Package simulate is a deterministic, trace-driven discrete-event simulator of
// a multi-tenant GPU cluster. It drives a Policy (ASTRAEA or a baseline) at
// scheduling ticks, keeps the two-level fairness ledger, the consolidated
// placement and the lease overheads (checkpoint at every unrenewed lease end,
// cold start at every resume), and produces the per-job and per-tenant records
// that package simulate/metrics summarizes.
//
// Each job's progress follows the lease package's model, one lease.Progress
// per job: progress at one second per second while running, cold starts,
// renewal checkpoints, and — with Config.Iteration set — the partial
// iteration a preempted job loses, reported in Stats.LostGPUSeconds. Every
// progress, release and completion time of the run comes from that model.
package simulate
