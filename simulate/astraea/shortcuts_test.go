package astraea

import (
	"fmt"
	"github.com/astraea-sched/astraea/simulate"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/simulate/trace"
	"pgregory.net/rapid"
)

// TestPropertyBoundedSelectionIsExact runs crowded random workloads, where
// many suspended jobs of one tenant and demand wait for a few GPUs through
// many short leases (so the queue keeps few of a large group and bounds
// the others' ρ_job from earlier rounds), with and without the fast paths:
// the runs must be identical.
func TestPropertyBoundedSelectionIsExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg, jobs := genCrowdedWorkload(t)
		runTheLongWayToo(t, cfg, jobs, drawVariant(t))
	})
}

// genCrowdedWorkload draws many suspended jobs of two tenants and a few
// demands waiting for a few GPUs through many short leases.
func genCrowdedWorkload(t *rapid.T) (simulate.Config, []trace.Job) {
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
type reversed struct{ simulate.Policy }

func (r reversed) Schedule(s *simulate.State) (simulate.Decision, error) {
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
		cfg, jobs := genVariedWorkload(t)
		p, _ := New(DefaultOptions())
		q, _ := New(DefaultOptions())
		a, err := simulate.Run(cfg, src(jobs...), p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := simulate.Run(cfg, src(jobs...), reversed{q})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Run, b.Run) {
			t.Fatalf("runs differ with the grants reversed:\n%+v\n%+v", a.Run.Jobs, b.Run.Jobs)
		}
	})
}

// TestPropertyEngineShortcutsAreExact runs every ASTRAEA variant on varied
// workloads with the engine's shortcuts (a renewal of every expiring job
// applied without looking the jobs up; running jobs' node numbers kept
// with their states; the running and pending sets in no particular order;
// the lease ends of one time handled in one step) and without them
// (simulate.Config.Exhaustive): results and counts must be identical.
func TestPropertyEngineShortcutsAreExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg, jobs := genVariedWorkload(t)
		o := drawVariant(t)
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

func (r renewsEarly) Schedule(s *simulate.State) (simulate.Decision, error) {
	var d simulate.Decision
	for _, js := range s.Running {
		if js.Status == simulate.Running {
			d.Grants = append(d.Grants, simulate.Grant{Job: js.Job.ID, Lease: r.lease, Renew: true})
		}
	}
	free := s.Cluster.Free()
	for _, js := range s.Pending {
		if js.Job.GPUs <= free {
			free -= js.Job.GPUs
			d.Grants = append(d.Grants, simulate.Grant{Job: js.Job.ID, Lease: r.lease})
		}
	}
	return d, nil
}

// TestPropertyEarlyRenewalsTheLongWay: a policy that renews running jobs
// before their lease ends runs the same with the engine's shortcuts and
// without them (simulate.Config.Exhaustive), which takes every renewed job's queued
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
		var res [2]*simulate.Result
		for i := range res {
			c := cfg
			c.Exhaustive = i == 1
			r, err := simulate.Run(c, src(jobs...), renewsEarly{lease: cfg.Lease})
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
// engine's shortcuts and without them (simulate.Config.Exhaustive).
func runTheLongWayToo(t *rapid.T, cfg simulate.Config, jobs []trace.Job, o Options) (short, long *simulate.Result) {
	var res [2]*simulate.Result
	lw := cfg
	lw.Exhaustive = true
	for i, c := range []simulate.Config{cfg, lw} {
		p, _ := New(o)
		r, err := simulate.Run(c, src(jobs...), p)
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
// as one that keeps every stale time (simulate.Config.Exhaustive), tenant intervals
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
		if short, long := runTheLongWayToo(t, cfg, jobs, DefaultOptions()); !reflect.DeepEqual(short.Run, long.Run) || short.Stats != long.Stats {
			t.Fatalf("runs with and without stale times kept at renewals differ:\n%+v\n%+v", short.Stats, long.Stats)
		}
	})
}

// TestPropertyTenantIntervalsChangeNothingElse: the tenant intervals a run
// records are all it does with simulate.Config.Intervals (the command's run without
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
		var res [2]*simulate.Result
		for i, c := range []simulate.Config{cfg, other} {
			p, _ := New(DefaultOptions())
			r, err := simulate.Run(c, src(jobs...), p)
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
// (simulate.Config.Exhaustive), tenant intervals in the same order included.
func TestRenewalStaleTimesOfNestedIntervals(t *testing.T) {
	for _, intervals := range [][]time.Duration{{sec(10), sec(20)}, {sec(20), sec(10), sec(60)}} {
		for dur := 1; dur <= 360; dur++ {
			cfg := testConfig(1, 8, "a")
			cfg.Lease, cfg.Checkpoint, cfg.CheckpointOnRenew = sec(60), sec(5), true
			cfg.Intervals = intervals
			// A late job, so that the intervals meanwhile are recorded.
			jobs := []trace.Job{{ID: "j1", Tenant: "a", GPUs: 2, Submit: ts(3), Duration: sec(dur)}, {ID: "j2", Tenant: "a", GPUs: 1, Submit: ts(1000), Duration: sec(1)}}
			var res [2]*simulate.Result
			for i, lw := range []bool{false, true} {
				cfg.Exhaustive = lw
				p, _ := New(DefaultOptions())
				res[i] = mustRun(t, cfg, src(jobs...), p)
			}
			if !reflect.DeepEqual(res[0].Run, res[1].Run) || res[0].Stats != res[1].Stats {
				t.Fatalf("intervals %v, a %d s job: runs with and without stale times kept differ:\n%+v\n%+v", intervals, dur, res[0].Stats, res[1].Stats)
			}
		}
	}
}

// drawVariant draws a variant of the policy without reservations (which
// the engine calls at every tick), a new-job order and the authors'
// simulator's rules, each on or off.
func drawVariant(t *rapid.T) Options {
	o := DefaultOptions()
	o.NewJobs = rapid.SampledFrom([]NewJobOrder{FIFO, Smallest}).Draw(t, "newJobs")
	o.NoBackfill = rapid.Bool().Draw(t, "noBackfill")
	o.StarvedBelow = rapid.SampledFrom([]float64{0, 0.2, 1}).Draw(t, "starvedBelow")
	o.WaitFirstAfter = time.Duration(rapid.SampledFrom([]int{0, 60, 3600}).Draw(t, "waitFirst")) * time.Second
	o.DisplaceYoung = time.Duration(rapid.SampledFrom([]int{0, 0, 300}).Draw(t, "displaceYoung")) * time.Second
	return rapid.SampledFrom(Variants(o)[:4]).Draw(t, "variant")
}
