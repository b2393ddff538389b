package metrics

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"
)

// Curve is one line of a sensitivity figure: Y[i] at X[i], the line
// through the means and the range from Min to Max shaded around it (over
// the tick phases of a run, say; no range is drawn where Min = Max =
// Mean everywhere).
type Curve struct {
	Name string
	X    []float64
	Y    []Band
}

// WriteSensitivity writes an SVG figure to path (its directory created if
// needed): one line with markers per curve, styled in the order given
// (RunStyle), its range shaded in the same colour, the legend beside the
// plot. A curve with more X than Y values or fewer is an error, and so is
// one that cannot be drawn (a NaN among its values or its range); then
// nothing is written.
func WriteSensitivity(path, title, xLabel, yLabel string, curves ...Curve) error {
	for _, c := range curves {
		if len(c.X) != len(c.Y) {
			return fmt.Errorf("metrics: %s: curve %q has %d x and %d y values", path, c.Name, len(c.X), len(c.Y))
		}
	}
	f := newFigure(filepath.Base(path), title, xLabel, yLabel, false)
	for i, b := range curves {
		c := RunColor(i)
		if shaded(b) {
			area, err := plotter.NewPolygon(rangeOf(b))
			if err != nil {
				return fmt.Errorf("metrics: %s: %w", path, err)
			}
			area.Color = color.RGBA{c.R, c.G, c.B, 64}
			area.LineStyle.Width = 0
			f.p.Add(area)
		}
		xy := make(plotter.XYs, len(b.X))
		for k := range b.X {
			xy[k] = plotter.XY{X: b.X[k], Y: b.Y[k].Mean}
		}
		if err := f.addLine(xy, RunStyle(i), b.Name); err != nil {
			return fmt.Errorf("metrics: %s: %w", path, err)
		}
		if len(xy) > 0 {
			pts, err := plotter.NewScatter(xy)
			if err != nil {
				return fmt.Errorf("metrics: %s: %w", path, err)
			}
			pts.GlyphStyle.Color = c
			pts.GlyphStyle.Shape = draw.CircleGlyph{}
			f.p.Add(pts)
		}
	}
	f.fitX(false)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return f.save(path)
}

// rangeOf returns the polygon of a curve's range: along its maxima from
// the first x to the last, then back along its minima.
func rangeOf(c Curve) plotter.XYs {
	poly := make(plotter.XYs, 0, 2*len(c.X))
	for k := range c.X {
		poly = append(poly, plotter.XY{X: c.X[k], Y: c.Y[k].Max})
	}
	for k := len(c.X) - 1; k >= 0; k-- {
		poly = append(poly, plotter.XY{X: c.X[k], Y: c.Y[k].Min})
	}
	return poly
}

// shaded reports whether a curve has a range to draw.
func shaded(c Curve) bool {
	return slices.ContainsFunc(c.Y, func(b Band) bool { return b.Min != b.Mean || b.Max != b.Mean })
}
