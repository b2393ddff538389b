package metrics

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
	"gonum.org/v1/plot/vg/vgsvg"
)

// No two of the first 24 lines of a figure share colour and dash pattern,
// so that 8 policies or up to 24 tenants are told apart; the 25th repeats
// the first.
func TestRunStylesAreDistinct(t *testing.T) {
	key := func(i int) string { s := RunStyle(i); return fmt.Sprint(s.Color, s.Dashes) }
	seen := map[string]int{}
	for i := range 24 {
		if j, ok := seen[key(i)]; ok {
			t.Errorf("lines %d and %d look alike: %s", j, i, key(i))
		}
		seen[key(i)] = i
	}
	if key(24) != key(0) {
		t.Errorf("line 24 is %s, want line 0's %s", key(24), key(0))
	}
}

// figureNamed returns the figure of file among figs.
func figureNamed(t *testing.T, figs []*figure, file string) *figure {
	t.Helper()
	for _, f := range figs {
		if f.file == file {
			return f
		}
	}
	t.Fatalf("no figure %s", file)
	return nil
}

// hasLegendEntry reports whether an entry of f's legend starts with prefix.
func hasLegendEntry(f *figure, prefix string) bool {
	var found bool
	for _, e := range legendTexts(f) {
		found = found || strings.HasPrefix(e, prefix)
	}
	return found
}

var svgText = regexp.MustCompile(`<text x="([-0-9.e]+)"[^>]*>([^<]*)</text>`)

// legendTexts writes f as SVG and returns its texts.
func legendTexts(f *figure) []string {
	c := vgsvg.New(figureWidth, figureHeight)
	dc := draw.New(c)
	_, legendC := f.layout(dc)
	f.legend.Draw(legendC)
	var b strings.Builder
	c.WriteTo(&b)
	var out []string
	for _, m := range svgText.FindAllStringSubmatch(b.String(), -1) {
		out = append(out, m[2])
	}
	return out
}

// Every figure's legend is drawn to the right of its data, its top level
// with the data's, and every run is named there.
func TestFigureLegendsBesideTheData(t *testing.T) {
	runs := twoRuns()
	dir := t.TempDir()
	if err := WriteFigures(dir, runs...); err != nil {
		t.Fatal(err)
	}
	figs, err := buildFigures(runs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		dc := draw.New(vgsvg.New(figureWidth, figureHeight))
		plotC, legendC := f.layout(dc)
		// layout splits the page: the plot's part from its left edge, the
		// whole height, the legend's part to its right edge.
		if plotC.Min.X != dc.Min.X || plotC.Min.Y != dc.Min.Y || plotC.Max.Y != dc.Max.Y || legendC.Max.X != dc.Max.X || !(plotC.Max.X < legendC.Min.X) {
			t.Errorf("%s: plot part %v and legend part %v do not split the page %v", f.file, plotC.Rectangle, legendC.Rectangle, dc.Rectangle)
		}
		data := f.p.DataCanvas(plotC)
		if !(data.Max.X < legendC.Min.X) {
			t.Errorf("%s: data end at x = %v, legend starts at %v", f.file, data.Max.X, legendC.Min.X)
		}
		// The legend's top is level with the top of the data, below the title.
		if d := math.Abs(float64(legendC.Max.Y - data.Max.Y)); d > 0.5 {
			t.Errorf("%s: legend top at %v, data top at %v", f.file, legendC.Max.Y, data.Max.Y)
		}
		svg, err := os.ReadFile(filepath.Join(dir, f.file))
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, m := range svgText.FindAllStringSubmatch(string(svg), -1) {
			x, _ := strconv.ParseFloat(m[1], 64)
			if x >= float64(legendC.Min.X) {
				names[m[2]] = true
			}
		}
		want := []string{runs[0].Policy, runs[1].Policy}
		if strings.HasPrefix(f.file, "tenant_rho_") {
			want = []string{"x", "y"}
		}
		for _, n := range want {
			if !names[n] {
				t.Errorf("%s: %q is not in the legend beside the data (texts there: %v)", f.file, n, names)
			}
		}
	}
}

func TestRhoJobFigureMarksTheThresholdAndEndsAtTheClip(t *testing.T) {
	figs, err := buildFigures(twoRuns(), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := figureNamed(t, figs, RhoJobCDFSVG)
	if f.p.X.Min != 0 || f.p.X.Max != rhoClip {
		t.Errorf("x axis [%v, %v], want [0, %v]: it ends at the last bucket", f.p.X.Min, f.p.X.Max, rhoClip)
	}
	if !hasLegendEntry(f, "ρ_job = 0.95") {
		t.Errorf("the 0.95 threshold is not named in the legend: %v", legendTexts(f))
	}
}

func TestFiguresNameTheirIntervalLength(t *testing.T) {
	runs := twoRuns() // hour-long tenant intervals
	figs, err := buildFigures(runs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{TenantRhoSVG, "tenant_rho_astraea.svg"} {
		if title := figureNamed(t, figs, file).p.Title.Text; !strings.Contains(title, "1 h") {
			t.Errorf("%s: title %q does not name the 1 h interval", file, title)
		}
	}
}

// The utilization figure covers the submission window and at most a
// quarter of its length after it, shaded: a long drain is cut, a short
// one shown whole.
func TestUtilizationFigureShowsTheWindow(t *testing.T) {
	run := func(end int) Run {
		return Run{Policy: "p",
			Jobs: []JobRecord{{ID: "a", Tenant: "x", GPUs: 1, Submit: at(0), FirstStart: at(0), End: at(end), Run: time.Duration(end) * time.Second, Rho: 1},
				{ID: "b", Tenant: "x", GPUs: 1, Submit: at(4 * 3600), FirstStart: at(4 * 3600), End: at(4*3600 + 60), Run: time.Minute, Rho: 1}},
			Util: []UtilPoint{{At: at(0), Used: 1, Capacity: 2}, {At: at(end), Used: 0, Capacity: 2}},
			End:  at(end),
		}
	}
	for _, tc := range []struct {
		name string
		end  int     // seconds
		want float64 // hours where the axis ends
	}{
		{"a drain of 36 h is cut an hour after the 4 h window", 40 * 3600, 5},
		{"a drain of 30 min is shown whole", 4*3600 + 1800, 4.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			figs, err := buildFigures([]Run{run(tc.end)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			f := figureNamed(t, figs, UtilizationSVG)
			if f.p.X.Max != tc.want {
				t.Errorf("x axis ends at %v h, want %v", f.p.X.Max, tc.want)
			}
			if !hasLegendEntry(f, "after last submission") {
				t.Errorf("the drain is not shaded and named: %v", legendTexts(f))
			}
			for _, g := range figs {
				if g != f && hasLegendEntry(g, "after last submission") {
					t.Errorf("%s shades the drain too: %v", g.file, legendTexts(g))
				}
			}
			xy := utilSeries(run(tc.end), at(0), at(int(tc.want*3600)))
			if last := xy[len(xy)-1].X; last > tc.want {
				t.Errorf("the series runs on to %v h, past the axis", last)
			}
		})
	}
}

func TestDecadeTicks(t *testing.T) {
	var labels []string
	for _, tk := range (decadeTicks{}).Ticks(1, 5000) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "1 10 100 10³" {
		t.Errorf("labels %q, want 1 10 100 10³", got)
	}
	// Within a decade: 1, the unlabelled 2…9 and 10.
	var values []float64
	for _, tk := range (decadeTicks{}).Ticks(1, 10) {
		values = append(values, tk.Value)
	}
	if want := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; !slices.Equal(values, want) {
		t.Errorf("ticks of [1, 10] at %v, want %v", values, want)
	}
	for _, r := range [][2]float64{{0, 10}, {10, 1}, {-1, 10}, {10, 10}} {
		if ts := (decadeTicks{}).Ticks(r[0], r[1]); len(ts) > 0 {
			t.Errorf("ticks of [%v, %v]: %v, want none", r[0], r[1], ts)
		}
	}
	// [lo, hi] is closed: a power-of-ten multiple at either end that
	// m·10^e misses by a rounding (5·10⁻⁶ and 3·10⁻¹) is marked, and
	// nothing outside it is.
	for _, r := range [][3]float64{{5e-6, 1e-5, 5e-6}, {0.1, 0.3, 0.3}, {5, 50, 5}} {
		ts := (decadeTicks{}).Ticks(r[0], r[1])
		if !slices.ContainsFunc(ts, func(tk plot.Tick) bool { return math.Abs(tk.Value-r[2]) <= 1e-12*r[2] }) {
			t.Errorf("ticks of [%v, %v] %v, want one at %v", r[0], r[1], ts, r[2])
		}
		for _, tk := range ts {
			if tk.Value < r[0]*(1-1e-12) || tk.Value > r[1]*(1+1e-12) {
				t.Errorf("ticks of [%v, %v]: one at %v, outside", r[0], r[1], tk.Value)
			}
		}
	}
	for e, want := range map[int]string{-3: "10⁻³", -2: "10⁻²", -1: "0.1", 0: "1", 1: "10", 2: "100", 3: "10³", 12: "10¹²"} {
		if got := powerOfTen(e); got != want {
			t.Errorf("powerOfTen(%d) = %q, want %q", e, got, want)
		}
	}
	var _ plot.Ticker = decadeTicks{}
}

// The worst-off tenant figure names the shortest interval length of the
// runs that have tenant intervals; a run without any does not shorten it.
func TestTenantFigureTitleBesideARunWithoutIntervals(t *testing.T) {
	runs := twoRuns() // hour-long tenant intervals
	runs[1].Tenants = nil
	figs, err := buildFigures(runs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := figureNamed(t, figs, TenantRhoSVG).p.Title.Text, "Worst-off tenant per 1 h interval"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
}

// The length named is the shortest positive one: an interval of no length
// (From = To, Length unset) does not shorten it.
func TestShortestLengthIsPositive(t *testing.T) {
	r := twoRuns()[0] // hour-long tenant intervals
	r.Tenants = append(r.Tenants, TenantInterval{Tenant: "x", From: at(7200), To: at(7200), Account: acct(0, 0)})
	if got := shortestLength(r.Tenants); got != time.Hour {
		t.Errorf("shortestLength = %v, want 1h", got)
	}
	figs, err := buildFigures([]Run{r}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if title := figureNamed(t, figs, "tenant_rho_astraea.svg").p.Title.Text; !strings.Contains(title, "read every 1 h:") {
		t.Errorf("title %q, want it read every 1 h", title)
	}
}

// The grid lies over the shades and under the lines: in the utilization
// figure it is drawn after the drain shade and before the first run.
func TestGridOverShadesUnderLines(t *testing.T) {
	r := Run{Policy: "p",
		Jobs: []JobRecord{{ID: "a", Tenant: "x", GPUs: 1, Submit: at(0), FirstStart: at(0), End: at(40 * 3600), Run: 40 * time.Hour, Rho: 1},
			{ID: "b", Tenant: "x", GPUs: 1, Submit: at(4 * 3600), FirstStart: at(4 * 3600), End: at(4*3600 + 60), Run: time.Minute, Rho: 1}},
		Util:    []UtilPoint{{At: at(0), Used: 1, Capacity: 2}, {At: at(40 * 3600), Used: 0, Capacity: 2}},
		Tenants: []TenantInterval{{Tenant: "x", From: at(0), To: at(3600), Account: acct(1800, 3600)}, {Tenant: "x", From: at(3600), To: at(7200), Account: acct(3600, 3600)}},
		End:     at(40 * 3600),
	}
	figs, err := buildFigures([]Run{r}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		rec := &recorder.Canvas{}
		plotC, _ := f.layout(draw.NewCanvas(rec, figureWidth, figureHeight))
		f.p.Draw(plotC)
		shade, grid, line := -1, -1, -1
		var col color.Color
		for i, a := range rec.Actions {
			switch a := a.(type) {
			case *recorder.SetColor:
				col = a.Color
			case *recorder.Fill:
				if col == drainColor && shade < 0 {
					shade = i
				}
			case *recorder.Stroke:
				switch {
				case col == plotter.DefaultGridLineStyle.Color && grid < 0:
					grid = i
				case col == color.Color(RunColor(0)) && line < 0:
					line = i
				}
			}
		}
		if grid < 0 || line < 0 || grid > line {
			t.Errorf("%s: grid drawn at step %d, the first line at %d; want the grid first", f.file, grid, line)
		}
		if f.file == UtilizationSVG && (shade < 0 || shade > grid) {
			t.Errorf("%s: drain shade drawn at step %d, the grid at %d; want the shade first", f.file, shade, grid)
		}
	}
}

// Runs without tenant intervals have no length to name: the worst-off
// tenant figure is titled per "interval", once.
func TestTenantFigureTitleWithoutIntervals(t *testing.T) {
	r := tiny()
	r.Tenants = nil
	figs, err := buildFigures([]Run{r}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := figureNamed(t, figs, TenantRhoSVG).p.Title.Text; got != "Worst-off tenant per interval" {
		t.Errorf("title %q, want %q", got, "Worst-off tenant per interval")
	}
}

// The 0.95 threshold line of the ρ_job figure stands at ρ = 0.95 across
// the whole fraction axis, from 0 to 1.
func TestRhoJobThresholdLineSpansTheFractionAxis(t *testing.T) {
	figs, err := buildFigures(twoRuns(), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, tx, ty := drawnFigure(t, figs, RhoJobCDFSVG)
	bottom, top := vg.Point{X: tx(0.95), Y: ty(0)}, vg.Point{X: tx(0.95), Y: ty(1)}
	var col color.Color
	var dashes []vg.Length
	var strokes []vg.Path
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.SetColor:
			col = a.Color
		case *recorder.SetLineDash:
			dashes = a.Dashes
		case *recorder.Stroke:
			p := a.Path
			if len(p) == 2 && nearPoint(p[0].Pos, bottom) && nearPoint(p[1].Pos, top) {
				// WriteFigures: a dark grey, which no run is, dashed.
				if lvl, ok := neutralGrey(col); !ok || lvl >= 128 {
					t.Errorf("threshold line in %v, want a dark neutral grey that no run uses", col)
				}
				if len(dashes) != 2 || !(dashes[0] > 0) || !(dashes[1] > 0) {
					t.Errorf("threshold line dashed %v, want a positive dash and gap", dashes)
				}
				return
			}
			strokes = append(strokes, p)
		}
	}
	t.Errorf("no line from %v to %v among the strokes %v", bottom, top, strokes)
}

// neutralGrey returns the level of c when c is an opaque grey (red, green
// and blue alike) that no run's colour is.
func neutralGrey(c color.Color) (level uint8, ok bool) {
	rgba := color.RGBAModel.Convert(c).(color.RGBA)
	for i := range 8 {
		if rgba == RunColor(i) {
			return 0, false
		}
	}
	return rgba.R, rgba.A == 255 && rgba.R == rgba.G && rgba.G == rgba.B
}

// The drain after the last submission is shaded in a light neutral grey,
// across the fraction axis from the last submission to the axis's end.
func TestDrainShadeIsLightGrey(t *testing.T) {
	r := Run{Policy: "p",
		Jobs: []JobRecord{{ID: "a", Tenant: "x", GPUs: 1, Submit: at(0), FirstStart: at(0), End: at(40 * 3600), Run: 40 * time.Hour, Rho: 1},
			{ID: "b", Tenant: "x", GPUs: 1, Submit: at(4 * 3600), FirstStart: at(4 * 3600), End: at(4*3600 + 60), Run: time.Minute, Rho: 1}},
		Util: []UtilPoint{{At: at(0), Used: 1, Capacity: 2}, {At: at(40 * 3600), Used: 0, Capacity: 2}},
		End:  at(40 * 3600),
	}
	figs, err := buildFigures([]Run{r}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, tx, ty := drawnFigure(t, figs, UtilizationSVG)
	// The window is 4 h and the axis ends an hour after it: the shade is
	// the rectangle [4, 5] × [0, 1], whose corners are all the path visits.
	corners := []vg.Point{{X: tx(4), Y: ty(0)}, {X: tx(5), Y: ty(0)}, {X: tx(5), Y: ty(1)}, {X: tx(4), Y: ty(1)}}
	var col color.Color
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.SetColor:
			col = a.Color
		case *recorder.Fill:
			seen := make([]bool, len(corners))
			other := false
			for _, c := range a.Path {
				k := slices.IndexFunc(corners, func(p vg.Point) bool { return nearPoint(c.Pos, p) })
				if k < 0 {
					other = other || c.Type != vg.CloseComp
					continue
				}
				seen[k] = true
			}
			if seen[0] && seen[2] {
				if other || slices.Contains(seen, false) {
					t.Errorf("drain shade %v, want the rectangle with corners %v", a.Path, corners)
				}
				if lvl, ok := neutralGrey(col); !ok || lvl <= 191 {
					t.Errorf("drain shade in %v, want a light neutral grey that no run uses", col)
				}
				return
			}
		}
	}
	t.Errorf("no fill with corners %v", corners)
}

// Each axis has the ticks its doc names: ρ axes rhoTicks, the slowdown's
// log axis every power of ten, time axes hourTicks.
func TestFigureAxisTicks(t *testing.T) {
	figs, err := buildFigures(twoRuns(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := figureNamed(t, figs, RhoJobCDFSVG).p.X.Tick.Marker; !slices.Equal(got.(plot.ConstantTicks), rhoTicks()) {
		t.Errorf("ρ_job axis ticks %v, want rhoTicks", got)
	}
	if got := figureNamed(t, figs, SlowdownCDFSVG).p.X.Tick.Marker; got != (decadeTicks{}) {
		t.Errorf("slowdown axis ticks %T, want decadeTicks", got)
	}
	for _, file := range []string{TenantRhoSVG, UtilizationSVG, "tenant_rho_astraea.svg", "tenant_rho_yarn-cs.svg"} {
		if got := figureNamed(t, figs, file).p.X.Tick.Marker; got != (hourTicks{}) {
			t.Errorf("%s: time axis ticks %T, want hourTicks", file, got)
		}
	}
}

// The ρ axes are marked at 0, 0.5, 1, 1.5 and the clip value 2, with an
// unlabelled tick at the 0.95 threshold.
func TestRhoTicks(t *testing.T) {
	want := plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 0.5, Label: "0.5"}, {Value: 0.95, Label: ""},
		{Value: 1, Label: "1"}, {Value: 1.5, Label: "1.5"}, {Value: 2, Label: "≥ 2"}}
	if got := rhoTicks(); !slices.Equal(got, want) {
		t.Errorf("rhoTicks() = %v, want %v", got, want)
	}
}

// A step that starts within a floating-point rounding of the series' end
// belongs to the last bucket: on a run of about 321 days in three buckets,
// the offset of a step 4 ns before End, divided by the bucket width,
// rounds up to 3, one past the last bucket.
func TestUtilSeriesStepAtTheRoundingEdge(t *testing.T) {
	const span = 27763953154568672 // ns; float64(span)/3 rounds down
	start := time.Unix(0, 0).UTC()
	r := Run{
		Util: []UtilPoint{{At: start, Used: 1, Capacity: 2}, {At: start.Add(time.Second), Used: 1, Capacity: 2},
			{At: start.Add(span - 4), Used: 2, Capacity: 2}},
		End: start.Add(span),
	}
	xy := utilSeries(r, start, time.Time{})
	if len(xy) != 3 {
		t.Fatalf("utilSeries = %v, want 3 buckets", xy)
	}
	for _, p := range xy {
		if !near(p.Y, 0.5) {
			t.Errorf("bucket at %v h: utilization %v, want 0.5 (the last 4 ns at 1 are below a float's resolution)", p.X, p.Y)
		}
	}
}

// The last bucket runs to the series' end even where the bucket width
// times the bucket count rounds short of the span: 61 ns in 7 buckets
// of 61/7 ns, 7 × (61/7) being 60.99999999999999 in float64.
func TestUtilSeriesLastBucketReachesTheEnd(t *testing.T) {
	start := time.Unix(0, 0).UTC()
	var pts []UtilPoint
	for i := range 7 {
		pts = append(pts, UtilPoint{At: start.Add(time.Duration(i)), Used: 1, Capacity: 2})
	}
	xy := utilSeries(Run{Util: pts, End: start.Add(61)}, start, time.Time{})
	if len(xy) != 7 {
		t.Fatalf("utilSeries = %v, want 7 buckets", xy)
	}
	for _, p := range xy {
		if !near(p.Y, 0.5) {
			t.Errorf("bucket at %v h: utilization %v, want 0.5", p.X, p.Y)
		}
	}
}

// A viewer may draw the legend in a wider serif than the one it was
// measured in, so the legend gets a fifth more room than its text needs.
func TestLegendRoomAFifthWider(t *testing.T) {
	figs, err := buildFigures(twoRuns(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		dc := draw.New(vgsvg.New(figureWidth, figureHeight))
		_, legendC := f.layout(dc)
		need := f.legend.Rectangle(dc).Size().X
		if got := legendC.Size().X; got < 1.2*need {
			t.Errorf("%s: legend room %v for a legend %v wide, want at least %v", f.file, got, need, 1.2*need)
		}
	}
}

// drawnFigure draws the figure named name on a recording canvas of the
// page's size and returns the recording with the plot's data-to-canvas
// transforms.
func drawnFigure(t *testing.T, figs []*figure, name string) (*recorder.Canvas, func(float64) vg.Length, func(float64) vg.Length) {
	t.Helper()
	f := figureNamed(t, figs, name)
	rec := &recorder.Canvas{}
	plotC, _ := f.layout(draw.NewCanvas(rec, figureWidth, figureHeight))
	f.p.Draw(plotC)
	data := f.p.DataCanvas(plotC)
	tx, ty := f.p.Transforms(&data)
	return rec, tx, ty
}

// nearPoint reports whether a and b are the same point on the canvas, up
// to the rounding of the transforms (0.01 pt).
func nearPoint(a, b vg.Point) bool {
	return math.Abs(float64(a.X-b.X)) < 0.01 && math.Abs(float64(a.Y-b.Y)) < 0.01
}
