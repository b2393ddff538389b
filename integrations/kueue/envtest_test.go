package kueue

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/astraea-sched/astraea/ledger"
)

// condition sets a condition of the stored workload name, as Kueue (or the
// job it runs) would, with the transition time at.
func condition(t *testing.T, c client.Client, name, typ string, status bool, reason string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	var wl kueuev1beta2.Workload
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: name}, &wl); err != nil {
		t.Fatal(err)
	}
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	apimeta.RemoveStatusCondition(&wl.Status.Conditions, typ)
	wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{
		Type: typ, Status: s, Reason: reason, Message: reason, LastTransitionTime: metav1.NewTime(at),
	})
	if err := c.Status().Update(ctx, &wl); err != nil {
		t.Fatalf("status of %s: %v", name, err)
	}
}

// TestEnvtestRecordsWorkloads runs the controller against a real API server
// with Kueue's CRDs, plays Kueue's part by writing the Workloads'
// conditions, and checks the ledger, the weights written, the metrics, and
// both ways of coming back after a restart.
func TestEnvtestRecordsWorkloads(t *testing.T) {
	_, cfg, c := startAPIServer(t)
	ctx := context.Background()
	queues(t, c, "team", 4, "qa", "qb")
	snap := filepath.Join(t.TempDir(), "ledger.snap")
	reg := prometheus.NewRegistry()
	// One sync at start, then only when the test asks.
	opts := Options{Period: time.Hour, Snapshot: snap, Registerer: reg}
	ctl, stop := startController(t, cfg, opts)

	mk := func(name, q string, gpus int64) *kueuev1beta2.Workload {
		wl := &kueuev1beta2.Workload{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name},
			Spec:       kueuev1beta2.WorkloadSpec{QueueName: kueuev1beta2.LocalQueueName(q), PodSets: podSets(gpus)},
		}
		if err := c.Create(ctx, wl); err != nil {
			t.Fatal(err)
		}
		return wl
	}
	a, b := mk("a", "qa", 2), mk("b", "qb", 1)
	cpu := &kueuev1beta2.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "cpu-only"},
		Spec:       kueuev1beta2.WorkloadSpec{QueueName: "qa", PodSets: podSets(0)},
	}
	if err := c.Create(ctx, cpu); err != nil {
		t.Fatal(err)
	}
	known := func(wl *kueuev1beta2.Workload, pred func(ledger.JobInfo) bool) func() bool {
		return func() bool {
			r := ctl.Recorder()
			if r == nil {
				return false
			}
			j, ok := r.Job(JobOf(wl))
			return ok && pred(j)
		}
	}
	anyState := func(ledger.JobInfo) bool { return true }
	eventually(t, 10*time.Second, "both workloads submitted", func() bool { return known(a, anyState)() && known(b, anyState)() })

	// Times a few seconds ahead of the creations, so that the ledger's
	// clock (at its start or the last event) is never past them.
	base := time.Now().Truncate(time.Second).Add(5 * time.Second)
	at := func(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }
	running := func(j ledger.JobInfo) bool { return j.Running }
	pendingAgain := func(j ledger.JobInfo) bool { return j.Active && !j.Running }
	done := func(j ledger.JobInfo) bool { return !j.Active }

	condition(t, c, "a", kueuev1beta2.WorkloadAdmitted, true, "Admitted", at(10))
	eventually(t, 10*time.Second, "a running", known(a, running))
	condition(t, c, "b", kueuev1beta2.WorkloadAdmitted, true, "Admitted", at(20))
	eventually(t, 10*time.Second, "b running", known(b, running))
	condition(t, c, "b", kueuev1beta2.WorkloadAdmitted, false, "Preempted", at(30))
	eventually(t, 10*time.Second, "b evicted", known(b, pendingAgain))
	condition(t, c, "a", kueuev1beta2.WorkloadFinished, true, kueuev1beta2.WorkloadFinishedReasonSucceeded, at(40))
	eventually(t, 10*time.Second, "a finished", known(a, done))
	condition(t, c, "b", kueuev1beta2.WorkloadAdmitted, true, "Admitted", at(50))
	eventually(t, 10*time.Second, "b running again", known(b, running))
	// Events seen again (a label change makes the reconciler look again)
	// change nothing.
	for _, n := range []string{"a", "b"} {
		var wl kueuev1beta2.Workload
		if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: n}, &wl); err != nil {
			t.Fatal(err)
		}
		wl.Labels = map[string]string{"seen": "again"}
		if err := c.Update(ctx, &wl); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond)

	billed := func(r *Recorder) map[ledger.TenantID]ledger.GPUSeconds {
		out := map[ledger.TenantID]ledger.GPUSeconds{}
		for _, s := range r.Tenants(at(60)) {
			out[s.ID] = s.Account.Alloc
		}
		return out
	}
	// a: 2 GPUs over [10 s, 40 s); b: 1 GPU over [20 s, 30 s) and [50 s, 60 s).
	want := map[ledger.TenantID]ledger.GPUSeconds{"team/qa": 60, "team/qb": 20}
	got := billed(ctl.Recorder())
	for id, w := range want {
		if got[id] != w {
			t.Errorf("live: tenant %s billed %g GPU·s, want %g", id, got[id], w)
		}
	}
	if _, ok := ctl.Recorder().Job(JobOf(cpu)); ok {
		t.Error("a workload asking for no GPUs is in the ledger")
	}

	// Weights: one sync writes each queue's weight from its ρ.
	if err := ctl.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	m := DefaultWeightMap()
	for _, s := range ctl.Recorder().Tenants(time.Now()) {
		var lq kueuev1beta2.LocalQueue
		ns, name := "team", string(s.ID)[len("team/"):]
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &lq); err != nil {
			t.Fatal(err)
		}
		if lq.Spec.FairSharing == nil || lq.Spec.FairSharing.Weight == nil {
			t.Fatalf("queue %s has no weight after a sync", s.ID)
		}
		w := lq.Spec.FairSharing.Weight.AsApproximateFloat64()
		target := m.Target(1, s.Account.Rho)
		if lo, hi := min(w, target), max(w, target); hi >= lo*(1+m.Band) {
			t.Errorf("queue %s: weight %g, target %g for ρ %v", s.ID, w, target, s.Account.Rho)
		}
		t.Logf("queue %s: ρ %v, weight %.3f", s.ID, s.Account.Rho, w)
	}
	// Metrics: a gauge per tenant.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]int{}
	for _, mf := range mfs {
		series[mf.GetName()] = len(mf.GetMetric())
	}
	for _, n := range []string{"astraea_tenant_alloc_gpu_seconds", "astraea_tenant_fair_share_gpu_seconds", "astraea_tenant_rho", "astraea_kueue_fair_sharing_weight"} {
		if series[n] != 2 {
			t.Errorf("metric %s has %d series, want 2 (one per queue)", n, series[n])
		}
	}

	// A restart from the snapshot: the same accounts, and a workload
	// deleted while the controller was away is cancelled.
	stop()
	if err := c.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	opts.Registerer = prometheus.NewRegistry()
	ctl2, stop2 := startController(t, cfg, opts)
	eventually(t, 10*time.Second, "restart from the snapshot", func() bool { return ctl2.Recorder() != nil })
	got = billed(ctl2.Recorder())
	for id, w := range want {
		if got[id] != w {
			t.Errorf("after a restart from the snapshot: tenant %s billed %g GPU·s, want %g", id, got[id], w)
		}
	}
	if _, ok := ctl2.Recorder().Job(JobOf(a)); ok {
		t.Error("the workload deleted during the restart is still in the ledger")
	}
	stop2()

	// A restart without a snapshot: rebuilt from the conditions, which
	// keep b's current run only; nothing is billed twice.
	opts.Snapshot, opts.Registerer = "", nil
	ctl3, _ := startController(t, cfg, opts)
	eventually(t, 10*time.Second, "rebuild", func() bool { return ctl3.Recorder() != nil })
	got = billed(ctl3.Recorder())
	if got["team/qb"] != 10 {
		t.Errorf("rebuilt: team/qb billed %g GPU·s, want 10 (the run since 50 s)", got["team/qb"])
	}
}

// TestEnvtestClusterQueueTenancy: with ByClusterQueue the tenant is the
// ClusterQueue behind a workload's LocalQueue, and the weight goes to the
// ClusterQueue.
func TestEnvtestClusterQueueTenancy(t *testing.T) {
	_, cfg, c := startAPIServer(t)
	ctx := context.Background()
	queues(t, c, "team", 4, "qa", "qb")
	ctl, _ := startController(t, cfg, Options{Period: time.Hour, Tenancy: ByClusterQueue})
	wl := &kueuev1beta2.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "a"},
		Spec:       kueuev1beta2.WorkloadSpec{QueueName: "qb", PodSets: podSets(3)},
	}
	if err := c.Create(ctx, wl); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the workload submitted", func() bool {
		r := ctl.Recorder()
		if r == nil {
			return false
		}
		j, ok := r.Job(JobOf(wl))
		return ok && j.Tenant == "cq" && j.Demand == 3
	})
	if err := ctl.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	var cq kueuev1beta2.ClusterQueue
	if err := c.Get(ctx, client.ObjectKey{Name: "cq"}, &cq); err != nil {
		t.Fatal(err)
	}
	// the only tenant, owed and not served yet: ρ = 0, the upper bound
	if cq.Spec.FairSharing == nil || cq.Spec.FairSharing.Weight == nil || cq.Spec.FairSharing.Weight.AsApproximateFloat64() != 4 {
		t.Fatalf("ClusterQueue fairSharing %+v, want weight 4", cq.Spec.FairSharing)
	}
	var lq kueuev1beta2.LocalQueue
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "qb"}, &lq); err != nil {
		t.Fatal(err)
	}
	if lq.Spec.FairSharing != nil && lq.Spec.FairSharing.Weight != nil {
		t.Fatalf("LocalQueue weight %v written under ClusterQueue tenancy", lq.Spec.FairSharing.Weight)
	}
}
