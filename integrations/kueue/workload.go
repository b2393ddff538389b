package kueue

import (
	"cmp"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/astraea-sched/astraea/ledger"
)

// Tenancy says which Kueue object is a ledger tenant.
type Tenancy int

const (
	// ByLocalQueue makes every LocalQueue a tenant, named "namespace/name".
	// Its weights go to LocalQueue spec.fairSharing.weight, which Kueue's
	// admission fair sharing (a ClusterQueue with admissionScope
	// UsageBasedAdmissionFairSharing) divides each queue's usage by.
	ByLocalQueue Tenancy = iota
	// ByClusterQueue makes every ClusterQueue a tenant, named by its name.
	// Its weights go to ClusterQueue spec.fairSharing.weight, which Kueue's
	// fair sharing between the ClusterQueues of a cohort reads.
	ByClusterQueue
)

// String returns "LocalQueue" or "ClusterQueue".
func (t Tenancy) String() string {
	if t == ByClusterQueue {
		return "ClusterQueue"
	}
	return "LocalQueue"
}

// LocalQueueTenant is the tenant id of a LocalQueue under ByLocalQueue.
func LocalQueueTenant(namespace, name string) ledger.TenantID {
	return ledger.TenantID(namespace + "/" + name)
}

// JobOf is the ledger job id of a Workload: namespace/name/uid. The uid
// makes a Workload deleted and created again under its name a new job.
func JobOf(wl *kueuev1beta2.Workload) ledger.JobID {
	return ledger.JobID(wl.Namespace + "/" + wl.Name + "/" + string(wl.UID))
}

// phase is where a Workload stands for the ledger.
type phase int

const (
	pending  phase = iota // created, not admitted (or evicted and waiting again)
	running               // admitted: holds its quota
	finished              // Finished condition true, or deleted
)

// observation is what the ledger needs to know of one Workload, read from
// the object alone, so that reading it again gives the same result.
type observation struct {
	job    ledger.JobID
	tenant ledger.TenantID
	demand ledger.GPUs
	phase  phase
	final  ledger.FinalState
	// created, admitted, released and ended are the times of the
	// conditions that put the workload where it is; zero when unknown.
	created, admitted, released, ended time.Time
}

// maxGPUs is ledger.MaxGPUs as a quantity.
var maxGPUs = *resource.NewQuantity(int64(ledger.MaxGPUs), resource.DecimalSI)

// Demand is the number of GPUs (resource gpu, e.g. nvidia.com/gpu) a
// Workload asks for: Σ over pod sets of count × the pod's request, where a
// pod requests the larger of the sum over its containers and the largest of
// its init containers (as the scheduler counts them), each container's
// request defaulting to its limit. Fractional or negative quantities, a
// negative pod count, and a pod's request or a total beyond
// ledger.MaxGPUs, are ErrWorkload.
func Demand(wl *kueuev1beta2.Workload, gpu corev1.ResourceName) (ledger.GPUs, error) {
	amount := func(c corev1.Container) (int64, error) {
		q, ok := c.Resources.Requests[gpu]
		if !ok {
			q, ok = c.Resources.Limits[gpu]
		}
		if !ok {
			return 0, nil
		}
		// Compared as exact decimals: AsInt64 calls a whole number written
		// at a finer scale ("1000m") inexact, and MilliValue overflows
		// beyond about 9·10¹⁵.
		switch {
		case q.Sign() < 0:
		case q.Cmp(maxGPUs) > 0:
			return 0, fmt.Errorf("%w: workload %s/%s: container %q asks for %s %s, more than %d",
				ErrWorkload, wl.Namespace, wl.Name, c.Name, q.String(), gpu, ledger.MaxGPUs)
		default:
			m := q.MilliValue() // rounded up, so exact only if it compares equal
			if m%1000 == 0 && resource.NewMilliQuantity(m, resource.DecimalSI).Cmp(q) == 0 {
				return m / 1000, nil
			}
		}
		return 0, fmt.Errorf("%w: workload %s/%s: container %q asks for %s %s, not a whole number ≥ 0",
			ErrWorkload, wl.Namespace, wl.Name, c.Name, q.String(), gpu)
	}
	// Every partial sum is kept at most MaxGPUs (2³¹), so that no sum or
	// product below can wrap around int64: a wrapped sum could read as a
	// small valid demand.
	tooMany := func() error {
		return fmt.Errorf("%w: workload %s/%s asks for more than %d GPUs", ErrWorkload, wl.Namespace, wl.Name, ledger.MaxGPUs)
	}
	const limit = int64(ledger.MaxGPUs)
	var total int64
	for _, ps := range wl.Spec.PodSets {
		if ps.Count < 0 {
			return 0, fmt.Errorf("%w: workload %s/%s: pod set %q has a negative count %d", ErrWorkload, wl.Namespace, wl.Name, ps.Name, ps.Count)
		}
		var sum, initMax int64
		for _, c := range ps.Template.Spec.Containers {
			v, err := amount(c)
			if err != nil {
				return 0, err
			}
			if v > limit-sum {
				return 0, tooMany()
			}
			sum += v
		}
		for _, c := range ps.Template.Spec.InitContainers {
			v, err := amount(c)
			if err != nil {
				return 0, err
			}
			if v > limit {
				return 0, tooMany()
			}
			initMax = max(initMax, v)
		}
		// Count < 2³¹ and the pod's request ≤ 2³¹: the product fits.
		pod := int64(ps.Count) * max(sum, initMax)
		if pod > limit-total {
			return 0, tooMany()
		}
		total += pod
	}
	return ledger.GPUs(total), nil
}

// observe reads a Workload. The tenant comes from tenant (which maps the
// workload to its LocalQueue or ClusterQueue). Kueue's conditions give the
// times: Admitted (true from admission; false again from an eviction or
// requeue) and Finished. A deactivated workload (spec.active false) is
// evicted by Kueue, which the Admitted condition shows.
func observe(wl *kueuev1beta2.Workload, tenant ledger.TenantID, demand ledger.GPUs) observation {
	o := observation{job: JobOf(wl), tenant: tenant, demand: demand, created: wl.CreationTimestamp.Time}
	cond := func(t string) *metav1.Condition { return apimeta.FindStatusCondition(wl.Status.Conditions, t) }
	if c := cond(kueuev1beta2.WorkloadAdmitted); c != nil {
		if c.Status == metav1.ConditionTrue {
			o.admitted = c.LastTransitionTime.Time
		} else {
			o.released = c.LastTransitionTime.Time
		}
	}
	switch c := cond(kueuev1beta2.WorkloadFinished); {
	case c != nil && c.Status == metav1.ConditionTrue:
		o.phase, o.ended = finished, c.LastTransitionTime.Time
		o.final = ledger.Completed
		if c.Reason != kueuev1beta2.WorkloadFinishedReasonSucceeded {
			o.final = ledger.Failed
		}
	case !o.admitted.IsZero():
		o.phase = running
	}
	return o
}

// eventKind orders the events of one instant: a workload is submitted
// before it starts, and released before others are seen to finish.
type eventKind int

const (
	evSubmit eventKind = iota
	evStart
	evStop
	evFinish
)

// event is one step of a workload's life at a time.
type event struct {
	at   time.Time
	kind eventKind
	obs  *observation
}

// compareEvents orders events by time, then kind, then job id.
func compareEvents(a, b event) int {
	return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.kind, b.kind), cmp.Compare(a.obs.job, b.obs.job))
}

// events returns the steps that bring a ledger from knowing nothing of the
// workload to the state the object shows, in order. A step whose time the
// object does not tell (a finished workload whose admission time is gone)
// is left out rather than guessed.
func (o *observation) events() []event {
	evs := []event{{at: o.created, kind: evSubmit, obs: o}}
	switch o.phase {
	case running:
		evs = append(evs, event{at: o.admitted, kind: evStart, obs: o})
	case pending:
		if !o.released.IsZero() {
			evs = append(evs, event{at: o.released, kind: evStop, obs: o})
		}
	case finished:
		if !o.admitted.IsZero() && !o.admitted.After(o.ended) {
			evs = append(evs, event{at: o.admitted, kind: evStart, obs: o})
		}
		evs = append(evs, event{at: o.ended, kind: evFinish, obs: o})
	}
	return evs
}
