package metrics

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

func rhoRun(policy string, rhos ...float64) Run {
	r := Run{Policy: policy}
	for i, x := range rhos {
		r.Jobs = append(r.Jobs, JobRecord{ID: string(rune('a' + i)), Submit: at(0), End: at(10), Run: 10 * time.Second, Rho: ledger.Rho(x)})
	}
	return r
}

func TestCDFBandEnvelopesEveryRun(t *testing.T) {
	// Phase A: ρ 0.5 and 1.0; phase B: 1.0 and 1.5. Between 0.5 and 1 the
	// CDFs are 0.5 (A) and 0 (B); between 1 and 1.5, 1 (A) and 0.5 (B).
	runs := []Run{rhoRun("p", 0.5, 1.0), rhoRun("p", 1.0, 1.5)}
	b := cdfBand(runs, rhoValues, false)
	if len(b) != 2*bandPoints {
		t.Fatalf("%d points, want %d", len(b), 2*bandPoints)
	}
	upper, lower := b[:bandPoints], b[bandPoints:]
	for i, p := range upper {
		q := lower[bandPoints-1-i]
		if p.X != q.X || p.Y < q.Y {
			t.Fatalf("point %d: upper %v below lower %v", i, p, q)
		}
		var wantLo, wantHi float64
		switch {
		case p.X < 0.5:
			wantLo, wantHi = 0, 0
		case p.X < 1:
			wantLo, wantHi = 0, 0.5
		case p.X < 1.5:
			wantLo, wantHi = 0.5, 1
		default:
			wantLo, wantHi = 1, 1
		}
		if q.Y != wantLo || p.Y != wantHi {
			t.Errorf("at ρ %v the band is [%v, %v], want [%v, %v]", p.X, q.Y, p.Y, wantLo, wantHi)
		}
	}
	if upper[0].X != 0.5 || upper[bandPoints-1].X != 1.5 {
		t.Errorf("the band spans [%v, %v], want the values' [0.5, 1.5]", upper[0].X, upper[bandPoints-1].X)
	}
	if cdfBand([]Run{{Policy: "p"}}, rhoValues, false) != nil {
		t.Error("a band of runs without jobs is not empty")
	}
}

func TestWritePhaseFiguresShadesTheCDFs(t *testing.T) {
	dir := t.TempDir()
	a, b := twoRuns()[0], twoRuns()[1]
	a2 := a
	a2.Jobs = append([]JobRecord(nil), a.Jobs...)
	a2.Jobs[0].Rho = 0.2
	if err := WritePhaseFigures(dir, []Run{a, a2}, []Run{b}); err != nil {
		t.Fatal(err)
	}
	cdf, err := os.ReadFile(filepath.Join(dir, RhoJobCDFSVG))
	if err != nil {
		t.Fatal(err)
	}
	plain := t.TempDir()
	if err := WriteFigures(plain, a, b); err != nil {
		t.Fatal(err)
	}
	ref, _ := os.ReadFile(filepath.Join(plain, RhoJobCDFSVG))
	// The band is one filled path more than the figure of the first runs:
	// the policy with two runs has one, the policy with one run none.
	if n, m := strings.Count(string(cdf), "fill-opacity"), strings.Count(string(ref), "fill-opacity"); n != m+1 {
		t.Errorf("the phase figure has %d filled shapes, the plain one %d: want one band", n, m)
	}
	// It is a fill without an outline: no stroke more than the plain figure.
	if n, m := strings.Count(string(cdf), "fill:none"), strings.Count(string(ref), "fill:none"); n != m {
		t.Errorf("the phase figure strokes %d paths, the plain one %d: want the band unstroked", n, m)
	}
	// It is a light, translucent tint of its run's colour.
	fill := regexp.MustCompile(`fill:#([0-9A-F]{2})([0-9A-F]{2})([0-9A-F]{2});fill-opacity:([0-9.]+)`).FindAllStringSubmatch(string(cdf), -1)
	if len(fill) != 1 {
		t.Fatalf("translucent fills %v, want one", fill)
	}
	op, _ := strconv.ParseFloat(fill[0][4], 64)
	c := RunColor(0)
	for i, want := range []uint8{c.R, c.G, c.B} {
		got, _ := strconv.ParseUint(fill[0][1+i], 16, 8)
		if math.Abs(float64(got)-float64(want)) > 2 {
			t.Errorf("band colour #%s%s%s, want run 0's %v", fill[0][1], fill[0][2], fill[0][3], c)
			break
		}
	}
	if !(op > 0 && op <= 0.5) {
		t.Errorf("band opacity %v, want a light tint (above 0, at most a half)", op)
	}
	// Each policy with more than one run has its band, and only those.
	b2 := b
	b2.Jobs = append([]JobRecord(nil), b.Jobs...)
	b2.Jobs[0].Rho = 0.3
	for _, tc := range []struct {
		name   string
		phases [][]Run
		bands  int
	}{{"two policies of two runs", [][]Run{{a, a2}, {b, b2}}, 2}, {"two policies of one run", [][]Run{{a}, {b}}, 0}} {
		d := t.TempDir()
		if err := WritePhaseFigures(d, tc.phases...); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(d, RhoJobCDFSVG))
		if n, m := strings.Count(string(got), "fill-opacity"), strings.Count(string(ref), "fill-opacity"); n != m+tc.bands {
			t.Errorf("%s: %d filled shapes, the plain figure %d: want %d bands", tc.name, n, m, tc.bands)
		}
	}
	if err := WritePhaseFigures(dir, []Run{a}, nil); err == nil {
		t.Error("a policy without runs was accepted")
	}
}

func TestRangeOfACurve(t *testing.T) {
	c := Curve{Name: "c", X: []float64{1, 2, 3}, Y: []Band{{Mean: 2, Min: 1, Max: 3}, {Mean: 5, Min: 4, Max: 6}, {Mean: 8, Min: 7, Max: 9}}}
	got := rangeOf(c)
	want := []float64{3, 6, 9, 7, 4, 1} // maxima forward, minima back
	wantX := []float64{1, 2, 3, 3, 2, 1}
	if len(got) != len(want) {
		t.Fatalf("%d points, want %d: %v", len(got), len(want), got)
	}
	for i, p := range got {
		if p.X != wantX[i] || p.Y != want[i] {
			t.Fatalf("point %d is %v, want (%v, %v)", i, p, wantX[i], want[i])
		}
	}
}

func TestFileSafe(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "run",
		"astraea-eq8":        "astraea-eq8",
		"Tiresias_L.v2":      "Tiresias_L.v2",
		"AZaz09":             "AZaz09",
		"a/b c:d":            "a_b_c_d",
		"gandiva fair (1/2)": "gandiva_fair__1_2_",
		"@[`{":               "____",
		"ρ":                  "_",
		"-_.":                "-_.",
	} {
		if got := fileSafe(in); got != want {
			t.Errorf("fileSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFmtLength(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                "interval",
		24 * time.Hour:   "1 day",
		6 * time.Hour:    "6 h",
		90 * time.Minute: "90 min",
		90 * time.Second: "1m30s",
		-time.Minute:     "interval",
		48 * time.Hour:   "48 h",
		time.Minute:      "1 min",
	} {
		if got := fmtLength(d); got != want {
			t.Errorf("fmtLength(%v) = %q, want %q", d, got, want)
		}
	}
}

// On a log axis the band's x values run from the smallest value to the
// largest, evenly in log x: slowdowns 1 and 100 give 10^(2i/255).
func TestCDFBandLogSpacing(t *testing.T) {
	values := func(Run) []float64 { return []float64{100, 1} }
	b := cdfBand([]Run{{Policy: "p"}}, values, true)
	if len(b) != 2*bandPoints {
		t.Fatalf("%d points, want %d", len(b), 2*bandPoints)
	}
	for i, p := range b[:bandPoints] {
		want := math.Pow(10, 2*float64(i)/(bandPoints-1))
		if math.Abs(p.X-want) > 1e-9*want {
			t.Fatalf("point %d at x = %v, want %v", i, p.X, want)
		}
	}
}

// A run without values (no job finished) has a CDF of 1 everywhere: the
// band beside a run with values reaches 1 and stays a number.
func TestCDFBandBesideARunWithoutValues(t *testing.T) {
	runs := []Run{rhoRun("p", 0.5, 1.5), {Policy: "p"}}
	b := cdfBand(runs, rhoValues, false)
	if len(b) != 2*bandPoints {
		t.Fatalf("%d points, want %d", len(b), 2*bandPoints)
	}
	for i, p := range b[:bandPoints] {
		if p.Y != 1 {
			t.Fatalf("point %d: upper edge %v at ρ %v, want 1", i, p.Y, p.X)
		}
	}
	for _, p := range b[bandPoints:] {
		if !(p.Y >= 0 && p.Y <= 1) {
			t.Fatalf("lower edge %v at ρ %v, want a fraction", p.Y, p.X)
		}
	}
}

// Runs whose values are all one value x still get their band, over the
// range [x, x]: every point at x, where every CDF is 1, on a linear or a
// log axis.
func TestCDFBandOfOneValue(t *testing.T) {
	values := func(r Run) []float64 { return slices.Repeat([]float64{3}, len(r.Policy)) }
	runs := []Run{{Policy: "p"}, {Policy: "pp"}}
	for _, logX := range []bool{false, true} {
		b := cdfBand(runs, values, logX)
		if len(b) != 2*bandPoints {
			t.Errorf("log %v: %d points, want %d", logX, len(b), 2*bandPoints)
			continue
		}
		for i, p := range b {
			if p.X != 3 || p.Y != 1 {
				t.Errorf("log %v: point %d at %v, want (3, 1)", logX, i, p)
				break
			}
		}
	}
}

// A run of one value has a CDF of 0 below it and 1 from it on: beside
// another run of one larger value the band spans [0, 1] between the two
// and closes at both.
func TestCDFBandOfRunsOfOneValueEach(t *testing.T) {
	b := cdfBand([]Run{rhoRun("p", 0.5), rhoRun("p", 1.5)}, rhoValues, false)
	if len(b) != 2*bandPoints {
		t.Fatalf("%d points, want %d", len(b), 2*bandPoints)
	}
	upper, lower := b[:bandPoints], b[bandPoints:]
	for i, p := range upper {
		q := lower[bandPoints-1-i] // the same x on the lower edge
		wantHi, wantLo := 1.0, 0.0
		if p.X >= 1.5 {
			wantLo = 1
		}
		if p.X != q.X || p.Y != wantHi || q.Y != wantLo {
			t.Fatalf("at ρ %v: band [%v, %v] (lower edge at %v), want [%v, %v]", p.X, q.Y, p.Y, q.X, wantLo, wantHi)
		}
	}
}
