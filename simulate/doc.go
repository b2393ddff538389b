// Package simulate is a deterministic, trace-driven discrete-event simulator of
// a multi-tenant GPU cluster. It drives a Policy (ASTRAEA or a baseline) at
// scheduling ticks, keeps the two-level fairness ledger, the consolidated
// placement and the lease overheads (checkpoint at every unrenewed lease end,
// cold start at every resume), and produces the per-job and per-tenant records
// that package simulate/metrics summarizes.
package simulate
