package volcano

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"volcano.sh/volcano/pkg/scheduler/api"

	"github.com/astraea-sched/astraea/ledger"
)

// observation is what a session shows of the cluster, reduced to what the
// ledger needs and sorted, so that the events it leads to are applied in
// the same order on every run.
type observation struct {
	capacity ledger.GPUs
	queues   []queueObs // by name
	jobs     []jobObs   // by key
}

type queueObs struct {
	name   ledger.TenantID
	weight float64
}

// jobObs is one PodGroup of the session.
type jobObs struct {
	key     string // Volcano's job id, namespace/name
	uid     string // the PodGroup's Kubernetes UID ("" in tests that set none)
	tenant  ledger.TenantID
	demand  ledger.GPUs // GPUs requested by its live (not finished) tasks
	formed  bool        // at least minAvailable live tasks: the gang exists
	running bool        // every live task is bound to a node
	done    bool        // it had tasks and all of them finished
	failed  bool        // done, and some task failed
}

// record is what the plugin remembers of a job between sessions, beside
// the ledger: the ledger has the accounts, the record says how a Volcano
// job maps onto them.
type record struct {
	Ledger  ledger.JobID    `json:"ledger"`        // the job's id in the ledger now
	UID     string          `json:"uid,omitempty"` // PodGroup UID it was first seen with
	Tenant  ledger.TenantID `json:"tenant"`
	Demand  ledger.GPUs     `json:"demand"`
	Gen     int             `json:"gen,omitempty"` // how many times its demand changed
	Running bool            `json:"running"`
	Started bool            `json:"started"` // it has run: it is no longer a new job
}

// gpus converts a Volcano scalar (milli-units) to whole GPUs, rounding to
// the nearest: Volcano stores extended resources ×1000. A value the ledger
// cannot hold (above ledger.MaxGPUs, negative or NaN) becomes tooManyGPUs,
// which the ledger refuses with an error naming the job or the capacity;
// a float beyond int64 would otherwise convert to an arbitrary integer.
func gpus(r *api.Resource, name v1.ResourceName) ledger.GPUs {
	if r == nil {
		return 0
	}
	v := math.Round(r.Get(name) / 1000)
	if !(v >= 0 && v <= float64(ledger.MaxGPUs)) {
		return tooManyGPUs
	}
	return ledger.GPUs(v)
}

// tooManyGPUs is one more than the ledger takes: what gpus and addGPUs
// return for a count the ledger must refuse.
const tooManyGPUs = ledger.MaxGPUs + 1

// addGPUs adds two counts of at most tooManyGPUs, saturating there, so
// that a sum over many tasks or nodes never wraps around to a count the
// ledger would take.
func addGPUs(a, b ledger.GPUs) ledger.GPUs { return min(a+b, tooManyGPUs) }

// observe reads a session's nodes, queues and jobs. A job whose queue is not
// in the session is left out, as Volcano's actions leave it out; a job that
// asks for no GPU is left out too (it is not the ledger's business).
func observe(nodes map[string]*api.NodeInfo, queues map[api.QueueID]*api.QueueInfo,
	jobs map[api.JobID]*api.JobInfo, resource v1.ResourceName) observation {
	var o observation
	for _, n := range nodes {
		o.capacity = addGPUs(o.capacity, gpus(n.Allocatable, resource))
	}
	for _, q := range queues {
		// Volcano defaults a queue's weight to 1; a weight below 1 cannot
		// be set through its admission, so it is read as 1.
		o.queues = append(o.queues, queueObs{name: ledger.TenantID(q.Name), weight: float64(max(q.Weight, 1))})
	}
	slices.SortFunc(o.queues, func(a, b queueObs) int { return cmp.Compare(a.name, b.name) })
	for _, j := range jobs {
		q, ok := queues[j.Queue]
		if !ok {
			continue
		}
		var jo jobObs
		jo.key, jo.uid, jo.tenant = string(j.UID), string(j.PgUID), ledger.TenantID(q.Name)
		live, bound := 0, 0
		for _, t := range j.Tasks {
			switch t.Status {
			case api.Succeeded:
				continue
			case api.Failed:
				jo.failed = true
				continue
			case api.Bound, api.Running, api.Releasing:
				bound++
			}
			live++
			jo.demand = addGPUs(jo.demand, gpus(t.Resreq, resource))
		}
		jo.done = len(j.Tasks) > 0 && live == 0
		jo.formed = live > 0 && live >= int(j.MinAvailable)
		jo.running = live > 0 && bound == live
		if jo.demand == 0 && !jo.done {
			continue
		}
		o.jobs = append(o.jobs, jo)
	}
	slices.SortFunc(o.jobs, func(a, b jobObs) int { return cmp.Compare(a.key, b.key) })
	return o
}

// ledgerID is the ledger's id of a job: Volcano's namespace/name, the
// PodGroup's UID (so a PodGroup deleted and created again under the same
// name is a new job) and, after a change of demand, the generation.
func ledgerID(o jobObs, gen int) ledger.JobID {
	id := o.key
	if o.uid != "" {
		id += "@" + o.uid
	}
	if gen > 0 {
		id += "#" + strconv.Itoa(gen)
	}
	return ledger.JobID(id)
}

// reconcile brings the ledger and the records in line with what a session
// shows at time at, which must not be before l.Now(). Volcano's allocate and
// deallocate events are tentative (a statement can be discarded) and a
// binding can fail after them, so the ledger is driven by what the cluster
// reports instead: at every session open, a job is running when all its
// live tasks are bound, and every difference from the last session becomes
// an event at `at`:
//
//   - capacity: the sum of the nodes' allocatable GPUs;
//   - a queue is a tenant with the queue's weight; one that disappeared,
//     once its jobs are finished, is removed;
//   - a new job is submitted once its gang is formed (minAvailable live
//     tasks) and asks for GPUs; it starts when all its live tasks are bound
//     and stops when one is not;
//   - a job whose tasks all ended finishes (Failed if one failed, else
//     Completed); one that left the session finishes as Completed if it
//     ever ran, Cancelled if not;
//   - a job whose GPU demand or queue changed (pods added or removed, the
//     PodGroup moved) ends as Cancelled and continues as a new ledger job
//     (a ledger job's demand and tenant are fixed), still not new if it
//     ran before; one whose PodGroup UID changed was deleted and created
//     again: the old one ends, the new one is a new job.
//
// Every error is collected and the rest is still applied: one job the
// ledger refuses (a demand above ledger.MaxGPUs) must not freeze the others.
func reconcile(l *ledger.Ledger, recs map[string]*record, o observation, at time.Time) error {
	var errs []error
	note := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if l.Capacity() != o.capacity {
		note(l.SetCapacity(at, o.capacity))
	}
	inSession := make(map[ledger.TenantID]bool, len(o.queues))
	for _, q := range o.queues {
		inSession[q.name] = true
		info, ok := l.Tenant(q.name)
		switch {
		case !ok || !info.Registered:
			note(l.AddTenant(at, q.name, q.weight))
		case info.Weight != q.weight:
			note(l.SetTenantWeight(at, q.name, q.weight))
		}
	}

	seen := make(map[string]jobObs, len(o.jobs))
	for _, j := range o.jobs {
		seen[j.key] = j
	}
	finish := func(key string, r *record, s ledger.FinalState) {
		note(l.Finish(at, r.Ledger, s))
		delete(recs, key)
	}
	// Ends first, in key order: the GPUs and fair shares they free are
	// there for the starts that follow at the same instant.
	for _, key := range slices.Sorted(maps.Keys(recs)) {
		r := recs[key]
		j, ok := seen[key]
		switch {
		case !ok:
			finish(key, r, endState(r.Started))
		case j.done && j.failed:
			finish(key, r, ledger.Failed)
		case j.done:
			finish(key, r, ledger.Completed)
		case j.uid != r.UID:
			finish(key, r, endState(r.Started))
		case j.demand != r.Demand || j.tenant != r.Tenant:
			// a new generation of the same job
			note(l.Finish(at, r.Ledger, ledger.Cancelled))
			r.Gen++
			r.Ledger, r.Tenant, r.Demand, r.Running = ledgerID(j, r.Gen), j.tenant, j.demand, false
			if err := l.Submit(at, r.Ledger, r.Tenant, r.Demand, 1); err != nil {
				note(err)
				delete(recs, key)
			}
		}
	}
	for _, j := range o.jobs {
		r, ok := recs[j.key]
		if !ok {
			if j.done || !j.formed {
				continue
			}
			r = &record{Ledger: ledgerID(j, 0), UID: j.uid, Tenant: j.tenant, Demand: j.demand}
			if err := l.Submit(at, r.Ledger, r.Tenant, r.Demand, 1); err != nil {
				note(err)
				continue
			}
			recs[j.key] = r
		}
		switch {
		case j.running && !r.Running:
			if err := l.Start(at, r.Ledger); err != nil {
				note(err)
				continue
			}
			r.Running, r.Started = true, true
		case !j.running && r.Running:
			if err := l.Stop(at, r.Ledger); err != nil {
				note(err)
				continue
			}
			r.Running = false
		}
	}

	for _, id := range slices.Collect(l.Tenants()) {
		info, _ := l.Tenant(id)
		if info.Registered && !inSession[id] && info.ActiveJobs == 0 {
			note(l.RemoveTenant(at, id))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("astraea: reconciling the ledger at %s: %w", at.Format(time.RFC3339Nano), errors.Join(errs...))
	}
	return nil
}

func endState(started bool) ledger.FinalState {
	if started {
		return ledger.Completed
	}
	return ledger.Cancelled
}
