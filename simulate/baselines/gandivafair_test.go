package baselines

import (
	"fmt"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/trace"
)

func TestGandivaFair(t *testing.T) {
	t.Run("throughput is proportional to tickets on a saturated cluster", func(t *testing.T) {
		quotas := map[string]float64{"a": 2, "b": 1}
		var jobs []trace.Job
		for i := range 8 { // far more demand than the 6 GPUs, for hours
			jobs = append(jobs, job(fmt.Sprintf("a%d", i), "a", 1, 0, 6*3600))
			jobs = append(jobs, job(fmt.Sprintf("b%d", i), "b", 1, 0, 6*3600))
		}
		cfg := simConfig(1, 6, quotas)
		cfg.Intervals = []time.Duration{6 * time.Hour}
		res := run(t, cfg, mustPolicy(NewGandivaFair(GandivaFairConfig{}))(t), jobs...)
		alloc := firstIntervalAlloc(res)
		if alloc["b"] == 0 {
			t.Fatalf("no service for b in the first interval: %v", alloc)
		}
		if r := alloc["a"] / alloc["b"]; r < 1.8 || r > 2.2 {
			t.Errorf("GPU·s ratio a:b = %.2f (%v), want ≈ 2 (tickets 2:1)", r, alloc)
		}
	})
	t.Run("gang-aware strides count GPUs, not jobs", func(t *testing.T) {
		quotas := map[string]float64{"a": 1, "b": 1}
		var jobs []trace.Job
		for i := range 6 { // a runs 4-GPU gangs, b 1-GPU jobs; equal tickets
			jobs = append(jobs, job(fmt.Sprintf("a%d", i), "a", 4, 0, 6*3600))
		}
		for i := range 16 {
			jobs = append(jobs, job(fmt.Sprintf("b%02d", i), "b", 1, 0, 6*3600))
		}
		cfg := simConfig(1, 8, quotas)
		cfg.Intervals = []time.Duration{6 * time.Hour}
		res := run(t, cfg, mustPolicy(NewGandivaFair(GandivaFairConfig{}))(t), jobs...)
		alloc := firstIntervalAlloc(res)
		if r := alloc["a"] / alloc["b"]; r < 0.8 || r > 1.25 {
			t.Errorf("GPU·s ratio a:b = %.2f (%v), want ≈ 1", r, alloc)
		}
	})
}

// firstIntervalAlloc returns each tenant's GPU·s in the interval that
// begins at t0.
func firstIntervalAlloc(res *simulate.Result) map[string]float64 {
	alloc := map[string]float64{}
	for _, ti := range res.Run.Tenants {
		if ti.From.Equal(t0) {
			alloc[ti.Tenant] = float64(ti.Account.Alloc)
		}
	}
	return alloc
}
