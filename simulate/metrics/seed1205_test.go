package metrics

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/plotter"
)

// A job that never ended has no completion time: its JCT is 0.
func TestJCTOfAnUnfinishedJob(t *testing.T) {
	j := JobRecord{ID: "a", Submit: at(0), FirstStart: at(10)}
	if got := j.JCT(); got != 0 {
		t.Errorf("JCT of a job without an end = %v, want 0", got)
	}
}

// A table of no summaries is a table of row names only, not a panic.
func TestWriteTableOfNoSummaries(t *testing.T) {
	var sb strings.Builder
	if err := WriteTable(&sb); err != nil {
		t.Fatal(err)
	}
}

// The worst-off tenant figure names the shortest interval length however
// short it is: a run of 1 ns intervals is titled per "1ns interval".
func TestTenantFigureNamesAnyPositiveLength(t *testing.T) {
	r := tiny()
	r.Tenants = []TenantInterval{{Tenant: "x", From: at(0), To: at(0).Add(time.Nanosecond), Account: acct(1, 1)}}
	figs, err := buildFigures([]Run{r}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := figureNamed(t, figs, TenantRhoSVG).p.Title.Text, "Worst-off tenant per 1ns interval"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
}

// A log-x band needs positive values: with a value of 0 there is none.
func TestCDFBandLogNeedsPositiveValues(t *testing.T) {
	values := func(Run) []float64 { return []float64{0, 10} }
	if b := cdfBand([]Run{{Policy: "p"}}, values, true); b != nil {
		t.Errorf("log band of values from 0: %v, want none", b[:2])
	}
}

// A band that cannot be drawn (a NaN point) fails the figures, rather
// than leaving its shade out unannounced.
func TestBadBandFailsTheFigures(t *testing.T) {
	bands := map[string][]plotter.XYs{RhoJobCDFSVG: {{{X: 0, Y: 0}, {X: math.NaN(), Y: 1}, {X: 1, Y: 1}}}}
	if _, err := buildFigures([]Run{tiny()}, bands); err == nil {
		t.Error("a band with a NaN point was drawn without an error")
	}
}

// Shades (the drain after the last submission, a sensitivity curve's
// range) are fills without an outline: no stroked path of the SVG closes
// on itself.
func TestShadesHaveNoOutline(t *testing.T) {
	svgPath := regexp.MustCompile(`<path d="M([-0-9.e]+,[-0-9.e]+)[^"]*L([-0-9.e]+,[-0-9.e]+)" style="fill:none;`)
	closedStrokes := func(path string) int {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range svgPath.FindAllStringSubmatch(string(b), -1) {
			if m[1] == m[2] {
				n++
			}
		}
		return n
	}
	// A drain of 36 h after a 4 h window is shaded.
	r := Run{Policy: "p",
		Jobs: []JobRecord{{ID: "a", Tenant: "x", GPUs: 1, Submit: at(0), FirstStart: at(0), End: at(40 * 3600), Run: 40 * time.Hour, Rho: 1},
			{ID: "b", Tenant: "x", GPUs: 1, Submit: at(4 * 3600), FirstStart: at(4 * 3600), End: at(4*3600 + 60), Run: time.Minute, Rho: 1}},
		Util: []UtilPoint{{At: at(0), Used: 1, Capacity: 2}, {At: at(40 * 3600), Used: 0, Capacity: 2}},
		End:  at(40 * 3600),
	}
	dir := t.TempDir()
	if err := WriteFigures(dir, r); err != nil {
		t.Fatal(err)
	}
	if n := closedStrokes(filepath.Join(dir, UtilizationSVG)); n != 0 {
		t.Errorf("utilization figure: %d closed outlines stroked, want the drain shade filled only", n)
	}
	path := filepath.Join(dir, "s.svg")
	c := Curve{Name: "a", X: []float64{1, 2}, Y: []Band{{Mean: 1, Min: 0.5, Max: 1.5}, {Mean: 2, Min: 1.5, Max: 2.5}}}
	if err := WriteSensitivity(path, "t", "x", "y", c); err != nil {
		t.Fatal(err)
	}
	if n := closedStrokes(path); n != 0 {
		t.Errorf("sensitivity figure: %d closed outlines stroked, want the range filled only", n)
	}
}
