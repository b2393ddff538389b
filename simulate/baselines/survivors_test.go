package baselines

import (
	"fmt"
	"maps"
	"math"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/metrics"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// Fairness may be 1, the top of its documented range (0, 1].
func TestThemisAcceptsFullFairness(t *testing.T) {
	if _, err := NewThemis(ThemisConfig{Fairness: 1}); err != nil {
		t.Fatalf("NewThemis(Fairness 1) = %v, want a policy", err)
	}
}

// Strict AlloX leaves GPUs idle rather than give them to a tenant outside
// the α share furthest below its share; without Strict those tenants' jobs
// fill what is left.
func TestAlloXStrictLeavesTheRestIdle(t *testing.T) {
	quotas := map[string]float64{"a": 1, "b": 1}
	for _, tc := range []struct {
		name   string
		strict bool
		late   bool // b's job starts after t0
	}{
		{"without Strict the other tenant fills the idle GPUs", false, false},
		{"with Strict the GPUs stay idle", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Two tenants, α = 0.5: one of them is served first (a, on the
			// tie of two fresh tenants, by name); its job takes half of
			// the node.
			res := run(t, simConfig(1, 8, quotas), mustPolicy(NewAlloX(AlloXConfig{Alpha: 0.5, Strict: tc.strict}))(t),
				job("a1", "a", 4, 0, 1000),
				job("b1", "b", 4, 0, 1000),
			)
			if got := record(t, res, "a1").FirstStart; !got.Equal(t0) {
				t.Fatalf("a1 first started at %v, want t0", got)
			}
			if got := record(t, res, "b1").FirstStart; got.After(t0) != tc.late {
				t.Fatalf("b1 first started at %v; after t0: %v, want %v", got, got.After(t0), tc.late)
			}
		})
	}
}

// A job promoted back to the top queue and demoted again is due for its
// next promotion once it has waited PromoteKnob × the time it ran since
// that promotion — not since it was submitted.
func TestTiresiasPromotionCountsFromTheLastPromotion(t *testing.T) {
	ti := mustPolicy(NewTiresias(TiresiasConfig{Thresholds: []float64{100}, PromoteKnob: 2}))(t)
	js := &simulate.JobState{Job: job("j", "a", 1, 0, 5000), Status: simulate.Pending, Attained: 400 * time.Second}
	// Promoted after 100 s of running (100 GPU·s), it ran 300 s more, was
	// demoted, and stopped at 1000 s.
	ti.jobs["j"] = &tiresiasJob{offset: 100, runAt: 100 * time.Second, lastStop: at(1000)}
	s := &simulate.State{Now: at(1000), Pending: []*simulate.JobState{js}}
	if got, want := ti.NextWakeup(s), at(1000+2*300); !got.Equal(want) {
		t.Fatalf("next wakeup %v, want %v: 2 × the 300 s run since the promotion", got, want)
	}
}

// A zero Quantum slices at the state's lease, or at 15 minutes for a state
// without one (a caller driving the policy outside the engine).
func TestGandivaFairQuantumWithoutALease(t *testing.T) {
	g := mustPolicy(NewGandivaFair(GandivaFairConfig{}))(t)
	for _, tc := range []struct {
		lease, want time.Duration
	}{
		{0, 15 * time.Minute},
		{5 * time.Minute, 5 * time.Minute},
	} {
		if got := g.quantum(&simulate.State{Lease: tc.lease}); got != tc.want {
			t.Errorf("quantum with lease %v = %v, want %v", tc.lease, got, tc.want)
		}
	}
}

// A queue of one GPU of capacity is ordered by its used ÷ capacity like
// any other (only a queue without capacity sorts last): idle, it is served
// at once, even beside an elastic queue with more capacity and more jobs
// that would take every GPU.
func TestYARNCSOneGPUQueueIsServed(t *testing.T) {
	var jobs []trace.Job
	for i := range 8 {
		jobs = append(jobs, job(fmt.Sprint("a", i), "a", 1, 0, 1000))
	}
	jobs = append(jobs, job("z1", "z", 1, 0, 1000))
	res := run(t, simConfig(1, 8, map[string]float64{"a": 7, "z": 1}), NewYARNCS(YARNConfig{Elastic: true}), jobs...)
	if got := record(t, res, "z1").FirstStart; !got.Equal(t0) {
		t.Fatalf("z1, the one job of the one-GPU queue, first started at %v, want t0", got)
	}
}

// Work conservation: when the chosen gang cannot be placed (fragmentation),
// waiting jobs that fit the GPUs left get them, down to a job that takes
// exactly the last free GPUs.
func TestTiresiasFillsFreeGPUsExactly(t *testing.T) {
	// r1 holds 3 GPUs of node 1, r2 2 of node 2: 1 + 2 GPUs free. The
	// chosen p1 needs 3 on one node and waits; p2 takes node 1's last GPU,
	// and p3 the 2 of node 2, exactly what is left.
	p2, p3 := fragmented(t, mustPolicy(NewTiresias(DefaultTiresiasConfig()))(t), 1, 1000)
	if !p3.FirstStart.Equal(p2.FirstStart) {
		t.Fatalf("p3 first started at %v, want with p2 at %v", p3.FirstStart, p2.FirstStart)
	}
}

// Durations under one second are read as one second, so that a job of no
// measurable length has a finite ρ.
func TestThemisRhoOfASubSecondJob(t *testing.T) {
	th := mustPolicy(NewThemis(DefaultThemisConfig()))(t)
	for _, d := range []time.Duration{0, 500 * time.Millisecond} {
		js := &simulate.JobState{Job: trace.Job{ID: "j", Tenant: "a", GPUs: 1, Submit: t0, Duration: d}, Remaining: d}
		// Waited 10 s, d to go, read as lasting 1 s.
		if got, want := th.Rho(js, at(10)), 10+d.Seconds(); got != want {
			t.Errorf("ρ of a job of %v = %v, want %v", d, got, want)
		}
	}
}

// A guaranteed job that leaves gives its virtual cluster's cells back: the
// tenant's next job is guaranteed again and takes back its GPUs from an
// opportunistic job at once.
func TestHiveDDepartureFreesTheCells(t *testing.T) {
	res := run(t, simConfig(1, 8, map[string]float64{"a": 0.5, "b": 0.5}), mustPolicy(NewHiveD(HiveDConfig{}))(t),
		job("a0", "a", 4, 0, 100),    // a's cells, until 100 s
		job("b1", "b", 4, 1, 5000),   // b's cells
		job("b2", "b", 4, 101, 5000), // opportunistic, on a0's GPUs
		job("a1", "a", 4, 200, 100),  // a's cells again
	)
	if a1 := record(t, res, "a1"); a1.FirstStart.Sub(at(200)) > time.Minute {
		t.Fatalf("a1 waited until %v for its own cells", a1.FirstStart)
	}
	if b2 := record(t, res, "b2"); b2.Preemptions != 1 {
		t.Fatalf("opportunistic b2 preempted %d times, want 1", b2.Preemptions)
	}
}

// When a guaranteed job cannot be placed even after stopping every
// opportunistic job (its tenant's cells are free, but the free GPUs are
// split across nodes), the jobs it stopped keep running.
func TestHiveDUnplaceableJobStopsNobody(t *testing.T) {
	res := run(t, simConfig(2, 4, map[string]float64{"a": 0.5, "b": 0.5}), mustPolicy(NewHiveD(HiveDConfig{NodeGPUs: 4}))(t),
		job("b1", "b", 2, 0, 9000),   // b's cells; node 1
		job("a0", "a", 4, 1, 100),    // a's cells; node 2, until about 110 s
		job("aX", "a", 2, 2, 5000),   // opportunistic: the rest of node 1
		job("b2", "b", 2, 150, 9000), // b's cells; node 2
		job("a1", "a", 4, 200, 100),  // a's cells are free, no node is
	)
	aX, a1 := record(t, res, "aX"), record(t, res, "a1")
	if !a1.FirstStart.After(at(300)) {
		t.Fatalf("a1 started at %v: the scenario does not split the free GPUs", a1.FirstStart)
	}
	if aX.Preemptions != 0 {
		t.Fatalf("opportunistic aX preempted %d times for a job that could not start", aX.Preemptions)
	}
}

// Stride scheduling's join rule: a tenant that becomes active joins at the
// smallest pass among the active tenants, so it is not owed the quanta it
// was away for: a newcomer alternates with the tenant already there
// instead of running alone until its pass catches up.
func TestGandivaFairNewcomerEarnsNoCredit(t *testing.T) {
	const q = 900 // the reference lease, the default quantum
	var bStart time.Time
	aRuns := 0 // quanta a's jobs were granted anew in the 4 after b1 first started
	p := &observer{Policy: mustPolicy(NewGandivaFair(GandivaFairConfig{}))(t),
		onTick: func(s *simulate.State, d simulate.Decision) {
			for _, g := range d.Grants {
				switch {
				case g.Job == "b1" && bStart.IsZero():
					bStart = s.Now
				case g.Job != "b1" && !g.Renew && !bStart.IsZero() && s.Now.Sub(bStart) < 4*q*time.Second:
					aRuns++
				}
			}
		}}
	// a's two jobs share one GPU, a quantum each, for 8 quanta; then b
	// joins.
	run(t, simConfig(1, 1, map[string]float64{"a": 1, "b": 1}), p,
		job("a1", "a", 1, 0, 20*q),
		job("a2", "a", 1, 0, 20*q),
		job("b1", "b", 1, 8*q+1, 20*q),
	)
	if aRuns < 1 {
		t.Fatalf("b1 ran alone for the 4 quanta after it first started at %v: it was credited its absence", bStart)
	}
}

// When the cluster it is given changes size, HiveD rebuilds its tenants'
// cells and a running guaranteed job takes back its cells where they still
// fit: it stays guaranteed, and does not become the first to be preempted.
func TestHiveDKeepsCellsWhenTheClusterGrows(t *testing.T) {
	h := mustPolicy(NewHiveD(HiveDConfig{}))(t)
	state := func(nodes int, running, pending []*simulate.JobState) *simulate.State {
		return hivedState(t, nodes, running, pending, false)
	}
	a1 := &simulate.JobState{Job: job("a1", "a", 4, 0, 1000), Status: simulate.Pending}
	d, err := h.Schedule(state(1, nil, []*simulate.JobState{a1}))
	if err != nil || len(d.Grants) != 1 || h.Opportunistic("a1") {
		t.Fatalf("first round: %+v, %v; a1 opportunistic %v, want a guaranteed start", d, err, h.Opportunistic("a1"))
	}
	a1.Status, a1.Placement = simulate.Running, d.Grants[0].Placement
	if _, err := h.Schedule(state(2, []*simulate.JobState{a1}, nil)); err != nil {
		t.Fatal(err)
	}
	if h.Opportunistic("a1") {
		t.Fatal("a1 lost its cells when the cluster grew")
	}
}

// A job larger than a node cell needs wholly free node cells: a node cell
// with some GPUs in use does not count as one, however large it is.
func TestHiveDLargeJobNeedsWhollyFreeNodeCells(t *testing.T) {
	vc := &hivedVC{cap: []int{8, 8}, free: []int{4, 4}}
	if uses, ok := vc.alloc(12, 8); ok {
		t.Fatalf("a 12-GPU job took %v from 8 free GPUs in two half-used node cells", uses)
	}
	vc = &hivedVC{cap: []int{8, 8}, free: []int{4, 8}}
	if _, ok := vc.alloc(12, 8); !ok || vc.free[0] != 0 || vc.free[1] != 0 {
		t.Fatalf("a 12-GPU job on a wholly free node cell and a half-used one: ok %v, free %v, want true and [0 0]", ok, vc.free)
	}
}

// A tenant whose weight is not a positive finite number gets no GPUs; the
// others share the cluster.
func TestCapacitiesGiveNothingToUnweightedTenants(t *testing.T) {
	got := capacities(map[string]float64{"a": 1, "b": 0, "c": -1, "d": math.NaN(), "e": math.Inf(1)}, 8)
	want := map[string]int{"a": 8, "b": 0, "c": 0, "d": 0, "e": 0}
	if !maps.Equal(got, want) {
		t.Fatalf("capacities = %v, want %v", got, want)
	}
}

// A queue without capacity (its share rounded down to no GPU) sorts after
// every queue with some, whatever the names: with Elastic it runs only on
// GPUs the others leave idle.
func TestYARNCSQueueWithoutCapacityGoesLast(t *testing.T) {
	quotas := map[string]float64{"a": 0.1, "y": 1, "z": 1} // on 2 GPUs: a 0, y 1, z 1
	if c := capacities(quotas, 2); c["a"] != 0 || c["y"] != 1 || c["z"] != 1 {
		t.Fatalf("capacities %v, want a 0, y 1, z 1", c)
	}
	res := run(t, simConfig(1, 2, quotas), NewYARNCS(YARNConfig{Elastic: true}),
		job("a1", "a", 1, 0, 1000),
		job("y1", "y", 1, 0, 1000),
		job("z1", "z", 1, 0, 1000),
	)
	if got := record(t, res, "a1").FirstStart; !got.After(t0) {
		t.Fatalf("a1, of the queue without capacity, started at %v while y and z wanted every GPU", got)
	}
}

// AlloX gives the cluster to its order while any GPU is free: a one-GPU
// job takes the last free GPU.
func TestAlloXFillsTheLastGPU(t *testing.T) {
	res := run(t, simConfig(1, 2, map[string]float64{"a": 1}), mustPolicy(NewAlloX(AlloXConfig{Alpha: 1}))(t),
		job("a1", "a", 1, 0, 100),
		job("a2", "a", 1, 0, 200),
	)
	for _, id := range []string{"a1", "a2"} {
		if got := record(t, res, id).FirstStart; !got.Equal(t0) {
			t.Errorf("%s first started at %v, want t0: two GPUs for two one-GPU jobs", id, got)
		}
	}
}

// When the cluster it is given shrinks, a running job whose cell is gone
// becomes opportunistic, and the round goes on.
func TestHiveDShrinkingClusterDropsGoneCells(t *testing.T) {
	h := mustPolicy(NewHiveD(HiveDConfig{}))(t)
	state := func(nodes int, running, pending []*simulate.JobState) *simulate.State {
		return hivedState(t, nodes, running, pending, true)
	}
	a0 := &simulate.JobState{Job: job("a0", "a", 8, 0, 1000), Status: simulate.Pending}
	a1 := &simulate.JobState{Job: job("a1", "a", 8, 0, 1000), Status: simulate.Pending}
	// Two node cells: a0 takes the first, a1 the second.
	if d, err := h.Schedule(state(2, nil, []*simulate.JobState{a0, a1})); err != nil || len(d.Grants) != 2 {
		t.Fatalf("first round: %+v, %v", d, err)
	}
	// One node left, a1 on it: the second cell is gone.
	if _, err := h.Schedule(state(1, []*simulate.JobState{a1}, nil)); err != nil {
		t.Fatal(err)
	}
	if !h.Opportunistic("a1") {
		t.Fatal("a1 kept a cell the smaller cluster does not have")
	}
}

// With EstimateError ε a job's remaining time is read as Remaining × (1 +
// ε·u), u in [−1, 1] from the job id: across jobs some are read short and
// some long, none by more than ε.
func TestThemisEstimateErrorIsTwoSided(t *testing.T) {
	th := mustPolicy(NewThemis(ThemisConfig{Fairness: 0.8, EstimateError: 0.5, Seed: 7}))(t)
	short, long := 0, 0
	for i := range 200 {
		js := &simulate.JobState{Job: job(fmt.Sprint("j", i), "a", 1, 0, 100), Remaining: 40 * time.Second}
		// Waited 300 s, 40 s to go, 100 s alone: exactly 3.4, read in
		// [3.2, 3.6] with ε = 0.5.
		switch rho := th.Rho(js, at(300)); {
		case rho < 3.2 || rho > 3.6:
			t.Fatalf("ρ of %s = %v, outside [3.2, 3.6]", js.Job.ID, rho)
		case rho < 3.4:
			short++
		case rho > 3.4:
			long++
		}
	}
	if short < 50 || long < 50 {
		t.Fatalf("of 200 jobs %d read short and %d long, want both sides well represented", short, long)
	}
}

// Between quantum boundaries Gandiva_fair fills freed GPUs in pass order;
// when the job chosen cannot be placed (its GPUs are free by count but
// split across nodes), the waiting jobs that fit take them instead.
func TestGandivaFairFillsAroundAnUnplaceableGang(t *testing.T) {
	// r1 holds 3 GPUs of node 1, r2 2 of node 2: 1 + 2 free. p1 (3 GPUs)
	// is chosen and cannot be placed; p2 and p3 fit exactly.
	p2, p3 := fragmented(t, mustPolicy(NewGandivaFair(GandivaFairConfig{}))(t), 0, 5000)
	if p2.FirstStart.Sub(at(20)) > time.Minute || !p3.FirstStart.Equal(p2.FirstStart) {
		t.Fatalf("p2 and p3 first started at %v and %v, want both at their arrival, %v", p2.FirstStart, p3.FirstStart, at(20))
	}
}

// hivedState is one round's state for tenant a on nodes 8-GPU nodes: each
// running job holds its placement, or, with place, is placed afresh on
// the new cluster and running there.
func hivedState(t *testing.T, nodes int, running, pending []*simulate.JobState, place bool) *simulate.State {
	t.Helper()
	ns := make([]placement.Node, nodes)
	for i := range ns {
		ns[i] = placement.Node{ID: fmt.Sprint("n", i), GPUs: 8}
	}
	cl, err := placement.NewCluster(ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, js := range running {
		pl := js.Placement
		if place {
			if pl, err = cl.Place(js.Job.GPUs); err != nil {
				t.Fatal(err)
			}
			js.Status, js.Placement = simulate.Running, pl
		}
		if err := cl.Allocate(js.Job.ID, pl); err != nil {
			t.Fatal(err)
		}
	}
	return &simulate.State{Now: t0, Cluster: cl, Quotas: map[string]float64{"a": 1}, Capacity: 8 * nodes, Running: running, Pending: pending}
}

// fragmented runs p on two 4-GPU nodes where r1 (3 GPUs, from 0) and r2 (2
// GPUs, from r2At) run for long, leaving 1 + 2 GPUs free, and p1 (3 GPUs),
// p2 (1) and p3 (2) arrive at 20 s; it fails unless p1, which no node can
// hold, starts after p2, and returns p2's and p3's records.
func fragmented(t *testing.T, p simulate.Policy, r2At, long int) (p2, p3 metrics.JobRecord) {
	t.Helper()
	res := run(t, simConfig(2, 4, map[string]float64{"a": 1}), p,
		job("r1", "a", 3, 0, long),
		job("r2", "a", 2, r2At, long),
		job("p1", "a", 3, 20, 100),
		job("p2", "a", 1, 20, 100),
		job("p3", "a", 2, 20, 100),
	)
	p1 := record(t, res, "p1")
	p2, p3 = record(t, res, "p2"), record(t, res, "p3")
	if !p1.FirstStart.After(p2.FirstStart) {
		t.Fatalf("p1 started at %v, not after p2 at %v: the scenario has no fragmentation", p1.FirstStart, p2.FirstStart)
	}
	return p2, p3
}
