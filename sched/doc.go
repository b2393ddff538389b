// Package sched runs one ASTRAEA scheduling round: which jobs hold GPUs for
// the next lease.
//
// A round is the paper's two-phase algorithm. Phase 1 repays tenants: it
// picks the tenant with the lowest long-term fairness ratio ρ_tenant. Phase 2
// repays jobs inside that tenant: it picks the candidate with the highest
// reward (by default −ρ_job, so the job with the largest debt). The pick is
// placed as a gang (all its GPUs or nothing); the tenant's account is
// pre-credited with demand × lease at once, so that its next turn sees what
// it has just received; a tenant whose pick does not fit leaves play for the
// round instead of stalling the cluster. Running jobs whose lease ends now
// are candidates too: selected again, they are renewed in place on exactly
// the same GPUs; otherwise they are released (preempted) for the jobs that
// were served first.
//
// # The API by purpose
//
//   - Run a round: [Round] with an [Input] (accounts, [Candidate] jobs, lease
//     length, a placement.Placer) and [Options]; it returns a [Result].
//   - Read the outcome: [Result.Grants] ([Grant], [New] or [Renewed], with
//     the jobs each one preempts), [Result.Released] (expiring jobs to
//     checkpoint), [Result.Waiting] and [Result.Why] (a [Reason] for every
//     candidate not served), [Result.Tenants] (pre-credited accounts and why
//     a tenant left play). [Options.Trace] reports every decision as a [Step].
//   - Plug in accounting: [Accounts] (ledger.View satisfies it) and the
//     optional [FairRater] and [JobAccountsAppender] (many job accounts
//     at once, which ledger.View also implements).
//   - Phase 1 order: [TenantOrder], default [ByRho].
//   - Phase 2 reward: [Reward] and [Score]; shipped rewards [NegJobRho]
//     (Algorithm 2, the default), [NewJobFirst] (new-job priority),
//     [LongJobCredit], [UrgentFirst], [NeverRan]; combinators [WeightedSum]
//     and [Lexicographic].
//   - Ties inside a tenant: [TieBreak], default [BySubmit].
//   - Keep large gangs from starving (not in the paper): a [Reserver] runs
//     the rounds and [Hold]s nodes for the most under-served tenant's
//     blocked gang through a Placer that is a [Holder].
//   - Errors: [ErrInvalidInput], [ErrInvalidCandidate], [ErrDuplicateJob],
//     [ErrUnknownTenant], [ErrUnknownJob], [ErrNoFairRate], [ErrPlacer],
//     [ErrCannotHold], as [*Error].
//
// # Choices the paper leaves open
//
// The paper's pseudocode fixes neither tie-breaks, nor the reward of its
// simulator's new-job priority, nor how a new job and the expiring jobs share
// GPUs within one round. This package decides, and documents:
//
//   - Ties: tenants by ρ then id; jobs by reward, then earlier submission,
//     then id. Every order ends in an id, so a round is deterministic.
//   - New-job priority ([NewJobFirst]) is lexicographic: jobs that never held
//     a lease first, then −ρ_job.
//   - Pre-credit: only Alloc advances by default, as in the paper's worked
//     example; [Options.AdvanceFairShare] also advances every tenant's fair
//     share by one lease.
//   - Renewals and new jobs: the expiring jobs stay allocated while the round
//     selects. A selected expiring job is renewed where it is. A selected new
//     job goes on GPUs free now if it can; otherwise, if it fits once the
//     expiring jobs not yet selected are counted as free (the optimistic
//     view), it goes there and exactly the expiring jobs whose GPUs it uses
//     are preempted ([Grant.Preempts]); otherwise it does not fit. A
//     preempted job remains a candidate without GPUs and may be placed
//     elsewhere later in the round. At the end the expiring jobs neither
//     renewed nor preempted are released. A new job therefore never shares a
//     GPU with a job that has not been released, an expiring job is only
//     displaced by a job served before it, and the coordinator learns which
//     releases must complete before each new job starts. Placing on free GPUs
//     first avoids needless preemptions; among optimistic placements the
//     placer's own rule decides, which does not minimise the number of jobs
//     preempted.
//   - Work conservation: the paper's loop ends when every tenant has left
//     play, which can leave a small job of such a tenant waiting while it
//     would fit. By default a backfill stage then tries every remaining
//     candidate in the same orders, so no waiting candidate fits after a
//     round. [Options.NoBackfill] gives the paper's loop exactly.
//
// The package's example of the specification (Example_specification, in
// spec_example_test.go) restates a round by brute force, in the order the
// paper's algorithm reads and without the heaps and caches that make
// Round fast; the property tests hold Round to it, result for result, on
// random rounds.
package sched
