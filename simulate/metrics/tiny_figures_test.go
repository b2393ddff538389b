package metrics

import (
	"testing"
	"time"
)

// Figures of degenerate runs (one job, every slowdown equal, no jobs at all)
// must be written without error: a plotting library's log axis cannot span a
// single value, and the figure code widens such ranges itself.
func TestWriteFiguresDegenerateRuns(t *testing.T) {
	t0 := time.Date(2020, 9, 7, 0, 0, 0, 0, time.UTC)
	one := Run{Policy: "one", Jobs: []JobRecord{{
		ID: "j1", Tenant: "a", GPUs: 1, Submit: t0, FirstStart: t0, End: t0.Add(time.Minute),
		Run: time.Minute, Held: time.Minute, Rho: 1, State: "COMPLETED",
	}}}
	tests := map[string][]Run{
		"a single job whose slowdown is exactly 1": {one},
		"a run with no jobs at all":                {{Policy: "empty"}},
	}
	for name, runs := range tests {
		t.Run(name, func(t *testing.T) {
			if err := WriteFigures(t.TempDir(), runs...); err != nil {
				t.Fatal(err)
			}
		})
	}
}
