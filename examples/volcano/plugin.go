package main

import (
	"cmp"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// Queue is what the plugin needs to know of a scheduler queue: a tenant of
// the ledger. UID must be unique; it is the last tie-break, as in Volcano.
type Queue struct {
	UID     string
	Name    ledger.TenantID // the ledger tenant the queue accounts to
	Weight  float64
	Created time.Time
}

// Job is what the plugin needs to know of a gang job (a Volcano PodGroup, a
// Kueue Workload): its unique id, its queue, its GPU gang size and when it
// was created.
type Job struct {
	UID     ledger.JobID
	Queue   ledger.TenantID
	GPUs    ledger.GPUs
	Created time.Time
}

// Plugin orders queues and jobs by long-term GPU-time fairness. It is the
// shape of a Volcano scheduler plugin without the Kubernetes types: two
// comparators for the session's order tiers, and event handlers that keep a
// ledger in step with what the scheduler allocates.
//
// Within one session (between OnSessionOpen and OnSessionClose) every
// allocation pre-credits its queue with GPUs × Horizon of service, so that a
// queue that has just been served sorts later at once, instead of taking
// every free GPU because its ρ cannot move inside one instant. A zero
// Horizon turns the pre-credit off.
//
// A Plugin is not safe for concurrent use; a scheduler runs one session at a
// time.
type Plugin struct {
	// Horizon is how long an allocation is expected to hold its GPUs,
	// credited to its queue for the rest of the session.
	Horizon time.Duration

	ledger *ledger.Ledger
	view   ledger.View
	credit map[ledger.TenantID]ledger.GPUs // GPUs allocated in the open session
}

// NewPlugin returns a plugin that reads and feeds l.
func NewPlugin(l *ledger.Ledger, horizon time.Duration) *Plugin {
	return &Plugin{Horizon: horizon, ledger: l, credit: map[ledger.TenantID]ledger.GPUs{}}
}

// Name is the plugin's name in a scheduler configuration.
func (p *Plugin) Name() string { return "astraea" }

// Ledger returns the ledger the plugin feeds.
func (p *Plugin) Ledger() *ledger.Ledger { return p.ledger }

// OnSessionOpen starts a scheduling cycle at now: the ledger is advanced to
// now and every order of the session reads the accounts over [Begin, now).
func (p *Plugin) OnSessionOpen(now time.Time) error {
	if err := p.ledger.Advance(now); err != nil {
		return err
	}
	p.view = p.ledger.View(now)
	clear(p.credit)
	return nil
}

// OnSessionClose ends the cycle and drops the session's pre-credits: from
// the next session on, the ledger itself has recorded the allocations.
func (p *Plugin) OnSessionClose() { clear(p.credit) }

// QueueRho returns a queue's ρ as the session sees it: its account over
// [Begin, now) plus the session's pre-credit. A queue the ledger does not
// know yet has ρ 1 (nothing owed, nothing received).
func (p *Plugin) QueueRho(q Queue) ledger.Rho {
	a, ok := p.view.TenantAccount(q.Name)
	if !ok {
		a = ledger.Account{Rho: 1}
	}
	if c := p.credit[q.Name]; c != 0 {
		extra := ledger.GPUSeconds(float64(c) * p.Horizon.Seconds())
		return ledger.Ratio(a.Alloc+extra, a.FairShare)
	}
	return a.Rho
}

// JobRho returns a job's ρ over [Begin, now); 1 for a job the ledger does
// not know.
func (p *Plugin) JobRho(j Job) ledger.Rho {
	a, ok := p.view.JobAccount(j.UID)
	if !ok {
		return 1
	}
	return a.Rho
}

// QueueOrder orders queues for service: lowest ρ first, then earlier
// creation, then UID. It returns -1 if a goes first, +1 if b does, and 0
// only for the same UID, creation time and ρ, so with unique UIDs it is a
// strict total order.
func (p *Plugin) QueueOrder(a, b Queue) int {
	return cmp.Or(
		p.QueueRho(a).Compare(p.QueueRho(b)),
		a.Created.Compare(b.Created),
		cmp.Compare(a.UID, b.UID),
	)
}

// JobOrder orders the jobs of one queue: lowest job ρ first (the job owed
// the most relative to what it was owed), then earlier creation, then UID.
// Like QueueOrder it is total on unique UIDs.
func (p *Plugin) JobOrder(a, b Job) int {
	return cmp.Or(
		p.JobRho(a).Compare(p.JobRho(b)),
		a.Created.Compare(b.Created),
		cmp.Compare(a.UID, b.UID),
	)
}

// OnQueueAdd registers a queue's tenant at at.
func (p *Plugin) OnQueueAdd(at time.Time, q Queue) error {
	return p.ledger.AddTenant(at, q.Name, q.Weight)
}

// OnJobAdd records a new pending job at at: from then on it is owed a fair
// share whether or not it runs.
func (p *Plugin) OnJobAdd(at time.Time, j Job) error {
	return p.ledger.Submit(at, j.UID, j.Queue, j.GPUs, 1)
}

// OnAllocate records that the whole gang of j got its GPUs at at, and, inside
// a session, pre-credits its queue.
func (p *Plugin) OnAllocate(at time.Time, j Job) error {
	if err := p.ledger.Start(at, j.UID); err != nil {
		return err
	}
	p.credit[j.Queue] += j.GPUs
	return nil
}

// OnDeallocate records that j gave its GPUs back at at (evicted, preempted or
// the allocation was rolled back); the job stays pending and keeps accruing
// its fair share. Inside a session its queue's pre-credit shrinks by the
// job's GPUs, never below zero.
func (p *Plugin) OnDeallocate(at time.Time, j Job) error {
	if err := p.ledger.Stop(at, j.UID); err != nil {
		return err
	}
	p.credit[j.Queue] = max(0, p.credit[j.Queue]-j.GPUs)
	return nil
}

// OnJobDone records that j ended at at (completed, failed or deleted).
func (p *Plugin) OnJobDone(at time.Time, j Job, s ledger.FinalState) error {
	return p.ledger.Finish(at, j.UID, s)
}
