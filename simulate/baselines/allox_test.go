package baselines

import (
	"errors"
	"testing"
)

func TestAlloX(t *testing.T) {
	for _, a := range []float64{0, -1, 1.5} {
		if _, err := NewAlloX(AlloXConfig{Alpha: a}); !errors.Is(err, ErrConfig) {
			t.Errorf("NewAlloX(α=%v) = %v, want ErrConfig", a, err)
		}
	}
	quotas := map[string]float64{"a": 1, "b": 1}
	// b runs alone for 1000 s (ρ_b = 2 under Eq. 16), a never ran (ρ_a = 0).
	// Then a has a long and a short job, b a shorter one.
	order := func(alpha float64) []string {
		res := run(t, simConfig(1, 8, quotas), mustPolicy(NewAlloX(AlloXConfig{Alpha: alpha}))(t),
			job("b0", "b", 8, 0, 1000),
			job("a-long", "a", 8, 500, 3000),
			job("a-short", "a", 8, 501, 100),
			job("b-tiny", "b", 8, 502, 10),
		)
		ids := []string{"a-long", "a-short", "b-tiny"}
		for i := range ids { // sort by first start
			for j := i + 1; j < len(ids); j++ {
				if record(t, res, ids[j]).FirstStart.Before(record(t, res, ids[i]).FirstStart) {
					ids[i], ids[j] = ids[j], ids[i]
				}
			}
		}
		return ids
	}
	for _, tc := range []struct {
		name  string
		alpha float64
		want  [3]string
	}{
		{"α = 0.5 serves the tenant furthest below its share, shortest job first", 0.5, [3]string{"a-short", "a-long", "b-tiny"}},
		{"α = 1 is plain shortest remaining time", 1, [3]string{"b-tiny", "a-short", "a-long"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := order(tc.alpha); [3]string(got) != tc.want {
				t.Errorf("start order %v, want %v", got, tc.want)
			}
		})
	}
}
