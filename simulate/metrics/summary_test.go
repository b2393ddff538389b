package metrics

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

var t0 = time.Date(2020, 9, 7, 0, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// tiny is a hand-computed run of four jobs:
//
//	a: submit 0, start 0,   end 100,  run 100 → JCT 100, queue 0,   slowdown 1,   ρ 1
//	b: submit 0, start 100, end 300,  run 200 → JCT 300, queue 100, slowdown 1.5, ρ 0.5 (loss)
//	c: submit 10, start 20, end 20,   run 0   → JCT 10,  queue 10,  slowdown 10 (÷ 1 s), ρ 1
//	d: submit 50, start 60, end 1050, run 900, 2 preemptions → JCT 1000, queue 10, slowdown 1000/900, ρ 0.94 (loss)
//	e: submit 70, never started, never ended
func tiny() Run {
	return Run{
		Policy: "astraea",
		Jobs: []JobRecord{
			{ID: "a", Tenant: "x", GPUs: 1, Submit: at(0), FirstStart: at(0), End: at(100), Run: 100 * time.Second, Rho: 1, State: "COMPLETED"},
			{ID: "b", Tenant: "x", GPUs: 2, Submit: at(0), FirstStart: at(100), End: at(300), Run: 200 * time.Second, Rho: 0.5, State: "FAILED"},
			{ID: "c", Tenant: "y", GPUs: 1, Submit: at(10), FirstStart: at(20), End: at(20), Run: 0, Rho: 1},
			{ID: "d", Tenant: "y", GPUs: 4, Submit: at(50), FirstStart: at(60), End: at(1050), Run: 900 * time.Second, Rho: 0.94, Preemptions: 2, State: "COMPLETED"},
			{ID: "e", Tenant: "y", GPUs: 4, Submit: at(70), Preemptions: 1},
		},
	}
}

func TestSummarizeJobs(t *testing.T) {
	s := Summarize(tiny(), SummaryConfig{})
	checks := []struct {
		name      string
		got, want float64
	}{
		{"jobs", float64(s.Jobs), 5},
		{"finished", float64(s.Finished), 4},
		{"loss jobs are b and d", float64(s.LossJobs), 2},
		{"sharing-loss share is 2 of 4 finished", s.SharingLossJobs, 0.5},
		{"avg JCT", s.JCT.Mean, (100 + 300 + 10 + 1000) / 4.0},
		{"p50 JCT is rank 2 of 10,100,300,1000", s.JCT.P50, 100},
		{"p90 JCT is rank 4", s.JCT.P90, 1000},
		{"p99 JCT", s.JCT.P99, 1000},
		{"avg queueing", s.Queueing.Mean, (0 + 100 + 10 + 10) / 4.0},
		{"p50 queueing is rank 2 of 0,10,10,100", s.Queueing.P50, 10},
		{"avg slowdown", s.Slowdown.Mean, (1 + 1.5 + 10 + 1000.0/900) / 4},
		{"p90 slowdown", s.Slowdown.P90, 10},
		{"preemptions", float64(s.Preemptions), 3},
		{"preempted jobs", float64(s.PreemptedJobs), 2},
		{"completed (empty state counts as completed)", float64(s.States["COMPLETED"]), 3},
		{"failed", float64(s.States["FAILED"]), 1},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestSlowdownConventions(t *testing.T) {
	tests := []struct {
		name string
		job  JobRecord
		want float64
	}{
		{"a job that never waited has slowdown 1", JobRecord{Submit: at(0), End: at(60), Run: time.Minute}, 1},
		{"waiting as long as running doubles it", JobRecord{Submit: at(0), End: at(120), Run: time.Minute}, 2},
		{"a zero-second job that did not wait has slowdown 1", JobRecord{Submit: at(5), End: at(5)}, 1},
		{"a zero-second job divides by one second", JobRecord{Submit: at(0), End: at(30)}, 30},
		{"a job never beats its run time", JobRecord{Submit: at(0), End: at(30), Run: time.Minute}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.job.Slowdown(time.Second); !near(got, tt.want) {
				t.Fatalf("Slowdown = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPercentileNearestRank(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for p, want := range map[float64]float64{0: 1, 10: 1, 11: 2, 50: 5, 90: 9, 99: 10, 100: 10} {
		if got := Percentile(xs, p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if Percentile(nil, 50) != 0 || NewStats(nil) != (Stats{}) {
		t.Error("empty input must give zeros")
	}
}

func acct(alloc, fair float64) ledger.Account {
	return ledger.Account{Alloc: ledger.GPUSeconds(alloc), FairShare: ledger.GPUSeconds(fair),
		Rho: ledger.Ratio(ledger.GPUSeconds(alloc), ledger.GPUSeconds(fair))}
}

func TestTenantIntervalLoss(t *testing.T) {
	h := time.Hour
	r := Run{Tenants: []TenantInterval{
		// 1 h intervals: x loses in the first, y is owed nothing and gets nothing (ρ = 1),
		// y borrows in the second (ρ = +Inf), x exactly fair up to rounding.
		{Tenant: "x", From: at(0), To: at(3600), Account: acct(1800, 3600)},
		{Tenant: "y", From: at(0), To: at(3600), Account: acct(0, 0)},
		{Tenant: "x", From: at(3600), To: at(7200), Account: acct(3600*(1-1e-12), 3600)},
		{Tenant: "y", From: at(3600), To: at(7200), Account: acct(100, 0)},
		// the last 1 h interval was cut at the end of the run but belongs to the 1 h group
		{Tenant: "x", From: at(7200), To: at(7300), Account: acct(0, 100), Length: h},
		// one 2 h interval, not configured: ignored
		{Tenant: "x", From: at(0), To: at(7200), Account: acct(0, 1)},
		// 6 h: one pair, a loss
		{Tenant: "x", From: at(0), To: at(21600), Account: acct(1, 2)},
	}}
	s := Summarize(r, SummaryConfig{})
	want := []IntervalLoss{
		{Interval: h, Seconds: 3600, Pairs: 5, Loss: 2, Share: 0.4, ShareBusy: 0.4},
		{Interval: 6 * h, Seconds: 21600, Pairs: 1, Loss: 1, Share: 1, ShareBusy: 1},
		{Interval: 24 * h, Seconds: 86400},
	}
	if len(s.TenantLoss) != len(want) {
		t.Fatalf("TenantLoss = %+v", s.TenantLoss)
	}
	for i := range want {
		if s.TenantLoss[i] != want[i] {
			t.Errorf("interval %d: %+v, want %+v", i, s.TenantLoss[i], want[i])
		}
	}
	// Whole-run ρ from the 1 h intervals: x = (1800+3600)/(3600+3600+100), y = +Inf.
	if got, want := float64(s.TenantRho["x"]), (1800+3600*(1-1e-12))/7300; !near(got, want) {
		t.Errorf("ρ_x = %v, want %v", got, want)
	}
	if !s.TenantRho["y"].IsInf() || s.JainExcluded != 1 || s.Jain != 1 {
		t.Errorf("ρ_y = %v, Jain = %v excluded %d; want +Inf, 1, 1", s.TenantRho["y"], s.Jain, s.JainExcluded)
	}
	// ρ comes from the integrals, not from a stale or unset Rho field.
	r2 := Run{Tenants: []TenantInterval{{Tenant: "x", From: at(0), To: at(3600), Account: ledger.Account{Alloc: 1, FairShare: 2}},
		{Tenant: "y", From: at(0), To: at(3600), Account: ledger.Account{}}}}
	if s := Summarize(r2, SummaryConfig{}); s.TenantLoss[0].Loss != 1 || s.TenantLoss[0].Pairs != 2 {
		t.Errorf("accounts without Rho: %+v", s.TenantLoss[0])
	}
	// With an exact threshold the rounding-level shortfall counts as a loss.
	if s := Summarize(r, SummaryConfig{Epsilon: -1}); s.TenantLoss[0].Loss != 3 {
		t.Errorf("exact comparison: %d losses, want 3", s.TenantLoss[0].Loss)
	}
}

func TestJain(t *testing.T) {
	tests := []struct {
		name string
		rho  map[string]ledger.Rho
		want float64
	}{
		{"equal ρ is perfectly fair", map[string]ledger.Rho{"a": 0.7, "b": 0.7, "c": 0.7}, 1},
		{"one of two served", map[string]ledger.Rho{"a": 1, "b": 0}, 0.5},
		{"1 and 2", map[string]ledger.Rho{"a": 1, "b": 2}, 9.0 / 10},
		{"no tenants", nil, 1},
		{"only +Inf", map[string]ledger.Rho{"a": ledger.Rho(math.Inf(1))}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := Jain(tt.rho); !near(got, tt.want) {
				t.Fatalf("Jain = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestJainFromTotals(t *testing.T) {
	r := Run{TenantTotals: map[string]ledger.Account{"a": acct(10, 10), "b": acct(20, 10)}}
	if s := Summarize(r, SummaryConfig{}); !near(s.Jain, 0.9) {
		t.Fatalf("Jain = %v, want 0.9", s.Jain)
	}
}

func TestUtilization(t *testing.T) {
	pts := []UtilPoint{
		{At: at(100), Used: 8, Capacity: 8},
		{At: at(0), Used: 4, Capacity: 8}, // out of order: sorted first
		{At: at(200), Used: 0, Capacity: 16},
	}
	// [0,100): 4/8, [100,200): 8/8, [200,300): 0/16 → (400+800)/(800+800+1600)
	if got := Utilization(pts, at(300)); !near(got, 1200.0/3200) {
		t.Errorf("Utilization = %v, want %v", got, 1200.0/3200)
	}
	// Without an end the last step counts for nothing.
	if got := Utilization(pts, time.Time{}); !near(got, 1200.0/1600) {
		t.Errorf("Utilization without end = %v, want 0.75", got)
	}
	if got := Utilization(nil, at(10)); got != 0 {
		t.Errorf("no points: %v", got)
	}
	if pts[0].At != at(100) {
		t.Error("Utilization reordered its input")
	}
	// Less than one GPU·second of capacity is still capacity.
	short := []UtilPoint{{At: t0, Used: 1, Capacity: 2}}
	if got := Utilization(short, t0.Add(100*time.Millisecond)); !near(got, 0.5) {
		t.Errorf("Utilization over 0.2 GPU·s = %v, want 0.5", got)
	}
	// An end before the last point leaves that point's step out, as an
	// end at it would.
	if got := Utilization(pts, at(150)); !near(got, 1200.0/1600) {
		t.Errorf("Utilization with an end before the last point = %v, want 0.75", got)
	}
	// A point at the end, or two at one instant, spans no time.
	same := []UtilPoint{{At: at(0), Used: 8, Capacity: 8}, {At: at(0), Used: 0, Capacity: 8}, {At: at(10), Used: 8, Capacity: 8}}
	if got := Utilization(same, at(10)); !near(got, 0) {
		t.Errorf("Utilization with an instant step = %v, want 0", got)
	}
}

func TestPreemptionOverhead(t *testing.T) {
	with := Summary{Finished: 10, JCT: Stats{Mean: 1008}}
	without := Summary{Finished: 10, JCT: Stats{Mean: 1000}}
	got, err := PreemptionOverhead(with, without)
	if err != nil || !near(got, 0.008) {
		t.Fatalf("overhead = %v, %v; want 0.008", got, err)
	}
	if _, err := PreemptionOverhead(with, Summary{Finished: 9, JCT: Stats{Mean: 1}}); !errors.Is(err, ErrIncomparable) {
		t.Errorf("different job counts: %v", err)
	}
	if _, err := PreemptionOverhead(Summary{}, Summary{}); !errors.Is(err, ErrIncomparable) {
		t.Errorf("zero JCT: %v", err)
	}
	// Any positive JCT compares: half a second against 0.6 s is 20 %.
	if got, err := PreemptionOverhead(Summary{JCT: Stats{Mean: 0.6}}, Summary{JCT: Stats{Mean: 0.5}}); err != nil || !near(got, 0.2) {
		t.Errorf("overhead over a 0.5 s JCT = %v, %v; want 0.2", got, err)
	}
}

func TestSummaryJSON(t *testing.T) {
	r := tiny()
	r.Tenants = []TenantInterval{{Tenant: "y", From: at(0), To: at(3600), Account: acct(5, 0)}}
	r.Quotas = map[string]float64{"x": 1, "y": 3}
	s := Summarize(r, SummaryConfig{})
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"tenant_rho":{"y":"+Inf"}`, `"sharing_loss_jobs":0.5`, `"interval_seconds":3600`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.JCT != s.JCT || !back.TenantRho["y"].IsInf() {
		t.Errorf("round trip changed the summary: %+v", back)
	}
}

func TestWriteTable(t *testing.T) {
	a := Summarize(tiny(), SummaryConfig{})
	r := tiny()
	r.Policy = "fifo"
	b := Summarize(r, SummaryConfig{})
	ov := 0.008
	b.PreemptionOverhead = &ov
	var sb strings.Builder
	if err := WriteTable(&sb, a, b); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	for _, want := range []string{"astraea", "fifo", "sharing-loss jobs (ρ_job < 0.95)", "50.00 %", "tenant loss intervals 24h (ρ < 1)", "avg JCT s", "352.5", "0.80 %"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	var again strings.Builder
	WriteTable(&again, a, b)
	if again.String() != out {
		t.Error("table is not deterministic")
	}
}

// TestSummaryCopiesExcludedAndShowsSpread: a run's excluded jobs reach its
// summary (a copy), and the table has a spread slowdown row exactly when
// some run has a spread cost.
func TestSummaryCopiesExcludedAndShowsSpread(t *testing.T) {
	r := tiny()
	r.Excluded = map[string]int{"larger than its tenant's quota": 3}
	s := Summarize(r, SummaryConfig{})
	if s.Excluded["larger than its tenant's quota"] != 3 || len(s.Excluded) != 1 {
		t.Fatalf("summary excluded %v, want the run's", s.Excluded)
	}
	r.Excluded["larger than its tenant's quota"] = 4
	if s.Excluded["larger than its tenant's quota"] != 3 {
		t.Fatal("the summary shares the run's map")
	}
	if Summarize(tiny(), SummaryConfig{}).Excluded != nil {
		t.Fatal("a run without exclusions has a summary with some")
	}
	plain := Summarize(tiny(), SummaryConfig{})
	spread := plain
	spread.Overhead.Spread = 0.004
	for _, tc := range []struct {
		name string
		sums []Summary
		want bool
	}{{"no spread cost", []Summary{plain, plain}, false}, {"one run's", []Summary{plain, spread}, true}} {
		var sb strings.Builder
		if err := WriteTable(&sb, tc.sums...); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(sb.String(), "spread slowdown (of Σ JCT)"); got != tc.want {
			t.Errorf("%s: spread row %v, want %v:\n%s", tc.name, got, tc.want, sb.String())
		}
	}
}

func TestWriteJSON(t *testing.T) {
	s := Summarize(tiny(), SummaryConfig{})
	var a, b strings.Builder
	if err := WriteJSON(&a, s, s); err != nil {
		t.Fatal(err)
	}
	WriteJSON(&b, s, s)
	if a.String() != b.String() {
		t.Fatal("JSON output is not deterministic")
	}
	var back []Summary
	if err := json.Unmarshal([]byte(a.String()), &back); err != nil || len(back) != 2 || back[1].Policy != "astraea" {
		t.Fatalf("decoding the output: %v, %+v", err, back)
	}
	var empty strings.Builder
	WriteJSON(&empty)
	if empty.String() != "[]\n" {
		t.Fatalf("no summaries: %q", empty.String())
	}
}

// The sharing-loss test is ρ_job < threshold − ε: a job at exactly the
// threshold, or short of it by rounding only, is not a loss; one short by
// more than ε is, and a one-job run's share is then all or nothing.
func TestJobLossThreshold(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rho       float64
		cfg       SummaryConfig
		wantLoss  int
		wantShare float64
	}{
		{"a job at exactly 0.95 is not a loss", 0.95, SummaryConfig{}, 0, 0},
		{"a job short of 0.95 by rounding is not a loss", 0.95 - 1e-12, SummaryConfig{}, 0, 0},
		{"a job short of 0.95 by more than ε is a loss", 0.95 - 1e-6, SummaryConfig{}, 1, 1},
		{"a job above the threshold is not a loss", 0.96, SummaryConfig{}, 0, 0},
		{"an exact comparison counts the rounding shortfall", 0.95 - 1e-12, SummaryConfig{Epsilon: -1}, 1, 1},
		{"an exact comparison still spares the threshold itself", 0.95, SummaryConfig{Epsilon: -1}, 0, 0},
		{"a wider ε spares a larger shortfall", 0.95 - 1e-6, SummaryConfig{Epsilon: 1e-3}, 0, 0},
		{"a custom threshold replaces 0.95", 0.9, SummaryConfig{JobLoss: 0.8}, 0, 0},
		{"below a custom threshold is a loss", 0.7, SummaryConfig{JobLoss: 0.8}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Run{Jobs: []JobRecord{{ID: "a", Tenant: "x", GPUs: 1, Submit: at(0), FirstStart: at(0), End: at(10), Run: 10 * time.Second, Rho: ledger.Rho(tc.rho)}}}
			s := Summarize(r, tc.cfg)
			if s.LossJobs != tc.wantLoss || s.SharingLossJobs != tc.wantShare {
				t.Errorf("ρ %v: %d loss jobs, share %v; want %d, %v", tc.rho, s.LossJobs, s.SharingLossJobs, tc.wantLoss, tc.wantShare)
			}
		})
	}
}

// Quotas that sum to 0 have no shares: each is 0 %, not NaN.
func TestWriteQuotasWithoutWeight(t *testing.T) {
	var sb strings.Builder
	if err := WriteQuotas(&sb, map[string]float64{"a": 0, "b": 0}); err != nil {
		t.Fatal(err)
	}
	if out := sb.String(); strings.Count(out, "0.00 %") != 2 || strings.Contains(out, "NaN") {
		t.Errorf("table:\n%s", out)
	}
}

// A summary decoded from JSON has its interval lengths in seconds only; the
// table still names them.
func TestWriteTableIntervalFromSeconds(t *testing.T) {
	s := Summary{Policy: "p", TenantLossThreshold: 1, TenantLoss: []IntervalLoss{{Seconds: 3600, Pairs: 4, Loss: 1, Share: 0.25}}}
	var sb strings.Builder
	if err := WriteTable(&sb, s); err != nil {
		t.Fatal(err)
	}
	if out := sb.String(); !strings.Contains(out, "intervals 1h") || !strings.Contains(out, "25.00 % of 4") {
		t.Errorf("table:\n%s", out)
	}
}

// WriteGrid aligns the first column left and the others right, two
// spaces apart, counting runes; a row of one cell is not padded.
func TestWriteGrid(t *testing.T) {
	var sb strings.Builder
	if err := WriteGrid(&sb, [][]string{{"metric", "a", "ρρρ"}, {"avg", "12", "3"}, {"section"}, {"é", "1", "22"}}); err != nil {
		t.Fatal(err)
	}
	// The first column is as wide as "section", the widest of its cells.
	want := "metric    a  ρρρ\n" +
		"avg      12    3\n" +
		"section\n" +
		"é         1   22\n"
	if got := sb.String(); got != want {
		t.Errorf("grid\n%q\nwant\n%q", got, want)
	}
	// A column of empty cells is 0 wide: only its two spaces show.
	sb.Reset()
	if err := WriteGrid(&sb, [][]string{{"a", "", "1"}, {"bb", "", "2"}}); err != nil {
		t.Fatal(err)
	}
	if got, want := sb.String(), "a     1\nbb    2\n"; got != want {
		t.Errorf("grid with an empty column %q, want %q", got, want)
	}
}

// A decoded summary's losses of several lengths, in seconds only, each
// fill their own row of the table.
func TestWriteTableIntervalsFromSeconds(t *testing.T) {
	s := Summary{Policy: "p", TenantLossThreshold: 1, TenantLoss: []IntervalLoss{
		{Seconds: 3600, Pairs: 4, Loss: 1, Share: 0.25}, {Seconds: 86400, Pairs: 2, Loss: 1, Share: 0.5}}}
	var sb strings.Builder
	if err := WriteTable(&sb, s); err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(sb.String(), "\n") {
		if label, cell, ok := strings.Cut(line, ")"); ok {
			rows[label+")"] = strings.TrimSpace(cell)
		}
	}
	for label, want := range map[string]string{"tenant loss intervals 1h (ρ < 1)": "25.00 % of 4", "tenant loss intervals 24h (ρ < 1)": "50.00 % of 2"} {
		if rows[label] != want {
			t.Errorf("row %q = %q, want %q:\n%s", label, rows[label], want, sb.String())
		}
	}
}

// Interval lengths are written as whole hours when they are a positive
// whole number of hours, otherwise as Go writes a duration.
func TestFmtInterval(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Hour: "1h", 24 * time.Hour: "24h", 90 * time.Minute: "1h30m0s", time.Nanosecond: "1ns", 0: "0s", -time.Hour: "-1h0m0s",
	} {
		if got := fmtInterval(d); got != want {
			t.Errorf("fmtInterval(%v) = %q, want %q", d, got, want)
		}
	}
}

// The direct overhead is checkpoint + cold start + lost work, each a share
// of the finished jobs' total JCT.
func TestDirectOverhead(t *testing.T) {
	r := Run{Jobs: []JobRecord{
		{ID: "a", Tenant: "x", GPUs: 1, Submit: at(0), FirstStart: at(0), End: at(100), Run: 90 * time.Second,
			Checkpoint: 2 * time.Second, ColdStart: 3 * time.Second, Lost: 5 * time.Second},
		{ID: "b", Tenant: "x", GPUs: 1, Submit: at(0), FirstStart: at(0), End: at(100), Run: 100 * time.Second},
	}}
	ov := Summarize(r, SummaryConfig{}).Overhead
	want := Overhead{Direct: 10.0 / 200, Checkpoint: 2.0 / 200, ColdStart: 3.0 / 200, Lost: 5.0 / 200}
	if !near(ov.Direct, want.Direct) || !near(ov.Checkpoint, want.Checkpoint) || !near(ov.ColdStart, want.ColdStart) || !near(ov.Lost, want.Lost) {
		t.Errorf("overhead %+v, want %+v", ov, want)
	}
}

// With both equations the table adds the Eq. 16 loss among the pairs with
// demand: ShareBusy of Pairs − Idle, not Share of Pairs.
func TestWriteTableBusyPairs(t *testing.T) {
	il := []IntervalLoss{{Interval: time.Hour, Seconds: 3600, Pairs: 4, Loss: 2, Share: 0.5, Idle: 2, IdleLoss: 1, ShareBusy: 0.25}}
	s := Summary{Policy: "p", TenantLossThreshold: 1, TenantLoss: il, TenantLossEq8: il, TenantLossEq16: il}
	var sb strings.Builder
	if err := WriteTable(&sb, s); err != nil {
		t.Fatal(err)
	}
	if out := sb.String(); !strings.Contains(out, "25.00 % of 2") || !strings.Contains(out, "50.00 % of 4") {
		t.Errorf("table:\n%s", out)
	}
}

func TestCDFOfOneValue(t *testing.T) {
	if c := cdf([]float64{5}); len(c) != 1 || c[0].X != 5 || c[0].Y != 1 {
		t.Errorf("cdf = %v, want [(5, 1)]", c)
	}
}

// TestIdleTenantIntervals: under both modes a pair is idle when the tenant
// had no demand (Eq. 8 owes it nothing); Eq. 16 still owes it its quota,
// so an idle pair is a loss there, counted apart in IdleLoss and left out
// of ShareBusy.
func TestIdleTenantIntervals(t *testing.T) {
	acct := func(alloc, fair ledger.GPUSeconds) ledger.Account {
		return ledger.Account{Alloc: alloc, FairShare: fair, Rho: ledger.Ratio(alloc, fair)}
	}
	pair := func(tenant string, eq8, eq16 ledger.Account) TenantInterval {
		return TenantInterval{Tenant: tenant, From: at(0), To: at(3600), Account: eq16, Eq8: eq8, Eq16: eq16}
	}
	r := tiny()
	r.BothModes = true
	r.Tenants = []TenantInterval{
		pair("idle", acct(0, 0), acct(0, 3600)),
		pair("served", acct(3600, 3600), acct(3600, 3600)),
		pair("short", acct(1800, 3600), acct(1800, 3600)),
	}
	s := Summarize(r, SummaryConfig{Intervals: []time.Duration{time.Hour}})
	for _, tc := range []struct {
		name string
		got  []IntervalLoss
		want IntervalLoss
	}{
		{"Eq. 16", s.TenantLossEq16, IntervalLoss{Interval: time.Hour, Seconds: 3600, Pairs: 3, Loss: 2, Idle: 1, IdleLoss: 1, Share: 2.0 / 3, ShareBusy: 0.5}},
		{"Eq. 8", s.TenantLossEq8, IntervalLoss{Interval: time.Hour, Seconds: 3600, Pairs: 3, Loss: 1, Idle: 1, IdleLoss: 0, Share: 1.0 / 3, ShareBusy: 0.5}},
	} {
		if len(tc.got) != 1 || tc.got[0] != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, tc.got, tc.want)
		}
	}
}

// TestTenantLossOverSlidingBuckets: two tenants over five hours, by hand.
// Eq. 8 accounts (alloc, fair share) per hour, x's fifth hour cut short at
// the end of the run:
//
//	      h0          h1          h2          h3          h4 (100 s)
//	x  1800/3600   3600/3600   0/3600      7200/3600   0/100
//	y  0/0         0/0         3600/7200   0/0         -
//
// Over two buckets (the hour and the one before it), x's samples are
// 1800/3600, 5400/7200, 3600/7200 (losses), 7200/7200 and 7200/3700; y's
// are idle twice (owed nothing: ρ 1), then 3600/7200 and 3600/7200
// (losses, though y's own h3 was idle): 5 of 9, 5 of the 7 busy. Over 24
// buckets every window reaches back to h0: x's h3 is 12600/14400 and h4
// 12600/14500, losses too: 7 of 9, 7 of 7.
func TestTenantLossOverSlidingBuckets(t *testing.T) {
	h := time.Hour
	pair := func(tenant string, hour int, alloc, fair ledger.GPUSeconds) TenantInterval {
		from := at(hour * 3600)
		a := ledger.Account{Alloc: alloc, FairShare: fair, Rho: ledger.Ratio(alloc, fair)}
		q := ledger.Account{Alloc: alloc, FairShare: 3600} // Eq. 16: the quota, owed even while idle
		return TenantInterval{Tenant: tenant, From: from, To: from.Add(h), Account: q, Eq8: a, Eq16: q}
	}
	cut := pair("x", 4, 0, 100)
	cut.To, cut.Length = cut.From.Add(100*time.Second), h
	r := Run{BothModes: true, Tenants: []TenantInterval{
		// out of order on purpose: the window follows From, not the slice
		pair("y", 3, 0, 0), pair("x", 0, 1800, 3600), pair("y", 0, 0, 0), pair("x", 1, 3600, 3600),
		pair("y", 1, 0, 0), pair("x", 2, 0, 3600), pair("y", 2, 3600, 7200), pair("x", 3, 7200, 3600), cut,
		// a 6 h interval is not an hourly bucket
		{Tenant: "x", From: at(0), To: at(6 * 3600), Eq8: ledger.Account{Alloc: 0, FairShare: 1}},
	}}
	for _, tc := range []struct {
		name    string
		buckets int
		want    WindowLoss
	}{
		{"two buckets", 2, WindowLoss{Step: h, Buckets: 2, StepSeconds: 3600, WindowSeconds: 7200, Samples: 9, Loss: 5, Share: 5.0 / 9, Idle: 2, ShareBusy: 5.0 / 7}},
		{"the default, 24 buckets", 0, WindowLoss{Step: h, Buckets: 24, StepSeconds: 3600, WindowSeconds: 86400, Samples: 9, Loss: 7, Share: 7.0 / 9, Idle: 2, ShareBusy: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Summarize(r, SummaryConfig{WindowBuckets: tc.buckets})
			if s.TenantLossEq8Window == nil || *s.TenantLossEq8Window != tc.want {
				t.Fatalf("window loss %+v, want %+v", s.TenantLossEq8Window, tc.want)
			}
		})
	}
	// The fixed 1 h Eq. 8 figure of the same run, for contrast: x loses
	// h0, h2 and h4, y h2: 4 of 9.
	if s := Summarize(r, SummaryConfig{}); s.TenantLossEq8[0].Loss != 4 || s.TenantLossEq8[0].Pairs != 9 {
		t.Errorf("fixed 1 h loss %+v", s.TenantLossEq8[0])
	}
	// Without Eq. 8 accounts, or turned off, there is no figure.
	one := r
	one.BothModes = false
	if s := Summarize(one, SummaryConfig{}); s.TenantLossEq8Window != nil {
		t.Errorf("a run of one mode has a window loss %+v", s.TenantLossEq8Window)
	}
	if s := Summarize(r, SummaryConfig{WindowBuckets: -1}); s.TenantLossEq8Window != nil {
		t.Errorf("WindowBuckets −1 still gives %+v", s.TenantLossEq8Window)
	}
	// It is a figure of the aggregate, a row of the table and a JSON object
	// of fractions.
	s := Summarize(r, SummaryConfig{})
	i := slices.IndexFunc(Values(s), func(v Value) bool { return v.Key == "tenant_loss_eq8_window_24h" })
	if i < 0 || Values(s)[i].X != 7.0/9 || Values(s)[i].Unit != Share || Values(s)[i].Label != "tenant loss, Eq. 8, last 24 × 1h, hourly (ρ < 1)" {
		t.Errorf("Values: %+v", Values(s))
	}
	if k := slices.IndexFunc(Values(s), func(v Value) bool { return v.Key == "tenant_loss_eq8_24h" }); k < 0 || k+1 != i {
		t.Errorf("the window figure does not follow the fixed Eq. 8 figures (at %d, fixed 24 h at %d)", i, k)
	}
	var sb strings.Builder
	if err := WriteTable(&sb, s); err != nil {
		t.Fatal(err)
	}
	if out := sb.String(); !strings.Contains(out, "tenant loss, Eq. 8, last 24 × 1h, hourly (ρ < 1)") || !strings.Contains(out, "77.78 % of 9") {
		t.Errorf("table:\n%s", out)
	}
	b, _ := json.Marshal(s)
	var back struct {
		W map[string]float64 `json:"tenant_loss_eq8_window"`
	}
	if err := json.Unmarshal(b, &back); err != nil || back.W["share"] != 7.0/9 || back.W["window_seconds"] != 86400 || back.W["samples"] != 9 {
		t.Errorf("JSON %s", b)
	}
}

// One sample is a window loss share too: a run of one lost hour loses all
// of its one sample.
func TestWindowLossOfOneSample(t *testing.T) {
	a := ledger.Account{Alloc: 1800, FairShare: 3600, Rho: 0.5}
	r := Run{BothModes: true, Tenants: []TenantInterval{{Tenant: "x", From: at(0), To: at(3600), Account: a, Eq8: a, Eq16: a}}}
	want := WindowLoss{Step: time.Hour, Buckets: 24, StepSeconds: 3600, WindowSeconds: 86400, Samples: 1, Loss: 1, Share: 1, ShareBusy: 1}
	if got := Summarize(r, SummaryConfig{}).TenantLossEq8Window; got == nil || *got != want {
		t.Errorf("window loss %+v, want %+v", got, want)
	}
}

// A run of both modes without hourly intervals has no window sample: its
// shares are 0, not NaN, and the summary encodes to JSON.
func TestWindowLossWithoutSamples(t *testing.T) {
	a := ledger.Account{Alloc: 1800, FairShare: 3600, Rho: 0.5}
	r := Run{BothModes: true, Tenants: []TenantInterval{{Tenant: "x", From: at(0), To: at(6 * 3600), Account: a, Eq8: a, Eq16: a}}}
	s := Summarize(r, SummaryConfig{})
	w := s.TenantLossEq8Window
	if w == nil || w.Samples != 0 || w.Share != 0 || w.ShareBusy != 0 {
		t.Fatalf("window loss %+v, want no samples and shares of 0", w)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Errorf("the summary does not encode: %v", err)
	}
}

// Any positive window step and bucket count is taken as given: 1 ns steps
// and a window of one bucket (only 0 means the default, and a negative
// count turns the figure off).
func TestWindowLossOfTheSmallestWindow(t *testing.T) {
	a := ledger.Account{Alloc: 1800, FairShare: 3600, Rho: 0.5}
	r := Run{BothModes: true, Tenants: []TenantInterval{
		{Tenant: "x", From: at(0), To: at(0).Add(time.Nanosecond), Account: a, Eq8: a, Eq16: a},
		{Tenant: "x", From: at(0).Add(time.Nanosecond), To: at(0).Add(2 * time.Nanosecond), Account: a, Eq8: ledger.Account{Alloc: 1, FairShare: 1, Rho: 1}, Eq16: a},
	}}
	w := Summarize(r, SummaryConfig{WindowStep: time.Nanosecond, WindowBuckets: 1}).TenantLossEq8Window
	want := WindowLoss{Step: time.Nanosecond, Buckets: 1, StepSeconds: 1e-9, WindowSeconds: 1e-9, Samples: 2, Loss: 1, Share: 0.5, ShareBusy: 0.5}
	if w == nil || *w != want {
		t.Errorf("window loss %+v, want %+v", w, want)
	}
}

// The table's tenant loss rows name the summaries' threshold, also for a
// table of one summary.
func TestWriteTableNamesTheTenantThreshold(t *testing.T) {
	s := Summarize(tiny(), SummaryConfig{TenantLoss: 0.9})
	var sb strings.Builder
	if err := WriteTable(&sb, s); err != nil {
		t.Fatal(err)
	}
	if out := sb.String(); !strings.Contains(out, "tenant loss intervals 1h (ρ < 0.9)") {
		t.Errorf("table does not name the threshold 0.9:\n%s", out)
	}
}

// The overhead is a share of the total JCT however short it is: one job
// of a second that spent a quarter of it checkpointing.
func TestOverheadOfAOneSecondRun(t *testing.T) {
	r := Run{Jobs: []JobRecord{{ID: "a", Tenant: "x", GPUs: 1, Submit: at(0), FirstStart: at(0), End: at(1), Run: 750 * time.Millisecond,
		Checkpoint: 250 * time.Millisecond, Rho: 1}}}
	if ov := Summarize(r, SummaryConfig{}).Overhead; ov.Checkpoint != 0.25 || ov.Direct != 0.25 {
		t.Errorf("overhead %+v, want a checkpoint share of 0.25", ov)
	}
}

// Weights are shares of their total whatever their scale: fractions that
// sum to 1 are 25 % and 75 %.
func TestWriteQuotasOfFractions(t *testing.T) {
	var sb strings.Builder
	if err := WriteQuotas(&sb, map[string]float64{"a": 0.25, "b": 0.75}); err != nil {
		t.Fatal(err)
	}
	want := "tenant  weight    share\n" +
		"a         0.25  25.00 %\n" +
		"b         0.75  75.00 %\n"
	if got := sb.String(); got != want {
		t.Errorf("table\n%s\nwant\n%s", got, want)
	}
}

// A summary that JSON cannot encode (a NaN, which Summarize never gives)
// fails WriteJSON with an error rather than writing an empty document.
func TestWriteJSONRefusesANaN(t *testing.T) {
	s := Summarize(tiny(), SummaryConfig{})
	s.Utilization = math.NaN()
	var sb strings.Builder
	if err := WriteJSON(&sb, s); err == nil {
		t.Errorf("a NaN summary written without an error: %q", sb.String())
	}
}

// Queueing is FirstStart − Submit; End − Submit for a job that ended
// without starting; 0 for one that neither started nor ended.
func TestQueueing(t *testing.T) {
	for name, tc := range map[string]struct {
		j    JobRecord
		want time.Duration
	}{
		"started":                 {JobRecord{Submit: at(10), FirstStart: at(40), End: at(100)}, 30 * time.Second},
		"cancelled while pending": {JobRecord{Submit: at(10), End: at(25)}, 15 * time.Second},
		"still pending":           {JobRecord{Submit: at(10)}, 0},
	} {
		if got := tc.j.Queueing(); got != tc.want {
			t.Errorf("%s: Queueing = %v, want %v", name, got, tc.want)
		}
	}
}

// With Epsilon negative the loss test is exact: a window sample at ρ = 1
// exactly is no loss.
func TestWindowLossAtTheThreshold(t *testing.T) {
	a := ledger.Account{Alloc: 3600, FairShare: 3600, Rho: 1}
	r := Run{BothModes: true, Tenants: []TenantInterval{{Tenant: "x", From: at(0), To: at(3600), Account: a, Eq8: a, Eq16: a}}}
	if w := Summarize(r, SummaryConfig{Epsilon: -1}).TenantLossEq8Window; w == nil || w.Samples != 1 || w.Loss != 0 {
		t.Errorf("window loss %+v, want one sample and no loss", w)
	}
}
