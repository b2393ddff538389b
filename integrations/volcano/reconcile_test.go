package volcano

import (
	"errors"
	"math"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"volcano.sh/volcano/pkg/scheduler/api"

	"github.com/astraea-sched/astraea/ledger"
)

var (
	t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Hour)
	t2 = t1.Add(time.Hour)
	t3 = t2.Add(time.Hour)
)

func newLedger(t *testing.T) *ledger.Ledger {
	t.Helper()
	l, err := ledger.New(ledger.Config{Mode: ledger.QuotaShare, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func twoQueues(jobs ...jobObs) observation {
	return observation{capacity: 8, queues: []queueObs{{"qa", 1}, {"qb", 1}}, jobs: jobs}
}

// step reconciles at `at` and checks the ledger's invariants.
func step(t *testing.T, l *ledger.Ledger, recs map[string]*record, o observation, at time.Time) {
	t.Helper()
	if err := l.Advance(at); err != nil {
		t.Fatal(err)
	}
	if err := reconcile(l, recs, o, at); err != nil {
		t.Fatal(err)
	}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
}

func job(t *testing.T, l *ledger.Ledger, id ledger.JobID) ledger.JobInfo {
	t.Helper()
	j, ok := l.Job(id)
	if !ok {
		t.Fatalf("ledger has no job %q", id)
	}
	return j
}

func TestReconcileFollowsAGangThroughItsLife(t *testing.T) {
	l, recs := newLedger(t), map[string]*record{}
	a := jobObs{key: "ns/a", uid: "u1", tenant: "qa", demand: 4}
	// half the pods exist: not a gang yet, nothing recorded
	step(t, l, recs, twoQueues(a), t0)
	if len(recs) != 0 {
		t.Fatalf("a gang not yet formed was recorded: %v", recs)
	}
	a.formed = true
	step(t, l, recs, twoQueues(a), t0)
	if j := job(t, l, "ns/a@u1"); !j.Active || j.Running || j.Demand != 4 || j.Tenant != "qa" {
		t.Fatalf("after the gang formed: %+v", j)
	}
	a.running = true
	step(t, l, recs, twoQueues(a), t1)
	if !job(t, l, "ns/a@u1").Running || !recs["ns/a"].Started {
		t.Fatal("a gang with every task bound is not running")
	}
	a.running, a.done = false, true
	step(t, l, recs, twoQueues(a), t2)
	if j := job(t, l, "ns/a@u1"); j.Active || j.Final != ledger.Completed {
		t.Fatalf("after all tasks succeeded: %+v", j)
	}
	if len(recs) != 0 {
		t.Fatalf("a finished job is still recorded: %v", recs)
	}
	acc, err := l.TenantAccount("qa", t0, t2)
	if err != nil {
		t.Fatal(err)
	}
	if want := ledger.GPUSeconds(4 * 3600); acc.Alloc != want {
		t.Fatalf("qa received %v GPU·s, want %v (4 GPUs from t1 to t2)", acc.Alloc, want)
	}
}

func TestReconcileEnds(t *testing.T) {
	for name, tc := range map[string]struct {
		ran   bool
		next  []jobObs // what the session at t2 shows of the job
		final ledger.FinalState
	}{
		"a job that left the session having run is Completed":      {true, nil, ledger.Completed},
		"a job that left the session without running is Cancelled": {false, nil, ledger.Cancelled},
		"a job with a failed task and none live is Failed":         {true, []jobObs{{key: "ns/a", uid: "u1", tenant: "qa", done: true, failed: true}}, ledger.Failed},
		"a job deleted and created again under its name ends":      {true, []jobObs{{key: "ns/a", uid: "u2", tenant: "qa", demand: 4, formed: true}}, ledger.Completed},
	} {
		t.Run(name, func(t *testing.T) {
			l, recs := newLedger(t), map[string]*record{}
			a := jobObs{key: "ns/a", uid: "u1", tenant: "qa", demand: 4, formed: true, running: tc.ran}
			step(t, l, recs, twoQueues(a), t1)
			step(t, l, recs, twoQueues(tc.next...), t2)
			if j := job(t, l, "ns/a@u1"); j.Active || j.Final != tc.final {
				t.Fatalf("got %+v, want finished %v", j, tc.final)
			}
			if len(tc.next) > 0 && !tc.next[0].done {
				if j := job(t, l, "ns/a@u2"); !j.Active || recs["ns/a"].Started {
					t.Fatalf("the PodGroup created again is not a new job: %+v %+v", j, recs["ns/a"])
				}
			}
		})
	}
}

func TestReconcileDemandChangeIsANewGenerationThatIsNotNew(t *testing.T) {
	l, recs := newLedger(t), map[string]*record{}
	a := jobObs{key: "ns/a", tenant: "qa", demand: 4, formed: true, running: true}
	step(t, l, recs, twoQueues(a), t1)
	a.demand = 6
	step(t, l, recs, twoQueues(a), t2)
	if j := job(t, l, "ns/a"); j.Active || j.Final != ledger.Cancelled {
		t.Fatalf("first generation: %+v", j)
	}
	j := job(t, l, "ns/a#1")
	if !j.Active || !j.Running || j.Demand != 6 {
		t.Fatalf("second generation: %+v", j)
	}
	if r := recs["ns/a"]; !r.Started || r.Gen != 1 || r.Ledger != "ns/a#1" {
		t.Fatalf("record: %+v", r)
	}
	// the queue's account saw 4 GPUs for an hour, then 6
	step(t, l, recs, twoQueues(a), t3)
	acc, err := l.TenantAccount("qa", t1, t3)
	if err != nil {
		t.Fatal(err)
	}
	if want := ledger.GPUSeconds((4 + 6) * 3600); acc.Alloc != want {
		t.Fatalf("qa received %v, want %v", acc.Alloc, want)
	}
}

func TestReconcileQueuesAndCapacity(t *testing.T) {
	l, recs := newLedger(t), map[string]*record{}
	a := jobObs{key: "ns/a", tenant: "qa", demand: 2, formed: true, running: true}
	step(t, l, recs, twoQueues(a), t0)
	if l.Capacity() != 8 {
		t.Fatalf("capacity %d, want 8", l.Capacity())
	}
	o := twoQueues(a)
	o.capacity, o.queues[1].weight = 16, 3
	step(t, l, recs, o, t1)
	if info, _ := l.Tenant("qb"); info.Weight != 3 || info.Quota != 12 {
		t.Fatalf("qb after its weight became 3 on 16 GPUs: %+v", info)
	}
	// qa disappears with its job: the job ends, then the tenant goes
	o = observation{capacity: 16, queues: []queueObs{{"qb", 3}}}
	step(t, l, recs, o, t2)
	if info, _ := l.Tenant("qa"); info.Registered {
		t.Fatalf("qa is still registered: %+v", info)
	}
	if info, _ := l.Tenant("qb"); info.Quota != 16 {
		t.Fatalf("qb alone should be owed the cluster: %+v", info)
	}
}

func TestReconcileGoesOnPastARefusedJob(t *testing.T) {
	l, recs := newLedger(t), map[string]*record{}
	big := jobObs{key: "ns/big", tenant: "qa", demand: ledger.MaxGPUs + 1, formed: true}
	ok := jobObs{key: "ns/ok", tenant: "qb", demand: 1, formed: true, running: true}
	if err := l.Advance(t1); err != nil {
		t.Fatal(err)
	}
	err := reconcile(l, recs, twoQueues(big, ok), t1)
	if !errors.Is(err, ledger.ErrInvalidValue) {
		t.Fatalf("err = %v, want one matching ledger.ErrInvalidValue", err)
	}
	if !job(t, l, "ns/ok").Running {
		t.Fatal("the job after the refused one was not applied")
	}
	if _, tracked := recs["ns/big"]; tracked {
		t.Fatal("the refused job is recorded")
	}
}

// TestGPUsTheLedgerCannotHoldAreRefusedNotWrapped: a scalar beyond
// ledger.MaxGPUs, negative or NaN reads as one GPU too many, so that the
// ledger refuses the job by name; sums saturate there instead of wrapping
// around to a count it would take (two tasks of 2⁶³ GPUs each converted
// naïvely add up to 0, a job that asks for nothing).
func TestGPUsTheLedgerCannotHoldAreRefusedNotWrapped(t *testing.T) {
	const gpu = "nvidia.com/gpu"
	res := func(milli float64) *api.Resource {
		return &api.Resource{ScalarResources: map[v1.ResourceName]float64{gpu: milli}}
	}
	for _, tc := range []struct {
		milli float64
		want  ledger.GPUs
	}{
		{0, 0}, {2000, 2}, {2500, 3}, {499, 0},
		{float64(ledger.MaxGPUs) * 1000, ledger.MaxGPUs},
		{float64(ledger.MaxGPUs)*1000 + 1000, tooManyGPUs},
		{9.3e21, tooManyGPUs}, {math.Inf(1), tooManyGPUs},
		{-1000, tooManyGPUs}, {math.NaN(), tooManyGPUs},
	} {
		if got := gpus(res(tc.milli), gpu); got != tc.want {
			t.Errorf("gpus(%g milli) = %d, want %d", tc.milli, got, tc.want)
		}
	}
	if got := gpus(nil, gpu); got != 0 {
		t.Errorf("gpus(nil) = %d, want 0", got)
	}
	if got := addGPUs(tooManyGPUs, tooManyGPUs); got != tooManyGPUs {
		t.Errorf("addGPUs saturates at %d, got %d", tooManyGPUs, got)
	}
	if got := addGPUs(ledger.MaxGPUs-1, 1); got != ledger.MaxGPUs {
		t.Errorf("addGPUs(MaxGPUs−1, 1) = %d, want MaxGPUs", got)
	}
}

// FuzzGPUs: any scalar reads as a count in [0, tooManyGPUs], the rounded
// value wherever the ledger can hold it, and a sum of such counts never
// leaves that range.
func FuzzGPUs(f *testing.F) {
	for _, v := range []float64{0, 1000, 2500, -1, 9.3e21, math.MaxFloat64} {
		f.Add(v, v)
	}
	f.Fuzz(func(t *testing.T, a, b float64) {
		const gpu = "nvidia.com/gpu"
		ga := gpus(&api.Resource{ScalarResources: map[v1.ResourceName]float64{gpu: a}}, gpu)
		gb := gpus(&api.Resource{ScalarResources: map[v1.ResourceName]float64{gpu: b}}, gpu)
		if r := math.Round(a / 1000); r >= 0 && r <= float64(ledger.MaxGPUs) && ga != ledger.GPUs(r) {
			t.Fatalf("gpus(%g) = %d, want %g", a, ga, r)
		}
		for _, g := range []ledger.GPUs{ga, gb, addGPUs(ga, gb)} {
			if g < 0 || g > tooManyGPUs {
				t.Fatalf("count %d outside [0, %d] (from %g, %g)", g, tooManyGPUs, a, b)
			}
		}
	})
}
