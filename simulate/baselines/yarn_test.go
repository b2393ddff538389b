package baselines

import (
	"math"
	"testing"

	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/trace"
)

func TestCapacitiesSumToCluster(t *testing.T) {
	for _, tc := range []struct {
		name   string
		quotas map[string]float64
		m      int
		want   map[string]int
	}{
		{"equal halves", map[string]float64{"a": 0.5, "b": 0.5}, 16, map[string]int{"a": 8, "b": 8}},
		{"thirds give the spare GPU to the first name", map[string]float64{"a": 1, "b": 1, "c": 1}, 16, map[string]int{"a": 6, "b": 5, "c": 5}},
		{"largest remainder wins", map[string]float64{"a": 0.14, "b": 0.86}, 10, map[string]int{"a": 1, "b": 9}},
		{"zero weight gets nothing", map[string]float64{"a": 0, "b": 1}, 8, map[string]int{"a": 0, "b": 8}},
		// 1.7 and 8.3: the spare GPU goes to the larger fraction, not the larger share.
		{"the largest fraction wins over the largest share", map[string]float64{"a": 0.17, "b": 0.83}, 10, map[string]int{"a": 2, "b": 8}},
		// 1.875, 1.875, 6.25: two spare GPUs, one each, not both to one tenant.
		{"two leftovers go to two tenants", map[string]float64{"a": 3, "b": 3, "c": 10}, 10, map[string]int{"a": 2, "b": 2, "c": 6}},
		{"weights need not sum to 1", map[string]float64{"a": 1, "b": 3}, 8, map[string]int{"a": 2, "b": 6}},
		{"negative and NaN weights get nothing", map[string]float64{"a": -1, "b": math.NaN(), "c": 2}, 5, map[string]int{"a": 0, "b": 0, "c": 5}},
		{"no positive weight gives nobody anything", map[string]float64{"a": 0, "b": -2}, 5, map[string]int{"a": 0, "b": 0}},
		{"no GPUs gives nobody anything", map[string]float64{"a": 1}, 0, map[string]int{"a": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Capacities(tc.quotas, tc.m)
			if len(got) != len(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			sum, wantSum := 0, 0
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s: got %d, want %d (all %v)", k, got[k], v, got)
				}
				wantSum += v
			}
			for _, v := range got {
				sum += v
			}
			if sum != wantSum {
				t.Errorf("capacities sum to %d, want %d", sum, wantSum)
			}
		})
	}
}

func TestYARNCS(t *testing.T) {
	quotas := map[string]float64{"a": 0.5, "b": 0.5}
	jobs := []struct {
		id, tenant        string
		gpus, submit, dur int
	}{
		{"a1", "a", 8, 0, 1000}, {"a2", "a", 8, 0, 1000}, {"a3", "a", 4, 5, 1000}, {"a4", "a", 4, 5, 500},
		{"b1", "b", 4, 100, 300}, {"b2", "b", 8, 200, 300},
	}
	for _, tc := range []struct {
		name    string
		elastic bool
	}{{"static capacity", false}, {"elastic borrowing", true}} {
		t.Run(tc.name, func(t *testing.T) {
			peak := map[string]int{}
			p := &observer{Policy: NewYARNCS(YARNConfig{Elastic: tc.elastic}), onTick: func(s *simulate.State, d simulate.Decision) {
				if len(d.Preempt) > 0 {
					t.Errorf("%v: YARN-CS preempted %v", s.Now, d.Preempt)
				}
				for tn, u := range usage(s, d) {
					peak[tn] = max(peak[tn], u)
				}
			}}
			var list []trace.Job
			for _, j := range jobs {
				list = append(list, job(j.id, j.tenant, j.gpus, j.submit, j.dur))
			}
			res := run(t, simConfig(2, 8, quotas), p, list...)
			if !tc.elastic {
				for tn, u := range peak {
					if u > 8 {
						t.Errorf("tenant %s held %d GPUs, capacity 8", tn, u)
					}
				}
				if got := record(t, res, "a2").FirstStart; !got.Equal(record(t, res, "a1").End) {
					t.Errorf("a2 started at %v, want when a1 ends at %v (its queue is full, the idle half is b's)", got, record(t, res, "a1").End)
				}
			} else if peak["a"] != 16 {
				t.Errorf("elastic: tenant a peaked at %d GPUs, want 16 (borrowing the idle half)", peak["a"])
			}
		})
	}
}
