package metrics_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astraea-sched/astraea/simulate/metrics"
)

func TestWriteSensitivity(t *testing.T) {
	dir := t.TempDir()
	one := func(x float64) metrics.Band { return metrics.Band{Mean: x, Min: x, Max: x} }
	curves := []metrics.Curve{
		{Name: "astraea", X: []float64{600, 900, 1200}, Y: []metrics.Band{{Mean: 3, Min: 2.5, Max: 3.2}, one(2), {Mean: 2.5, Min: 2.4, Max: 2.9}}},
		{Name: "tiresias-l", X: []float64{600, 900, 1200}, Y: []metrics.Band{one(4), one(3), one(3.5)}},
		// ranges on one side of the mean only, above then below
		{Name: "themis", X: []float64{600, 900, 1200}, Y: []metrics.Band{{Mean: 5, Min: 5, Max: 5.5}, one(5), {Mean: 5, Min: 4.5, Max: 5}}},
	}
	path := filepath.Join(dir, "sub", "lease.svg")
	if err := metrics.WriteSensitivity(path, "JCT against lease", "lease (s)", "JCT (s)", curves...); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(b)
	for _, want := range []string{"astraea", "tiresias-l", "JCT against lease"} {
		if !strings.Contains(svg, want) {
			t.Errorf("figure lacks %q", want)
		}
	}
	// The two curves with a range are shaded.
	if n := strings.Count(svg, "fill-opacity:0.25"); n != 2 {
		t.Errorf("%d shaded areas, want 2", n)
	}

	bad := metrics.Curve{Name: "short", X: []float64{1, 2}, Y: []metrics.Band{one(1)}}
	if err := metrics.WriteSensitivity(filepath.Join(dir, "bad.svg"), "t", "x", "y", bad); err == nil || !strings.Contains(err.Error(), "short") {
		t.Fatalf("a band with fewer y than x: %v, want an error naming it", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.svg")); !os.IsNotExist(err) {
		t.Fatal("a refused figure was written")
	}
}

// A curve that cannot be drawn, a NaN in its range or among its means, is
// an error, and nothing is written.
func TestWriteSensitivityRefusesANaN(t *testing.T) {
	dir := t.TempDir()
	nan := math.NaN()
	for name, y := range map[string][]metrics.Band{
		"range": {{Mean: 1, Min: 0.5, Max: 1.5}, {Mean: 2, Min: nan, Max: 2.5}},
		"mean":  {{Mean: 1, Min: 1, Max: 1}, {Mean: nan, Min: 2, Max: 2}},
	} {
		path := filepath.Join(dir, name+".svg")
		c := metrics.Curve{Name: name, X: []float64{1, 2}, Y: y}
		if err := metrics.WriteSensitivity(path, "t", "x", "y", c); err == nil {
			t.Errorf("a NaN in the %s drawn without an error", name)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("a NaN in the %s: the refused figure was written", name)
		}
	}
}

// Every point of a curve is marked, also the one point of a curve of one.
func TestWriteSensitivityMarksEveryPoint(t *testing.T) {
	dir := t.TempDir()
	one := func(x float64) metrics.Band { return metrics.Band{Mean: x, Min: x, Max: x} }
	curves := []metrics.Curve{
		{Name: "a", X: []float64{1, 2, 3}, Y: []metrics.Band{one(1), one(2), one(2)}},
		{Name: "b", X: []float64{2}, Y: []metrics.Band{one(3)}},
	}
	path := filepath.Join(dir, "s.svg")
	if err := metrics.WriteSensitivity(path, "t", "x", "y", curves...); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range curves {
		col := metrics.RunColor(i)
		fill := fmt.Sprintf(`style="fill:#%02X%02X%02X"`, col.R, col.G, col.B)
		if n := strings.Count(string(b), fill); n != len(c.X) {
			t.Errorf("curve %s: %d markers in its colour, want %d", c.Name, n, len(c.X))
		}
	}
}
