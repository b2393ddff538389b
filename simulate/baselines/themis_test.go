package baselines

import (
	"errors"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/simulate"
)

func TestThemisConfig(t *testing.T) {
	for _, cfg := range []ThemisConfig{{Fairness: 0}, {Fairness: 1.5}, {Fairness: 0.8, EstimateError: -0.1}, {Fairness: 0.8, Lease: -time.Second}} {
		if _, err := NewThemis(cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("NewThemis(%+v) = %v, want ErrConfig", cfg, err)
		}
	}
}

func TestThemisRho(t *testing.T) {
	th := mustPolicy(NewThemis(DefaultThemisConfig()))(t)
	js := &simulate.JobState{Job: job("j", "a", 8, 0, 100), Remaining: 40 * time.Second}
	// Waited and ran 300 s, 40 s to go, 100 s alone: ρ = 340 / 100.
	if got := th.Rho(js, at(300)); got != 3.4 {
		t.Errorf("ρ = %v, want 3.4", got)
	}
	noisy := mustPolicy(NewThemis(ThemisConfig{Fairness: 0.8, EstimateError: 0.5, Seed: 7}))(t)
	a, b := noisy.Rho(js, at(300)), noisy.Rho(js, at(300))
	if a != b || a < 3.2 || a > 3.6 || a == 3.4 {
		t.Errorf("noisy ρ = %v, %v; want one deterministic value in [3.2, 3.6] other than 3.4", a, b)
	}
}

func TestThemis(t *testing.T) {
	quotas := map[string]float64{"a": 1, "b": 1}
	t.Run("the worst-ρ job is served first", func(t *testing.T) {
		// At the blocker's lease end (900 s): ρ(short) = (890 + 100) / 100 ≈ 9.9,
		// ρ(long) = (895 + 1000) / 1000 ≈ 1.9, ρ(blocker) = (900 + 1100) / 2000 = 1.
		res := run(t, simConfig(1, 8, quotas), mustPolicy(NewThemis(DefaultThemisConfig()))(t),
			job("blocker", "a", 8, 0, 2000),
			job("long", "b", 8, 5, 1000),
			job("short", "a", 8, 10, 100),
		)
		blocker, long, short := record(t, res, "blocker"), record(t, res, "long"), record(t, res, "short")
		if !short.FirstStart.Before(long.FirstStart) {
			t.Errorf("short started at %v, long at %v; short has the worse ρ", short.FirstStart, long.FirstStart)
		}
		if blocker.Preemptions == 0 {
			t.Error("the blocker kept its GPUs past its lease although it had the best ρ")
		}
		if got := short.FirstStart.Sub(at(900)); got < 0 || got > time.Minute {
			t.Errorf("short started %v after the lease end", got)
		}
	})
	t.Run("a job re-selected at its lease end renews in place", func(t *testing.T) {
		res := run(t, simConfig(1, 8, quotas), mustPolicy(NewThemis(DefaultThemisConfig()))(t),
			job("alone", "a", 8, 0, 3000),
		)
		if r := record(t, res, "alone"); r.Preemptions != 0 {
			t.Errorf("a lone job was preempted %d times", r.Preemptions)
		}
		if res.Stats.Renewals < 3 {
			t.Errorf("%d renewals, want ≥ 3 over 3000 s of 900 s leases", res.Stats.Renewals)
		}
	})
}
