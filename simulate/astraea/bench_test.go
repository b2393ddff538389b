package astraea_test

import (
	"path/filepath"
	"testing"

	"github.com/astraea-sched/astraea/internal/testtraces"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/astraea"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// BenchmarkPhilly14d is the policy's budget run: the Philly 14-day prefix
// in the ASTRAEA artifact's format, on 140 × 8 GPUs with its VC shares,
// one run, for each placement mode and new-job order (the budget is
// 1.5 s of CPU per run).
func BenchmarkPhilly14d(b *testing.B) {
	dir := filepath.Join(testtraces.Dir(b), "philly", "artifact-format")
	q, err := trace.ReadQuotas(filepath.Join(dir, "philly_14d_share.csv"))
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range []placement.Mode{placement.Strict, placement.FewestNodes, placement.FirstFit} {
		for _, nj := range []astraea.NewJobOrder{astraea.FIFO, astraea.Smallest} {
			b.Run(m.String()+"/"+nj.String(), func(b *testing.B) {
				cfg := simulate.DefaultConfig(140, 8, q)
				cfg.Placement = m
				o := astraea.DefaultOptions()
				o.NewJobs = nj
				b.ReportAllocs()
				var r *simulate.Result
				for b.Loop() {
					src, err := trace.Open(filepath.Join(dir, "philly_14d.csv"), trace.Options{})
					if err != nil {
						b.Fatal(err)
					}
					p, err := astraea.New(o)
					if err != nil {
						b.Fatal(err)
					}
					if r, err = simulate.Run(cfg, src, p); err != nil {
						b.Fatal(err)
					}
					src.Close()
				}
				b.ReportMetric(float64(r.Stats.Ticks), "ticks")
			})
		}
	}
}
