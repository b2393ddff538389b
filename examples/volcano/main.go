// Command volcano shows the shape of a Kubernetes batch-scheduler plugin
// (Volcano-style) that orders queues and jobs by ASTRAEA's long-term
// GPU-time fairness ratio ρ. It imports no Kubernetes, Volcano or Kueue
// module: the types are stand-ins with just the fields the ordering needs,
// so the example builds anywhere and the logic can be lifted into a real
// plugin.
//
// # What the plugin is
//
// A Plugin holds an astraea ledger and gives a scheduler:
//
//   - QueueOrder(a, b Queue) int: lowest tenant ρ first (with the session's
//     pre-credit, see Plugin), then earlier creation, then UID;
//   - JobOrder(a, b Job) int: inside a queue, lowest job ρ first, then
//     earlier creation, then UID;
//   - event handlers that feed the ledger as the scheduler acts:
//     OnQueueAdd, OnJobAdd, OnAllocate, OnDeallocate, OnJobDone, and
//     OnSessionOpen/OnSessionClose around each scheduling cycle.
//
// Both orders return -1, 0 or +1 and end in the UID, so they are total and
// deterministic: the same cluster state gives the same decisions on every
// run.
//
// # How it maps to Volcano
//
// A Volcano scheduler plugin is registered by name and, in its session-open
// hook, adds functions to the session: a queue comparator
// (Session.AddQueueOrderFn), a job comparator (Session.AddJobOrderFn) and
// an event handler whose allocate and deallocate callbacks fire as tasks are
// placed or evicted (Session.AddEventHandler). The session walks its plugin
// tiers in order and asks each comparator in turn; the first non-zero answer
// wins, and when every plugin answers 0 it falls back to creation time and
// then UID. A real plugin built from this one would:
//
//   - convert the session's queue and job objects to Queue and Job (the
//     queue name as the ledger tenant, the PodGroup's GPU request as the
//     gang size) and register Plugin.QueueOrder and Plugin.JobOrder;
//   - call OnSessionOpen with the session's time when the session opens and
//     OnSessionClose when it closes;
//   - call OnAllocate when a job's gang becomes fully allocated and
//     OnDeallocate when it is evicted; OnJobAdd and OnJobDone from the job's
//     lifecycle (PodGroup created, finished);
//   - keep the ledger across sessions (one per scheduler process) and
//     snapshot it with ledger.Ledger.WriteFile, so a restarted scheduler
//     continues the same accounts.
//
// Volcano calls comparators per task and allocates task by task; ASTRAEA
// accounts a gang as a whole, so the allocate handler should act once the
// whole gang holds its GPUs (Volcano's gang plugin already discards partial
// allocations at the end of a cycle).
//
// # How it relates to Kueue
//
// Kueue's fair sharing lets the ClusterQueues of a cohort borrow each
// other's unused nominal quota and compares them by a weighted share of what
// they use beyond it: the lowest share is admitted first, the highest is
// preempted first. Its admission fair sharing orders the workloads of one
// ClusterQueue by each LocalQueue's past usage, decayed with a half-life.
// Both look at current or recent usage; a ledger adds what was owed: ρ is a
// queue's received GPU time over the GPU time it was owed, so a queue that
// waited while others used its share is repaid first, however long ago. A
// ledger built with ledger.HalfLife gives the decayed variant. Under
// ledger.DemandAware (used here) a queue is owed nothing while it has no
// work; ledger.QuotaShare instead lets lent quota build up as a balance.
//
// # The example
//
// main replays a morning on a 16-GPU cluster with three queues through the
// plugin's handlers, then runs one scheduling cycle the way Volcano's
// allocate action does (Cycle): take the first queue in QueueOrder, take its
// first job in JobOrder, allocate it if its whole gang fits, put the queue
// back, repeat until no queue has a pending job. It prints the accounts the
// cycle starts from and the order in which it allocates.
//
// Run it with:
//
//	go run ./examples/volcano
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "volcano:", err)
		os.Exit(1)
	}
}

// Step is one decision of a cycle: the queue served, the job considered and
// whether its gang was allocated.
type Step struct {
	Queue     Queue
	QueueRho  ledger.Rho // the queue's ρ when it was picked
	Job       Job
	JobRho    ledger.Rho
	Allocated bool
	Free      ledger.GPUs // free GPUs after the step
}

// Cycle runs one scheduling cycle at now over the queues and their pending
// jobs with free GPUs, as Volcano's allocate action does: repeatedly serve
// the first queue in QueueOrder, its first job in JobOrder; a job whose whole
// gang fits is allocated (OnAllocate), one that does not fit is skipped for
// this cycle. Jobs of queues not in queues are ignored. The session is
// opened and closed around the cycle. O((Q + J) · Q) comparisons, which is
// plenty for a demonstration; a real scheduler keeps the queues in a heap.
func Cycle(p *Plugin, now time.Time, queues []Queue, pending []Job, free ledger.GPUs) ([]Step, error) {
	if err := p.OnSessionOpen(now); err != nil {
		return nil, err
	}
	defer p.OnSessionClose()
	byQueue := map[ledger.TenantID][]Job{}
	for _, j := range pending {
		byQueue[j.Queue] = append(byQueue[j.Queue], j)
	}
	var active []Queue
	for _, q := range queues {
		if jobs := byQueue[q.Name]; len(jobs) > 0 {
			slices.SortFunc(jobs, p.JobOrder)
			active = append(active, q)
		}
	}
	var steps []Step
	for len(active) > 0 {
		i := 0
		for k := 1; k < len(active); k++ {
			if p.QueueOrder(active[k], active[i]) < 0 {
				i = k
			}
		}
		q := active[i]
		jobs := byQueue[q.Name]
		j := jobs[0]
		byQueue[q.Name] = jobs[1:]
		st := Step{Queue: q, QueueRho: p.QueueRho(q), Job: j, JobRho: p.JobRho(j)}
		if j.GPUs <= free {
			if err := p.OnAllocate(now, j); err != nil {
				return steps, err
			}
			free -= j.GPUs
			st.Allocated = true
		}
		st.Free = free
		steps = append(steps, st)
		if len(byQueue[q.Name]) == 0 {
			active = slices.Delete(active, i, i+1)
		}
	}
	return steps, nil
}

// day0 is the midnight the example starts at.
var day0 = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// at returns day0 plus hh hours.
func at(hh int) time.Time { return day0.Add(time.Duration(hh) * time.Hour) }

// Queues returns the example's queues: prod pays for half the cluster,
// research and interns for a quarter each.
func Queues() []Queue {
	return []Queue{
		{UID: "q-1", Name: "research", Weight: 1, Created: day0},
		{UID: "q-2", Name: "prod", Weight: 2, Created: day0},
		{UID: "q-3", Name: "interns", Weight: 1, Created: day0},
	}
}

// Morning replays the history before the cycle through the plugin's event
// handlers and returns the jobs pending at 06:00:
//
//	00:00  r0 (research, 8 GPUs) and p0 (prod, 8 GPUs) start; the cluster is full
//	03:00  i0 (interns, 4) submitted, waits
//	04:00  p1 (prod, 8) submitted, waits
//	05:00  r1 (research, 8) submitted, waits
//	06:00  r0 and p0 complete; r2 (research, 4), p2 (prod, 4), i1 (interns, 8) submitted
func Morning(p *Plugin) ([]Job, error) {
	job := func(uid ledger.JobID, q ledger.TenantID, gpus ledger.GPUs, h int) Job {
		return Job{UID: uid, Queue: q, GPUs: gpus, Created: at(h)}
	}
	r0, p0 := job("r0", "research", 8, 0), job("p0", "prod", 8, 0)
	pending := []Job{
		job("i0", "interns", 4, 3),
		job("p1", "prod", 8, 4),
		job("r1", "research", 8, 5),
		job("r2", "research", 4, 6),
		job("p2", "prod", 4, 6),
		job("i1", "interns", 8, 6),
	}
	var steps []func() error
	for _, q := range Queues() {
		steps = append(steps, func() error { return p.OnQueueAdd(day0, q) })
	}
	for _, j := range []Job{r0, p0} {
		steps = append(steps,
			func() error { return p.OnJobAdd(j.Created, j) },
			func() error { return p.OnAllocate(j.Created, j) })
	}
	for _, j := range pending[:3] {
		steps = append(steps, func() error { return p.OnJobAdd(j.Created, j) })
	}
	steps = append(steps,
		func() error { return p.OnJobDone(at(6), r0, ledger.Completed) },
		func() error { return p.OnJobDone(at(6), p0, ledger.Completed) })
	for _, j := range pending[3:] {
		steps = append(steps, func() error { return p.OnJobAdd(j.Created, j) })
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return pending, p.Ledger().Check()
}

// run prints the example to w.
func run(w io.Writer) error {
	l, err := ledger.New(ledger.Config{Mode: ledger.DemandAware, Capacity: 16, Start: day0})
	if err != nil {
		return err
	}
	const horizon = time.Hour
	p := NewPlugin(l, horizon)
	pending, err := Morning(p)
	if err != nil {
		return err
	}
	now := at(6)
	fmt.Fprintf(w, "One scheduling cycle at %s on 16 free GPUs (plugin %q, pre-credit %s per allocation)\n\n",
		now.Format("15:04"), p.Name(), horizon)
	fmt.Fprintln(w, "Accounts at the session's open (Eq. 8, GPU-hours since 00:00):")
	v := l.View(now)
	for _, q := range Queues() {
		a, _ := v.TenantAccount(q.Name)
		fmt.Fprintf(w, "  queue %-8s weight %g: used %5.1f of %5.1f owed, ρ %s\n", q.Name, q.Weight, a.Alloc/3600, a.FairShare/3600, a.Rho)
	}
	fmt.Fprintln(w)
	steps, err := Cycle(p, now, Queues(), pending, 16)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "The cycle (first queue in QueueOrder, its first job in JobOrder):")
	var order []ledger.JobID
	for k, st := range steps {
		outcome := fmt.Sprintf("allocated, %d GPUs free", st.Free)
		if !st.Allocated {
			outcome = fmt.Sprintf("gang of %d does not fit in %d free GPUs, skipped", st.Job.GPUs, st.Free)
		} else {
			order = append(order, st.Job.UID)
		}
		fmt.Fprintf(w, "  %d. queue %-8s (ρ %s) → job %s (ρ %s, %d GPUs): %s\n",
			k+1, st.Queue.Name, st.QueueRho, st.Job.UID, st.JobRho, st.Job.GPUs, outcome)
	}
	fmt.Fprintf(w, "\nAllocation order: %v\n", order)
	return l.Check()
}
