package metrics

import (
	"path/filepath"
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
			dir := t.TempDir()
			if err := WriteFigures(dir, runs...); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{RhoJobCDFSVG, SlowdownCDFSVG, TenantRhoSVG, UtilizationSVG} {
				// present, well-formed, and the run is in the legend
				if counts := svgStrokes(t, filepath.Join(dir, f)); counts[hexColor(0)] < 1 {
					t.Errorf("%s: nothing stroked in the run's colour %s; strokes %v", f, hexColor(0), counts)
				}
			}
			for _, r := range runs {
				svgStrokes(t, filepath.Join(dir, "tenant_rho_"+r.Policy+".svg")) // present and well-formed
			}
		})
	}
}
