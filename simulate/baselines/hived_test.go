package baselines

import (
	"testing"

	"github.com/astraea-sched/astraea/simulate"
)

func TestHiveD(t *testing.T) {
	quotas := map[string]float64{"a": 0.5, "b": 0.5}
	t.Run("owner's submission preempts the opportunistic job on its cells", func(t *testing.T) {
		h := mustPolicy(NewHiveD(HiveDConfig{}))(t)
		var sawOpportunistic bool
		p := &observer{Policy: h, onTick: func(s *simulate.State, d simulate.Decision) {
			for _, js := range s.Running {
				if js.Job.ID == "a2" && h.Opportunistic("a2") {
					sawOpportunistic = true
				}
			}
		}}
		res := run(t, simConfig(2, 8, quotas), p,
			job("a1", "a", 8, 0, 5000),
			job("a2", "a", 8, 0, 5000),
			job("b1", "b", 8, 1000, 100),
		)
		a1, a2, b1 := record(t, res, "a1"), record(t, res, "a2"), record(t, res, "b1")
		if !a1.FirstStart.Equal(at(0)) || !a2.FirstStart.Equal(at(0)) {
			t.Fatalf("a1, a2 started at %v, %v; both should start at once (a2 on b's idle cells)", a1.FirstStart, a2.FirstStart)
		}
		if !sawOpportunistic {
			t.Error("a2 was never marked opportunistic")
		}
		if a1.Preemptions != 0 {
			t.Errorf("guaranteed a1 preempted %d times", a1.Preemptions)
		}
		if a2.Preemptions != 1 {
			t.Errorf("opportunistic a2 preempted %d times, want 1", a2.Preemptions)
		}
		if b1.FirstStart.Sub(at(1000)) > 60e9 {
			t.Errorf("b1 waited until %v for its own cells", b1.FirstStart)
		}
	})
	t.Run("a quota keeps its topology", func(t *testing.T) {
		vc := &hivedVC{cap: []int{8, 8}, free: []int{8, 8}}
		for _, d := range []int{4, 4, 4} { // best fit packs the first two into one cell
			if _, ok := vc.alloc(d, 8); !ok {
				t.Fatalf("alloc %d failed with free %v", d, vc.free)
			}
		}
		if _, ok := vc.alloc(8, 8); ok {
			t.Errorf("an 8-GPU job fitted into cells with free %v", vc.free)
		}
		if uses, ok := vc.alloc(4, 8); !ok || len(uses) != 1 {
			t.Errorf("a 4-GPU job should fit the half-free cell: %v %v", uses, ok)
		}
		vc2 := &hivedVC{cap: []int{8, 8, 4}, free: []int{8, 8, 4}}
		uses, ok := vc2.alloc(12, 8)
		if !ok || len(uses) != 2 || uses[1].cell != 2 {
			t.Errorf("12 GPUs should take a node cell and the 4-GPU cell: %v %v", uses, ok)
		}
	})
}
