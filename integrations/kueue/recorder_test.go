package kueue

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/astraea-sched/astraea/ledger"
)

func newRecorder(t *testing.T, m ledger.GPUs) *Recorder {
	t.Helper()
	l, err := ledger.New(ledger.Config{Capacity: m, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	return NewRecorder(l)
}

func allocOf(r *Recorder, id ledger.TenantID, at time.Time) ledger.GPUSeconds {
	for _, s := range r.Tenants(at) {
		if s.ID == id {
			return s.Account.Alloc
		}
	}
	return 0
}

// TestRecorderLifecycle: a workload of 2 GPUs admitted at 10 s and finished
// at 40 s is billed 60 GPU·s, however often it is seen.
func TestRecorderLifecycle(t *testing.T) {
	r := newRecorder(t, 4)
	w := newWorkload("a", "qa", 1, "2", sec(0))
	see := func() {
		t.Helper()
		for range 3 { // a reconciler may see an object many times
			if err := r.Observe(observe(w, "ns/qa", 2), 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	see()
	setCond(w, kueuev1beta2.WorkloadAdmitted, true, "Admitted", sec(10))
	see()
	setCond(w, kueuev1beta2.WorkloadFinished, true, kueuev1beta2.WorkloadFinishedReasonSucceeded, sec(40))
	see()
	if got := allocOf(r, "ns/qa", sec(100)); got != 60 {
		t.Fatalf("alloc %g GPU·s, want 60", got)
	}
	j, ok := r.Job(JobOf(w))
	if !ok || j.Active || j.Final != ledger.Completed {
		t.Fatalf("job %+v (known %v), want completed", j, ok)
	}
	if err := r.Gone(JobOf(w), sec(50)); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Job(JobOf(w)); ok || len(r.Jobs()) != 0 {
		t.Fatal("a deleted workload's record is still kept")
	}
	if got := allocOf(r, "ns/qa", sec(100)); got != 60 {
		t.Fatalf("alloc %g GPU·s after the deletion, want 60 still", got)
	}
}

// TestRecorderLateEvent: a step older than the ledger's clock is recorded at
// the clock's time, not refused and not in the past.
func TestRecorderLateEvent(t *testing.T) {
	r := newRecorder(t, 4)
	a := newWorkload("a", "qa", 1, "1", sec(0))
	setCond(a, kueuev1beta2.WorkloadAdmitted, true, "Admitted", sec(20))
	if err := r.Observe(observe(a, "ns/qa", 1), 1); err != nil {
		t.Fatal(err)
	}
	b := newWorkload("b", "qb", 1, "1", sec(5))
	setCond(b, kueuev1beta2.WorkloadAdmitted, true, "Admitted", sec(10)) // seen after a's admission at 20 s
	if err := r.Observe(observe(b, "ns/qb", 1), 1); err != nil {
		t.Fatal(err)
	}
	if got := allocOf(r, "ns/qb", sec(30)); got != 10 {
		t.Fatalf("late workload billed %g GPU·s over [20 s, 30 s), want 10", got)
	}
}

// TestRecorderDeletedWhileActive: deleting a running workload cancels it at
// the deletion.
func TestRecorderDeletedWhileActive(t *testing.T) {
	r := newRecorder(t, 4)
	w := newWorkload("a", "qa", 1, "4", sec(0))
	setCond(w, kueuev1beta2.WorkloadAdmitted, true, "Admitted", sec(0))
	if err := r.Observe(observe(w, "ns/qa", 4), 1); err != nil {
		t.Fatal(err)
	}
	if err := r.Gone(JobOf(w), sec(5)); err != nil {
		t.Fatal(err)
	}
	if got := allocOf(r, "ns/qa", sec(50)); got != 20 {
		t.Fatalf("alloc %g, want 20", got)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	r := newRecorder(t, 4)
	for i, q := range []string{"qa", "qb"} {
		w := newWorkload(fmt.Sprint("w", i), q, 1, "2", sec(i))
		setCond(w, kueuev1beta2.WorkloadAdmitted, true, "Admitted", sec(3+i))
		if err := r.Observe(observe(w, LocalQueueTenant("ns", q), 2), float64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "ledger.snap")
	if err := r.Snapshot(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Jobs(), r.Jobs()) {
		t.Fatalf("jobs %v, want %v", back.Jobs(), r.Jobs())
	}
	if a, b := r.Tenants(sec(60)), back.Tenants(sec(60)); !slices.Equal(a, b) {
		t.Fatalf("tenants after restore %+v, want %+v", b, a)
	}
}

// cluster is the model of TestRecordedAsLived: the objects Kueue would show
// and the GPU·seconds each tenant truly held.
type cluster struct {
	t      *rapid.T
	now    int
	wls    map[string]*kueuev1beta2.Workload
	tenant map[string]ledger.TenantID
	demand map[string]ledger.GPUs
	since  map[string]int // running since, for running workloads
	held   map[ledger.TenantID]float64
	lossy  bool // an eviction or deletion happened: a rebuild cannot see it all
	rec    *Recorder
	n      int
}

func (c *cluster) see(name string) {
	w := c.wls[name]
	o := observe(w, c.tenant[name], c.demand[name])
	if err := c.rec.Observe(o, 1); err != nil {
		c.t.Fatal(err)
	}
}

func (c *cluster) stopRun(name string) {
	if s, ok := c.since[name]; ok {
		c.held[c.tenant[name]] += float64(c.demand[name]) * float64(c.now-s)
		delete(c.since, name)
	}
}

// TestRecordedAsLived: whatever Kueue does (create, admit, evict, finish,
// delete; events seen once or many times), every tenant's ∫Alloc is exactly
// the GPU·seconds its workloads held, and a ledger rebuilt from the objects
// after a restart never bills more than that (exactly that when nothing
// was evicted or deleted).
func TestRecordedAsLived(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		l, _ := ledger.New(ledger.Config{Capacity: 8, Start: t0})
		c := &cluster{t: rt, wls: map[string]*kueuev1beta2.Workload{}, tenant: map[string]ledger.TenantID{},
			demand: map[string]ledger.GPUs{}, since: map[string]int{}, held: map[ledger.TenantID]float64{}, rec: NewRecorder(l)}
		pick := func(label string, ok func(*kueuev1beta2.Workload) bool) (string, bool) {
			var names []string
			for _, n := range slices.Sorted(maps.Keys(c.wls)) {
				if ok(c.wls[n]) {
					names = append(names, n)
				}
			}
			if len(names) == 0 {
				return "", false
			}
			return rapid.SampledFrom(names).Draw(rt, label), true
		}
		is := func(typ string) func(*kueuev1beta2.Workload) bool {
			return func(w *kueuev1beta2.Workload) bool {
				return !isTrue(w, kueuev1beta2.WorkloadFinished) && (typ == "" || isTrue(w, typ))
			}
		}
		pendingOnly := func(w *kueuev1beta2.Workload) bool { return is("")(w) && !isTrue(w, kueuev1beta2.WorkloadAdmitted) }
		rt.Repeat(map[string]func(*rapid.T){
			"create": func(rt *rapid.T) {
				name := fmt.Sprint("w", c.n)
				c.n++
				q := rapid.SampledFrom([]string{"qa", "qb", "qc"}).Draw(rt, "queue")
				d := rapid.IntRange(1, 4).Draw(rt, "gpus")
				c.wls[name] = newWorkload(name, q, 1, fmt.Sprint(d), sec(c.now))
				c.tenant[name], c.demand[name] = LocalQueueTenant("ns", q), ledger.GPUs(d)
				c.see(name)
			},
			"admit": func(rt *rapid.T) {
				if n, ok := pick("admit", pendingOnly); ok {
					setCond(c.wls[n], kueuev1beta2.WorkloadAdmitted, true, "Admitted", sec(c.now))
					c.since[n] = c.now
					c.see(n)
				}
			},
			"evict": func(rt *rapid.T) {
				if n, ok := pick("evict", is(kueuev1beta2.WorkloadAdmitted)); ok {
					c.stopRun(n)
					setCond(c.wls[n], kueuev1beta2.WorkloadAdmitted, false, "Preempted", sec(c.now))
					c.lossy = true
					c.see(n)
				}
			},
			"finish": func(rt *rapid.T) {
				if n, ok := pick("finish", is("")); ok {
					c.stopRun(n)
					setCond(c.wls[n], kueuev1beta2.WorkloadFinished, true, kueuev1beta2.WorkloadFinishedReasonSucceeded, sec(c.now))
					c.see(n)
				}
			},
			"delete": func(rt *rapid.T) {
				if n, ok := pick("delete", func(*kueuev1beta2.Workload) bool { return true }); ok {
					c.stopRun(n)
					if err := c.rec.Gone(JobOf(c.wls[n]), sec(c.now)); err != nil {
						rt.Fatal(err)
					}
					delete(c.wls, n)
					c.lossy = true
				}
			},
			"see again": func(rt *rapid.T) {
				if n, ok := pick("again", func(*kueuev1beta2.Workload) bool { return true }); ok {
					c.see(n)
				}
			},
			"tick": func(rt *rapid.T) { c.now += rapid.IntRange(1, 30).Draw(rt, "seconds") },
			"": func(rt *rapid.T) {
				if err := c.rec.Check(); err != nil {
					rt.Fatal(err)
				}
				for _, id := range []ledger.TenantID{"ns/qa", "ns/qb", "ns/qc"} {
					want := c.held[id]
					for n, s := range c.since {
						if c.tenant[n] == id {
							want += float64(c.demand[n]) * float64(c.now-s)
						}
					}
					if got := float64(allocOf(c.rec, id, sec(c.now))); math.Abs(got-want) > 1e-6*max(1, want) {
						rt.Fatalf("tenant %s billed %g GPU·s, held %g", id, got, want)
					}
				}
			},
		})
		// A restart without a snapshot: rebuild from the objects left.
		var obs []observation
		for _, n := range slices.Sorted(maps.Keys(c.wls)) {
			obs = append(obs, observe(c.wls[n], c.tenant[n], c.demand[n]))
		}
		rb, err := Rebuild(ledger.Config{Capacity: 8}, obs, nil, sec(c.now))
		if err != nil {
			rt.Fatal(err)
		}
		for _, id := range []ledger.TenantID{"ns/qa", "ns/qb", "ns/qc"} {
			live, again := allocOf(c.rec, id, sec(c.now)), allocOf(rb, id, sec(c.now))
			if again > live+1e-6 || (!c.lossy && math.Abs(float64(again-live)) > 1e-6) {
				rt.Fatalf("tenant %s: rebuilt ledger bills %g GPU·s, the live one %g (lossy history %v)", id, again, live, c.lossy)
			}
		}
	})
}

func isTrue(w *kueuev1beta2.Workload, typ string) bool {
	for _, c := range w.Status.Conditions {
		if c.Type == typ {
			return c.Status == "True"
		}
	}
	return false
}
