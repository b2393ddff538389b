package metrics

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Unit says how a Value is printed.
type Unit uint8

const (
	Share   Unit = iota // a fraction, printed as a percentage
	Seconds             // a time in seconds
	Number              // a dimensionless figure (slowdown, Jain's index)
	Count               // a whole count
)

// Value is one named figure of merit of a Summary, in the flat form that
// tables of several runs, sweeps and the JSON aggregate share.
type Value struct {
	// Key is stable and snake_case, e.g. "sharing_loss_jobs",
	// "tenant_loss_eq8_1h", "jct_mean_seconds": the JSON key.
	Key   string
	Label string // a table's row name
	Unit  Unit
	X     float64
}

// Values returns the figures of s in a fixed order: job sharing loss;
// tenant loss per interval length under Eq. 8, then over Eq. 8's sliding
// window (key "tenant_loss_eq8_window_24h" for 24 hourly buckets), under
// Eq. 16 and Eq. 16 among the pairs with demand (when s has both modes),
// else in its reporting mode;
// JCT, queueing and slowdown; utilization and Jain's index; preemptions and
// the direct overhead with its parts; the spread slowdown; the twin-run
// overhead when s has it.
func Values(s Summary) []Value {
	var v []Value
	add := func(key, label string, u Unit, x float64) { v = append(v, Value{key, label, u, x}) }
	add("sharing_loss_jobs", fmt.Sprintf("sharing-loss jobs (ρ_job < %g)", s.JobLossThreshold), Share, s.SharingLossJobs)
	loss := func(ls []IntervalLoss, key, label string, busy bool) {
		for _, il := range ls {
			iv := fmtInterval(il.length())
			x := il.Share
			if busy {
				x = il.ShareBusy
			}
			add(key+"_"+iv, fmt.Sprintf(label, iv, s.TenantLossThreshold), Share, x)
		}
	}
	if s.TenantLossEq8 != nil || s.TenantLossEq16 != nil {
		loss(s.TenantLossEq8, "tenant_loss_eq8", "tenant loss %s, Eq. 8 (ρ < %g)", false)
		if w := s.TenantLossEq8Window; w != nil {
			add(w.key(), w.label(s.TenantLossThreshold), Share, w.Share)
		}
		loss(s.TenantLossEq16, "tenant_loss_eq16", "tenant loss %s, Eq. 16 (ρ < %g)", false)
		loss(s.TenantLossEq16, "tenant_loss_eq16_busy", "tenant loss %s, Eq. 16, with demand (ρ < %g)", true)
	} else {
		loss(s.TenantLoss, "tenant_loss", "tenant loss %s (ρ < %g)", false)
	}
	add("jct_mean_seconds", "avg JCT s", Seconds, s.JCT.Mean)
	add("jct_p50_seconds", "p50 JCT s", Seconds, s.JCT.P50)
	add("jct_p99_seconds", "p99 JCT s", Seconds, s.JCT.P99)
	add("queueing_mean_seconds", "avg queueing s", Seconds, s.Queueing.Mean)
	add("slowdown_mean", "avg slowdown", Number, s.Slowdown.Mean)
	add("slowdown_p99", "p99 slowdown", Number, s.Slowdown.P99)
	add("utilization", "utilization", Share, s.Utilization)
	add("jain", "Jain's index of tenant ρ", Number, s.Jain)
	add("preemptions", "preemptions", Count, float64(s.Preemptions))
	add("overhead_direct", "overhead, direct (of Σ JCT)", Share, s.Overhead.Direct)
	add("overhead_checkpoint", "  of it checkpoints", Share, s.Overhead.Checkpoint)
	add("overhead_cold_start", "  of it cold starts", Share, s.Overhead.ColdStart)
	add("overhead_lost", "  of it lost work", Share, s.Overhead.Lost)
	add("overhead_spread", "spread slowdown (of Σ JCT)", Share, s.Overhead.Spread)
	if s.PreemptionOverhead != nil {
		add("overhead_twin", "avg JCT rise over a run without overheads", Share, *s.PreemptionOverhead)
	}
	return v
}

// key is the figure's Values key: "tenant_loss_eq8_window_" and the
// window's length, e.g. "tenant_loss_eq8_window_24h".
func (w WindowLoss) key() string { return "tenant_loss_eq8_window_" + fmtInterval(w.window()) }

// label is the figure's row name, e.g. "tenant loss, Eq. 8, last 24 × 1h,
// hourly (ρ < 1)".
func (w WindowLoss) label(threshold float64) string {
	every := "every " + fmtInterval(w.step())
	if w.step() == time.Hour {
		every = "hourly"
	}
	return fmt.Sprintf("tenant loss, Eq. 8, last %d × %s, %s (ρ < %g)", w.Buckets, fmtInterval(w.step()), every, threshold)
}

// step is the interval length of w, from Step or, decoded, StepSeconds.
func (w WindowLoss) step() time.Duration {
	if w.Step != 0 {
		return w.Step
	}
	return time.Duration(w.StepSeconds * float64(time.Second))
}

func (w WindowLoss) window() time.Duration { return time.Duration(w.Buckets) * w.step() }

// length is the interval length of il.
func (il IntervalLoss) length() (d time.Duration) {
	if il.Interval != 0 {
		return il.Interval
	}
	return time.Duration(il.Seconds * float64(time.Second))
}

// Band is a figure over several runs of one policy (tick phases): its mean,
// minimum and maximum.
type Band struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// Aggregate is one policy's figures over several runs that differ only in
// what should not matter (the tick phase): every Value of their summaries
// as a Band.
type Aggregate struct {
	Policy string `json:"policy"`
	Runs   int    `json:"runs"`
	// Metrics maps each Value's Key to its band.
	Metrics map[string]Band `json:"metrics"`
	values  []Value         // the first run's values, for order, labels and units
}

// ErrAggregate reports summaries that cannot be aggregated: none, or of
// different policies, or with different figures.
var ErrAggregate = errors.New("metrics: summaries cannot be aggregated")

// AggregateRuns returns the bands of the summaries of one policy's runs.
// Means are plain averages over the runs, in the order given. Cost: O(runs
// × values).
func AggregateRuns(sums ...Summary) (Aggregate, error) {
	if len(sums) == 0 {
		return Aggregate{}, fmt.Errorf("%w: no run", ErrAggregate)
	}
	a := Aggregate{Policy: sums[0].Policy, Runs: len(sums), Metrics: map[string]Band{}, values: Values(sums[0])}
	all := make([][]Value, len(sums))
	for i, s := range sums {
		if s.Policy != a.Policy {
			return Aggregate{}, fmt.Errorf("%w: policies %q and %q", ErrAggregate, a.Policy, s.Policy)
		}
		all[i] = Values(s)
		if !slices.EqualFunc(all[i], a.values, func(x, y Value) bool { return x.Key == y.Key }) {
			return Aggregate{}, fmt.Errorf("%w: run %d of %s has other figures than run 0", ErrAggregate, i, a.Policy)
		}
	}
	for k, v := range a.values {
		b := Band{Min: math.Inf(1), Max: math.Inf(-1)}
		for _, vs := range all {
			x := vs[k].X
			b.Mean += x
			b.Min, b.Max = min(b.Min, x), max(b.Max, x)
		}
		// The mean of equal values can round one ulp outside them.
		b.Mean = min(max(b.Mean/float64(len(all)), b.Min), b.Max)
		a.Metrics[v.Key] = b
	}
	return a, nil
}

// Band returns the band of the figure key, and whether a has it.
func (a Aggregate) Band(key string) (Band, bool) {
	b, ok := a.Metrics[key]
	return b, ok
}

// Unit returns the unit of the figure key, and whether a has it.
func (a Aggregate) Unit(key string) (Unit, bool) {
	for _, v := range a.values {
		if v.Key == key {
			return v.Unit, true
		}
	}
	return 0, false
}

// WriteAggregateTable writes the aggregates as an aligned table, one row per
// figure and one column per policy, each cell "mean [min–max]" (just the
// value when all runs agree). Rows follow Values' order; a figure a policy
// lacks prints "-".
func WriteAggregateTable(w io.Writer, aggs ...Aggregate) error {
	var rows []Value
	seen := map[string]bool{}
	for _, a := range aggs {
		for _, v := range a.values {
			if !seen[v.Key] {
				seen[v.Key] = true
				rows = append(rows, v)
			}
		}
	}
	grid := [][]string{{"metric"}, {"runs"}}
	for _, a := range aggs {
		grid[0] = append(grid[0], a.Policy)
		grid[1] = append(grid[1], strconv.Itoa(a.Runs))
	}
	for _, v := range rows {
		r := []string{v.Label}
		for _, a := range aggs {
			b, ok := a.Metrics[v.Key]
			if !ok {
				r = append(r, "-")
				continue
			}
			r = append(r, FormatBand(b, v.Unit))
		}
		grid = append(grid, r)
	}
	return WriteGrid(w, grid)
}

// FormatBand prints b in unit u: "mean [min–max]", or the mean alone when
// min and max print the same.
func FormatBand(b Band, u Unit) string {
	m, lo, hi := FormatValue(b.Mean, u), FormatValue(b.Min, u), FormatValue(b.Max, u)
	if lo == hi {
		return m
	}
	return m + " [" + lo + "–" + hi + "]"
}

// FormatValue prints x in unit u: shares as percentages with two decimals,
// seconds with none, numbers with three decimals, counts whole.
func FormatValue(x float64, u Unit) string {
	switch u {
	case Share:
		return strconv.FormatFloat(100*x, 'f', 2, 64) + " %"
	case Seconds:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case Count:
		return strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

// SummaryCSV is the file WriteAggregateCSV writes.
const SummaryCSV = "summary.csv"

// WriteAggregateCSV writes summary.csv into dir (created if needed):
// policy,runs,metric,mean,min,max — one row per policy and figure, policies
// in the order given, figures in Values' order; shares as fractions, times
// in seconds, numbers in the shortest exact decimal form.
func WriteAggregateCSV(dir string, aggs ...Aggregate) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return writeCSVFile(filepath.Join(dir, SummaryCSV), []string{"policy", "runs", "metric", "mean", "min", "max"},
		func(emit func(...string) error) error {
			for _, a := range aggs {
				for _, v := range a.values {
					b := a.Metrics[v.Key]
					if err := emit(text(a.Policy), strconv.Itoa(a.Runs), v.Key, ffmt(b.Mean), ffmt(b.Min), ffmt(b.Max)); err != nil {
						return err
					}
				}
			}
			return nil
		})
}
