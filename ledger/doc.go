// Package ledger keeps ASTRAEA's long-term GPU-time fairness accounts: for
// every tenant and every job, the GPU·seconds actually received (Alloc) and
// the GPU·seconds fairly owed (FairShare), and their ratio ρ. Tenants form a
// tree of any depth (an organisation, its teams, their users); the paper's
// two levels, tenants and their jobs, are the tree of depth one.
//
// The ledger is pure accounting: it records events at explicit times and
// answers queries; it never decides anything. A scheduler reads it through a
// [View] and picks the tenant, then the job, with the lowest ρ.
//
// # The accounts
//
// The cluster has M GPUs (it may change over time) and is the root of the
// tree; every tenant has a parent, the cluster or another tenant
// ([Ledger.AddTenantUnder]; [Ledger.AddTenant] adds under the cluster), and
// jobs hang under leaves. Node n has weight W_n, and D_n(t) is the demand of
// the active (pending or running) jobs in its subtree. Its fair share
// FairShare_n, F_n for short, is defined top down:
//
//	F_root(t)  = M(t)
//	Quota_n(t) = F_p(t) · W_n / Σ W_s   over the registered children s of n's parent p
//
// and, per ledger ([Mode]):
//
//   - [QuotaShare] (Eq. 16, the paper's simulator): F_n = Quota_n, accruing
//     even while n is idle;
//   - [DemandAware] (Eq. 8): for the children of the cluster, F_n =
//     min(D_n, Quota_n), as the paper defines it; below a tenant p, what a
//     child cannot use flows to its siblings: F_n = min(D_n, W_n·λ_p), with
//     the water level λ_p ≥ F_p/ΣW_s chosen so that the children's fair
//     shares add up to F_p (they can: F_p ≤ D_p = Σ D_s). The cluster is
//     the exception because M is capacity, not a demand-capped share: what
//     the top-level tenants cannot use is idle or lent, owed to no one.
//
// A removed tenant has F = 0 and no quota. Job i of leaf j, with gang demand
// D_i and weight w_i, is owed FairShare_ij(t) = min(D_i, F_j(t)·w_i / Σ_l
// w_l) over the active jobs l of its tenant ([CappedJobShare], the
// default), or F_j(t)·w_i / Σ_l w_l without the cap ([SplitJobShare],
// Config.JobShare: the jobs' shares then add up to F_j, as the authors'
// public simulator owes them), and holds Alloc_i(t) = D_i while running, 0
// otherwise. A node's Alloc is the sum over the running jobs of its
// subtree. Every rate is constant between events, so every
// integral is an exact sum of rate × duration. ρ = ∫Alloc ÷ ∫FairShare
// over a window ([Ratio] fixes 0/0 = 1 and x/0 = +Inf).
//
// A worked example: M = 12, the cluster's children ai (W 2) and ops (W 1),
// ai's children vision and nlp (W 1 each); vision's jobs demand 8 GPUs,
// nlp's 1, ops has none. Quotas: ai 12·2/3 = 8, ops 4, vision and nlp 8/2 =
// 4. Under QuotaShare the fair shares are the quotas: 8, 4, 4, 4. Under
// DemandAware, F_ai = min(9, 8) = 8 and F_ops = min(0, 4) = 0; inside ai,
// nlp can use 1 of its 4, so 3 flow to vision: λ_ai = 7, F_nlp = min(1, 7)
// = 1, F_vision = min(8, 7) = 7, and 7 + 1 = F_ai. With the two levels of
// the paper (every tenant a child of the cluster) both modes are exactly
// the paper's Eq. 8 and Eq. 16.
//
// # Cost
//
// An event never costs O(jobs in the tenant) nor O(tenants): min(D_i, x·w_i)
// = w_i·min(θ_i, x) with θ_i = D_i/w_i and x = F_j/Σw, so the active jobs
// of a tenant that share θ share one integral G_θ(t) = ∫min(θ, x(t)) dt,
// and a job's fair account is w_i·ΔG_θ over its active life. The same holds
// one level up: F_n = W_n·min(θ_n, x_p) with θ_n = D_n/W_n (+Inf under
// QuotaShare) and x_p the parent's share per unit weight (F_p/ΣW_s, or
// λ_p), so the children of one parent that share θ share one integral, and
// a tenant's account is W_n·ΔG over stretches of constant θ and weight. A
// quota change thus writes one breakpoint per distinct θ among the
// parent's children (one under QuotaShare), plus, below every child with
// children or active jobs, the same again; it never rewrites the accounts
// of idle tenants. Each method states its complexity; queries are
// O(log n) binary searches over time-ordered breakpoints, and a query at
// Now() (what a [View] asks) is O(1).
//
// History is kept compactly, because in an unbounded ledger the bytes an
// event retains are most of its cost: a breakpoint's value is recomputed,
// bit for bit, from the one before it rather than stored, so a Start or Stop
// retains about 4 bytes per account it changes (job, each tenant on its
// path, cluster allocated). Idle time is not a series of its own: it is
// capacity minus allocation plus the time allocated beyond capacity, which
// changes only after a capacity cut below the running demand, so a Start or
// Stop does not write it. A lookup replays at most 31 breakpoints after its
// binary search.
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
//     they fall before Begin() under a trailing window, buckets or a Reset,
//     or, for a job, until [Ledger.Forget] drops its record).
//   - Every rejected call returns a [*Error] matching one sentinel with
//     errors.Is, and leaves the ledger exactly as it was.
//
// # Index
//
// Construction and configuration: [New], [Config], [Mode] ([DemandAware],
// [QuotaShare]), [JobShare] ([CappedJobShare], [SplitJobShare]), [History]
// ([Unbounded], [TrailingWindow], [Buckets], [HalfLife]).
//
// Entities and events: [Ledger.AddTenant], [Ledger.AddTenantUnder],
// [Ledger.SetTenantWeight],
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
// [Ledger.Tenants], [Ledger.Children], [Ledger.Job] ([JobInfo]),
// [Ledger.Mode], [Ledger.History]; demands and capacity are bounded by
// [MaxGPUs], weights by [MinWeight] and [MaxWeight].
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
