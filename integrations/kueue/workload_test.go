package kueue

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/astraea-sched/astraea/ledger"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// sec is t0 plus s seconds.
func sec(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// container asks for n of resource r (as a request, or as a limit only).
func container(r corev1.ResourceName, n string, limitOnly bool) corev1.Container {
	c := corev1.Container{Name: "c"}
	l := corev1.ResourceList{r: resource.MustParse(n)}
	if limitOnly {
		c.Resources.Limits = l
	} else {
		c.Resources.Requests = l
	}
	return c
}

// newWorkload is a workload of count pods of gpus GPUs each in queue q,
// created at created.
func newWorkload(name, q string, count int32, gpus string, created time.Time) *kueuev1beta2.Workload {
	return &kueuev1beta2.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(created)},
		Spec: kueuev1beta2.WorkloadSpec{
			QueueName: kueuev1beta2.LocalQueueName(q),
			PodSets: []kueuev1beta2.PodSet{{Name: "main", Count: count, Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{Containers: []corev1.Container{container(DefaultGPU, gpus, false)}},
			}}},
		},
	}
}

// setCond sets a condition of wl at time at.
func setCond(wl *kueuev1beta2.Workload, typ string, status bool, reason string, at time.Time) {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: typ, Status: s, Reason: reason, Message: reason, LastTransitionTime: metav1.NewTime(at)})
	// SetStatusCondition keeps the old time when the status is unchanged.
	c := apimeta.FindStatusCondition(wl.Status.Conditions, typ)
	if c.Status == s {
		c.LastTransitionTime = metav1.NewTime(at)
	}
}

func TestDemand(t *testing.T) {
	gpu := DefaultGPU
	two := func(cs ...corev1.Container) kueuev1beta2.PodSet {
		return kueuev1beta2.PodSet{Name: "p", Count: 2, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: cs}}}
	}
	for _, tc := range []struct {
		name string
		sets []kueuev1beta2.PodSet
		want ledger.GPUs
		err  error
	}{
		{"a pod set's pods each ask for their containers' sum", []kueuev1beta2.PodSet{two(container(gpu, "1", false), container(gpu, "2", false))}, 6, nil},
		{"a container with only a limit asks for its limit", []kueuev1beta2.PodSet{two(container(gpu, "3", true))}, 6, nil},
		{"other resources are not GPUs", []kueuev1beta2.PodSet{two(container("cpu", "4", false))}, 0, nil},
		{"pod sets add up", []kueuev1beta2.PodSet{two(container(gpu, "1", false)), two(container(gpu, "4", false))}, 10, nil},
		{"a larger init container sets the pod's request", []kueuev1beta2.PodSet{{Name: "p", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers:     []corev1.Container{container(gpu, "1", false)},
			InitContainers: []corev1.Container{container(gpu, "3", false)},
		}}}}, 3, nil},
		{"zero written in milli-units is zero", []kueuev1beta2.PodSet{two(container(gpu, "0m", false), container(gpu, "1", false))}, 2, nil},
		{"a whole GPU written in milli-units is one", []kueuev1beta2.PodSet{two(container(gpu, "1000m", false))}, 2, nil},
		{"a fractional GPU is refused", []kueuev1beta2.PodSet{two(container(gpu, "500m", false))}, 0, ErrWorkload},
		{"a total beyond MaxGPUs is refused", []kueuev1beta2.PodSet{{Name: "p", Count: 1 << 30, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{container(gpu, "8", false)},
		}}}}, 0, ErrWorkload},
		// 2 × (2⁶³ − 1) + 3 wraps around int64 to 1: a sum that wraps must
		// not read as a small demand.
		{"containers whose sum wraps around int64 are refused", []kueuev1beta2.PodSet{{Name: "p", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{container(gpu, "9223372036854775807", false), container(gpu, "9223372036854775807", false), container(gpu, "3", false)},
		}}}}, 0, ErrWorkload},
		{"a pod beyond MaxGPUs is refused, even in no pods", []kueuev1beta2.PodSet{{Name: "p", Count: 0, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{container(gpu, "4294967296", false)},
		}}}}, 0, ErrWorkload},
		{"a negative count is refused", []kueuev1beta2.PodSet{{Name: "p", Count: -1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{container(gpu, "1", false)},
		}}}}, 0, ErrWorkload},
		{"pod sets that together pass MaxGPUs are refused", []kueuev1beta2.PodSet{
			{Name: "a", Count: 1 << 30, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{container(gpu, "1", false)}}}},
			{Name: "b", Count: 1 << 30, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{container(gpu, "1", false)}}}},
			{Name: "c", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{container(gpu, "1", false)}}}},
		}, 0, ErrWorkload},
		{"pod sets that add up to MaxGPUs exactly are taken", []kueuev1beta2.PodSet{
			{Name: "a", Count: 1 << 30, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{container(gpu, "1", false)}}}},
			{Name: "b", Count: 1 << 30, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{container(gpu, "1", false)}}}},
		}, ledger.MaxGPUs, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := &kueuev1beta2.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}, Spec: kueuev1beta2.WorkloadSpec{PodSets: tc.sets}}
			got, err := Demand(wl, gpu)
			if !errors.Is(err, tc.err) || (tc.err != nil) != (err != nil) {
				t.Fatalf("Demand error %v, want %v", err, tc.err)
			}
			if got != tc.want {
				t.Fatalf("Demand = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestObserve(t *testing.T) {
	type want struct {
		ph                        phase
		final                     ledger.FinalState
		admitted, released, ended time.Time
		kinds                     []eventKind
	}
	for _, tc := range []struct {
		name  string
		conds func(*kueuev1beta2.Workload)
		want  want
	}{
		{"a new workload is pending", func(*kueuev1beta2.Workload) {}, want{ph: pending, kinds: []eventKind{evSubmit}}},
		{"an admitted workload runs from its admission", func(w *kueuev1beta2.Workload) {
			setCond(w, kueuev1beta2.WorkloadAdmitted, true, "Admitted", sec(5))
		}, want{ph: running, admitted: sec(5), kinds: []eventKind{evSubmit, evStart}}},
		{"quota reserved but not admitted is still pending", func(w *kueuev1beta2.Workload) {
			setCond(w, kueuev1beta2.WorkloadQuotaReserved, true, "QuotaReserved", sec(5))
		}, want{ph: pending, kinds: []eventKind{evSubmit}}},
		{"an evicted workload is pending again from its eviction", func(w *kueuev1beta2.Workload) {
			setCond(w, kueuev1beta2.WorkloadAdmitted, true, "Admitted", sec(5))
			setCond(w, kueuev1beta2.WorkloadAdmitted, false, "Preempted", sec(9))
		}, want{ph: pending, released: sec(9), kinds: []eventKind{evSubmit, evStop}}},
		{"a workload that succeeded is completed at its finish", func(w *kueuev1beta2.Workload) {
			setCond(w, kueuev1beta2.WorkloadAdmitted, true, "Admitted", sec(5))
			setCond(w, kueuev1beta2.WorkloadFinished, true, kueuev1beta2.WorkloadFinishedReasonSucceeded, sec(20))
		}, want{ph: finished, final: ledger.Completed, admitted: sec(5), ended: sec(20), kinds: []eventKind{evSubmit, evStart, evFinish}}},
		{"a workload that finished otherwise failed", func(w *kueuev1beta2.Workload) {
			setCond(w, kueuev1beta2.WorkloadFinished, true, "Failed", sec(20))
		}, want{ph: finished, final: ledger.Failed, ended: sec(20), kinds: []eventKind{evSubmit, evFinish}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorkload("w", "q", 1, "2", sec(0))
			tc.conds(w)
			o := observe(w, "ns/q", 2)
			if o.phase != tc.want.ph || o.final != tc.want.final || !o.admitted.Equal(tc.want.admitted) ||
				!o.released.Equal(tc.want.released) || !o.ended.Equal(tc.want.ended) || !o.created.Equal(sec(0)) {
				t.Fatalf("observe = %+v, want %+v", o, tc.want)
			}
			evs := o.events()
			if len(evs) != len(tc.want.kinds) {
				t.Fatalf("events %v, want kinds %v", evs, tc.want.kinds)
			}
			for i, ev := range evs {
				if ev.kind != tc.want.kinds[i] {
					t.Fatalf("event %d is %v, want %v", i, ev.kind, tc.want.kinds[i])
				}
			}
		})
	}
}
