package simulate

import (
	"errors"
	"testing"
	"time"
)

// TestRunIterationLosesPartialIterations: with 70 s iterations a preempted
// job keeps only whole iterations and runs the rest again after its restore.
//
//	t0    0 s  a starts (8 GPUs, 2000 s of work), lease to 900 s
//	t1  900 s  lease not renewed: 900 s done = 12 iterations (840 s) + 60 s lost;
//	           checkpoint to 910 s
//	t2  910 s  resumed; cold start to 940 s; lease to 1810 s
//	t3 1810 s  840 + 870 = 1710 s done = 24 iterations (1680 s) + 30 s lost;
//	           checkpoint to 1820 s
//	t4 1820 s  resumed; cold start to 1850 s; 320 s left
//	t5 2170 s  a completes: 90 s later than with continuous progress (2080 s)
func TestRunIterationLosesPartialIterations(t *testing.T) {
	tests := map[string]struct {
		iteration     time.Duration
		end           int
		lostGPUSecond float64
	}{
		"continuous progress loses nothing":                  {0, 2080, 0},
		"a preemption loses the partial iteration in flight": {sec(70), 2170, (60 + 30) * 8},
		"iterations that divide the lease lose nothing":      {sec(30), 2080, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(1, 8, "x")
			cfg.Iteration = tc.iteration
			r := mustRun(t, cfg, src(tj("a", "x", 8, 0, 2000)), &greedy{lease: 900 * time.Second})
			a := jobByID(t, r, "a")
			if got := a.End.Sub(t0); got != sec(tc.end) {
				t.Errorf("a ends at %v, want %v", got, sec(tc.end))
			}
			if a.Held != sec(tc.end) || a.Preemptions != 2 {
				t.Errorf("a held %v with %d preemptions, want %v and 2", a.Held, a.Preemptions, sec(tc.end))
			}
			s := r.Stats
			if s.LostGPUSeconds != tc.lostGPUSecond {
				t.Errorf("lost %v GPU·s, want %v", s.LostGPUSeconds, tc.lostGPUSecond)
			}
			// Two checkpoints (10 s) and two cold starts (30 s) on 8 GPUs,
			// plus the lost work.
			if want := 2*(10+30)*8 + tc.lostGPUSecond; s.OverheadGPUSeconds != want {
				t.Errorf("overhead %v GPU·s, want %v", s.OverheadGPUSeconds, want)
			}
		})
	}
}

func TestRunRejectsNegativeIteration(t *testing.T) {
	cfg := testConfig(1, 8, "x")
	cfg.Iteration = -time.Second
	if _, err := Run(cfg, src(tj("a", "x", 8, 0, 10)), &greedy{}); !errors.Is(err, ErrConfig) {
		t.Fatalf("a negative iteration: err = %v, want ErrConfig", err)
	}
}
