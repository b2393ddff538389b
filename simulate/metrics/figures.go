package metrics

import (
	"bytes"
	"fmt"
	"image/color"
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

// palette colours runs in the order given (colour-blind safe, Okabe–Ito).
var palette = [...]color.RGBA{
	{0, 114, 178, 255},   // blue
	{213, 94, 0, 255},    // vermilion
	{0, 158, 115, 255},   // green
	{204, 121, 167, 255}, // purple
	{230, 159, 0, 255},   // orange
	{86, 180, 233, 255},  // sky blue
	{0, 0, 0, 255},       // black
	{240, 228, 66, 255},  // yellow
}

// RunColor returns the colour of the i-th run in every figure.
func RunColor(i int) color.RGBA { return palette[i%len(palette)] }

// WriteFigures writes SVG figures into dir (created if needed), one line per
// run in every figure, runs coloured in the order given (RunColor):
//
//   - rho_job_cdf.svg: CDF of ρ_job over finished jobs (ρ above 2, and
//     +Inf, drawn at 2);
//   - slowdown_cdf.svg: CDF of slowdown, logarithmic x axis;
//   - tenant_rho.svg: the lowest tenant ρ in each interval of the shortest
//     interval length (the worst-off tenant over time), clipped at 2;
//   - utilization.svg: utilization over time (∫used ÷ ∫capacity per time
//     bucket).
//
// Time axes are hours since the earliest submit or occupancy point of all
// runs. Each run also gets tenant_rho_<policy>.svg with one line per tenant:
// its cumulative ρ since the start of the run.
func WriteFigures(dir string, runs ...Run) error {
	if err := checkPolicies(runs); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	origin := originOf(runs)
	figs := []struct {
		file, title, x, y string
		logX              bool
		series            func(Run) plotter.XYs
	}{
		{RhoJobCDFSVG, "Job fairness", "ρ_job (clipped at 2)", "fraction of jobs", false, rhoJobCDF},
		{SlowdownCDFSVG, "Slowdown", "slowdown (log scale)", "fraction of jobs", true, slowdownCDF},
		{TenantRhoSVG, "Worst-off tenant per interval", "hours", "lowest ρ_tenant (clipped at 2)", false,
			func(r Run) plotter.XYs { return lowestTenantRho(r, origin) }},
		{UtilizationSVG, "Utilization", "hours", "used ÷ capacity", false,
			func(r Run) plotter.XYs { return utilSeries(r, origin) }},
	}
	for _, f := range figs {
		p := newPlot(f.title, f.x, f.y, f.logX)
		for i, r := range runs {
			if err := addLine(p, f.series(r), RunColor(i), r.Policy); err != nil {
				return fmt.Errorf("metrics: %s: %w", f.file, err)
			}
		}
		roomForLegend(p, f.logX)
		switch {
		case f.file == RhoJobCDFSVG:
			p.X.Min = 0
			p.X.Tick.Marker = rhoTicks()
		case f.x == "hours":
			p.X.Tick.Marker = hourTicks{}
		}
		if err := savePlot(p, filepath.Join(dir, f.file)); err != nil {
			return err
		}
	}
	for _, r := range runs {
		p := newPlot("Tenant ρ since start: "+r.Policy, "hours", "cumulative ρ_tenant (clipped at 2)", false)
		for i, s := range cumulativeTenantRho(r, origin) {
			if err := addLine(p, s.xy, RunColor(i), s.tenant); err != nil {
				return fmt.Errorf("metrics: tenant ρ of %s: %w", r.Policy, err)
			}
		}
		roomForLegend(p, false)
		p.X.Tick.Marker = hourTicks{}
		if err := savePlot(p, filepath.Join(dir, "tenant_rho_"+fileSafe(r.Policy)+".svg")); err != nil {
			return err
		}
	}
	return nil
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
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// addLine adds one line. An empty series still gets a legend entry, so every
// run is named in every figure.
func addLine(p *plot.Plot, xy plotter.XYs, c color.RGBA, name string) error {
	if len(xy) == 0 {
		xy = plotter.XYs{}
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return err
	}
	l.LineStyle.Color = c
	l.LineStyle.Width = vg.Points(1.2)
	if len(xy) > 0 {
		p.Add(l)
	}
	p.Legend.Add(name, l)
	return nil
}

// rhoTicks marks ρ axes at 0, 0.5, 1 (fair), 1.5 and the clip value 2.
// The unlabelled minor tick is the sharing-loss threshold 0.95.
func rhoTicks() plot.ConstantTicks {
	return plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 0.5, Label: "0.5"}, {Value: 0.95, Label: ""},
		{Value: 1, Label: "1"}, {Value: 1.5, Label: "1.5"}, {Value: rhoClip, Label: "≥ 2"}}
}

// hourTicks marks a time axis in hours at multiples of a span a reader
// counts in (1, 2, 3, 6 or 12 hours, a day, two or three days, a week or
// whole weeks), the first that gives at most eight labels, with an
// unlabelled tick halfway between them: a fortnight's run is marked every
// week, not every 300 hours.
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

// roomForLegend widens the x range so that the legend, drawn in the top
// right corner, does not hide the lines: by a quarter on a linear axis, by a
// factor of four on a logarithmic one. The y axis starts at 0.
func roomForLegend(p *plot.Plot, logX bool) {
	if logX {
		// A log axis needs 0 < Min < Max; a run with no jobs or with one
		// slowdown value gives neither, and the plotting library panics.
		if !(p.X.Min > 0) || math.IsInf(p.X.Min, 0) {
			p.X.Min = 1
		}
		if !(p.X.Max > p.X.Min) || math.IsInf(p.X.Max, 0) {
			p.X.Max = p.X.Min * 10
		}
	}
	if p.X.Max > p.X.Min {
		if logX {
			p.X.Max *= 4
		} else {
			p.X.Max += (p.X.Max - p.X.Min) / 4
		}
	}
	p.Y.Min = math.Min(p.Y.Min, 0)
}

func savePlot(p *plot.Plot, path string) error {
	wt, err := p.WriterTo(8*vg.Inch, 5*vg.Inch, "svg")
	if err != nil {
		return fmt.Errorf("metrics: %s: %w", path, err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return fmt.Errorf("metrics: %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
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

func rhoJobCDF(r Run) plotter.XYs {
	var xs []float64
	for _, j := range r.Jobs {
		if j.Finished() {
			xs = append(xs, clipRho(j.Rho))
		}
	}
	return cdf(xs)
}

func slowdownCDF(r Run) plotter.XYs {
	var xs []float64
	for _, j := range r.Jobs {
		if j.Finished() {
			xs = append(xs, j.Slowdown(time.Second))
		}
	}
	return cdf(xs)
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

// thin keeps at most maxPoints evenly spaced points, always the last.
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

// utilSeries averages occupancy into at most maxPoints equal time buckets
// over [first point, End or last point], each plotted at its midpoint.
func utilSeries(r Run, origin time.Time) plotter.XYs {
	pts := slices.Clone(r.Util)
	slices.SortStableFunc(pts, cmpUtil)
	if len(pts) == 0 {
		return nil
	}
	start, end := pts[0].At, r.End
	if end.IsZero() || !end.After(pts[len(pts)-1].At) {
		end = pts[len(pts)-1].At
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
		next := end
		if i+1 < len(pts) {
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
