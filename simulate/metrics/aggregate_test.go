package metrics

import (
	"encoding/json"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

func phaseSummary(policy string, loss, jct, eq8 float64) Summary {
	return Summary{
		Policy: policy, JobLossThreshold: 0.95, TenantLossThreshold: 1,
		SharingLossJobs: loss,
		JCT:             Stats{Mean: jct},
		TenantLossEq8:   []IntervalLoss{{Interval: time.Hour, Seconds: 3600, Share: eq8}},
		TenantLossEq16:  []IntervalLoss{{Interval: time.Hour, Seconds: 3600, Share: 2 * eq8, ShareBusy: eq8}},
		Overhead:        Overhead{Direct: 0.01, Checkpoint: 0.004, ColdStart: 0.006},
	}
}

func TestAggregateRunsBandsEveryFigure(t *testing.T) {
	a, err := AggregateRuns(phaseSummary("astraea", 0.1, 100, 0.05), phaseSummary("astraea", 0.2, 300, 0.07), phaseSummary("astraea", 0.3, 200, 0.03))
	if err != nil {
		t.Fatal(err)
	}
	if a.Runs != 3 || a.Policy != "astraea" {
		t.Fatalf("aggregate of %q over %d runs", a.Policy, a.Runs)
	}
	for _, c := range []struct {
		key  string
		want Band
	}{
		{"sharing_loss_jobs", Band{Mean: 0.2, Min: 0.1, Max: 0.3}},
		{"jct_mean_seconds", Band{Mean: 200, Min: 100, Max: 300}},
		{"tenant_loss_eq8_1h", Band{Mean: 0.05, Min: 0.03, Max: 0.07}},
		{"tenant_loss_eq16_1h", Band{Mean: 0.1, Min: 0.06, Max: 0.14}},
		{"tenant_loss_eq16_busy_1h", Band{Mean: 0.05, Min: 0.03, Max: 0.07}},
		{"overhead_direct", Band{Mean: 0.01, Min: 0.01, Max: 0.01}},
		{"overhead_cold_start", Band{Mean: 0.006, Min: 0.006, Max: 0.006}},
	} {
		b, ok := a.Band(c.key)
		if !ok {
			t.Errorf("no band %s", c.key)
			continue
		}
		if !near(b.Mean, c.want.Mean) || !near(b.Min, c.want.Min) || !near(b.Max, c.want.Max) {
			t.Errorf("%s = %+v, want %+v", c.key, b, c.want)
		}
	}
	if _, ok := a.Band("tenant_loss_1h"); ok {
		t.Error("a summary with both modes also reports the reporting mode's loss")
	}
}

// The sliding-window Eq. 8 loss is banded like every other figure.
func TestAggregateRunsBandsTheWindowLoss(t *testing.T) {
	var sums []Summary
	for _, x := range []float64{0.04, 0.10, 0.07} {
		s := phaseSummary("astraea", 0.1, 100, 0.05)
		s.TenantLossEq8Window = &WindowLoss{Step: time.Hour, Buckets: 24, StepSeconds: 3600, WindowSeconds: 86400, Share: x}
		sums = append(sums, s)
	}
	a, err := AggregateRuns(sums...)
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := a.Band("tenant_loss_eq8_window_24h"); !ok || !near(b.Mean, 0.07) || b.Min != 0.04 || b.Max != 0.10 {
		t.Errorf("band %+v, %v; want 0.07 [0.04–0.10]", b, ok)
	}
	if u, ok := a.Unit("tenant_loss_eq8_window_24h"); !ok || u != Share {
		t.Errorf("unit %v, %v", u, ok)
	}
}

func TestAggregateRunsRefusesMixedRuns(t *testing.T) {
	for _, c := range []struct {
		name string
		sums []Summary
	}{
		{"no run", nil},
		{"two policies", []Summary{phaseSummary("a", 0, 0, 0), phaseSummary("b", 0, 0, 0)}},
		{"other figures", []Summary{phaseSummary("a", 0, 0, 0), {Policy: "a"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := AggregateRuns(c.sums...); !errors.Is(err, ErrAggregate) {
				t.Errorf("error %v, want ErrAggregate", err)
			}
		})
	}
}

func TestFormatBand(t *testing.T) {
	for _, c := range []struct {
		b    Band
		u    Unit
		want string
	}{
		{Band{0.071, 0.05, 0.09}, Share, "7.10 % [5.00 %–9.00 %]"},
		{Band{0.071, 0.071, 0.071}, Share, "7.10 %"},
		{Band{1234.4, 1000, 1500.6}, Seconds, "1234 [1000–1501]"},
		{Band{2.5, 2, 3}, Number, "2.500 [2.000–3.000]"},
		{Band{2.5, 2, 3.4}, Count, "3 [2–3]"},
		{Band{2.4, 2.4, 2.4}, Count, "2"},
	} {
		if got := FormatBand(c.b, c.u); got != c.want {
			t.Errorf("FormatBand(%+v, %d) = %q, want %q", c.b, c.u, got, c.want)
		}
	}
}

func TestWriteAggregateTable(t *testing.T) {
	a, _ := AggregateRuns(phaseSummary("astraea", 0.1, 100, 0.05), phaseSummary("astraea", 0.3, 300, 0.05))
	b, _ := AggregateRuns(phaseSummary("fifo", 0.5, 900, 0.5))
	var sb strings.Builder
	if err := WriteAggregateTable(&sb, a, b); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	// A header of policies, then the run counts.
	lines := strings.Split(out, "\n")
	if len(lines) < 2 || strings.Fields(lines[0])[0] != "metric" || !slices.Equal(strings.Fields(lines[0])[1:], []string{"astraea", "fifo"}) ||
		!slices.Equal(strings.Fields(lines[1]), []string{"runs", "2", "1"}) {
		t.Errorf("table starts %q, want the policies, then the runs:\n%s", lines[:min(2, len(lines))], out)
	}
	for _, want := range []string{"runs", "20.00 % [10.00 %–30.00 %]", "50.00 %", "200 [100–300]", "tenant loss 1h, Eq. 8 (ρ < 1)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestAggregateUnit(t *testing.T) {
	a, _ := AggregateRuns(phaseSummary("astraea", 0.1, 100, 0.05))
	for key, want := range map[string]Unit{"jct_mean_seconds": Seconds, "sharing_loss_jobs": Share, "slowdown_mean": Number, "preemptions": Count} {
		if u, ok := a.Unit(key); !ok || u != want {
			t.Errorf("Unit(%s) = %v, %v; want %v", key, u, ok, want)
		}
	}
	if _, ok := a.Unit("no_such_figure"); ok {
		t.Error("an unknown figure has a unit")
	}
}

// A summary without both modes reports its tenant loss in its reporting
// mode, one figure per interval length, and none under Eq. 8 or Eq. 16.
func TestValuesInTheReportingMode(t *testing.T) {
	s := Summary{Policy: "p", TenantLossThreshold: 1,
		TenantLoss: []IntervalLoss{{Interval: time.Hour, Seconds: 3600, Share: 0.25}, {Interval: 24 * time.Hour, Seconds: 86400, Share: 0.5}}}
	got := map[string]float64{}
	for _, v := range Values(s) {
		if strings.HasPrefix(v.Key, "tenant_loss") {
			got[v.Key] = v.X
		}
	}
	want := map[string]float64{"tenant_loss_1h": 0.25, "tenant_loss_24h": 0.5}
	if !maps.Equal(got, want) {
		t.Errorf("tenant loss values %v, want %v", got, want)
	}
}

// WriteAggregateCSV writes summary.csv into a directory it makes: a header,
// then one row per policy (in the order given) and figure (in Values'
// order), shares as fractions and numbers in their shortest exact form.
func TestWriteAggregateCSV(t *testing.T) {
	a, err := AggregateRuns(phaseSummary("astraea", 0.1, 100, 0.05), phaseSummary("astraea", 0.3, 300, 0.05))
	if err != nil {
		t.Fatal(err)
	}
	b, err := AggregateRuns(phaseSummary("=fifo", 0.5, 900.25, 0.5))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out", "agg")
	if err := WriteAggregateCSV(dir, a, b); err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, filepath.Join(dir, SummaryCSV))
	if want := []string{"policy", "runs", "metric", "mean", "min", "max"}; len(recs) == 0 || !slices.Equal(recs[0], want) {
		t.Fatalf("header %v, want %v", recs[:min(1, len(recs))], want)
	}
	var keys []string
	for _, v := range Values(phaseSummary("astraea", 0.1, 100, 0.05)) {
		keys = append(keys, v.Key)
	}
	if got, want := len(recs)-1, 2*len(keys); got != want {
		t.Fatalf("%d rows, want %d (2 policies × %d figures)", got, want, len(keys))
	}
	for i, rec := range recs[1:] {
		policy, runs := "astraea", "2"
		if i >= len(keys) {
			policy, runs = "'=fifo", "1" // a cell that starts like a formula is quoted
		}
		if rec[0] != policy || rec[1] != runs || rec[2] != keys[i%len(keys)] {
			t.Errorf("row %d: %v, want %s, %s runs, %s", i+1, rec, policy, runs, keys[i%len(keys)])
		}
	}
	for _, want := range [][]string{
		{"astraea", "2", "sharing_loss_jobs", "0.2", "0.1", "0.3"},
		{"astraea", "2", "jct_mean_seconds", "200", "100", "300"},
		{"'=fifo", "1", "jct_mean_seconds", "900.25", "900.25", "900.25"},
	} {
		if !slices.ContainsFunc(recs, func(r []string) bool { return slices.Equal(r, want) }) {
			t.Errorf("no row %v", want)
		}
	}
}

// A summary decoded from JSON has its lengths in seconds only (Step and
// Interval are not encoded): its figures have the same keys, labels and
// values as the summary it was written from.
func TestValuesOfADecodedSummary(t *testing.T) {
	a := ledger.Account{Alloc: 1800, FairShare: 3600, Rho: 0.5}
	r := tiny()
	r.BothModes = true
	r.Tenants = []TenantInterval{{Tenant: "x", From: at(0), To: at(3600), Account: a, Eq8: a, Eq16: a}}
	s := Summarize(r, SummaryConfig{})
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.TenantLossEq8Window.Step != 0 || back.TenantLossEq8[0].Interval != 0 {
		t.Fatalf("decoded lengths %v, %v: want them unset", back.TenantLossEq8Window.Step, back.TenantLossEq8[0].Interval)
	}
	want, got := Values(s), Values(back)
	if !slices.Equal(got, want) {
		t.Errorf("decoded figures\n%v\nwant\n%v", got, want)
	}
	if !slices.ContainsFunc(got, func(v Value) bool { return v.Key == "tenant_loss_eq8_window_24h" }) ||
		!slices.ContainsFunc(got, func(v Value) bool { return v.Key == "tenant_loss_eq8_1h" }) {
		t.Errorf("decoded figures lack the 1 h and window keys: %v", got)
	}
}
