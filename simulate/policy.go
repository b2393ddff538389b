package simulate

import (
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// Status is where a job stands in the engine between scheduling ticks.
type Status int

const (
	// Pending is a job waiting for GPUs: it never ran, or it was suspended
	// after a preemption or an unrenewed lease.
	Pending Status = iota
	// Running is a job holding its gang of GPUs.
	Running
)

// String returns "pending" or "running".
func (s Status) String() string {
	switch s {
	case Pending:
		return "pending"
	case Running:
		return "running"
	}
	return "Status(?)"
}

// JobState is the engine's view of one job; policies read it, never mutate it.
type JobState struct {
	Leases      int  // leases granted so far (renewals count)
	Ran         bool // has run at least once
	Job         trace.Job
	Status      Status
	Placement   placement.Placement // valid while Running
	LastStart   time.Time           // start of the current run segment
	LeaseEnd    time.Time           // zero = no lease (runs until done or preempted)
	Attained    time.Duration       // useful running time so far (excludes overheads)
	Remaining   time.Duration       // Job.Duration - Attained (policies that model prediction error add their own noise)
	Preemptions int
	LastStop    time.Time // when it last stopped running (zero if it never ran or runs now for the first time)
	// Holding is set while the job holds its GPUs, for which its ledger
	// accounts are charged: when it runs, and when it waits while its
	// checkpoint is being written (Status is then Pending).
	Holding bool

	// eng is the engine's record of the job, whose state this is.
	eng *job
}

// State is what a policy sees at a scheduling tick. Cluster reflects running
// jobs (allocation id = job ID); a policy that plans must leave it as it
// found it, by planning on a Clone or with sched.Rounder.Plan, which undoes
// its round (a changed GPU count fails the run with ErrBadDecision).
// Pending and Running are sorted by (Submit, ID).
type State struct {
	Now      time.Time
	Interval time.Duration
	Lease    time.Duration
	Cluster  *placement.Cluster
	Pending  []*JobState
	Running  []*JobState
	// Expiring are the running jobs whose lease has ended by Now, sorted by
	// (Submit, ID): the running candidates of a lease-based policy. A job
	// listed here that the Decision neither renews nor preempts is suspended
	// (its lease lapses).
	Expiring []*JobState
	// PendingDemands are the distinct GPU demands among Pending, ascending:
	// a policy can tell in O(distinct demands) whether anything could fit.
	PendingDemands []int
	Accounts       ledger.View        // two-level accounts at Now (the engine's ledger; Eq. 16 unless configured)
	Quotas         map[string]float64 // tenant -> weight (normalised so Σ = 1)
	Capacity       int                // cluster GPUs
	// Exhaustive is Config.Exhaustive: a policy with shortcuts of its own
	// takes none of them, so that CompareExhaustive checks them too.
	Exhaustive bool

	// eng is the engine that filled the State, whose ExpiringRoom it is.
	eng *engine
}

// ExpiringRoom returns the room of Cluster as if every Expiring job let go
// of its GPUs (placement.Cluster.RoomWithout): how many gangs of each
// demand a round could grant. The engine fills it at most once a tick,
// for its own RenewsWhenNothingFits check and the policy alike, from the
// cluster as the tick found it; the Room is valid until Schedule returns.
// A State not made by the engine gets a new Room at each call.
func (s *State) ExpiringRoom() (*placement.Room, error) {
	if s.eng != nil {
		return s.eng.expiringRoom()
	}
	ids := make([]string, len(s.Expiring))
	for i, js := range s.Expiring {
		ids[i] = js.Job.ID
	}
	r := new(placement.Room)
	return r, s.Cluster.RoomWithout(r, ids)
}

// Grant gives one job GPUs for a lease, or keeps a running job in place.
type Grant struct {
	Job       string
	Placement placement.Placement
	Lease     time.Duration // 0 = no lease
	Renew     bool          // a running job kept in place for another lease (no checkpoint, no cold start)
}

// Decision is a policy's answer at one tick. The engine first preempts
// (checkpoint + release) and aborts, then applies renewals, then starts new grants (a
// resumed job pays a cold start). Grants must fit the cluster after the
// preemptions. The engine does not keep a Decision after applying it, so a
// policy may reuse its slices at the next tick.
type Decision struct {
	Preempt []string
	// Abort are running jobs stopped at once without a checkpoint: each
	// releases its GPUs now and resumes later from the progress it had
	// when its current lease began, losing the work since
	// (lease.Progress.Abort), as the authors' simulator preempts a job
	// early in its lease. They count as preemptions, not checkpoints.
	Abort  []string
	Grants []Grant
}

// Policy decides, at each scheduling tick, which jobs hold GPUs.
type Policy interface {
	Name() string
	Schedule(s *State) (Decision, error)
}

// Waker is implemented by a policy that needs to be called at a time when no
// submission, completion or lease end happens (e.g. Tiresias threshold
// crossings); the engine otherwise skips idle ticks. A zero time means no
// wakeup is needed.
type Waker interface{ NextWakeup(s *State) time.Time }

// Traits is what a policy declares the engine may assume of it, each an
// opportunity to skip work that the policy's decisions do not depend on.
// The zero value assumes nothing. Config.Exhaustive makes the engine
// ignore every trait, so that a test can compare the two runs (see
// CompareExhaustive): a trait the policy does not honour shows as a
// difference.
type Traits struct {
	// ProgressBlind: the policy never reads Attained or Remaining of
	// running jobs. The engine then skips refreshing them at every tick,
	// which costs O(running jobs) per tick; pending jobs' values stay
	// exact either way.
	ProgressBlind bool
	// IdleWhenNothingFits: at a tick at which no lease ends, the policy
	// decides nothing when no pending job fits the free GPUs (as
	// placement.Cluster.Fits says). The engine then does not call it at
	// such ticks, which it tells in O(distinct pending demands).
	IdleWhenNothingFits bool
	// RenewsWhenNothingFits: at a tick at which some leases end and no
	// pending job would fit even if every expiring job let go of its GPUs
	// (placement.Cluster.RoomWithout), the policy renews every expiring
	// job in place for Config.Lease (DefaultLease when it is zero) and
	// decides nothing else. The engine then renews them itself, after one
	// look at the cluster and O(distinct pending demands) at its Room.
	RenewsWhenNothingFits bool
}

// TraitsReporter is implemented by a policy that declares Traits.
type TraitsReporter interface{ Traits() Traits }
