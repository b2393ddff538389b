package metrics

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable writes the summaries as an aligned text table: one row per
// metric, one column per summary (policy), in the order given. Shares are
// percentages with two decimals, times seconds with one decimal.
func WriteTable(w io.Writer, sums ...Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, cell func(s Summary) string) {
		var b strings.Builder
		b.WriteString(name)
		b.WriteByte('\t')
		for _, s := range sums {
			b.WriteString(cell(s))
			b.WriteByte('\t')
		}
		b.WriteByte('\n')
		io.WriteString(tw, b.String())
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
	for _, length := range intervalLengths(sums) {
		thr := 1.0
		if len(sums) > 0 {
			thr = sums[0].TenantLossThreshold
		}
		row(fmt.Sprintf("tenant loss intervals %s (ρ < %g)", fmtInterval(length), thr), func(s Summary) string {
			for _, il := range s.TenantLoss {
				if il.Interval == length || (il.Interval == 0 && il.Seconds == length.Seconds()) {
					return fmt.Sprintf("%s of %d", pct(il.Share), il.Pairs)
				}
			}
			return "-"
		})
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
	return tw.Flush()
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

// fmtInterval writes whole hours as "6h", other lengths as Go durations.
func fmtInterval(d time.Duration) string {
	if d > 0 && d%time.Hour == 0 {
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	}
	return d.String()
}

// WriteQuotas writes tenant quotas as an aligned table: tenant, weight and
// share of the total in percent, sorted by tenant.
func WriteQuotas(w io.Writer, quotas map[string]float64) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	total := 0.0
	for _, v := range quotas {
		total += v
	}
	fmt.Fprintf(tw, "tenant\tweight\tshare\t\n")
	for _, t := range slices.Sorted(maps.Keys(quotas)) {
		share := 0.0
		if total > 0 {
			share = quotas[t] / total
		}
		fmt.Fprintf(tw, "%s\t%s\t%s %%\t\n", t, strconv.FormatFloat(quotas[t], 'g', 6, 64), strconv.FormatFloat(100*share, 'f', 2, 64))
	}
	return tw.Flush()
}
