// Package ledger keeps ASTRAEA's two-level long-term GPU-time fairness
// accounts: for every tenant and every job, the GPU·seconds actually received
// (Alloc) and the GPU·seconds fairly owed (FairShare), and their ratio ρ.
//
// The ledger is pure accounting: it records events at explicit times and
// answers queries; it never decides anything. A scheduler reads it through a
// [View] and picks the tenant, then the job, with the lowest ρ.
//
// # The accounts
//
// The cluster has M GPUs (it may change over time). Tenant j has weight W_j
// and quota Quota_j(t) = M(t)·W_j / ΣW over registered tenants. Its fair share
// is, per ledger ([Mode]):
//
//   - [DemandAware] (Eq. 8): FairShare_j(t) = min(Demand_j(t), Quota_j(t)),
//     Demand_j = Σ demand of its active (pending or running) jobs;
//   - [QuotaShare] (Eq. 16, the paper's simulator): FairShare_j(t) = Quota_j(t),
//     accruing even while the tenant is idle.
//
// Job i of tenant j, with gang demand D_i and weight w_i, is owed
// FairShare_ij(t) = min(D_i, FairShare_j(t)·w_i / Σ_l w_l) over the active
// jobs l of its tenant, and holds Alloc_i(t) = D_i while running, 0
// otherwise. Alloc_j = Σ_i Alloc_i. Every rate is constant between events, so
// every integral is an exact sum of rate × duration. ρ = ∫Alloc ÷ ∫FairShare
// over a window ([Ratio] fixes 0/0 = 1 and x/0 = +Inf).
//
// # Cost
//
// An event never costs O(jobs in the tenant): min(D_i, x·w_i) = w_i·min(θ_i, x)
// with θ_i = D_i/w_i and x = FairShare_j/Σw, so the active jobs of a tenant
// that share θ share one integral G_θ(t) = ∫min(θ, x(t)) dt, and a job's fair
// account is w_i·ΔG_θ over its active life. A change of x updates one
// breakpoint per distinct θ of the tenant (G_j, a handful in practice). Each
// method states its complexity; queries are O(log n) binary searches over
// time-ordered breakpoints, and a query at Now() (what a [View] asks) is
// O(1).
//
// History is kept compactly, because in an unbounded ledger the bytes an
// event retains are most of its cost: a breakpoint's value is recomputed,
// bit for bit, from the one before it rather than stored, so a Start or Stop
// retains about 4 bytes per account it changes (job, tenant, cluster
// allocated). Idle time is not a series of its own: it is capacity minus
// allocation plus the time allocated beyond capacity, which changes only
// after a capacity cut below the running demand, so a Start or Stop does
// not write it. A lookup replays at most 31 breakpoints after its binary
// search.
//
// # Conventions
//
//   - Time is an explicit parameter. An event before Now() is rejected with
//     [ErrTimeBackwards], never clamped; events at equal times apply in call
//     order, and a zero-length interval contributes nothing.
//   - Windows are half-open, [from, to). `to` may be after Now(): the current
//     state is extrapolated and nothing changes. from < Begin() is
//     [ErrOutOfHistory].
//   - A job submitted and finished in the same instant has Alloc = FairShare
//     = 0 and ρ = 1; so has a tenant that was owed nothing.
//   - Weight and capacity changes split a window exactly at the change.
//   - Finished jobs and removed tenants stay queryable for their past (until
//     they fall before Begin() under a trailing window or a Reset, or, for a
//     job, until [Ledger.Forget] drops its record).
//   - Every rejected call returns a [*Error] matching one sentinel with
//     errors.Is, and leaves the ledger exactly as it was.
//
// # Index
//
// Construction and configuration: [New], [Config], [Mode] ([DemandAware],
// [QuotaShare]), [History] ([Unbounded], [TrailingWindow], [HalfLife]).
//
// Entities and events: [Ledger.AddTenant], [Ledger.SetTenantWeight],
// [Ledger.RemoveTenant], [Ledger.SetCapacity], [Ledger.Submit],
// [Ledger.SetJobWeight], [Ledger.Start], [Ledger.Stop], [Ledger.Finish]
// ([FinalState]: [Completed], [Failed], [Cancelled]), [Ledger.Advance],
// [Ledger.Reset]; [Ledger.Forget] drops a finished job's record.
// [Ledger.StartAll] and [Ledger.StopAll] apply many starts or stops at one
// time, all or none (a round's grants and releases).
//
// Queries: [Ledger.TenantAccount], [Ledger.JobAccount],
// [Ledger.ClusterAccount] over a window, returning [Account] and
// [ClusterAccount]; [Ledger.Now], [Ledger.Begin], [Ledger.Capacity].
//
// Inspection of current state: [Ledger.Tenant] ([TenantInfo]),
// [Ledger.Tenants], [Ledger.Job] ([JobInfo]), [Ledger.Mode],
// [Ledger.History]; demands and capacity are bounded by [MaxGPUs], weights
// by [MinWeight] and [MaxWeight].
//
// Scheduler face: [Ledger.View] and [View] ([View.TenantAccount],
// [View.JobAccount], [View.AppendJobAccounts] for many jobs at once,
// [View.TenantFairRate], [View.JobFairRate], [View.TenantQuota]).
//
// Fairness ratio: [Rho], [Ratio], [Rho.Compare], [Rho.Loss].
//
// Persistence: [Ledger.MarshalBinary], [Restore], [Ledger.WriteFile]
// (atomic), [ReadFile].
//
// Errors and invariants: [Error], the Err* sentinels ([ErrTimeBackwards],
// [ErrUnknownTenant], [ErrUnknownJob], [ErrDuplicateTenant],
// [ErrDuplicateJob], [ErrInvalidTransition], [ErrInvalidValue],
// [ErrTenantBusy], [ErrOutOfHistory], [ErrCorruptSnapshot],
// [ErrSnapshotVersion], [ErrConfig]), and [Ledger.Check].
//
// Units: [TenantID], [JobID], [GPUs], [GPUSeconds].
package ledger
