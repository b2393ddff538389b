package simulate

import (
	"cmp"
	"slices"
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
	// trim is ASTRAEA's record of the job while it waits (see trimmer):
	// a slot here costs a policy nothing to reach, where a map would cost
	// a lookup per waiting job and tick, and nothing to allocate. The
	// engine never reads it. It comes first, beside Leases and Ran, so
	// that what a round reads of each waiting job shares two cache lines.
	trim waiting

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

	// tenant is the index of the job's tenant in State.tenants.
	tenant int32
	// eng is the engine's record of the job, whose state this is.
	eng *job
	// slotNodes are the numbers of Placement's slots' nodes in the
	// engine's free counts (see nodeFree) while the job runs; slotBuf
	// holds them for a placement of one or two slots (most), which then
	// allocates nothing.
	slotNodes []int32
	slotBuf   [2]int32
}

// State is what a policy sees at a scheduling tick. Cluster reflects running
// jobs (allocation id = job ID); a policy that plans must Clone it. Pending and
// Running are sorted by (Submit, ID) (both are in no particular order for
// the ASTRAEA policy itself, which reads neither where the engine reports
// its suspended jobs: see runSet).
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

	// nodes is the engine's count of free GPUs by node (its cluster is
	// consolidated); nil in a State the engine did not build.
	nodes *nodeFree
	// plans: the engine calls the policy itself (no wrapper in between)
	// and takes over a round ASTRAEA leaves on the cluster (see roundPlan).
	plans bool
	// suspended: the engine reports the suspended jobs of Pending to the
	// policy's trimmer as they come and go (see suspGroup).
	suspended bool
	// tenants are the tenant names, sorted; pendingByTenant[i] lists the
	// distinct demands of tenants[i]'s pending jobs, ascending (nil in a
	// State the engine did not build).
	tenants         []string
	pendingByTenant [][]demandCount
	// freshByTenant[i] are the pending jobs of tenants[i] that never ran,
	// sorted by (Submit, ID); freshDemands[i] lists their distinct
	// demands, ascending.
	freshByTenant [][]*JobState
	freshDemands  [][]demandCount
}

// demandCount is how many pending jobs of a tenant ask for d GPUs.
type demandCount struct{ d, n int }

// countDemand adds n (±1) jobs of demand d to the list ds, kept ascending
// without zero counts. O(len(ds)).
func countDemand(ds []demandCount, d, n int) []demandCount {
	i, ok := slices.BinarySearchFunc(ds, d, func(x demandCount, d int) int { return cmp.Compare(x.d, d) })
	if !ok {
		return slices.Insert(ds, i, demandCount{d: d, n: n})
	}
	if ds[i].n += n; ds[i].n == 0 {
		return slices.Delete(ds, i, i+1)
	}
	return ds
}

// Grant gives one job GPUs for a lease, or keeps a running job in place.
type Grant struct {
	Job       string
	Placement placement.Placement
	Lease     time.Duration // 0 = no lease
	Renew     bool          // a running job kept in place for another lease (no checkpoint, no cold start)
}

// Decision is a policy's answer at one tick. The engine first preempts
// (checkpoint + release), then applies renewals, then starts new grants (a
// resumed job pays a cold start). Grants must fit the cluster after the
// preemptions. The engine does not keep a Decision after applying it, so a
// policy may reuse its slices at the next tick.
type Decision struct {
	Preempt []string
	Grants  []Grant

	// plan is the round ASTRAEA left on the engine's cluster for this
	// decision (see roundPlan), or nil.
	plan *roundPlan
	// renewsExpiring: ASTRAEA, called by the engine itself, renews every
	// expiring job in place, Grants[i] being State.Expiring[i], and does
	// nothing else (see renewAll); the engine then skips looking the jobs
	// up (see applyRenewals).
	renewsExpiring bool
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

// ProgressBlind is implemented by a policy that never reads Attained or
// Remaining of running jobs. The engine then skips refreshing them at every
// tick, which costs O(running jobs) per tick; pending jobs' values stay exact
// either way.
type ProgressBlind interface{ ProgressBlind() }
