// Package astraea is a library for long-term GPU-time fairness (LTGF) in
// shared GPU clusters, after ASTRAEA (Ye et al., TPDS 2022).
//
// Fairness here is an account, not an instantaneous split: for every tenant
// and every job the library integrates, over time, the GPUs actually held
// (Alloc) and the GPUs fairly owed (FairShare), and ranks entities by
// ρ = ∫Alloc ÷ ∫FairShare. A scheduler that repeatedly serves the lowest ρ —
// first across tenants, then across jobs inside the chosen tenant — repays
// debts over time while respecting gang demands, placement and the cost of
// preemption (leases with checkpoints).
//
// # Packages
//
//   - [github.com/astraea-sched/astraea/ledger]: the two-level accounts (Eq. 8 and Eq. 16), ρ, windows, decay, snapshots.
//   - [github.com/astraea-sched/astraea/placement]: consolidated, topology-aware, all-or-nothing gang placement.
//   - [github.com/astraea-sched/astraea/sched]: one two-phase scheduling round with pluggable order, reward and tie-break.
//   - [github.com/astraea-sched/astraea/lease]: the lease state machine and the renewal coordinator.
//   - [github.com/astraea-sched/astraea/simulate]: the trace-driven simulator, metrics and baselines.
//
// # Quick start
//
// A scheduler that only wants the accounts imports ledger alone:
//
//	l, _ := ledger.New(ledger.Config{Capacity: 16, Start: t0})
//	_ = l.AddTenant(t0, "team-a", 1)
//	_ = l.AddTenant(t0, "team-b", 1)
//	_ = l.Submit(t0, "a1", "team-a", 8, 1)
//	_ = l.Start(t0, "a1")
//	acct, _ := l.TenantAccount("team-a", t0, t0.Add(time.Hour))
//	fmt.Println(acct.Rho) // 1.0000: team-a held 8 GPUs, its quota
package astraea
