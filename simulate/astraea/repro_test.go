package astraea

import (
	"bytes"
	"encoding/json"
	"github.com/astraea-sched/astraea/simulate"
	"path/filepath"
	"sync"
	"testing"

	"github.com/astraea-sched/astraea/internal/testtraces"
	"github.com/astraea-sched/astraea/simulate/metrics"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// snapshot describes one reproduction setting.
type snapshot struct {
	trace, quota string // relative to the traces folder; quota "" = ∝ requested
	nodes        int
}

var (
	venusSnapshot  = snapshot{"venus/venus_2week_snapshot.csv", "venus/venus_2week_vc_quota_official.csv", 100}
	phillySnapshot = snapshot{"philly/philly_2week_snapshot.csv", "", 210}
)

func (s snapshot) config(t testing.TB, dir string) simulate.Config {
	t.Helper()
	var q map[string]float64
	var err error
	if s.quota != "" {
		q, err = trace.ReadQuotas(filepath.Join(dir, s.quota))
	} else {
		var r *trace.Reader
		r, err = trace.Open(filepath.Join(dir, s.trace), trace.Options{})
		if err == nil {
			q, err = trace.RequestedQuotas(r)
			r.Close()
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return simulate.DefaultConfig(s.nodes, 8, q)
}

func (s snapshot) run(t testing.TB, dir string, cfg simulate.Config) *simulate.Result {
	t.Helper()
	r, err := trace.Open(filepath.Join(dir, s.trace), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := New(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulate.Run(cfg, r, p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// reproduce runs the snapshot twice at once (with invariant checks), jobs
// admitted as admit says, checks that both runs are byte-identical in JSON
// and returns the summary.
func reproduce(t *testing.T, s snapshot, admit simulate.Admission) (metrics.Summary, *simulate.Result) {
	dir := testtraces.Dir(t)
	cfg := s.config(t, dir)
	cfg.Check, cfg.CheckEvery = true, 8192
	cfg.Admit = admit
	var res [2]*simulate.Result
	var wg sync.WaitGroup
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = s.run(t, dir, cfg)
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	a, err := json.Marshal(res[0])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res[1])
	if !bytes.Equal(a, b) {
		t.Fatal("two runs of the same snapshot differ")
	}
	sum := metrics.Summarize(res[0].Run, metrics.DefaultSummaryConfig())
	if sum.Finished != sum.Jobs || res[0].Stats.Jobs+res[0].Stats.Excluded == 0 {
		t.Fatalf("%d of %d jobs finished", sum.Finished, sum.Jobs)
	}
	return sum, res[0]
}

func logSummary(t *testing.T, name string, sum metrics.Summary, r *simulate.Result, paperJobs, paperTenants string) {
	t.Logf("%s: %d jobs (%d excluded), %d ticks, %d renewals, %d preemptions, simulated %v → %v",
		name, r.Stats.Jobs, r.Stats.Excluded, r.Stats.Ticks, r.Stats.Renewals, r.Stats.Preemptions, r.Stats.Start, r.Stats.End)
	t.Logf("%s sharing-loss jobs (ρ_job < 0.95): ours %.1f %%, paper %s", name, 100*sum.SharingLossJobs, paperJobs)
	for _, il := range sum.TenantLoss {
		t.Logf("%s tenant sharing-loss intervals of %v (ρ < 1): ours %.1f %% of %d, paper %s (interval length unpublished)",
			name, il.Interval, 100*il.Share, il.Pairs, paperTenants)
	}
	t.Logf("%s avg JCT %.0f s, p50 %.0f s; avg slowdown %.2f; utilization %.1f %%; Jain %.3f",
		name, sum.JCT.Mean, sum.JCT.P50, sum.Slowdown.Mean, 100*sum.Utilization, sum.Jain)
}

// TestReproduceVenus runs ASTRAEA on the Venus two-week snapshot, 100 × 8
// GPUs, official VC quotas, and logs its figures beside the paper's, with
// jobs admitted at their submission and at the tick.
func TestReproduceVenus(t *testing.T) {
	for _, a := range []simulate.Admission{simulate.AdmitOnSubmit, simulate.AdmitAtTick} {
		t.Run("admit="+a.String(), func(t *testing.T) {
			sum, r := reproduce(t, venusSnapshot, a)
			logSummary(t, "Venus", sum, r, "7.1 %", "5.2 %")
		})
	}
}

// TestReproducePhilly runs ASTRAEA on the Philly two-week snapshot, 210 × 8
// GPUs, quotas ∝ requested GPUs (the paper's rule); the paper publishes no
// Philly percentages.
func TestReproducePhilly(t *testing.T) {
	for _, a := range []simulate.Admission{simulate.AdmitOnSubmit, simulate.AdmitAtTick} {
		t.Run("admit="+a.String(), func(t *testing.T) {
			sum, r := reproduce(t, phillySnapshot, a)
			logSummary(t, "Philly", sum, r, "not published", "not published")
		})
	}
}
