package metrics

import (
	"fmt"
	"image/color"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/astraea-sched/astraea/ledger"
)

// Figure file names written by WriteFigures.
const (
	RhoJobCDFSVG   = "rho_job_cdf.svg"
	SlowdownCDFSVG = "slowdown_cdf.svg"
	TenantRhoSVG   = "tenant_rho.svg"
	UtilizationSVG = "utilization.svg"
)

// rhoClip is where ρ axes end: larger ρ (and +Inf) is drawn at rhoClip.
const rhoClip = 2.0

// maxPoints bounds the points of one line; longer series are reduced
// (quantiles for CDFs, time buckets for series) so figures stay small.
const maxPoints = 1000

// palette colours runs in the order given: the Okabe–Ito colours, which
// stay apart for colour-blind readers, with grey in place of their yellow,
// which is too light for a thin line on white paper.
var palette = [...]color.RGBA{
	{0, 114, 178, 255},   // blue
	{213, 94, 0, 255},    // vermilion
	{0, 158, 115, 255},   // green
	{204, 121, 167, 255}, // purple
	{230, 159, 0, 255},   // orange
	{86, 180, 233, 255},  // sky blue
	{0, 0, 0, 255},       // black
	{136, 136, 136, 255}, // grey
}

// dashes are the line styles runs cycle through beside the colours:
// solid, dashed, dotted. Three styles and eight colours have no common
// factor, so the first 24 lines of a figure (8 policies, or up to 24
// tenants) each get a colour and style of their own, and a figure printed
// in grey still tells neighbouring lines apart.
var dashes = [...][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(1.5), vg.Points(2)}}

// RunColor returns the colour of the i-th run in every figure.
func RunColor(i int) color.RGBA { return palette[i%len(palette)] }

// RunStyle returns the line style of the i-th run (or tenant) in every
// figure: RunColor(i), and a dash pattern that cycles with period 3, so
// that no two of the first 24 lines look alike.
func RunStyle(i int) draw.LineStyle {
	return draw.LineStyle{Color: RunColor(i), Width: vg.Points(1.4), Dashes: dashes[i%len(dashes)]}
}

// Marks drawn on the data that are not runs: the sharing-loss threshold
// and the drain after the last submission.
var (
	markColor  = color.RGBA{96, 96, 96, 255}
	drainColor = color.RGBA{232, 232, 232, 255}
)

// WriteFigures writes SVG figures into dir (created if needed), one line per
// run in every figure, runs styled in the order given (RunStyle), with the
// legend to the right of the data:
//
//   - rho_job_cdf.svg: CDF of ρ_job over finished jobs (ρ above 2, and
//     +Inf, drawn at 2, where the axis ends), the sharing-loss threshold
//     0.95 marked by a thin dashed dark grey line;
//   - slowdown_cdf.svg: CDF of slowdown, logarithmic x axis marked at
//     every power of ten;
//   - tenant_rho.svg: the lowest tenant ρ in each interval of the shortest
//     interval length (the worst-off tenant over time), clipped at 2; the
//     length is named in the title;
//   - utilization.svg: utilization over time (∫used ÷ ∫capacity per time
//     bucket) over the submission window, followed by at most a quarter
//     of its length of the drain after the last submission, shaded light
//     grey.
//
// The marks that are not runs (that line and that shade) are neutral
// greys, which no run's colour (RunColor) is. A grid at the ticks lies
// over the shades and under the lines.
//
// Time axes are hours since the earliest submit or occupancy point of all
// runs, marked at a span a reader counts in (hours, days or weeks). Each
// run also gets tenant_rho_<policy>.svg with one line per tenant: its
// cumulative ρ since the start of the run, read at the end of every
// interval of the shortest length.
func WriteFigures(dir string, runs ...Run) error {
	return writeFigures(dir, runs, nil)
}

// WritePhaseFigures is WriteFigures for policies run at several tick
// phases: phases[i] holds policy i's runs, one per phase. The figures draw
// each policy's first run as WriteFigures does, and the two CDFs (ρ_job and
// slowdown) shade beneath each line the band between the lowest and the
// highest of its runs' CDFs, so that what varies with the phase shows. The
// time series are the first run's.
func WritePhaseFigures(dir string, phases ...[]Run) error {
	firsts := make([]Run, len(phases))
	bands := map[string][]plotter.XYs{RhoJobCDFSVG: make([]plotter.XYs, len(phases)), SlowdownCDFSVG: make([]plotter.XYs, len(phases))}
	for i, runs := range phases {
		if len(runs) == 0 {
			return fmt.Errorf("metrics: policy %d has no run", i)
		}
		firsts[i] = runs[0]
		if len(runs) > 1 {
			bands[RhoJobCDFSVG][i] = cdfBand(runs, rhoValues, false)
			bands[SlowdownCDFSVG][i] = cdfBand(runs, slowdownValues, true)
		}
	}
	return writeFigures(dir, firsts, bands)
}

func writeFigures(dir string, runs []Run, bands map[string][]plotter.XYs) error {
	if err := checkPolicies(runs); err != nil {
		return err
	}
	figs, err := buildFigures(runs, bands)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	for _, f := range figs {
		if err := f.save(filepath.Join(dir, f.file)); err != nil {
			return err
		}
	}
	return nil
}

// buildFigures makes the figures WriteFigures writes, in memory, with the
// bands, by figure file, to shade beneath each run's line (nil: none).
func buildFigures(runs []Run, bands map[string][]plotter.XYs) ([]*figure, error) {
	origin := originOf(runs)
	lastSubmit, cut := window(runs)
	every := "interval"
	if d := shortestOf(runs); d > 0 {
		every = fmtLength(d) + " interval"
	}
	specs := []struct {
		file, title, x, y string
		logX              bool
		series            func(Run) plotter.XYs
	}{
		{RhoJobCDFSVG, "Job fairness", "ρ_job (clipped at 2)", "fraction of jobs", false, rhoJobCDF},
		{SlowdownCDFSVG, "Slowdown", "slowdown (log scale)", "fraction of jobs", true, slowdownCDF},
		{TenantRhoSVG, "Worst-off tenant per " + every, "hours", "lowest ρ_tenant in the interval (clipped at 2)", false,
			func(r Run) plotter.XYs { return lowestTenantRho(r, origin) }},
		{UtilizationSVG, "Utilization", "hours", "used ÷ capacity", false,
			func(r Run) plotter.XYs { return utilSeries(r, origin, cut) }},
	}
	var figs []*figure
	for _, sp := range specs {
		f := newFigure(sp.file, sp.title, sp.x, sp.y, sp.logX)
		if sp.file == UtilizationSVG && !cut.IsZero() && cut.After(lastSubmit) {
			if err := f.shade(hours(lastSubmit, origin), hours(cut, origin), "after last submission"); err != nil {
				return nil, fmt.Errorf("metrics: %s: %w", sp.file, err)
			}
		}
		for i, r := range runs {
			if b := bands[sp.file]; b != nil && b[i] != nil {
				if err := f.band(b[i], RunColor(i)); err != nil {
					return nil, fmt.Errorf("metrics: %s: %w", sp.file, err)
				}
			}
			if err := f.addLine(sp.series(r), RunStyle(i), r.Policy); err != nil {
				return nil, fmt.Errorf("metrics: %s: %w", sp.file, err)
			}
		}
		f.fitX(sp.logX)
		switch {
		case sp.file == RhoJobCDFSVG:
			f.p.X.Min, f.p.X.Max = 0, rhoClip
			f.p.X.Tick.Marker = rhoTicks()
			th := DefaultSummaryConfig().JobLoss
			if err := f.vline(th, "ρ_job = "+strconv.FormatFloat(th, 'f', -1, 64)+" (loss below)"); err != nil {
				return nil, fmt.Errorf("metrics: %s: %w", sp.file, err)
			}
		case sp.file == UtilizationSVG && !cut.IsZero():
			f.p.X.Max = hours(cut, origin)
			f.p.X.Tick.Marker = hourTicks{}
		case sp.x == "hours":
			f.p.X.Tick.Marker = hourTicks{}
		}
		figs = append(figs, f)
	}
	for _, r := range runs {
		title := "Tenant ρ since start, read every " + fmtLength(shortestLength(r.Tenants)) + ": " + r.Policy
		f := newFigure("tenant_rho_"+fileSafe(r.Policy)+".svg", title, "hours", "cumulative ρ_tenant (clipped at 2)", false)
		for i, s := range cumulativeTenantRho(r, origin) {
			if err := f.addLine(s.xy, RunStyle(i), s.tenant); err != nil {
				return nil, fmt.Errorf("metrics: tenant ρ of %s: %w", r.Policy, err)
			}
		}
		f.fitX(false)
		f.p.X.Tick.Marker = hourTicks{}
		figs = append(figs, f)
	}
	return figs, nil
}

// A figure is a plot and its legend, which is drawn beside the plot, not
// on the data.
type figure struct {
	file   string // the file name WriteFigures gives it
	p      *plot.Plot
	legend plot.Legend
	grid   bool // the grid is added, under the first line
}

func newFigure(file, title, x, y string, logX bool) *figure {
	f := &figure{file: file, p: newPlot(title, x, y, logX), legend: plot.NewLegend()}
	f.legend.Top, f.legend.Left = true, true
	f.legend.ThumbnailWidth = vg.Points(24)
	return f
}

// addLine adds one line. An empty series still gets a legend entry, so every
// run is named in every figure.
func (f *figure) addLine(xy plotter.XYs, style draw.LineStyle, name string) error {
	if len(xy) == 0 {
		xy = plotter.XYs{}
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.LineStyle = style
	f.addGrid()
	if len(xy) > 0 {
		f.p.Add(l)
	}
	f.legend.Add(name, l)
	return nil
}

// vline marks x with a thin dashed vertical line across the y range [0,
// 1], named in the legend.
func (f *figure) vline(x float64, name string) error {
	l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: 1}})
	if err != nil {
		return err
	}
	l.LineStyle = draw.LineStyle{Color: markColor, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
	f.addGrid()
	f.p.Add(l)
	f.legend.Add(name, l)
	return nil
}

// addGrid adds the grid once, before the first line, so that it lies over
// a shaded range and under the lines.
func (f *figure) addGrid() {
	if !f.grid {
		f.p.Add(plotter.NewGrid())
		f.grid = true
	}
}

// shade fills the x range [from, to] over the y range [0, 1] under the
// lines, named in the legend.
func (f *figure) shade(from, to float64, name string) error {
	pg, err := plotter.NewPolygon(plotter.XYs{{X: from, Y: 0}, {X: to, Y: 0}, {X: to, Y: 1}, {X: from, Y: 1}})
	if err != nil {
		return err
	}
	pg.Color = drainColor
	pg.LineStyle.Width = 0
	f.p.Add(pg)
	f.legend.Add(name, pg)
	return nil
}

// band shades the polygon xy in a light tint of c, under the lines that
// follow it. It has no legend entry: the line of its run names it.
func (f *figure) band(xy plotter.XYs, c color.RGBA) error {
	pg, err := plotter.NewPolygon(xy)
	if err != nil {
		return err
	}
	pg.Color = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 60}
	pg.LineStyle.Width = 0
	f.addGrid()
	f.p.Add(pg)
	return nil
}

// figureWidth and figureHeight are the size of every figure: a column
// of a paper page set in landscape.
const (
	figureWidth  = 8 * vg.Inch
	figureHeight = 5 * vg.Inch
)

// layout splits the canvas dc of a figure into the plot's part, on the
// left, and the legend's, on the right, its top level with the top of
// the data.
func (f *figure) layout(dc draw.Canvas) (plotC, legendC draw.Canvas) {
	// The SVG names its font (Liberation Serif, metric-compatible with
	// Times) without embedding it, which would add half a megabyte to each
	// figure; a viewer without it substitutes a wider serif, so the
	// legend gets a fifth more room than its text needs here.
	gap := vg.Points(8)
	width := f.legend.Rectangle(dc).Size().X*1.2 + 2*gap
	plotC = draw.Crop(dc, 0, -width, 0, 0)
	// The data's top is below the title, and below half of a y tick
	// label that stands at the top of the axis: read it from the plot.
	top := dc.Max.Y - f.p.DataCanvas(plotC).Max.Y
	return plotC, draw.Crop(dc, dc.Size().X-width+gap, 0, 0, -top)
}

// save draws the figure on a white page and writes it as SVG.
func (f *figure) save(path string) error {
	c := vgsvg.New(figureWidth, figureHeight)
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	plotC, legendC := f.layout(dc)
	f.p.Draw(plotC)
	f.legend.Draw(legendC)
	return writeAtomic(path, func(w io.Writer) error {
		_, err := c.WriteTo(w)
		return err
	})
}

func newPlot(title, x, y string, logX bool) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	return p
}

// rhoTicks marks ρ axes at 0, 0.5, 1 (fair), 1.5 and the clip value 2.
// The unlabelled minor tick is the sharing-loss threshold 0.95.
func rhoTicks() plot.ConstantTicks {
	return plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 0.5, Label: "0.5"}, {Value: 0.95, Label: ""},
		{Value: 1, Label: "1"}, {Value: 1.5, Label: "1.5"}, {Value: rhoClip, Label: "≥ 2"}}
}

// hourTicks marks a time axis in hours at multiples of a span a reader
// counts in (1, 2, 3, 6 or 12 hours, a day, two or three days, a week or
// whole weeks), the first of which the range holds at most eight (so at
// most nine labels), with an unlabelled tick halfway between them: a
// fortnight's run is marked every week, not every 300 hours.
type hourTicks struct{}

// Ticks returns the ticks of [lo, hi]: none for a range no step marks
// (empty, or not finite), which the plotting library, widening an empty
// range before it asks, never passes.
func (hourTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return nil
	}
	const most = 8
	step := 1.0
	for _, h := range []float64{1, 2, 3, 6, 12, 24, 48, 72, 168} {
		step = h
		if (hi-lo)/h <= most {
			break
		}
	}
	for (hi-lo)/step > most {
		step *= 2 // whole weeks
	}
	var ts []plot.Tick
	first := math.Ceil(lo/step*2) * step / 2
	// At most 2·most+1 ticks fit; counting them, rather than adding half
	// steps until hi, also ends where a half step is below the precision
	// of the values.
	for i := range 2*most + 2 {
		v := first + float64(i)*step/2
		if v > hi {
			break
		}
		t := plot.Tick{Value: v}
		if math.Mod(v, step) == 0 {
			t.Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
		ts = append(ts, t)
	}
	return ts
}

// fitX makes the x range one the axis can draw: a log axis needs 0 < Min
// < Max, which a run with no jobs or with one slowdown value does not give,
// and the plotting library panics. The y axis starts at 0.
func (f *figure) fitX(logX bool) {
	p := f.p
	if logX {
		if !(p.X.Min > 0) || math.IsInf(p.X.Min, 0) {
			p.X.Min = 1
		}
		if !(p.X.Max > p.X.Min) || math.IsInf(p.X.Max, 0) {
			p.X.Max = p.X.Min * 10
		}
		p.X.Tick.Marker = decadeTicks{}
	}
	p.Y.Min = math.Min(p.Y.Min, 0)
}

func fileSafe(s string) string {
	if s == "" {
		return "run"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// cdf returns the empirical CDF of xs (sorted in place) as at most maxPoints
// (value, fraction ≤ value) points taken at evenly spaced ranks.
func cdf(xs []float64) plotter.XYs {
	slices.Sort(xs)
	n := len(xs)
	if n == 0 {
		return nil
	}
	step := max(1, (n+maxPoints-1)/maxPoints)
	var out plotter.XYs
	for k := step; k < n+step; k += step {
		rank := min(k, n)
		out = append(out, plotter.XY{X: xs[rank-1], Y: float64(rank) / float64(n)})
	}
	return out
}

func clipRho(r ledger.Rho) float64 {
	if r.IsInf() || float64(r) > rhoClip {
		return rhoClip
	}
	return float64(r)
}

func rhoJobCDF(r Run) plotter.XYs   { return cdf(rhoValues(r)) }
func slowdownCDF(r Run) plotter.XYs { return cdf(slowdownValues(r)) }

// rhoValues are the finished jobs' ρ_job, clipped at rhoClip.
func rhoValues(r Run) []float64 {
	var xs []float64
	for _, j := range r.Jobs {
		if j.Finished() {
			xs = append(xs, clipRho(j.Rho))
		}
	}
	return xs
}

// slowdownValues are the finished jobs' slowdowns (1 s minimum divisor).
func slowdownValues(r Run) []float64 {
	var xs []float64
	for _, j := range r.Jobs {
		if j.Finished() {
			xs = append(xs, j.Slowdown(time.Second))
		}
	}
	return xs
}

// bandPoints is how many x values a CDF band is evaluated at.
const bandPoints = 256

// cdfBand returns the polygon between the lowest and the highest of the
// runs' empirical CDFs of values, evaluated at bandPoints x values spread
// over the range of all values (evenly, or evenly in log x when logX).
func cdfBand(runs []Run, values func(Run) []float64, logX bool) plotter.XYs {
	sorted := make([][]float64, len(runs))
	lo, hi := math.Inf(1), math.Inf(-1)
	for k, r := range runs {
		xs := values(r)
		slices.Sort(xs)
		sorted[k] = xs
		if len(xs) > 0 {
			lo, hi = min(lo, xs[0]), max(hi, xs[len(xs)-1])
		}
	}
	if !(lo <= hi) || (logX && !(lo > 0)) {
		return nil
	}
	upper := make(plotter.XYs, bandPoints)
	lower := make(plotter.XYs, bandPoints)
	for i := range bandPoints {
		t := float64(i) / (bandPoints - 1)
		x := lo + t*(hi-lo)
		if logX {
			x = lo * math.Pow(hi/lo, t)
		}
		fmin, fmax := 1.0, 0.0
		for _, xs := range sorted {
			f := 1.0
			if len(xs) > 0 {
				n, _ := slices.BinarySearch(xs, math.Nextafter(x, math.Inf(1)))
				f = float64(n) / float64(len(xs))
			}
			fmin, fmax = min(fmin, f), max(fmax, f)
		}
		upper[i] = plotter.XY{X: x, Y: fmax}
		lower[bandPoints-1-i] = plotter.XY{X: x, Y: fmin}
	}
	return append(upper, lower...)
}

func originOf(runs []Run) time.Time {
	var o time.Time
	upd := func(t time.Time) {
		if !t.IsZero() && (o.IsZero() || t.Before(o)) {
			o = t
		}
	}
	for _, r := range runs {
		for _, j := range r.Jobs {
			upd(j.Submit)
		}
		for _, p := range r.Util {
			upd(p.At)
		}
		for _, t := range r.Tenants {
			upd(t.From)
		}
	}
	return o
}

func hours(t, origin time.Time) float64 { return t.Sub(origin).Hours() }

// lowestTenantRho is, per interval of the shortest length, the lowest
// tenant ρ, plotted at the interval's end.
func lowestTenantRho(r Run, origin time.Time) plotter.XYs {
	short := shortestLength(r.Tenants)
	low := map[time.Time]float64{}
	for _, t := range r.Tenants {
		if t.IntervalLength() != short {
			continue
		}
		x := clipRho(t.Rho())
		if v, ok := low[t.To]; !ok || x < v {
			low[t.To] = x
		}
	}
	ends := slices.SortedFunc(maps.Keys(low), time.Time.Compare)
	out := make(plotter.XYs, 0, len(ends))
	for _, e := range ends {
		out = append(out, plotter.XY{X: hours(e, origin), Y: low[e]})
	}
	return thin(out)
}

type tenantSeries struct {
	tenant string
	xy     plotter.XYs
}

// cumulativeTenantRho is each tenant's ρ from the start of the run to the
// end of every interval of the shortest length, tenants sorted by name.
func cumulativeTenantRho(r Run, origin time.Time) []tenantSeries {
	short := shortestLength(r.Tenants)
	by := map[string][]TenantInterval{}
	for _, t := range r.Tenants {
		if t.IntervalLength() == short {
			by[t.Tenant] = append(by[t.Tenant], t)
		}
	}
	var out []tenantSeries
	for _, name := range slices.Sorted(maps.Keys(by)) {
		ts := by[name]
		slices.SortStableFunc(ts, cmpIntervals)
		var alloc, fair ledger.GPUSeconds
		var xy plotter.XYs
		for _, t := range ts {
			alloc += t.Account.Alloc
			fair += t.Account.FairShare
			xy = append(xy, plotter.XY{X: hours(t.To, origin), Y: clipRho(ledger.Ratio(alloc, fair))})
		}
		out = append(out, tenantSeries{name, thin(xy)})
	}
	return out
}

// thin keeps at most maxPoints points: every step-th from the first, with
// the smallest step that keeps so few, and always the last.
func thin(xy plotter.XYs) plotter.XYs {
	if len(xy) <= maxPoints {
		return xy
	}
	// The step leaves room for the last point when the grid misses it:
	// ⌊(n−1)/step⌋ < maxPoints−1 then, so grid and last stay ≤ maxPoints.
	step := (len(xy) - 1 + maxPoints - 2) / (maxPoints - 1)
	var out plotter.XYs
	for i := 0; i < len(xy); i += step {
		out = append(out, xy[i])
	}
	if out[len(out)-1] != xy[len(xy)-1] {
		out = append(out, xy[len(xy)-1])
	}
	return out
}

// window returns the last submission of all runs, and where the time
// axis of the utilization figure ends: the end of the last run, but at
// most a quarter of the submission window after the last submission, so
// that a long drain does not squeeze the window into the left of the
// figure. Both are zero when no run has a job.
func window(runs []Run) (lastSubmit, cut time.Time) {
	var first, end time.Time
	for _, r := range runs {
		for _, j := range r.Jobs {
			if first.IsZero() || j.Submit.Before(first) {
				first = j.Submit
			}
			if j.Submit.After(lastSubmit) {
				lastSubmit = j.Submit
			}
		}
		e := r.End
		for _, p := range r.Util {
			if p.At.After(e) {
				e = p.At
			}
		}
		if e.After(end) {
			end = e
		}
	}
	if lastSubmit.IsZero() {
		return time.Time{}, time.Time{}
	}
	cut = lastSubmit.Add(lastSubmit.Sub(first) / 4)
	if end.Before(cut) {
		cut = end
	}
	if !cut.After(lastSubmit) {
		cut = lastSubmit
	}
	return lastSubmit, cut
}

// shortestOf is the shortest tenant interval length of all runs, 0 when
// none has intervals.
func shortestOf(runs []Run) time.Duration {
	var s time.Duration
	for _, r := range runs {
		if l := shortestLength(r.Tenants); l > 0 && (s == 0 || l < s) {
			s = l
		}
	}
	return s
}

// fmtLength names an interval length as a reader would: "1 h", "6 h",
// "30 min", "1 day".
func fmtLength(d time.Duration) string {
	switch {
	case d <= 0:
		return "interval"
	case d == 24*time.Hour:
		return "1 day"
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + " h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + " min"
	}
	return d.String()
}

// decadeTicks marks a logarithmic axis at every power of ten, labelled 1,
// 10, 100, then 10³, 10⁴ …, with unlabelled ticks at 2…9 times each.
type decadeTicks struct{}

// Ticks returns the ticks of [lo, hi], for 0 < lo < hi; none otherwise.
func (decadeTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) {
		return nil
	}
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)) && len(ts) < 400; e++ {
		base := math.Pow(10, e)
		for m := 1.0; m <= 9; m++ {
			v := m * base
			if v < lo*(1-1e-12) || v > hi*(1+1e-12) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 {
				t.Label = powerOfTen(int(e))
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// powerOfTen writes 10^e as a reader expects on an axis: 0.1, 1, 10, 100,
// then 10³ and up (10⁻² and down).
func powerOfTen(e int) string {
	if e >= -1 && e <= 2 {
		return strconv.FormatFloat(math.Pow(10, float64(e)), 'f', -1, 64)
	}
	const sup = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	digits := []rune(sup)
	var b strings.Builder
	b.WriteString("10")
	if e < 0 {
		b.WriteRune('⁻')
		e = -e
	}
	for _, c := range strconv.Itoa(e) {
		b.WriteRune(digits[c-'0'])
	}
	return b.String()
}

// utilSeries averages occupancy into at most maxPoints equal time buckets
// over [first point, End] (to the last point instead when End is zero or
// not after it), or [first point, cut] when cut is not zero and comes
// before, each plotted at its midpoint.
func utilSeries(r Run, origin, cut time.Time) plotter.XYs {
	pts := slices.Clone(r.Util)
	slices.SortStableFunc(pts, cmpUtil)
	if len(pts) == 0 {
		return nil
	}
	start, end := pts[0].At, r.End
	if end.IsZero() || !end.After(pts[len(pts)-1].At) {
		end = pts[len(pts)-1].At
	}
	if !cut.IsZero() && cut.Before(end) {
		end = cut
	}
	span := end.Sub(start)
	if span <= 0 {
		return nil
	}
	nb := min(maxPoints, max(1, len(pts)))
	width := float64(span) / float64(nb)
	used := make([]float64, nb)
	capa := make([]float64, nb)
	for i, p := range pts {
		if !p.At.Before(end) {
			break
		}
		next := end
		if i+1 < len(pts) && pts[i+1].At.Before(end) {
			next = pts[i+1].At
		}
		a, b := float64(p.At.Sub(start)), float64(next.Sub(start))
		// Walk the buckets [a, b) overlaps; k only grows, so rounding at a
		// bucket edge cannot stall the loop.
		for k := min(int(a/width), nb-1); a < b; k++ {
			edge := b
			if k < nb-1 {
				edge = math.Min(b, float64(k+1)*width)
			}
			if edge > a {
				used[k] += float64(p.Used) * (edge - a)
				capa[k] += float64(p.Capacity) * (edge - a)
				a = edge
			}
		}
	}
	var out plotter.XYs
	for k := range nb {
		if capa[k] > 0 {
			mid := start.Add(time.Duration((float64(k) + 0.5) * width))
			out = append(out, plotter.XY{X: hours(mid, origin), Y: used[k] / capa[k]})
		}
	}
	return out
}
