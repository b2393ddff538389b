package baselines

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate"
)

// handState builds a State on nodes of the given sizes, with each running
// job's placement allocated as given.
func handState(t *testing.T, now time.Time, nodeGPUs []int, quotas map[string]float64, running, pending []*simulate.JobState) *simulate.State {
	t.Helper()
	ns := make([]placement.Node, len(nodeGPUs))
	total := 0
	for i, g := range nodeGPUs {
		ns[i] = placement.Node{ID: "n" + string(rune('1'+i)), GPUs: g}
		total += g
	}
	cl, err := placement.NewCluster(ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, js := range running {
		if err := cl.Allocate(js.Job.ID, js.Placement); err != nil {
			t.Fatal(err)
		}
	}
	return &simulate.State{Now: now, Lease: 900 * time.Second, Cluster: cl, Quotas: quotas, Capacity: total, Running: running, Pending: pending}
}

func onNode(node string, gpus ...int) placement.Placement {
	return placement.Placement{Slots: []placement.Slot{{Node: node, GPUs: gpus}}}
}

// A running job whose lease ended and that the round does not select is
// preempted, even when the GPUs it held stay idle because the selected
// gang could not be placed: the leftover goes to the other candidates in
// ρ order, and a job not selected is not among those it renews.
func TestThemisPreemptsAnUnselectedJobAtItsLeaseEnd(t *testing.T) {
	th := mustPolicy(NewThemis(ThemisConfig{Fairness: 1}))(t)
	now := at(1000)
	// r ends its lease on n1 (2 GPUs); s1 and s2 keep theirs. Free once r
	// is on offer: 2 GPUs of n1 and 3 of n2. p (ρ 11) wants 4, which fit
	// by count but on no node; r (ρ 0.6) wants 2, more than the 1 GPU the
	// count leaves after p.
	r := &simulate.JobState{Job: job("r", "a", 2, 0, 10000), Status: simulate.Running, Placement: onNode("n1", 0, 1),
		LeaseEnd: now, Remaining: 5000 * time.Second}
	s1 := &simulate.JobState{Job: job("s1", "a", 2, 0, 10000), Status: simulate.Running, Placement: onNode("n1", 2, 3),
		LeaseEnd: at(5000), Remaining: 5000 * time.Second}
	s2 := &simulate.JobState{Job: job("s2", "a", 1, 0, 10000), Status: simulate.Running, Placement: onNode("n2", 0),
		LeaseEnd: at(5000), Remaining: 5000 * time.Second}
	p := &simulate.JobState{Job: job("p", "a", 4, 0, 100), Status: simulate.Pending, Remaining: 100 * time.Second}
	s := handState(t, now, []int{4, 4}, map[string]float64{"a": 1}, []*simulate.JobState{r, s1, s2}, []*simulate.JobState{p})
	s.Expiring = []*simulate.JobState{r}
	d, err := th.Schedule(s)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(d.Preempt, "r") || len(d.Grants) != 0 {
		t.Fatalf("decision %+v, want r preempted and nothing granted", d)

	}
}

// An opportunistic job stopped to make room for a guaranteed job that then
// goes elsewhere keeps running: c's o1 (started last, so stopped first)
// frees one GPU of n1, too few; o2 frees n2, where g goes; o1 was not
// needed.
func TestHiveDKeepsTheFirstVictimWhenNotNeeded(t *testing.T) {
	quotas := map[string]float64{"a": 1, "c": 0.001} // on 8 GPUs: a 8, c none
	res := run(t, simConfig(2, 4, quotas), mustPolicy(NewHiveD(HiveDConfig{NodeGPUs: 4}))(t),
		job("g0", "a", 3, 0, 1000),
		job("o2", "c", 4, 0, 1000),
		job("o1", "c", 1, 10, 1000),
		job("g", "a", 4, 20, 1000),
	)
	if got := record(t, res, "g").FirstStart.Sub(t0); got < 20*time.Second || got > 80*time.Second {
		t.Fatalf("g first started after %v, want at its submission (20 s) plus o2's checkpoint", got)
	}
	if o1, o2 := record(t, res, "o1"), record(t, res, "o2"); o1.Preemptions != 0 || o2.Preemptions == 0 {
		t.Fatalf("preemptions o1 %d, o2 %d; want o1 kept and o2 stopped for g", o1.Preemptions, o2.Preemptions)
	}
}

// A job larger than its tenant's quota runs opportunistically on idle
// GPUs, also when it takes every idle GPU.
func TestHiveDOpportunisticJobTakesEveryIdleGPU(t *testing.T) {
	h := mustPolicy(NewHiveD(HiveDConfig{}))(t)
	a1 := &simulate.JobState{Job: job("a1", "a", 8, 0, 1000), Status: simulate.Pending}
	d, err := h.Schedule(handState(t, t0, []int{8}, map[string]float64{"a": 0.5, "b": 0.5}, nil, []*simulate.JobState{a1}))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Grants) != 1 || d.Grants[0].Job != "a1" || !h.Opportunistic("a1") {
		t.Fatalf("decision %+v, a1 opportunistic %v; want a1 started opportunistically on the 8 idle GPUs", d, h.Opportunistic("a1"))
	}
}

// Round robin inside a tenant counts a suspended job's turn from when it
// was suspended: with one GPU and three jobs, the job that has not run yet
// goes before the one suspended at the last boundary.
func TestGandivaFairRoundRobinCountsFromTheSuspension(t *testing.T) {
	q := 900
	res := run(t, simConfig(1, 1, map[string]float64{"a": 1}), mustPolicy(NewGandivaFair(GandivaFairConfig{Quantum: time.Duration(q) * time.Second}))(t),
		job("a1", "a", 1, 0, 10*q), job("a2", "a", 1, 1, 10*q), job("a3", "a", 1, 2, 10*q))
	// a1 runs from t0, a2 from the first boundary; at the second, a3 (never
	// run) goes before a1 (suspended at the first).
	if got := record(t, res, "a3").FirstStart.Sub(t0); got < 2*time.Duration(q)*time.Second || got >= 3*time.Duration(q)*time.Second {
		t.Fatalf("a3 first started after %v, want at the second boundary %v (plus a checkpoint)", got, 2*q)
	}
}

// Tiresias grants no leases: it revisits its allocation at scheduling
// ticks, so every start, the work-conserving fill's included, has lease 0.
func TestTiresiasGrantsNoLease(t *testing.T) {
	p := &observer{Policy: mustPolicy(NewTiresias(DefaultTiresiasConfig()))(t)}
	var leased []simulate.Grant
	p.onTick = func(_ *simulate.State, d simulate.Decision) {
		for _, g := range d.Grants {
			if g.Lease != 0 {
				leased = append(leased, g)
			}
		}
	}
	// As in TestTiresiasFillsFreeGPUsExactly: p2 and p3 fill around p1.
	run(t, simConfig(2, 4, map[string]float64{"a": 1}), p,
		job("r1", "a", 3, 0, 1000),
		job("r2", "a", 2, 1, 1000),
		job("p1", "a", 3, 20, 100),
		job("p2", "a", 1, 20, 100),
		job("p3", "a", 2, 20, 100),
	)
	if len(leased) > 0 {
		t.Fatalf("grants with a lease: %+v", leased)
	}
}

// A running job preempted because it fell out of the chosen set stays
// preempted when a chosen job took its GPUs: the GPUs that a chosen gang
// could not use go to waiting jobs, not to a restart of the preempted job
// elsewhere.
func TestTiresiasDoesNotMoveAPreemptedJob(t *testing.T) {
	ti := mustPolicy(NewTiresias(TiresiasConfig{Thresholds: []float64{100}}))(t)
	running := func(id string, gpus, submit int, pl placement.Placement, attained time.Duration) *simulate.JobState {
		return &simulate.JobState{Job: job(id, "a", gpus, submit, 100000), Status: simulate.Running, Placement: pl, Attained: attained}
	}
	// r (2 GPUs, in the low queue after 1000 s) on n1 beside t1; t2 and t3
	// leave 2 and 1 GPUs of n2 and n3. p3 and p2 wait in the top queue.
	r := running("r", 2, 0, onNode("n1", 0, 1), 1000*time.Second)
	t1 := running("t1", 2, 1, onNode("n1", 2, 3), 0)
	t2 := running("t2", 2, 2, onNode("n2", 0, 1), 0)
	t3 := running("t3", 3, 3, onNode("n3", 0, 1, 2), 0)
	p3 := &simulate.JobState{Job: job("p3", "a", 3, 4, 100), Status: simulate.Pending}
	p2 := &simulate.JobState{Job: job("p2", "a", 2, 5, 100), Status: simulate.Pending}
	s := handState(t, at(10), []int{4, 4, 4}, map[string]float64{"a": 1}, []*simulate.JobState{r, t1, t2, t3}, []*simulate.JobState{p3, p2})
	d, err := ti.Schedule(s)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Preempt, []string{"r"}) || len(d.Grants) != 1 || d.Grants[0].Job != "p2" {
		t.Fatalf("decision %+v, want r preempted and p2 (on r's GPUs) its only grant", d)
	}
}

// Promotion counts any run since the last promotion, however short: a job
// below the top queue after 1 ns of running is due once it has waited
// PromoteKnob × 1 ns.
func TestTiresiasPromotesAfterTheShortestRun(t *testing.T) {
	ti := mustPolicy(NewTiresias(TiresiasConfig{Thresholds: []float64{1e-9}, PromoteKnob: 2}))(t)
	js := &simulate.JobState{Job: job("j", "a", 1, 0, 5000), Status: simulate.Pending, Attained: time.Nanosecond}
	ti.jobs["j"] = &tiresiasJob{lastStop: at(1000)}
	s := &simulate.State{Now: at(1000), Pending: []*simulate.JobState{js}}
	if got, want := ti.NextWakeup(s), at(1000).Add(2*time.Nanosecond); !got.Equal(want) {
		t.Fatalf("next wakeup %v, want %v: 2 × the 1 ns run", got, want)
	}
}

// A negative node cell size is refused, naming the field.
func TestHiveDRejectsNegativeNodeGPUs(t *testing.T) {
	_, err := NewHiveD(HiveDConfig{NodeGPUs: -8})
	var ce *ConfigError
	if !errors.Is(err, ErrConfig) || !errors.As(err, &ce) || ce.Field != "NodeGPUs" {
		t.Fatalf("NewHiveD(NodeGPUs -8) = %v, want ErrConfig naming NodeGPUs", err)
	}
}
