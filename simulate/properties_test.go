package simulate

import (
	"fmt"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/simulate/trace"
	"pgregory.net/rapid"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
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
	cfg.SpreadSlowdown = rapid.SampledFrom([]float64{1, 0.8, 0.5}).Draw(t, "spreadSlowdown")
	return cfg, jobs
}

// TestRunInvariants checks, on random workloads and random (valid) policy
// decisions, what every run must satisfy: every job ends (or is excluded),
// runs its full duration, never before its submission, holds its GPUs at
// least as long as it runs, its held time splits exactly into its run and
// overheads (a spread slowdown's included), and the ledger bills exactly
// the held GPU time.
func TestRunInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg, jobs := genWorkload(t)
		var p Policy
		switch rapid.IntRange(0, 1).Draw(t, "policy") {
		case 0:
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
		var heldGPUSeconds, spread float64
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
			if j.Preemptions == 0 && !cfg.CheckpointOnRenew && j.Held != j.Run+j.Spread {
				t.Fatalf("job %s never preempted but held %v for a run of %v and a spread slowdown of %v", j.ID, j.Held, j.Run, j.Spread)
			}
			if j.Held != j.Run+j.Checkpoint+j.ColdStart+j.Lost+j.Spread {
				t.Fatalf("job %s held %v, not its run and overheads %+v", j.ID, j.Held, j)
			}
			spread += j.Spread.Seconds() * float64(j.GPUs)
			heldGPUSeconds += j.Held.Seconds() * float64(j.GPUs)
		}
		if d := spread - r.Stats.SpreadGPUSeconds; d > 1e-6*max(1, spread) || d < -1e-6*max(1, spread) {
			t.Fatalf("jobs' spread slowdown %v GPU·s, stats %v", spread, r.Stats.SpreadGPUSeconds)
		}
		if cfg.SpreadSlowdown == 1 && spread != 0 {
			t.Fatalf("spread slowdown %v GPU·s without a slowdown", spread)
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
