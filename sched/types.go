package sched

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
)

// Accounts is the accounting a round reads: the tenant and job accounts over
// the history so far. [ledger.View] satisfies it; another accounting can plug
// in by implementing these two lookups. A lookup that reports false for a
// tenant or job of a candidate makes [Round] fail with [ErrUnknownTenant] or
// [ErrUnknownJob].
//
// A round reads every candidate tenant's account up front, but a job's
// account only when Phase 1 first reaches the job's tenant: in a large round
// that fills the cluster after a few tenants, the jobs of the others are
// never looked up.
type Accounts interface {
	TenantAccount(ledger.TenantID) (ledger.Account, bool)
	JobAccount(ledger.JobID) (ledger.Account, bool)
}

// JobAccountsAppender is the optional face of [Accounts] that looks up
// many job accounts at once: AppendJobAccounts appends the account of every
// id, in order, as JobAccount returns it, and reports false if it stopped
// before an unknown id (then ids[len(result)-len(dst)]). A round asks it
// once per tenant, for that tenant's candidates, instead of calling
// JobAccount for each: a store whose records lie scattered through a large
// heap can then overlap their memory loads. Any other answer (more or
// fewer accounts than that) fails the round with ErrInvalidInput.
// [ledger.View] implements it.
type JobAccountsAppender interface {
	AppendJobAccounts(dst []ledger.Account, ids []ledger.JobID) ([]ledger.Account, bool)
}

// FairRater is the optional face of [Accounts] that reports a tenant's
// current fair-share rate FairShare_j(t) in GPUs (GPU·seconds per second).
// [ledger.View] implements it. [Options.AdvanceFairShare] requires it.
type FairRater interface {
	TenantFairRate(ledger.TenantID) (float64, bool)
}

// Candidate is a job that may receive a lease in this round: a pending job,
// or a running job whose lease ends now.
type Candidate struct {
	Job    ledger.JobID
	Tenant ledger.TenantID
	// Demand is the gang size: the job gets exactly Demand GPUs or nothing.
	Demand ledger.GPUs
	// Submit is the submission time; the default [TieBreak] prefers earlier.
	Submit time.Time
	// Running marks a job whose lease ends now. It holds Placement in the
	// round's Placer under the allocation id string(Job); if it is selected
	// again it is renewed in place, on exactly these GPUs.
	Running   bool
	Placement placement.Placement
	// Leases counts the leases the job has held so far, including the one
	// ending now for a running job; 0 means it has never run. Used by
	// [NewJobFirst], [NeverRan] and [LongJobCredit].
	Leases int
	// Urgent is a user's urgency flag, used by [UrgentFirst].
	Urgent bool
	// WaitingSince is when a waiting candidate last stopped running, or
	// its submission if it never ran; zero means unknown. Used by
	// [LongWaitFirst].
	WaitingSince time.Time
}

// Input is everything one round decides over.
type Input struct {
	// Accounts gives every candidate's tenant and job account.
	Accounts Accounts
	// Candidates are the pending jobs and the running jobs whose lease ends
	// now. Their order does not influence the decisions.
	Candidates []Candidate
	// Lease is the lease length; every grant is pre-credited for a full lease.
	Lease time.Duration
	// Placer is the cluster state and the round's working state. On entry it
	// holds every running job (expiring or not) under its allocation id
	// string(JobID). On success it holds the renewed and newly granted jobs,
	// and every expiring job that was not renewed has been released from it.
	// Pass a clone for a dry run.
	Placer placement.Placer
}

// TenantState is a tenant as Phase 1 sees it while a round runs.
type TenantState struct {
	ID ledger.TenantID
	// Start is the account read at the beginning of the round (with the fair
	// share advanced by one lease when [Options.AdvanceFairShare] is set).
	Start ledger.Account
	// Account is Start plus this round's pre-credits: Alloc grows by
	// demand × lease for every grant, and Rho is recomputed with
	// [ledger.Ratio]. Before the first grant, Account.Rho is Start.Rho.
	Account ledger.Account
	// Grants and GPUs count this round's grants (renewals included).
	Grants int
	GPUs   ledger.GPUs
}

// TenantOrder is the Phase 1 hook: it orders tenants, the first being served
// first. It must be a strict weak order that depends only on the two states
// (which it must not modify); a round breaks its remaining ties by tenant id,
// so the order is always total. A round keeps tenants in a tournament tree
// and calls the order O(log T) times per decision.
type TenantOrder func(a, b *TenantState) int

// ByRho is the default [TenantOrder]: lowest pre-credited ρ_tenant first
// (+Inf last), then lower tenant id.
//
// It is cmp.Or(ρ compare, id compare), written out so that the id is only
// compared on equal ρ (cmp.Or evaluates all its arguments).
func ByRho(a, b *TenantState) int {
	if c := a.Account.Rho.Compare(b.Account.Rho); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// TenantsFirst returns the tenant order that serves every tenant for which
// first holds before every other, each group in the order then (nil means
// [ByRho]). first reads the state as the round updates it, so a tenant
// leaves the first group as soon as its grants make first false: e.g. the
// authors' public simulator serves a tenant holding less than a fifth of
// its quota before the ρ order. first must depend only on the state.
func TenantsFirst(first func(*TenantState) bool, then TenantOrder) TenantOrder {
	if then == nil {
		then = ByRho
	}
	return func(a, b *TenantState) int {
		fa, fb := first(a), first(b)
		switch {
		case fa && !fb:
			return -1
		case fb && !fa:
			return 1
		}
		return then(a, b)
	}
}

// TieBreak orders candidates of equal reward inside a tenant, the first going
// first. It must be a strict weak order and must not modify the candidates. A
// round breaks its remaining ties by job id.
type TieBreak func(a, b *Candidate) int

// BySubmit is the default [TieBreak]: earlier submission first, then lower
// job id.
//
// It is cmp.Or(submit compare, id compare), written out so that the id is
// only compared on equal submit times.
func BySubmit(a, b *Candidate) int {
	if c := a.Submit.Compare(b.Submit); c != 0 {
		return c
	}
	return cmp.Compare(a.Job, b.Job)
}

// PreCredit is the pre-credit hook: the GPU·seconds a grant of demand GPUs
// for a lease adds to its tenant's Alloc for the rest of the round. It
// must not be negative, and must not depend on the round's progress.
type PreCredit func(demand ledger.GPUs, lease time.Duration) ledger.GPUSeconds

// LeaseCredit is the default [PreCredit]: a full lease, demand × lease.
func LeaseCredit(demand ledger.GPUs, lease time.Duration) ledger.GPUSeconds {
	return ledger.GPUSeconds(float64(demand) * lease.Seconds())
}

// NoCredit is the [PreCredit] that credits nothing (the astraea-nocredit
// ablation): a tenant keeps its place in Phase 1 however much it is
// granted in the round.
func NoCredit(ledger.GPUs, time.Duration) ledger.GPUSeconds { return 0 }

// Options are a round's policy choices. The zero value is the paper's
// algorithm with strict work conservation.
type Options struct {
	// TenantOrder is the Phase 1 order; nil means [ByRho].
	TenantOrder TenantOrder
	// Reward is the Phase 2 reward; nil means [NegJobRho].
	Reward Reward
	// TieBreak orders equal rewards; nil means [BySubmit].
	TieBreak TieBreak
	// AdvanceFairShare projects every tenant's fair share one lease ahead
	// before the round starts: FairShare += rate × lease, with the rate from
	// [FairRater] (Accounts must implement it). Grants then pre-credit Alloc
	// for the same lease, so ρ compares where each tenant would stand at the
	// lease end. The denominator is advanced once per tenant, for all tenants
	// alike, never per grant (that would favour the tenants just served).
	// The default (false) follows the paper's worked example: the
	// denominator stays at its value at the start of the round.
	AdvanceFairShare bool
	// NoBackfill runs exactly the paper's loop: when every tenant has left
	// play, the round ends, even if a smaller job of a tenant that left play
	// would still fit. By default a backfill stage follows: tenants are
	// visited again in Phase 1 order and every remaining candidate is tried
	// in Phase 2 order, a job that does not fit being skipped on its own, so
	// that after the round no waiting candidate fits (work conservation).
	NoBackfill bool
	// PreCredit is what a grant adds to its tenant's Alloc for the rest of
	// the round, so that Phase 1 sees what the tenant has just received;
	// nil means [LeaseCredit] (demand × lease, the paper's). [NoCredit]
	// turns the pre-credit off: Phase 1 then orders tenants by their
	// accounts at the start of the round.
	PreCredit PreCredit
	// Trace, if set, is called once per decision, in order, for a
	// step-by-step account of the round.
	Trace func(Step)
	// Parent, if set, gives the tenants a tree and makes Phase 1 walk it:
	// Parent(id) is tenant id's parent ("" for a child of the cluster;
	// false if unknown, which fails the round with ErrUnknownTenant).
	// The candidates' tenants are the leaves; every ancestor's account is
	// read from Accounts. From the cluster down, Phase 1 takes at each
	// level the child first in TenantOrder among the subtrees with a tenant
	// still in play, to a leaf, then Phase 2 runs as without a tree; a
	// grant's pre-credit is added on the whole path, and a subtree leaves
	// play when nothing in it fits. [ledger.View.TenantParent] fits. nil
	// means every tenant is a child of the cluster (the paper's two
	// levels).
	Parent func(ledger.TenantID) (ledger.TenantID, bool)
}

// Stage says which loop of a round made a decision.
type Stage uint8

const (
	// Fair is the paper's two-phase loop: a tenant whose pick does not fit
	// leaves play.
	Fair Stage = iota + 1
	// Backfill tries the remaining candidates of tenants that left play, in
	// the same orders, skipping jobs that do not fit one by one.
	Backfill
	// Reserved is a [Reserver]'s grant of the job it held nodes for, made
	// before the round (the job is not ranked: its Reward is empty).
	Reserved
)

// String returns "fair", "backfill" or "reserved".
func (s Stage) String() string {
	switch s {
	case Fair:
		return "fair"
	case Backfill:
		return "backfill"
	case Reserved:
		return "reserved"
	}
	return fmt.Sprintf("Stage(%d)", uint8(s))
}

// GrantKind says whether a grant keeps a running job in place.
type GrantKind uint8

const (
	// New is a lease for a job that is not running: it was placed this round.
	New GrantKind = iota + 1
	// Renewed is a running job selected again: it keeps exactly its GPUs.
	Renewed
)

// String returns "new" or "renewed".
func (k GrantKind) String() string {
	switch k {
	case New:
		return "new"
	case Renewed:
		return "renewed"
	}
	return fmt.Sprintf("GrantKind(%d)", uint8(k))
}

// Grant is a lease given in this round.
type Grant struct {
	Job       ledger.JobID
	Tenant    ledger.TenantID
	Demand    ledger.GPUs
	Kind      GrantKind
	Placement placement.Placement
	Stage     Stage
	Reward    Score
	// TenantRhoBefore and TenantRhoAfter are the tenant's pre-credited ρ just
	// before and just after this grant.
	TenantRhoBefore, TenantRhoAfter ledger.Rho
	// Preempts lists, by job id, the expiring running jobs whose GPUs this
	// grant uses. They are released (not renewed); a coordinator must finish
	// releasing them before it starts this job.
	Preempts []ledger.JobID
}

// Wait is a candidate that received nothing this round, with the reason.
type Wait struct {
	Job     ledger.JobID
	Tenant  ledger.TenantID
	Demand  ledger.GPUs
	Running bool
	// PreemptedBy is set for an expiring job whose GPUs went to that job; it
	// was then tried again as a new placement unless Reason says otherwise.
	PreemptedBy ledger.JobID
	Reason      Reason
}

// Release is an expiring running job that was not renewed. Its GPUs have been
// released from the Placer; the job must be checkpointed and suspended. A job
// preempted by a new grant may itself have been granted new GPUs later in the
// round (it is then also in Grants, as [New]: checkpoint, release, restore
// there).
type Release struct {
	Job       ledger.JobID
	Tenant    ledger.TenantID
	Placement placement.Placement
	// By is the job granted onto its GPUs, or "" if it was released at the
	// end of the round without anyone taking its GPUs (see Reason).
	By     ledger.JobID
	Reason Reason
}

// TenantResult is a tenant's outcome in a round.
type TenantResult struct {
	ID ledger.TenantID
	// Start and End are the accounts before the first and after the last
	// pre-credit of the round.
	Start, End ledger.Account
	Grants     int
	GPUs       ledger.GPUs
	// Waiting counts its candidates left without a lease.
	Waiting int
	// OutOfPlay reports that the tenant left the fair stage because its pick
	// Blocked did not fit; Reason says why. A tenant still in play whose
	// candidates wait because no GPU was left has Reason [ClusterFull]. A
	// tenant with nothing waiting has the zero Reason.
	OutOfPlay bool
	Blocked   ledger.JobID
	Reason    Reason
	// Depth is the tenant's level in the tree of [Options.Parent]: 1 for a
	// child of the cluster; 0 without a tree.
	Depth int
}

// Result is the outcome of a round.
type Result struct {
	// Grants in the order they were made.
	Grants []Grant
	// Waiting holds every candidate that received nothing, in input order.
	Waiting []Wait
	// Released holds the expiring running jobs that were not renewed in
	// place, in input order.
	Released []Release
	// Tenants holds every tenant that had a candidate, in the order in which
	// it first appears among the candidates.
	Tenants []TenantResult
	// Subtrees holds, with [Options.Parent], every ancestor of those
	// tenants (the inner nodes of the tree), children after parents' first
	// child; nil without a tree.
	Subtrees []SubtreeResult
}

// Why returns the reason job waits, or false if it was granted or is not a
// candidate. It scans Waiting: O(len(Waiting)).
func (r *Result) Why(job ledger.JobID) (Reason, bool) {
	for i := range r.Waiting {
		if r.Waiting[i].Job == job {
			return r.Waiting[i].Reason, true
		}
	}
	return Reason{}, false
}

// Step is one decision of a round, reported to [Options.Trace].
type Step struct {
	N      int // 1-based decision number
	Stage  Stage
	Tenant TenantState // the tenant as Phase 1 saw it when it was picked
	Job    Candidate   // the candidate Phase 2 picked
	Reward Score
	// Granted reports a grant; Grant is then filled, otherwise Reason says
	// why the pick did not fit.
	Granted bool
	Grant   Grant
	Reason  Reason
	// OutOfPlay reports that the tenant left play because of this pick.
	OutOfPlay bool
}

// Errors returned by [Round], matched with errors.Is. The concrete error is an
// [*Error] naming the candidate at fault.
var (
	// ErrInvalidInput: nil Accounts or Placer, or a lease that is not
	// positive.
	ErrInvalidInput = errors.New("sched: invalid input")
	// ErrInvalidCandidate: an empty id, a demand that is not positive, a
	// running candidate whose placement does not hold Demand GPUs or differs
	// from what the Placer holds, or a pending candidate that already holds
	// GPUs.
	ErrInvalidCandidate = errors.New("sched: invalid candidate")
	// ErrDuplicateJob: two candidates with the same job id.
	ErrDuplicateJob = errors.New("sched: duplicate job")
	// ErrUnknownTenant: Accounts has no account (or, with
	// AdvanceFairShare, no fair rate) for a candidate's tenant.
	ErrUnknownTenant = errors.New("sched: unknown tenant")
	// ErrUnknownJob: Accounts has no account for a candidate's job.
	ErrUnknownJob = errors.New("sched: unknown job")
	// ErrNoFairRate: AdvanceFairShare with Accounts that do not implement
	// [FairRater].
	ErrNoFairRate = errors.New("sched: accounts give no fair rate")
	// ErrPlacer: the Placer failed in a way that is not "does not fit"; the
	// round undid its changes. The cause is wrapped.
	ErrPlacer = errors.New("sched: placer failed")
)

// Error is the concrete error of a rejected round.
type Error struct {
	Index  int // candidate index, or -1
	Job    ledger.JobID
	Tenant ledger.TenantID
	Msg    string
	Err    error // the sentinel
	Cause  error // an underlying error (from the Placer), or nil
}

// Error names the candidate, the problem and the cause.
func (e *Error) Error() string {
	s := e.Err.Error()
	if e.Index >= 0 {
		s += fmt.Sprintf(": candidate %d", e.Index)
	}
	if e.Job != "" {
		s += fmt.Sprintf(" (job %q", e.Job)
		if e.Tenant != "" {
			s += fmt.Sprintf(", tenant %q", e.Tenant)
		}
		s += ")"
	} else if e.Tenant != "" {
		s += fmt.Sprintf(" (tenant %q)", e.Tenant)
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the sentinel and the cause, for errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}
