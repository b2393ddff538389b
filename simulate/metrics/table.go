package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// WriteTable writes the summaries as an aligned text table: one row per
// metric, one column per summary (policy), in the order given. Shares are
// percentages with two decimals, times seconds with one decimal.
func WriteTable(w io.Writer, sums ...Summary) error {
	var grid [][]string
	row := func(name string, cell func(s Summary) string) {
		r := []string{name}
		for _, s := range sums {
			r = append(r, cell(s))
		}
		grid = append(grid, r)
	}
	pct := func(x float64) string { return strconv.FormatFloat(100*x, 'f', 2, 64) + " %" }
	secs := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	row("metric", func(s Summary) string { return s.Policy })
	row("jobs (finished)", func(s Summary) string { return fmt.Sprintf("%d (%d)", s.Jobs, s.Finished) })
	if len(sums) > 0 {
		row(fmt.Sprintf("sharing-loss jobs (ρ_job < %g)", sums[0].JobLossThreshold),
			func(s Summary) string { return pct(s.SharingLossJobs) })
	}
	thr := 1.0
	if len(sums) > 0 {
		thr = sums[0].TenantLossThreshold
	}
	both := len(sums) > 0 && !slices.ContainsFunc(sums, func(s Summary) bool { return s.TenantLossEq8 == nil })
	lossRows := func(label string, get func(Summary) []IntervalLoss, busy bool) {
		for _, length := range intervalLengths(sums) {
			row(fmt.Sprintf(label, fmtInterval(length), thr), func(s Summary) string {
				for _, il := range get(s) {
					if il.Interval == length || (il.Interval == 0 && il.Seconds == length.Seconds()) {
						if busy {
							return fmt.Sprintf("%s of %d", pct(il.ShareBusy), il.Pairs-il.Idle)
						}
						return fmt.Sprintf("%s of %d", pct(il.Share), il.Pairs)
					}
				}
				return "-"
			})
		}
	}
	if both {
		// The authors report Eq. 8; Eq. 16 counts idle tenants' quota as
		// owed, so its loss among the pairs with demand follows it.
		lossRows("tenant loss intervals %s, Eq. 8 (ρ < %g)", func(s Summary) []IntervalLoss { return s.TenantLossEq8 }, false)
		// The authors' simulator reports Eq. 8 over its last 24 hourly
		// buckets, sampled every hour: beside the fixed intervals.
		if w := sums[0].TenantLossEq8Window; w != nil {
			row(w.label(thr), func(s Summary) string {
				if s.TenantLossEq8Window == nil {
					return "-"
				}
				return fmt.Sprintf("%s of %d", pct(s.TenantLossEq8Window.Share), s.TenantLossEq8Window.Samples)
			})
		}
		lossRows("tenant loss intervals %s, Eq. 16 (ρ < %g)", func(s Summary) []IntervalLoss { return s.TenantLossEq16 }, false)
		lossRows("  Eq. 16 %s, tenants with demand (ρ < %g)", func(s Summary) []IntervalLoss { return s.TenantLossEq16 }, true)
	} else {
		lossRows("tenant loss intervals %s (ρ < %g)", func(s Summary) []IntervalLoss { return s.TenantLoss }, false)
	}
	for _, m := range []struct {
		name string
		get  func(Summary) Stats
	}{
		{"JCT s", func(s Summary) Stats { return s.JCT }},
		{"queueing s", func(s Summary) Stats { return s.Queueing }},
	} {
		row("avg "+m.name, func(s Summary) string { return secs(m.get(s).Mean) })
		row("p50 "+m.name, func(s Summary) string { return secs(m.get(s).P50) })
		row("p90 "+m.name, func(s Summary) string { return secs(m.get(s).P90) })
		row("p99 "+m.name, func(s Summary) string { return secs(m.get(s).P99) })
	}
	row("avg slowdown", func(s Summary) string { return num(s.Slowdown.Mean) })
	row("p50 slowdown", func(s Summary) string { return num(s.Slowdown.P50) })
	row("p90 slowdown", func(s Summary) string { return num(s.Slowdown.P90) })
	row("p99 slowdown", func(s Summary) string { return num(s.Slowdown.P99) })
	row("utilization", func(s Summary) string { return pct(s.Utilization) })
	row("Jain's index of tenant ρ", func(s Summary) string { return num(s.Jain) })
	row("preemptions (jobs)", func(s Summary) string { return fmt.Sprintf("%d (%d)", s.Preemptions, s.PreemptedJobs) })
	row("overhead, direct (of Σ JCT)", func(s Summary) string { return pct(s.Overhead.Direct) })
	row("  checkpoint / cold start / lost", func(s Summary) string {
		return fmt.Sprintf("%s / %s / %s", pct(s.Overhead.Checkpoint), pct(s.Overhead.ColdStart), pct(s.Overhead.Lost))
	})
	if slices.ContainsFunc(sums, func(s Summary) bool { return s.Overhead.Spread > 0 }) {
		row("spread slowdown (of Σ JCT)", func(s Summary) string { return pct(s.Overhead.Spread) })
	}
	if slices.ContainsFunc(sums, func(s Summary) bool { return s.PreemptionOverhead != nil }) {
		row("preemption overhead (avg JCT)", func(s Summary) string {
			if s.PreemptionOverhead == nil {
				return "-"
			}
			return pct(*s.PreemptionOverhead)
		})
	}
	for _, reason := range excludedReasons(sums) {
		row("excluded: "+reason, func(s Summary) string { return strconv.Itoa(s.Excluded[reason]) })
	}
	return WriteGrid(w, grid)
}

// WriteGrid writes rows of cells, the first column left-aligned and the
// others right-aligned, two spaces apart; widths count runes. A row of one
// cell is written as it is, without padding.
func WriteGrid(w io.Writer, grid [][]string) error {
	var width []int
	for _, r := range grid {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range grid {
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			switch {
			case i == 0:
				b.WriteString(c)
				if len(r) > 1 {
					b.WriteString(pad)
				}
			default:
				b.WriteString("  ")
				b.WriteString(pad)
				b.WriteString(c)
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func intervalLengths(sums []Summary) []time.Duration {
	var out []time.Duration
	for _, s := range sums {
		for _, il := range s.TenantLoss {
			l := il.Interval
			if l == 0 {
				l = time.Duration(il.Seconds * float64(time.Second))
			}
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	slices.Sort(out)
	return out
}

func excludedReasons(sums []Summary) []string {
	set := map[string]bool{}
	for _, s := range sums {
		for k := range s.Excluded {
			set[k] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// fmtInterval writes a positive whole number of hours as "6h", other
// lengths (0 among them) as Go durations.
func fmtInterval(d time.Duration) string {
	if d > 0 && d%time.Hour == 0 {
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	}
	return d.String()
}

// WriteQuotas writes tenant quotas as an aligned table: tenant, weight and
// share of the total in percent, sorted by tenant.
func WriteQuotas(w io.Writer, quotas map[string]float64) error {
	total := 0.0
	for _, v := range quotas {
		total += v
	}
	grid := [][]string{{"tenant", "weight", "share"}}
	for _, t := range slices.Sorted(maps.Keys(quotas)) {
		share := 0.0
		if total > 0 {
			share = quotas[t] / total
		}
		grid = append(grid, []string{t, strconv.FormatFloat(quotas[t], 'g', 6, 64), strconv.FormatFloat(100*share, 'f', 2, 64) + " %"})
	}
	return WriteGrid(w, grid)
}

// WriteJSON writes the summaries as an indented JSON array, in the order
// given. Map keys are sorted and numbers use the shortest exact form, so
// equal summaries give byte-identical output; ρ = +Inf is written "+Inf".
func WriteJSON(w io.Writer, sums ...Summary) error {
	if sums == nil {
		sums = []Summary{}
	}
	b, err := json.MarshalIndent(sums, "", "  ")
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}
