package metrics

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/astraea-sched/astraea/ledger"
)

// twoRuns are two small runs of different policies with jobs, tenant
// intervals and occupancy.
func twoRuns() []Run {
	a := tiny()
	a.Tenants = []TenantInterval{
		{Tenant: "x", From: at(0), To: at(3600), Account: acct(1800, 3600)},
		{Tenant: "y", From: at(0), To: at(3600), Account: acct(3600, 3600)},
		{Tenant: "x", From: at(3600), To: at(7200), Account: acct(5400, 3600)},
		{Tenant: "y", From: at(3600), To: at(7200), Account: acct(0, 0)},
	}
	a.Util = []UtilPoint{{At: at(0), Used: 2, Capacity: 8}, {At: at(100), Used: 8, Capacity: 8}, {At: at(7000), Used: 0, Capacity: 8}}
	a.End = at(7200)
	b := a
	b.Policy = "yarn-cs"
	b.Jobs = append([]JobRecord(nil), a.Jobs...)
	b.Jobs[1].End = at(5000)
	b.Jobs[1].Rho = 0.1
	return []Run{a, b}
}

// svgStrokes parses an SVG file as XML and counts the elements drawn with
// each stroke colour.
func svgStrokes(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	counts := map[string]int{}
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", path, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = se.Name.Local
		}
		for _, a := range se.Attr {
			if a.Name.Local == "style" || a.Name.Local == "stroke" {
				for _, part := range strings.Split(a.Value, ";") {
					if c, ok := strings.CutPrefix(strings.TrimSpace(part), "stroke:"); ok {
						counts[c]++
					}
					if a.Name.Local == "stroke" {
						counts[a.Value]++
					}
				}
			}
		}
	}
	if root != "svg" {
		t.Fatalf("%s: root element %q, want svg", path, root)
	}
	return counts
}

func hexColor(i int) string {
	c := RunColor(i)
	return fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B)
}

func TestWriteFigures(t *testing.T) {
	dir := t.TempDir()
	runs := twoRuns()
	if err := WriteFigures(dir, runs...); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{RhoJobCDFSVG, SlowdownCDFSVG, TenantRhoSVG, UtilizationSVG} {
		counts := svgStrokes(t, filepath.Join(dir, f))
		for i := range runs {
			// one line in the plot and one sample in the legend
			if got := counts[hexColor(i)]; got != 2 {
				t.Errorf("%s: %d elements stroked in run %d's colour %s, want 2 (line and legend); strokes %v", f, got, i, hexColor(i), counts)
			}
		}
	}
	for _, r := range runs {
		counts := svgStrokes(t, filepath.Join(dir, "tenant_rho_"+r.Policy+".svg"))
		if counts[hexColor(0)] != 2 || counts[hexColor(1)] != 2 {
			t.Errorf("tenant figure of %s: strokes %v, want one line per tenant", r.Policy, counts)
		}
	}
	// Deterministic: a second write gives identical bytes.
	dir2 := t.TempDir()
	if err := WriteFigures(dir2, runs...); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{RhoJobCDFSVG, UtilizationSVG} {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, _ := os.ReadFile(filepath.Join(dir2, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two writes", f)
		}
	}
}

func TestWriteFiguresDuplicatePolicy(t *testing.T) {
	r := tiny()
	if err := WriteFigures(t.TempDir(), r, r); err == nil {
		t.Fatal("two runs named alike were accepted")
	}
}

func TestUtilSeries(t *testing.T) {
	r := Run{Util: []UtilPoint{{At: at(0), Used: 4, Capacity: 8}, {At: at(1800), Used: 8, Capacity: 8}}, End: at(3600)}
	xy := utilSeries(r, at(0), time.Time{})
	// Two points, so two buckets of 30 min: 0.5 then 1.
	if len(xy) != 2 || !near(xy[0].Y, 0.5) || !near(xy[1].Y, 1) || !near(xy[0].X, 0.25) {
		t.Fatalf("utilSeries = %v", xy)
	}
	// Buckets narrower than the steps average them exactly.
	pts := []UtilPoint{}
	for i := range 3000 {
		pts = append(pts, UtilPoint{At: at(i), Used: i % 2, Capacity: 1})
	}
	xy = utilSeries(Run{Util: pts, End: at(3000)}, at(0), time.Time{})
	if len(xy) != maxPoints {
		t.Fatalf("%d points, want %d", len(xy), maxPoints)
	}
	for _, p := range xy {
		if p.Y < 0.3 || p.Y > 0.7 {
			t.Fatalf("bucket %v: utilization %v, want about 0.5", p.X, p.Y)
		}
	}
	_ = time.Second
}

func TestHourTicks(t *testing.T) {
	labels := func(ts []plot.Tick) []string {
		var ls []string
		for _, tk := range ts {
			if tk.Label != "" {
				ls = append(ls, tk.Label)
			}
		}
		return ls
	}
	for _, tt := range []struct {
		name   string
		lo, hi float64
		want   []string
	}{
		{"five hours are marked every hour", 0, 5, []string{"0", "1", "2", "3", "4", "5"}},
		{"four days are marked every day", 0, 120, []string{"0", "24", "48", "72", "96", "120"}},
		{"five weeks are marked every week", 0, 850, []string{"0", "168", "336", "504", "672", "840"}},
		{"a half-year is marked every four weeks", 0, 4400, []string{"0", "672", "1344", "2016", "2688", "3360", "4032"}},
		{"a range off zero starts at its first multiple", 30, 100, []string{"36", "48", "60", "72", "84", "96"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := hourTicks{}.Ticks(tt.lo, tt.hi)
			if got := labels(ts); !slices.Equal(got, tt.want) {
				t.Fatalf("labels %v, want %v", got, tt.want)
			}
			// One unlabelled tick between two labels, all in range.
			if len(ts) != 2*len(tt.want)-1 && len(ts) != 2*len(tt.want) && len(ts) != 2*len(tt.want)+1 {
				t.Fatalf("%d ticks for %d labels", len(ts), len(tt.want))
			}
			for _, tk := range ts {
				if tk.Value < tt.lo || tk.Value > tt.hi {
					t.Fatalf("tick %v outside [%v, %v]", tk.Value, tt.lo, tt.hi)
				}
			}
		})
	}
	// An empty or infinite range has no ticks; one whose values are too
	// large for a half step to change them ends all the same.
	for _, r := range [][2]float64{{5, 5}, {6, 5}, {-math.MaxFloat64, math.MaxFloat64}, {math.NaN(), 1}} {
		if ts := (hourTicks{}).Ticks(r[0], r[1]); len(ts) > 0 {
			t.Fatalf("Ticks(%v, %v) = %v, want none", r[0], r[1], ts)
		}
	}
	if ts := (hourTicks{}).Ticks(1e20, 1e20+1e6); len(ts) == 0 || len(ts) > 2*8+2 {
		t.Fatalf("Ticks(1e20, 1e20+1e6): %d ticks", len(ts))
	}
}

// cdf and thin keep at most maxPoints points with the step the series needs,
// and never drop the last point.
func TestCDFAndThinBounds(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n, points  int
		thinPoints int
	}{
		{"a short series is kept whole", 3, 3, 3},
		{"exactly maxPoints is kept whole", maxPoints, maxPoints, maxPoints},
		{"twice maxPoints keeps every second rank, every third point and the last", 2 * maxPoints, maxPoints, 668},
		{"one more keeps every third rank, every third point and the last", 2*maxPoints + 1, 667, 668},
		{"one over maxPoints keeps every second point, the last among them", maxPoints + 1, 501, 501},
	} {
		t.Run(tc.name, func(t *testing.T) {
			xs := make([]float64, tc.n)
			xy := make(plotter.XYs, tc.n)
			for i := range xs {
				xs[i] = float64(tc.n - i) // reversed: cdf sorts
				xy[i] = plotter.XY{X: float64(i), Y: float64(i)}
			}
			c := cdf(xs)
			if len(c) != tc.points {
				t.Fatalf("cdf: %d points, want %d", len(c), tc.points)
			}
			if last := c[len(c)-1]; last.X != float64(tc.n) || last.Y != 1 {
				t.Errorf("cdf ends at %v, want (%d, 1)", last, tc.n)
			}
			if first := c[0]; first.Y != first.X/float64(tc.n) {
				t.Errorf("cdf starts at %v: fraction is not rank ÷ n", first)
			}
			th := thin(xy)
			if len(th) != tc.thinPoints {
				t.Fatalf("thin: %d points, want %d", len(th), tc.thinPoints)
			}
			if th[0] != xy[0] || th[len(th)-1] != xy[len(xy)-1] {
				t.Errorf("thin dropped an end: %v … %v", th[0], th[len(th)-1])
			}
		})
	}
	if cdf(nil) != nil {
		t.Error("cdf of nothing is not empty")
	}
}

// Each span hourTicks counts in is the one chosen for a range of eight of
// it: 8 h every hour, 16 h every 2 h, … 8 weeks every week; a little more
// takes the next span.
func TestHourTicksEverySpan(t *testing.T) {
	spans := []float64{1, 2, 3, 6, 12, 24, 48, 72, 168, 336}
	step := func(lo, hi float64) float64 {
		var labels []float64
		for _, tk := range (hourTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Value)
			}
		}
		if len(labels) < 2 {
			t.Fatalf("ticks of [%v, %v]: labels at %v", lo, hi, labels)
		}
		return labels[1] - labels[0]
	}
	for i, h := range spans[:len(spans)-1] {
		if got := step(0, 8*h); got != h {
			t.Errorf("[0, %v h] labelled every %v h, want %v", 8*h, got, h)
		}
		if got := step(0, 8*h+0.5); got != spans[i+1] {
			t.Errorf("[0, %v h] labelled every %v h, want %v", 8*h+0.5, got, spans[i+1])
		}
	}
}

func TestHourTicksAtTheStepLimit(t *testing.T) {
	// Eight weeks exactly are marked every week: 8 steps is still few enough.
	var labels []string
	for _, tk := range (hourTicks{}).Ticks(0, 8*168) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if len(labels) != 9 || labels[1] != "168" {
		t.Errorf("labels %v, want every 168 h", labels)
	}
}

func TestFitX(t *testing.T) {
	for _, tc := range []struct {
		name             string
		logX             bool
		min, max         float64
		wantMin, wantMax float64
	}{
		{"a linear axis keeps its range", false, 2, 10, 2, 10},
		{"a log axis keeps a valid range", true, 0.5, 8, 0.5, 8},
		{"a log axis from 0 starts at 1", true, 0, 8, 1, 8},
		{"an empty log axis spans 1 to 10", true, 0, 0, 1, 10},
		{"an empty linear axis stays", false, 3, 3, 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFigure("f.svg", "", "", "", tc.logX)
			f.p.X.Min, f.p.X.Max, f.p.Y.Min = tc.min, tc.max, 0.5
			f.fitX(tc.logX)
			if f.p.X.Min != tc.wantMin || f.p.X.Max != tc.wantMax || f.p.Y.Min != 0 {
				t.Errorf("x [%v, %v], y from %v; want x [%v, %v], y from 0", f.p.X.Min, f.p.X.Max, f.p.Y.Min, tc.wantMin, tc.wantMax)
			}
		})
	}
}

// Runs are coloured with the Okabe–Ito colours (Okabe & Ito, "Color
// Universal Design", 2008), grey in place of their yellow, each once, then
// again in the same order.
func TestRunColorsAreOkabeIto(t *testing.T) {
	okabeIto := map[[3]uint8]string{
		{0, 0, 0}: "black", {230, 159, 0}: "orange", {86, 180, 233}: "sky blue", {0, 158, 115}: "bluish green",
		{136, 136, 136}: "grey", {0, 114, 178}: "blue", {213, 94, 0}: "vermillion", {204, 121, 167}: "reddish purple",
	}
	seen := map[[3]uint8]bool{}
	for i := range len(okabeIto) {
		c := RunColor(i)
		k := [3]uint8{c.R, c.G, c.B}
		if _, ok := okabeIto[k]; !ok || c.A != 255 || seen[k] {
			t.Errorf("run %d: colour %v is not a fresh opaque Okabe–Ito colour or grey", i, c)
		}
		seen[k] = true
		if again := RunColor(i + len(okabeIto)); again != c {
			t.Errorf("run %d: colour %v, run %d: %v; want the cycle to repeat", i, c, i+len(okabeIto), again)
		}
	}
}

// A figure that cannot be written fails WriteFigures; none is dropped
// silently.
func TestWriteFiguresReportsAFailedFile(t *testing.T) {
	for _, name := range []string{RhoJobCDFSVG, SlowdownCDFSVG, TenantRhoSVG, UtilizationSVG} {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil { // a directory where the file goes
			t.Fatal(err)
		}
		if err := WriteFigures(dir, twoRuns()...); err == nil {
			t.Errorf("%s: WriteFigures succeeded though the file cannot be written", name)
		}
	}
}

// The time axes start at the earliest time any run recorded.
func TestOriginIsTheEarliestTime(t *testing.T) {
	runs := []Run{
		{Jobs: []JobRecord{{ID: "a", Submit: at(50)}, {ID: "b", Submit: at(20)}}},
		{Jobs: []JobRecord{{ID: "c", Submit: at(30)}}},
	}
	if got := originOf(runs); !got.Equal(at(20)) {
		t.Errorf("origin %v, want t0+20s", got.Sub(t0))
	}
}

// ρ above 2, and +Inf, is drawn at 2, where the ρ axes end, in the ρ_job
// CDF and in the worst-off tenant figure.
func TestRhoIsDrawnAtTheClip(t *testing.T) {
	r := Run{Policy: "p", Jobs: []JobRecord{
		{ID: "a", Submit: at(0), End: at(10), Rho: 1.5},
		{ID: "b", Submit: at(0), End: at(10), Rho: 3},
		{ID: "c", Submit: at(0), End: at(10), Rho: ledger.Rho(math.Inf(1))},
	}}
	if got := rhoValues(r); !slices.Equal(got, []float64{1.5, 2, 2}) {
		t.Errorf("ρ_job values drawn %v, want [1.5 2 2]", got)
	}
	r.Tenants = []TenantInterval{{Tenant: "x", From: at(0), To: at(3600), Account: acct(3*3600, 3600)}}
	if got := lowestTenantRho(r, at(0)); len(got) != 1 || got[0].Y != rhoClip {
		t.Errorf("worst-off tenant of ρ 3 drawn %v, want at %v", got, rhoClip)
	}
}

// A line that cannot be drawn (a job's ρ of NaN, which no ledger gives)
// fails the figures, rather than leaving its run out unannounced.
func TestAnUndrawableLineFailsTheFigures(t *testing.T) {
	r := tiny()
	r.Jobs[0].Rho = ledger.Rho(math.NaN())
	if _, err := buildFigures([]Run{r}, nil); err == nil || !strings.Contains(err.Error(), RhoJobCDFSVG) {
		t.Errorf("a run with a NaN ρ_job drawn: error %v, want one naming %s", err, RhoJobCDFSVG)
	}
	if err := WriteFigures(t.TempDir(), r); err == nil {
		t.Error("WriteFigures drew a run with a NaN ρ_job without an error")
	}
}

// The buckets reach End, or the last point when End is zero or comes
// before it: two points 100 s apart make two buckets of 50 s then.
func TestUtilSeriesEndsAtTheLastPointBeforeEnd(t *testing.T) {
	pts := []UtilPoint{{At: at(0), Used: 1, Capacity: 2}, {At: at(100), Used: 2, Capacity: 2}}
	for _, end := range []time.Time{{}, at(50), at(100)} {
		xy := utilSeries(Run{Util: pts, End: end}, at(0), time.Time{})
		if len(xy) != 2 || !near(xy[0].X*3600, 25) || !near(xy[1].X*3600, 75) || !near(xy[0].Y, 0.5) || !near(xy[1].Y, 0.5) {
			t.Errorf("End %v: utilSeries = %v, want 0.5 at 25 s and 75 s", end.Sub(t0), xy)
		}
	}
}

// Every bucket with some capacity is plotted, however short: a run of
// 1 ns on one GPU has two buckets of half a GPU·ns each.
func TestUtilSeriesOfTheShortestRun(t *testing.T) {
	start := time.Unix(0, 0).UTC()
	r := Run{Util: []UtilPoint{{At: start, Used: 1, Capacity: 1}, {At: start.Add(time.Nanosecond), Used: 0, Capacity: 1}}}
	if xy := utilSeries(r, start, time.Time{}); len(xy) != 2 || xy[0].Y != 1 || xy[1].Y != 1 {
		t.Errorf("utilSeries = %v, want 2 buckets at utilization 1", xy)
	}
}

// A bucket without capacity has no utilization: it is left out, not
// plotted as 0 ÷ 0.
func TestUtilSeriesSkipsBucketsWithoutCapacity(t *testing.T) {
	pts := []UtilPoint{{At: at(0), Used: 1, Capacity: 2}, {At: at(100), Used: 0, Capacity: 0}, {At: at(200), Used: 2, Capacity: 2}}
	xy := utilSeries(Run{Util: pts, End: at(300)}, at(0), time.Time{})
	if len(xy) != 2 || !near(xy[0].Y, 0.5) || !near(xy[1].Y, 1) || !near(xy[1].X*3600, 250) {
		t.Errorf("utilSeries = %v, want 0.5 at 50 s and 1 at 250 s", xy)
	}
}

// With a cut, the buckets cover [first point, cut] only: what the
// occupancy does after the cut, up to the next point, is not averaged in.
func TestUtilSeriesEndsAtTheCut(t *testing.T) {
	r := Run{Util: []UtilPoint{{At: at(0), Used: 0, Capacity: 8}, {At: at(1000), Used: 8, Capacity: 8}, {At: at(5000), Used: 0, Capacity: 8}},
		End: at(5000)}
	// Three points, so three buckets of 400 s over [0, 1200 s].
	xy := utilSeries(r, at(0), at(1200))
	want := []float64{0, 0, 0.5}
	if len(xy) != len(want) {
		t.Fatalf("utilSeries = %v, want %d buckets", xy, len(want))
	}
	for k, p := range xy {
		if !near(p.Y, want[k]) {
			t.Errorf("bucket %d: utilization %v, want %v", k, p.Y, want[k])
		}
	}
}

// Every writer that makes its directory makes it as MkdirAll(0o755) does
// under the umask, so that the figures and tables can be read by others.
func TestWritersMakeReadableDirectories(t *testing.T) {
	ref := filepath.Join(t.TempDir(), "ref")
	if err := os.MkdirAll(ref, 0o755); err != nil {
		t.Fatal(err)
	}
	rst, err := os.Stat(ref)
	if err != nil {
		t.Fatal(err)
	}
	agg, err := AggregateRuns(Summarize(tiny(), SummaryConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	c := Curve{Name: "a", X: []float64{1, 2}, Y: []Band{{Mean: 1, Min: 1, Max: 1}, {Mean: 2, Min: 2, Max: 2}}}
	for name, write := range map[string]func(dir string) error{
		"WriteFigures":      func(dir string) error { return WriteFigures(dir, twoRuns()...) },
		"WritePhaseFigures": func(dir string) error { runs := twoRuns(); return WritePhaseFigures(dir, runs[:1], runs[1:]) },
		"WriteCSV":          func(dir string) error { return WriteCSV(dir, twoRuns()...) },
		"WriteAggregateCSV": func(dir string) error { return WriteAggregateCSV(dir, agg) },
		"WriteSensitivity":  func(dir string) error { return WriteSensitivity(filepath.Join(dir, "s.svg"), "t", "x", "y", c) },
	} {
		dir := filepath.Join(t.TempDir(), "a", "b")
		if err := write(dir); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, d := range []string{dir, filepath.Dir(dir)} {
			st, err := os.Stat(d)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode() != rst.Mode() {
				t.Errorf("%s: directory %s made with mode %v, want %v", name, d, st.Mode(), rst.Mode())
			}
		}
	}
}

// thin takes the smallest step that keeps at most maxPoints: a step one
// shorter would keep more. Over lengths up to three times maxPoints, the
// points kept are every step-th from the first, then the last.
func TestThinTakesTheSmallestStep(t *testing.T) {
	// kept is how many points a step keeps of n: the grid, and the last
	// when the grid misses it.
	kept := func(n, step int) int {
		k := (n + step - 1) / step
		if (n-1)%step != 0 {
			k++
		}
		return k
	}
	xy := make(plotter.XYs, 3*maxPoints+2)
	for i := range xy {
		xy[i] = plotter.XY{X: float64(i), Y: float64(i)}
	}
	for n := maxPoints + 1; n <= len(xy); n++ {
		th := thin(xy[:n])
		step := int(th[1].X - th[0].X)
		if len(th) > maxPoints || len(th) != kept(n, step) || (step > 1 && kept(n, step-1) <= maxPoints) {
			t.Fatalf("n = %d: %d points at step %d; step %d would keep %d", n, len(th), step, step-1, kept(n, step-1))
		}
		for k, p := range th[:len(th)-1] {
			if p != xy[k*step] {
				t.Fatalf("n = %d: point %d is %v, want %v", n, k, p, xy[k*step])
			}
		}
		if th[len(th)-1] != xy[n-1] {
			t.Fatalf("n = %d: last point %v, want %v", n, th[len(th)-1], xy[n-1])
		}
	}
}

// A run's line of one point is drawn like any other: it sets the axes.
// One job of slowdown 2 puts the slowdown axis at [2, 20] (fitX widens a
// range of one value tenfold) and the fraction axis up to 1.
func TestALineOfOnePointIsDrawn(t *testing.T) {
	r := Run{Policy: "p", Jobs: []JobRecord{{ID: "a", Tenant: "x", GPUs: 1, Submit: at(0), FirstStart: at(10), End: at(20), Run: 10 * time.Second, Rho: 1}}}
	figs, err := buildFigures([]Run{r}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := figureNamed(t, figs, SlowdownCDFSVG)
	if f.p.X.Min != 2 || f.p.X.Max != 20 || f.p.Y.Max != 1 {
		t.Errorf("slowdown axes x [%v, %v], y up to %v; want [2, 20] and 1", f.p.X.Min, f.p.X.Max, f.p.Y.Max)
	}
}
