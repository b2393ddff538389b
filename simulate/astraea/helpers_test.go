package astraea

import (
	"fmt"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/metrics"
	"github.com/astraea-sched/astraea/simulate/trace"
	"pgregory.net/rapid"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func src(jobs ...trace.Job) trace.Source { return trace.FromJobs(jobs) }

var t0 = time.Date(2020, 9, 7, 0, 0, 0, 0, time.UTC)

func sec(n int) time.Duration { return time.Duration(n) * time.Second }
func ts(n int) time.Time      { return t0.Add(sec(n)) }

func tj(id, tenant string, gpus int, submit, dur int) trace.Job {
	return trace.Job{ID: id, Tenant: tenant, GPUs: gpus, Submit: ts(submit), Duration: sec(dur)}
}

// testConfig is n nodes of gpn GPUs, the tenants of equal weight, with the
// engine's invariants checked at every tick and checkpoints charged only
// where a lease is not renewed.
func testConfig(nodes, gpn int, tenants ...string) simulate.Config {
	q := map[string]float64{}
	for _, t := range tenants {
		q[t] = 1
	}
	cfg := simulate.DefaultConfig(nodes, gpn, q)
	cfg.Check = true
	cfg.CheckEvery = 1
	cfg.CheckpointOnRenew = false
	return cfg
}

func mustRun(t *testing.T, cfg simulate.Config, s trace.Source, p simulate.Policy) *simulate.Result {
	t.Helper()
	r, err := simulate.Run(cfg, s, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func jobByID(t *testing.T, r *simulate.Result, id string) metrics.JobRecord {
	t.Helper()
	for _, j := range r.Run.Jobs {
		if j.ID == id {
			return j
		}
	}
	t.Fatalf("job %s not in the result", id)
	return metrics.JobRecord{}
}

// grantedLease is the lease the policy grants under cfg.
func grantedLease(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return simulate.DefaultLease
}

// genVariedWorkload draws a workload beyond genWorkload's uniform
// clusters, where the fast paths' arguments must hold as well: nodes of
// different sizes (one of them possibly larger than the rest put
// together), under topology labels or not; demands up to the cluster and
// past it, so gangs span nodes or never fit; leases shorter than the
// tick, equal to it or the default (Lease 0); submissions at equal times
// and on tick boundaries; zero-length jobs; job weights and tenant
// weights; checkpoint iterations; admission at submission or at the tick;
// a spread slowdown or none.
func genVariedWorkload(t *rapid.T) (simulate.Config, []trace.Job) {
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
	cfg.Admit = rapid.SampledFrom([]simulate.Admission{simulate.AdmitOnSubmit, simulate.AdmitAtTick}).Draw(t, "admit")
	// A spread gang slowed down, or not: every shortcut must hold at
	// rates below one too.
	cfg.SpreadSlowdown = rapid.SampledFrom([]float64{1, 1, 0.8, 0.5, 1.0 / 3}).Draw(t, "spreadSlowdown")
	return cfg, jobs
}
