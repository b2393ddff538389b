package simulate

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate/trace"
	"pgregory.net/rapid"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// workedExample builds the paper's worked example (section 11 of the notes):
// 2 nodes × 8 GPUs, tenants A and B with equal quotas, 9000 s of history in
// which A received aSeconds × 8 GPUs and B 8 GPUs throughout; A1 (8 GPUs), A2
// (4) and B1 (8) wait, never having run.
func workedExample(t *testing.T, mode ledger.Mode, aSeconds int) *State {
	l, err := ledger.New(ledger.Config{Mode: mode, Capacity: 16, Start: t0})
	must(t, err)
	must(t, l.AddTenant(t0, "A", 1))
	must(t, l.AddTenant(t0, "B", 1))
	must(t, l.Submit(t0, "a0", "A", 8, 1))
	must(t, l.Submit(t0, "b0", "B", 8, 1))
	jobs := []trace.Job{tj("A1", "A", 8, 0, 5000), tj("A2", "A", 4, 0, 5000), tj("B1", "B", 8, 0, 5000)}
	for _, j := range jobs {
		must(t, l.Submit(t0, ledger.JobID(j.ID), ledger.TenantID(j.Tenant), ledger.GPUs(j.GPUs), 1))
	}
	must(t, l.Start(t0, "a0"))
	must(t, l.Start(t0, "b0"))
	must(t, l.Finish(ts(aSeconds), "a0", ledger.Completed))
	must(t, l.Finish(ts(9000), "b0", ledger.Completed))
	c, err := placement.NewCluster([]placement.Node{{ID: "n1", GPUs: 8}, {ID: "n2", GPUs: 8}})
	must(t, err)
	s := &State{
		Now: ts(9000), Interval: DefaultInterval, Lease: DefaultLease, Cluster: c,
		Accounts: l.View(ts(9000)), Quotas: map[string]float64{"A": 0.5, "B": 0.5}, Capacity: 16,
	}
	for i := range jobs {
		s.Pending = append(s.Pending, &JobState{Job: jobs[i], Remaining: jobs[i].Duration})
	}
	s.PendingDemands = []int{4, 8}
	return s
}

func granted(d Decision) []string {
	var out []string
	for _, g := range d.Grants {
		out = append(out, g.Job)
	}
	return out
}

func TestAstraeaWorkedExample(t *testing.T) {
	tests := []struct {
		name     string
		opts     func(*AstraeaOptions)
		aSeconds int
		want     []string
	}{
		{
			// ρ_A = 54,000 / 72,000 = 0.75 < ρ_B = 1: A1 (0.85 after its
			// pre-credit), then A2 (0.90); B1's 8 GPUs no longer fit.
			name: "the paper's example serves A twice and leaves B1 waiting",
			// A held 8 GPUs for 6750 s = 54,000 GPU·s.
			aSeconds: 6750,
			want:     []string{"A1", "A2"},
		},
		{
			// ρ_A = 68,400 / 72,000 = 0.95; after A1's pre-credit of 7,200
			// it is 1.05 > ρ_B, so B1 goes next and fills the cluster.
			name:     "the pre-credit hands the next turn to B",
			aSeconds: 8550,
			want:     []string{"A1", "B1"},
		},
		{
			name:     "without pre-credit A keeps its turn",
			opts:     func(o *AstraeaOptions) { o.NoPreCredit = true },
			aSeconds: 8550,
			want:     []string{"A1", "A2"},
		},
		{
			// One level: all three are new jobs of equal rank, taken in
			// submission order (then id): A1, A2; B1 does not fit.
			name:     "a single level ignores the tenant accounts",
			opts:     func(o *AstraeaOptions) { o.SingleLevel = true },
			aSeconds: 8550,
			want:     []string{"A1", "A2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultAstraeaOptions()
			if tt.opts != nil {
				tt.opts(&o)
			}
			p, err := NewAstraea(o)
			must(t, err)
			s := workedExample(t, ledger.QuotaShare, tt.aSeconds)
			d, err := p.Schedule(s)
			must(t, err)
			if got := granted(d); !slices.Equal(got, tt.want) {
				t.Fatalf("grants %v, want %v", got, tt.want)
			}
			for _, g := range d.Grants {
				if g.Placement.Nodes() != 1 || g.Lease != DefaultLease || g.Renew {
					t.Errorf("grant %+v: want a fresh lease on one node", g)
				}
			}
		})
	}
}

func TestAstraeaRenewsInPlaceOrLetsTheLeaseLapse(t *testing.T) {
	// x holds the whole 8-GPU cluster with a long job; y's job arrives at
	// 100 s. At the first lease end (900 s) y has the lower ρ and takes the
	// cluster: x's job is checkpointed (until 910) and y starts at 910.
	p, err := NewAstraea(DefaultAstraeaOptions())
	must(t, err)
	cfg := testConfig(1, 8, "x", "y")
	r := mustRun(t, cfg, src(tj("long", "x", 8, 0, 3000), tj("short", "y", 8, 100, 60)), p)
	short := jobByID(t, r, "short")
	if got := short.FirstStart.Sub(t0); got != sec(910) {
		t.Errorf("y's job starts at %v, want 910s", got)
	}
	long := jobByID(t, r, "long")
	if long.Preemptions != 1 {
		t.Errorf("x's job preempted %d times, want 1", long.Preemptions)
	}
	// long: 900 s done; resumes at the 970 tick (short ends at 970), cold
	// start to 1000, 2100 s left → 3100.
	if got := long.End.Sub(t0); got != sec(3100) {
		t.Errorf("x's job ends at %v, want 3100s", got)
	}
	// Alone, a job is renewed at every lease end and never preempted.
	r = mustRun(t, cfg, src(tj("long", "x", 8, 0, 3000)), p)
	if r.Stats.Renewals != 3 || r.Stats.Preemptions != 0 || jobByID(t, r, "long").End.Sub(t0) != sec(3000) {
		t.Errorf("alone: %+v", r.Stats)
	}
}

func TestAstraeaPolicies(t *testing.T) {
	m := Policies()
	want := []string{"astraea", "astraea-eq8", "astraea-nocredit", "astraea-reserve", "astraea-single"}
	if got := PolicyNames(m); !slices.Equal(got, want) {
		t.Fatalf("policies %v, want %v", got, want)
	}
	for _, name := range want {
		p, err := m[name]()
		must(t, err)
		if p.Name() != name {
			t.Errorf("policy %q is named %q", name, p.Name())
		}
	}
	p, _ := m["astraea-eq8"]()
	if p.(AccountsModer).AccountsMode() != ledger.DemandAware {
		t.Error("astraea-eq8 does not ask for Eq. 8 accounts")
	}
}

// genWorkload draws a small random cluster and workload.
func genWorkload(t *rapid.T) (Config, []trace.Job) {
	nodes := rapid.IntRange(1, 3).Draw(t, "nodes")
	gpn := rapid.SampledFrom([]int{2, 4, 8}).Draw(t, "gpusPerNode")
	nt := rapid.IntRange(1, 3).Draw(t, "tenants")
	var tenants []string
	for i := range nt {
		tenants = append(tenants, fmt.Sprintf("t%d", i))
	}
	cfg := testConfig(nodes, gpn, tenants...)
	for i, tn := range tenants {
		cfg.Quotas[tn] = float64(rapid.IntRange(1, 4).Draw(t, fmt.Sprintf("w%d", i)))
	}
	cfg.Lease = time.Duration(rapid.SampledFrom([]int{30, 60, 900}).Draw(t, "lease")) * time.Second
	cfg.Checkpoint = time.Duration(rapid.IntRange(0, 15).Draw(t, "ckpt")) * time.Second
	cfg.ColdStart = time.Duration(rapid.IntRange(0, min(40, int(cfg.Lease.Seconds())-1)).Draw(t, "cold")) * time.Second
	cfg.CheckpointOnRenew = rapid.Bool().Draw(t, "ckptOnRenew")
	cfg.Intervals = []time.Duration{10 * time.Minute}
	cfg.CheckEvery = 64
	n := rapid.IntRange(1, 40).Draw(t, "jobs")
	var jobs []trace.Job
	sub := 0
	for i := range n {
		sub += rapid.IntRange(0, 120).Draw(t, "gap")
		jobs = append(jobs, trace.Job{
			ID:       fmt.Sprintf("j%02d", i),
			Tenant:   rapid.SampledFrom(tenants).Draw(t, "tenant"),
			GPUs:     rapid.IntRange(1, nodes*gpn+1).Draw(t, "gpus"),
			Submit:   ts(sub),
			Duration: time.Duration(rapid.IntRange(0, 2000).Draw(t, "dur")) * time.Second,
		})
	}
	return cfg, jobs
}

// TestAstraeaTrimmingIsExact runs random workloads with the fast paths and
// candidate trimming and without them: the runs must be identical.
func TestAstraeaTrimmingIsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg, jobs := genWorkload(t)
		sameAsExhaustive(t, cfg, jobs)
	})
}

// sameAsExhaustive runs jobs under an ASTRAEA variant (drawn among the
// paper's, Eq. 8 accounts, single-level and no pre-credit) with the fast
// paths and candidate trimming and without them, and fails unless the runs
// are identical.
func sameAsExhaustive(t *rapid.T, cfg Config, jobs []trace.Job) {
	runExhaustiveToo(t, cfg, jobs, rapid.SampledFrom(astraeaVariants()).Draw(t, "variant"))
}

// runExhaustiveToo runs jobs under ASTRAEA with options o, with and without
// its fast paths, fails unless the runs are the same and returns the first.
func runExhaustiveToo(t interface {
	Fatal(...any)
	Fatalf(string, ...any)
}, cfg Config, jobs []trace.Job, o AstraeaOptions) *Result {
	fast, _ := NewAstraea(o)
	full, _ := NewAstraea(o)
	full.exhaustive = true
	a, err := Run(cfg, src(jobs...), fast)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(cfg, src(jobs...), full)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Run, b.Run) {
		t.Fatalf("trimmed and exhaustive runs differ:\n%+v\n%+v", a.Run.Jobs, b.Run.Jobs)
	}
	if a.Stats != b.Stats {
		t.Fatalf("trimmed and exhaustive runs count differently:\n%+v\n%+v", a.Stats, b.Stats)
	}
	return a
}

// TestRunInvariants checks, on random workloads and random (valid) policy
// decisions, what every run must satisfy: every job ends (or is excluded),
// runs its full duration, never before its submission, holds its GPUs at
// least as long as it runs, and the ledger bills exactly the held GPU time.
func TestRunInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg, jobs := genWorkload(t)
		var p Policy
		switch rapid.IntRange(0, 2).Draw(t, "policy") {
		case 0:
			p, _ = NewAstraea(DefaultAstraeaOptions())
		case 1:
			p = &greedy{lease: cfg.Lease, renew: rapid.Bool().Draw(t, "renew")}
		default:
			p = &preemptFor{}
		}
		r, err := Run(cfg, src(jobs...), p)
		if err != nil {
			t.Fatal(err)
		}
		capacity := 0
		nodes, _ := cfg.nodes()
		for _, n := range nodes {
			capacity += n.GPUs
		}
		if got := len(r.Run.Jobs) + len(r.Excluded); got != len(jobs) {
			t.Fatalf("%d jobs ended + %d excluded, want %d", len(r.Run.Jobs), len(r.Excluded), len(jobs))
		}
		var heldGPUSeconds float64
		for _, j := range r.Run.Jobs {
			if j.GPUs > capacity {
				t.Fatalf("job %s larger than the cluster ran", j.ID)
			}
			if j.End.Before(j.Submit) || j.FirstStart.Before(j.Submit) {
				t.Fatalf("job %s: submit %v, first start %v, end %v", j.ID, j.Submit, j.FirstStart, j.End)
			}
			if j.End.Sub(j.FirstStart) < j.Run || j.Held < j.Run {
				t.Fatalf("job %s ran %v between first start and end, held %v, needs %v", j.ID, j.End.Sub(j.FirstStart), j.Held, j.Run)
			}
			if j.Preemptions == 0 && !cfg.CheckpointOnRenew && j.Held != j.Run {
				t.Fatalf("job %s never preempted but held %v for a run of %v", j.ID, j.Held, j.Run)
			}
			heldGPUSeconds += j.Held.Seconds() * float64(j.GPUs)
		}
		for _, u := range r.Run.Util {
			if u.Used < 0 || u.Used > u.Capacity {
				t.Fatalf("utilization point %+v", u)
			}
		}
		var billed float64
		for _, a := range r.Run.TenantTotals {
			billed += float64(a.Alloc)
		}
		if d := billed - heldGPUSeconds; d > 1e-6*max(1, heldGPUSeconds) || d < -1e-6*max(1, heldGPUSeconds) {
			t.Fatalf("ledger billed %v GPU·s, jobs held %v", billed, heldGPUSeconds)
		}
	})
}

// TestAstraeaLeavesItsPlanForTheEngine: on a State whose policy the engine
// calls itself, the round's grants stay allocated on the cluster and the
// decision carries the plan; a changed decision no longer matches it, and
// undoing the plan restores the cluster.
func TestAstraeaLeavesItsPlanForTheEngine(t *testing.T) {
	p, err := NewAstraea(DefaultAstraeaOptions())
	must(t, err)
	s := workedExample(t, ledger.QuotaShare, 8550)
	s.plans = true
	before := allocations(s.Cluster)
	d, err := p.Schedule(s)
	must(t, err)
	if len(d.Grants) < 2 || d.plan == nil || !d.plan.matches(d) {
		t.Fatalf("decision %+v: want two grants or more and its plan", d)
	}
	for _, g := range d.Grants {
		if q, ok := s.Cluster.Allocation(g.Job); !ok || !q.Equal(g.Placement) {
			t.Errorf("grant of %s at %v: the cluster holds %v (%v)", g.Job, g.Placement, q, ok)
		}
	}
	reversed := slices.Clone(d.Grants)
	slices.Reverse(reversed)
	changed := []Decision{
		{Grants: reversed},
		{Grants: d.Grants[1:]},
		{Grants: d.Grants, Preempt: []string{d.Grants[0].Job}},
	}
	for _, c := range changed {
		if d.plan.matches(c) {
			t.Errorf("changed decision %+v matches the plan", c)
		}
	}
	must(t, d.plan.undo())
	if after := allocations(s.Cluster); !maps.EqualFunc(before, after, placement.Placement.Equal) {
		t.Fatalf("allocations after undo:\n%v\nwant\n%v", after, before)
	}
	must(t, s.Cluster.Check())
}
