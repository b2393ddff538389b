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

// allocations lists a cluster's allocations, to compare before and after.
func allocations(c *placement.Cluster) map[string]placement.Placement {
	m := map[string]placement.Placement{}
	for id, p := range c.Allocations() {
		m[id] = p
	}
	return m
}

// drawNodes draws a few nodes of mixed sizes.
func drawNodes(t *rapid.T) []placement.Node {
	var nodes []placement.Node
	for i := range rapid.IntRange(1, 5).Draw(t, "nodes") {
		nodes = append(nodes, placement.Node{ID: fmt.Sprintf("n%d", i), GPUs: rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "gpus")})
	}
	return nodes
}

// drawRunning places a few jobs on s's cluster (and its free counts, if
// any), some of them expiring, and returns their ids.
func drawRunning(t *rapid.T, s *State) []string {
	c := s.Cluster
	var ids []string
	for i := range rapid.IntRange(0, 12).Draw(t, "jobs") {
		d := rapid.IntRange(1, c.Capacity()).Draw(t, "demand")
		p, err := c.Place(d)
		if err != nil {
			continue
		}
		id := fmt.Sprintf("j%02d", i)
		if err := c.Allocate(id, p); err != nil {
			t.Fatal(err)
		}
		if s.nodes != nil {
			s.nodes.change(p, nil, -1)
		}
		ids = append(ids, id)
		if rapid.Bool().Draw(t, "expiring") {
			s.Expiring = append(s.Expiring, &JobState{Job: trace.Job{ID: id, GPUs: d}, Status: Running, Placement: p})
		}
	}
	return ids
}

// drawCountedState draws a consolidated cluster of mixed node sizes with
// the engine's free counts and a few running jobs on it (see drawRunning).
func drawCountedState(t *rapid.T) (*State, []string) {
	nodes := drawNodes(t)
	c, err := placement.NewCluster(nodes)
	if err != nil {
		t.Fatal(err)
	}
	s := &State{Cluster: c, nodes: newNodeFree(nodes)}
	return s, drawRunning(t, s)
}

// TestPropertyFitsReleasedMatchesRelease: the optimistic look that reads
// node counts answers exactly as releasing the expiring jobs and asking the
// cluster, on clusters of mixed node sizes, consolidated or not, and leaves
// the cluster as it was.
func TestPropertyFitsReleasedMatchesRelease(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := drawNodes(t)
		var opts []placement.Option
		if rapid.Bool().Draw(t, "spread") {
			opts = append(opts, placement.AllowSpread())
		}
		c, err := placement.NewCluster(nodes, opts...)
		if err != nil {
			t.Fatal(err)
		}
		s := &State{Cluster: c}
		drawRunning(t, s)
		if len(s.Expiring) == 0 {
			t.Skip("no expiring job")
		}
		ds := map[int]bool{}
		for range rapid.IntRange(0, 4).Draw(t, "pending") {
			ds[rapid.IntRange(1, c.Capacity()).Draw(t, "pendingDemand")] = true
		}
		s.PendingDemands = slices.Sorted(maps.Keys(ds))
		expGPUs := 0
		for _, r := range s.Expiring {
			expGPUs += r.Job.GPUs
		}
		before := allocations(c)
		var a Astraea
		got, err := a.fitsReleased(s, expGPUs)
		if err != nil {
			t.Fatal(err)
		}
		want, err := fitsReleasedSlow(s)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("fitsReleased = %v, releasing and asking the cluster says %v (demands %v)", got, want, s.PendingDemands)
		}
		// The engine's per-node free counts give the same answer as
		// reading the nodes from the cluster.
		s.nodes = newNodeFree(nodes)
		for _, p := range before {
			s.nodes.change(p, nil, -1)
		}
		if got, err := a.fitsReleased(s, expGPUs); err != nil || got != want {
			t.Fatalf("fitsReleased with free counts = %v (%v), releasing and asking the cluster says %v (demands %v)", got, err, want, s.PendingDemands)
		}
		if after := allocations(c); !maps.EqualFunc(before, after, placement.Placement.Equal) {
			t.Fatalf("allocations changed:\n%v\n%v", before, after)
		}
		if err := c.Check(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestPropertyFreeViewCountsTheReleasedJobs: renewsFirst's view of the
// cluster with the expiring jobs of some tenants let go (none, all, or
// some, which freeView computes three ways) has the free GPUs, and the
// largest free node, that the nodes' free counts plus those jobs' GPUs
// give.
func TestPropertyFreeViewCountsTheReleasedJobs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, _ := drawCountedState(t)
		c := s.Cluster
		var a Astraea
		tenants := rapid.IntRange(1, 3).Draw(t, "tenants")
		for _, r := range s.Expiring {
			r.tenant = int32(rapid.IntRange(0, tenants-1).Draw(t, "tenant"))
			i := slices.IndexFunc(a.credits, func(c tenantCredit) bool { return c.tenant == r.tenant })
			if i < 0 {
				i = len(a.credits)
				a.credits = append(a.credits, tenantCredit{tenant: r.tenant})
			}
			a.creditOf = append(a.creditOf, int32(i))
		}
		let := make([]bool, tenants)
		for i := range let {
			let[i] = rapid.Bool().Draw(t, "released")
		}
		got := a.freeView(s, a.credits, func(c *tenantCredit) bool { return let[c.tenant] })
		free := map[string]int{}
		for n := range c.Nodes() {
			free[n.ID] = n.Free
		}
		want := freeView{total: c.Free()}
		for _, r := range s.Expiring {
			if let[r.tenant] {
				for _, sl := range r.Placement.Slots {
					free[sl.Node] += len(sl.GPUs)
					want.total += len(sl.GPUs)
				}
			}
		}
		for _, f := range free {
			want.largest = max(want.largest, f)
		}
		if got != want {
			t.Fatalf("freeView = %+v, want %+v (released %v)", got, want, let)
		}
	})
}

// TestPropertyBoundedSelectionIsExact runs crowded random workloads, where
// many suspended jobs of one tenant and demand wait for a few GPUs through
// many short leases (so the trimmer keeps few of a large group and bounds
// the others' ρ_job from earlier rounds), with and without the fast paths:
// the runs must be identical.
func TestPropertyBoundedSelectionIsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg, jobs := genCrowdedWorkload(t)
		sameAsExhaustive(t, cfg, jobs)
	})
}

// genCrowdedWorkload draws many suspended jobs of two tenants and a few
// demands waiting for a few GPUs through many short leases.
func genCrowdedWorkload(t *rapid.T) (Config, []trace.Job) {
	gpn := rapid.SampledFrom([]int{2, 4}).Draw(t, "gpusPerNode")
	tenants := []string{"a", "b"}
	cfg := testConfig(rapid.IntRange(1, 2).Draw(t, "nodes"), gpn, tenants...)
	cfg.Quotas["b"] = float64(rapid.IntRange(1, 3).Draw(t, "weightB"))
	cfg.Lease = time.Duration(rapid.SampledFrom([]int{20, 30, 60}).Draw(t, "lease")) * time.Second
	cfg.Checkpoint = time.Duration(rapid.IntRange(0, 15).Draw(t, "ckpt")) * time.Second
	cfg.ColdStart = time.Duration(rapid.IntRange(0, 15).Draw(t, "cold")) * time.Second
	cfg.CheckpointOnRenew = rapid.Bool().Draw(t, "ckptOnRenew")
	cfg.Intervals = []time.Duration{10 * time.Minute}
	cfg.CheckEvery = 64
	var jobs []trace.Job
	sub := 0
	for i := range rapid.IntRange(4, 30).Draw(t, "jobs") {
		sub += rapid.IntRange(0, 20).Draw(t, "gap")
		jobs = append(jobs, trace.Job{
			ID:       fmt.Sprintf("j%02d", i),
			Tenant:   rapid.SampledFrom(tenants).Draw(t, "tenant"),
			GPUs:     rapid.IntRange(1, 2).Draw(t, "gpus"),
			Submit:   ts(sub),
			Duration: time.Duration(rapid.IntRange(30, 600).Draw(t, "dur")) * time.Second,
			Weight:   float64(rapid.IntRange(1, 2).Draw(t, "weight")),
		})
	}
	return cfg, jobs
}

// reversed lists its policy's grants in reverse order: the same decision.
type reversed struct{ Policy }

func (r reversed) Schedule(s *State) (Decision, error) {
	d, err := r.Policy.Schedule(s)
	slices.Reverse(d.Grants)
	slices.Reverse(d.Preempt)
	return d, err
}

// TestPropertyRunIgnoresGrantOrder: the order in which a decision lists its
// grants and preemptions does not change the run (same-instant events are
// handled in job order, not in the order they were queued), so a fast path
// may list its renewals in any order.
func TestPropertyRunIgnoresGrantOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg, jobs := genWorkload(t)
		p, _ := NewAstraea(DefaultAstraeaOptions())
		q, _ := NewAstraea(DefaultAstraeaOptions())
		a, err := Run(cfg, src(jobs...), p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(cfg, src(jobs...), reversed{q})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Run, b.Run) {
			t.Fatalf("runs differ with the grants reversed:\n%+v\n%+v", a.Run.Jobs, b.Run.Jobs)
		}
	})
}

// TestPropertyInPlaceAnswersAsTheCluster: the round's Placer answers a
// placement, with or without the expiring jobs' GPUs, exactly as the
// engine's consolidated cluster does (the same placement, or the same
// no-fit error), after the round has allocated and released through it.
func TestPropertyInPlaceAnswersAsTheCluster(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, ids := drawCountedState(t)
		c := s.Cluster
		var p inPlace
		p.reset(s)
		// The round's own moves: some jobs released, some placed.
		for _, id := range ids {
			if rapid.Bool().Draw(t, "release") && !slices.ContainsFunc(s.Expiring, func(r *JobState) bool { return r.Job.ID == id }) {
				if _, err := p.Release(id); err != nil {
					t.Fatal(err)
				}
			}
		}
		for i := range rapid.IntRange(0, 3).Draw(t, "grants") {
			q, err := p.Place(rapid.IntRange(1, c.Capacity()).Draw(t, "grant"))
			if err != nil {
				continue
			}
			if err := p.Allocate(fmt.Sprintf("g%d", i), q); err != nil {
				t.Fatal(err)
			}
		}
		var look []string
		for _, r := range s.Expiring {
			if rapid.Bool().Draw(t, "undecided") {
				look = append(look, r.Job.ID)
			}
		}
		same := func(what string, got, want placement.Placement, gerr, werr error) {
			if !reflect.DeepEqual(gerr, werr) || !got.Equal(want) {
				t.Fatalf("%s: got %v (%v), the cluster says %v (%v)", what, got, gerr, want, werr)
			}
		}
		for d := 1; d <= c.Capacity()+1; d++ {
			got, gerr := p.Place(d)
			want, werr := c.Place(d)
			same(fmt.Sprintf("Place(%d)", d), got, want, gerr, werr)
			got, gerr = p.PlaceWithout(d, look)
			want, werr = c.PlaceWithout(d, look)
			same(fmt.Sprintf("PlaceWithout(%d, %v)", d, look), got, want, gerr, werr)
		}
		if err := c.Check(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRenewsFirstWaitsForTheTenantsOwnJobs: a tenant far below the others
// whose lease ends while one of its own new jobs waits is not served by
// renewals first: its new job comes first in its Phase 2 order and takes
// the expiring job's GPUs, as the exhaustive round decides.
func TestRenewsFirstWaitsForTheTenantsOwnJobs(t *testing.T) {
	// b holds the node alone until a arrives (5400 s); a1 takes it, b1 is
	// suspended with a high ρ. a2 arrives at 5500; at a1's lease end
	// (6310 s) a's ρ, even pre-credited, is below b's, yet a2 must win.
	cfg := testConfig(1, 8, "a", "b")
	jobs := []trace.Job{tj("b1", "b", 8, 0, 20000), tj("a1", "a", 8, 5000, 5000), tj("a2", "a", 8, 5500, 1000)}
	a := runExhaustiveToo(t, cfg, jobs, DefaultAstraeaOptions())
	if got := jobByID(t, a, "a2").FirstStart.Sub(t0); got != sec(6320) {
		t.Errorf("a2 starts at %v, want 6320s (a1 checkpointed at its lease end)", got)
	}
}

// TestRenewsFirstReadsTheFirstPick: a tenant matters to the shortcut by
// its first pick (its earliest new job), not by its last: here a's first
// job fits where c's lease ends and takes c's GPUs; a's later one could
// never fit.
func TestRenewsFirstReadsTheFirstPick(t *testing.T) {
	// c1 and b1 hold one 4-GPU node each; c1's lease ends first (900 s).
	// a1 (4 GPUs) and a2 (8 GPUs) wait; a has the lowest ρ.
	cfg := testConfig(2, 4, "a", "b", "c")
	jobs := []trace.Job{tj("c1", "c", 4, 0, 100000), tj("b1", "b", 4, 10, 100000), tj("a1", "a", 4, 100, 1000), tj("a2", "a", 8, 200, 1000)}
	a := runExhaustiveToo(t, cfg, jobs, DefaultAstraeaOptions())
	if got := jobByID(t, a, "a1").FirstStart.Sub(t0); got != sec(910) {
		t.Errorf("a1 starts at %v, want 910s (c1 checkpointed at its lease end)", got)
	}
}

// genVariedWorkload draws a workload beyond genWorkload's uniform
// clusters, where the fast paths' arguments must hold as well: nodes of
// different sizes (one of them possibly larger than the rest put
// together), under topology labels or not; demands up to the cluster and
// past it, so gangs span nodes or never fit; leases shorter than the
// tick, equal to it or the default (Lease 0); submissions at equal times
// and on tick boundaries; zero-length jobs; job weights and tenant
// weights; checkpoint iterations; admission at submission or at the tick.
func genVariedWorkload(t *rapid.T) (Config, []trace.Job) {
	var nodes []placement.Node
	capacity := 0
	racks := rapid.Bool().Draw(t, "racks")
	for i := range rapid.IntRange(1, 4).Draw(t, "nodes") {
		n := placement.Node{ID: fmt.Sprintf("n%d", i), GPUs: rapid.SampledFrom([]int{1, 2, 3, 4, 8, 8, 16}).Draw(t, "gpus")}
		if racks {
			n.Topology = []string{fmt.Sprintf("r%d", rapid.IntRange(0, 1).Draw(t, "rack"))}
		}
		capacity += n.GPUs
		nodes = append(nodes, n)
	}
	var tenants []string
	for i := range rapid.IntRange(1, 4).Draw(t, "tenants") {
		tenants = append(tenants, fmt.Sprintf("t%d", i))
	}
	cfg := testConfig(1, 1, tenants...)
	cfg.Nodes = nodes
	for _, tn := range tenants {
		cfg.Quotas[tn] = rapid.SampledFrom([]float64{0.5, 1, 2, 3}).Draw(t, "quota")
	}
	cfg.Interval = time.Duration(rapid.SampledFrom([]int{10, 30}).Draw(t, "interval")) * time.Second
	cfg.Lease = time.Duration(rapid.SampledFrom([]int{0, 5, 10, 20, 60, 900}).Draw(t, "lease")) * time.Second
	// Overheads below a third of the lease each, so that every lease
	// makes progress and every run ends.
	most := 40
	if cfg.Lease > 0 {
		most = min(most, int(cfg.Lease.Seconds())/3)
	}
	cfg.ColdStart = time.Duration(rapid.IntRange(0, most).Draw(t, "cold")) * time.Second
	cfg.Checkpoint = time.Duration(rapid.IntRange(0, min(15, most)).Draw(t, "ckpt")) * time.Second
	cfg.CheckpointOnRenew = rapid.Bool().Draw(t, "ckptOnRenew")
	if most >= 7 && rapid.Bool().Draw(t, "iterations") {
		cfg.Iteration = time.Duration(rapid.IntRange(1, most/7).Draw(t, "iteration")) * time.Second
	}
	cfg.Metrics = rapid.SampledFrom([]ledger.Mode{ledger.QuotaShare, ledger.DemandAware}).Draw(t, "metrics")
	cfg.Intervals = []time.Duration{10 * time.Minute}
	cfg.CheckEvery = 64
	var jobs []trace.Job
	sub := 0
	for i := range rapid.IntRange(1, 40).Draw(t, "jobs") {
		// Often nothing or whole ticks between submissions.
		sub += rapid.SampledFrom([]int{0, 0, 10, 30}).Draw(t, "tick gap") + rapid.IntRange(0, 60).Draw(t, "gap")*rapid.IntRange(0, 1).Draw(t, "odd")
		dur := rapid.IntRange(0, 2000).Draw(t, "dur")
		if rapid.IntRange(0, 9).Draw(t, "zero") == 0 {
			dur = 0
		}
		jobs = append(jobs, trace.Job{
			ID:       fmt.Sprintf("j%02d", i),
			Tenant:   rapid.SampledFrom(tenants).Draw(t, "tenant"),
			GPUs:     rapid.IntRange(1, capacity+1).Draw(t, "demand"),
			Submit:   ts(sub),
			Duration: time.Duration(dur) * time.Second,
			Weight:   rapid.SampledFrom([]float64{0, 0, 1, 2, 0.5}).Draw(t, "weight"),
		})
	}
	// Drawn last, so that the draws above replay as before.
	cfg.Admit = rapid.SampledFrom([]Admission{AdmitOnSubmit, AdmitAtTick}).Draw(t, "admit")
	return cfg, jobs
}

// TestPropertyFastPathsOnVariedWorkloads runs every ASTRAEA variant (Eq. 16
// and Eq. 8 accounts, single-level, no pre-credit) on varied workloads with
// and without its fast paths: the runs must be identical.
func TestPropertyFastPathsOnVariedWorkloads(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg, jobs := genVariedWorkload(t)
		o := rapid.SampledFrom(astraeaVariants()).Draw(t, "variant")
		runExhaustiveToo(t, cfg, jobs, o)
	})
}

// TestPropertyEngineShortcutsAreExact runs every ASTRAEA variant on varied
// workloads with the engine's shortcuts (a renewal of every expiring job
// applied without looking the jobs up; running jobs' node numbers kept
// with their states; the running and pending sets in no particular order;
// the lease ends of one time handled in one step) and without them
// (Config.longWay): results and counts must be identical.
func TestPropertyEngineShortcutsAreExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg, jobs := genVariedWorkload(t)
		o := rapid.SampledFrom(astraeaVariants()).Draw(t, "variant")
		if short, long := runTheLongWayToo(t, cfg, jobs, o); !reflect.DeepEqual(short.Run, long.Run) || short.Stats != long.Stats {
			t.Fatalf("runs with and without the engine's shortcuts differ:\n%+v\n%+v", short.Stats, long.Stats)
		}
	})
}

// renewsEarly renews every running job at every tick, before its lease
// ends as well as after, and grants waiting jobs of one GPU while GPUs are
// free: its renewals drop lease ends that are still queued, which
// ASTRAEA's (of expiring jobs only) never do.
type renewsEarly struct{ lease time.Duration }

func (renewsEarly) Name() string { return "renews-early" }

func (r renewsEarly) Schedule(s *State) (Decision, error) {
	var d Decision
	for _, js := range s.Running {
		if js.Status == Running {
			d.Grants = append(d.Grants, Grant{Job: js.Job.ID, Lease: r.lease, Renew: true})
		}
	}
	free := s.Cluster.Free()
	for _, js := range s.Pending {
		if js.Job.GPUs <= free {
			free -= js.Job.GPUs
			d.Grants = append(d.Grants, Grant{Job: js.Job.ID, Lease: r.lease})
		}
	}
	return d, nil
}

// TestPropertyEarlyRenewalsTheLongWay: a policy that renews running jobs
// before their lease ends runs the same with the engine's shortcuts and
// without them (Config.longWay), which takes every renewed job's queued
// lease end out of the queue where the shortcut skips the jobs that have
// none.
func TestPropertyEarlyRenewalsTheLongWay(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := testConfig(rapid.IntRange(1, 2).Draw(t, "nodes"), 2, "a", "b")
		cfg.Lease = time.Duration(rapid.SampledFrom([]int{20, 30, 60}).Draw(t, "lease")) * time.Second
		cfg.Checkpoint = time.Duration(rapid.IntRange(0, 15).Draw(t, "ckpt")) * time.Second
		cfg.ColdStart = time.Duration(rapid.IntRange(0, 15).Draw(t, "cold")) * time.Second
		cfg.CheckpointOnRenew = rapid.Bool().Draw(t, "ckptOnRenew")
		cfg.CheckEvery = 16
		var jobs []trace.Job
		sub := 0
		for i := range rapid.IntRange(2, 20).Draw(t, "jobs") {
			sub += rapid.IntRange(0, 40).Draw(t, "gap")
			jobs = append(jobs, trace.Job{ID: fmt.Sprintf("j%02d", i), Tenant: rapid.SampledFrom([]string{"a", "b"}).Draw(t, "tenant"),
				GPUs: 1, Submit: ts(sub), Duration: time.Duration(rapid.IntRange(10, 300).Draw(t, "dur")) * time.Second})
		}
		var res [2]*Result
		for i := range res {
			c := cfg
			c.longWay = i == 1
			r, err := Run(c, src(jobs...), renewsEarly{lease: cfg.Lease})
			if err != nil {
				t.Fatal(err)
			}
			res[i] = r
		}
		if !reflect.DeepEqual(res[0].Run, res[1].Run) || res[0].Stats != res[1].Stats {
			t.Fatalf("runs with and without the engine's shortcuts differ:\n%+v\n%+v", res[0].Stats, res[1].Stats)
		}
	})
}

// runTheLongWayToo runs jobs under ASTRAEA with options o, with the
// engine's shortcuts and without them (Config.longWay).
func runTheLongWayToo(t *rapid.T, cfg Config, jobs []trace.Job, o AstraeaOptions) (short, long *Result) {
	var res [2]*Result
	lw := cfg
	lw.longWay = true
	for i, c := range []Config{cfg, lw} {
		p, _ := NewAstraea(o)
		r, err := Run(c, src(jobs...), p)
		if err != nil {
			t.Fatal(err)
		}
		res[i] = r
	}
	return res[0], res[1]
}

// TestPropertyRenewalKeepsNoStaleTime: a renewal that pauses a job
// replaces its completion with a later one and keeps no stale time to
// step on when no tenant interval ends in between; with several short
// interval lengths, whose closings interleave, the run must be the same
// as one that keeps every stale time (Config.longWay), tenant intervals
// in the same order included.
func TestPropertyRenewalKeepsNoStaleTime(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg, jobs := genVariedWorkload(t)
		// Short leases, each renewal pausing the job for a checkpoint
		// (overheads below a third of the lease, so that runs end).
		cfg.Lease = time.Duration(rapid.SampledFrom([]int{15, 30, 60}).Draw(t, "renewedLease")) * time.Second
		cfg.ColdStart = min(cfg.ColdStart, cfg.Lease/3)
		cfg.Checkpoint = time.Duration(rapid.IntRange(1, int(cfg.Lease.Seconds())/3).Draw(t, "renewalCkpt")) * time.Second
		cfg.Iteration = 0
		cfg.CheckpointOnRenew = true
		cfg.Intervals = nil
		for _, l := range rapid.SliceOfNDistinct(rapid.SampledFrom([]int{5, 7, 10, 20, 30, 60}), 1, 3, rapid.ID[int]).Draw(t, "intervals") {
			cfg.Intervals = append(cfg.Intervals, time.Duration(l)*time.Second)
		}
		if short, long := runTheLongWayToo(t, cfg, jobs, DefaultAstraeaOptions()); !reflect.DeepEqual(short.Run, long.Run) || short.Stats != long.Stats {
			t.Fatalf("runs with and without stale times kept at renewals differ:\n%+v\n%+v", short.Stats, long.Stats)
		}
	})
}

// TestRenewsIdleJobsAsThePolicy: at a tick at which nothing waits, the
// engine renews the expiring jobs itself, without calling ASTRAEA; the run
// must be the one in which the policy decides at every tick
// (Config.longWay), renewal checkpoints and counts included.
func TestRenewsIdleJobsAsThePolicy(t *testing.T) {
	job := func(id, tenant string, gpus, submit, dur int) trace.Job {
		return trace.Job{ID: id, Tenant: tenant, GPUs: gpus, Submit: ts(submit), Duration: sec(dur)}
	}
	for _, c := range []struct {
		name string
		jobs []trace.Job
	}{
		{"a lone job is renewed at every lease end", []trace.Job{job("j1", "a", 4, 0, 7200)}},
		{"leases that end apart are renewed at their own ticks", []trace.Job{job("j1", "a", 4, 0, 3600), job("j2", "b", 2, 30, 1800)}},
		{"a job that waits for the cluster ends the idle stretch", []trace.Job{
			job("j1", "a", 4, 0, 3600), job("j2", "b", 4, 25, 3600), job("j3", "b", 8, 1200, 600), job("j4", "a", 1, 2000, 60)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(1, 8, "a", "b")
			cfg.Lease = sec(60)
			cfg.Checkpoint = sec(5)
			cfg.CheckpointOnRenew = true
			var res [2]*Result
			for i, lw := range []bool{false, true} {
				cfg.longWay = lw
				p, _ := NewAstraea(DefaultAstraeaOptions())
				res[i] = mustRun(t, cfg, src(c.jobs...), p)
			}
			if !reflect.DeepEqual(res[0].Run, res[1].Run) || res[0].Stats != res[1].Stats {
				t.Fatalf("runs with and without the idle renewals differ:\n%+v\n%+v", res[0].Stats, res[1].Stats)
			}
			if res[0].Stats.Renewals == 0 {
				t.Fatalf("no renewal: %+v", res[0].Stats)
			}
		})
	}
}

// TestPropertyTenantIntervalsChangeNothingElse: the tenant intervals a run
// records are all it does with Config.Intervals (the command's run without
// overheads records none): the same workload run with other interval
// lengths, or none, has the same jobs, utilization, totals and counts.
func TestPropertyTenantIntervalsChangeNothingElse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg, jobs := genVariedWorkload(t)
		other := cfg
		other.Intervals = nil
		for _, l := range rapid.SliceOfNDistinct(rapid.SampledFrom([]int{7, 10, 60, 600, 3600}), 0, 3, rapid.ID[int]).Draw(t, "intervals") {
			other.Intervals = append(other.Intervals, time.Duration(l)*time.Second)
		}
		var res [2]*Result
		for i, c := range []Config{cfg, other} {
			p, _ := NewAstraea(DefaultAstraeaOptions())
			r, err := Run(c, src(jobs...), p)
			if err != nil {
				t.Fatal(err)
			}
			res[i] = r
		}
		a, b := res[0], res[1]
		a.Run.Tenants, b.Run.Tenants = nil, nil
		a.Run.BothModes, b.Run.BothModes = false, false
		if !reflect.DeepEqual(a.Run, b.Run) || a.Stats != b.Stats {
			t.Fatalf("runs with intervals %v and %v differ beyond their tenant intervals:\n%+v\n%+v", cfg.Intervals, other.Intervals, a.Stats, b.Stats)
		}
	})
}

// TestRenewalStaleTimesOfNestedIntervals: with tenant intervals that are
// multiples of the shortest (10 s and 20 s, the engine then looks at the
// shortest only), a job renewed every minute, each renewal pausing it
// and moving its completion, over every duration from 1 to 6 minutes:
// the runs must be the same as those that keep every stale time
// (Config.longWay), tenant intervals in the same order included.
func TestRenewalStaleTimesOfNestedIntervals(t *testing.T) {
	for _, intervals := range [][]time.Duration{{sec(10), sec(20)}, {sec(20), sec(10), sec(60)}} {
		for dur := 1; dur <= 360; dur++ {
			cfg := testConfig(1, 8, "a")
			cfg.Lease, cfg.Checkpoint, cfg.CheckpointOnRenew = sec(60), sec(5), true
			cfg.Intervals = intervals
			// A late job, so that the intervals meanwhile are recorded.
			jobs := []trace.Job{{ID: "j1", Tenant: "a", GPUs: 2, Submit: ts(3), Duration: sec(dur)}, {ID: "j2", Tenant: "a", GPUs: 1, Submit: ts(1000), Duration: sec(1)}}
			var res [2]*Result
			for i, lw := range []bool{false, true} {
				cfg.longWay = lw
				p, _ := NewAstraea(DefaultAstraeaOptions())
				res[i] = mustRun(t, cfg, src(jobs...), p)
			}
			if !reflect.DeepEqual(res[0].Run, res[1].Run) || res[0].Stats != res[1].Stats {
				t.Fatalf("intervals %v, a %d s job: runs with and without stale times kept differ:\n%+v\n%+v", intervals, dur, res[0].Stats, res[1].Stats)
			}
		}
	}
}
