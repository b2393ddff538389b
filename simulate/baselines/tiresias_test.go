package baselines

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/trace"
)

func TestTiresiasConfig(t *testing.T) {
	for _, cfg := range []TiresiasConfig{
		{Thresholds: []float64{0}},
		{Thresholds: []float64{100, 50}},
		{Thresholds: []float64{100}, PromoteKnob: -1},
	} {
		if _, err := NewTiresias(cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("NewTiresias(%+v) = %v, want ErrConfig", cfg, err)
		}
	}
}

func TestTiresias(t *testing.T) {
	quotas := map[string]float64{"a": 1}
	t.Run("a job is demoted when it crosses the threshold", func(t *testing.T) {
		// 8 GPUs × 406.25 s = 3250 GPU·s: "long" leaves the top queue then,
		// and "late", waiting in the top queue, takes the GPUs.
		res := run(t, simConfig(1, 8, quotas), mustPolicy(NewTiresias(DefaultTiresiasConfig()))(t),
			job("long", "a", 8, 0, 2000),
			job("late", "a", 8, 100, 200),
		)
		long, late := record(t, res, "long"), record(t, res, "late")
		if long.Preemptions != 1 {
			t.Errorf("long preempted %d times, want 1", long.Preemptions)
		}
		if got := late.FirstStart.Sub(at(0)); got < 406*time.Second || got > 420*time.Second {
			t.Errorf("late started %v after t0, want at the first tick after 406.25 s", got)
		}
	})
	t.Run("a starving job is promoted", func(t *testing.T) {
		jobs := []trace.Job{job("old", "a", 8, 0, 3000)}
		for i := range 12 { // a stream of top-queue jobs: 8 × 300 s = 2400 GPU·s < 3250
			jobs = append(jobs, job(fmt.Sprintf("new%02d", i), "a", 8, 100+i, 300))
		}
		restart := func(knob float64) time.Time {
			var second time.Time
			starts := 0
			p := &observer{Policy: mustPolicy(NewTiresias(TiresiasConfig{Thresholds: []float64{3250}, PromoteKnob: knob}))(t),
				onTick: func(s *simulate.State, d simulate.Decision) {
					for _, g := range d.Grants {
						if g.Job == "old" && !g.Renew {
							starts++
							if starts == 2 {
								second = s.Now
							}
						}
					}
				}}
			run(t, simConfig(1, 8, quotas), p, jobs...)
			return second
		}
		off, on := restart(0), restart(1)
		// Without promotion "old" resumes after the whole stream (≈ 410 +
		// 12 × 300 s); with knob 1 it is promoted once it has waited as long
		// as it ran (≈ 410 s) and, being first in arrival order, resumes.
		if want := at(406 + 12*300); off.Before(want) {
			t.Errorf("without promotion old resumed at %v, before the stream ended (%v)", off, want)
		}
		if want := at(406 + 406 + 30); on.After(want) {
			t.Errorf("with promotion old resumed at %v, want by %v", on, want)
		}
	})
}
