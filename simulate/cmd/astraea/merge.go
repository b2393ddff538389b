package main

import (
	"cmp"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/astraea-sched/astraea/simulate/metrics"
)

// merge is "astraea sweep merge": it joins the records of one or more
// sweep directories into one long CSV, one row per point and metric, and
// draws the sensitivity figures beside it.
func merge(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sweep merge", flag.ContinueOnError)
	out := fs.String("o", "", "merged CSV `FILE` (default: sweep.csv in the first DIR)")
	figures := fs.Bool("figures", true, "draw the sensitivity figures (SVG) beside the CSV")
	const usage = "usage: astraea sweep merge [-o FILE] [-figures=false] DIR..."
	var msg strings.Builder
	fs.SetOutput(&msg)
	fs.Usage = func() {}
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(stdout, usage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return err
	case err != nil:
		fmt.Fprintf(stderr, "astraea sweep merge: %s (%s)\n", strings.TrimSpace(msg.String()), usage)
		return errUsage
	case fs.NArg() == 0:
		fmt.Fprintf(stderr, "astraea sweep merge: no DIR (%s)\n", usage)
		return errUsage
	}
	done := map[string]record{}
	for _, dir := range fs.Args() {
		if _, err := readRecords(dir, done); err != nil {
			return err
		}
	}
	if len(done) == 0 {
		return fmt.Errorf("%w: no records in %v", errRecord, fs.Args())
	}
	recs := slices.SortedFunc(maps.Values(done), cmpRecords)
	path := cmp.Or(*out, filepath.Join(fs.Arg(0), "sweep.csv"))
	if err := writeLong(path, recs); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d points\n", path, len(recs))
	if !*figures {
		return nil
	}
	drawn, err := writeSensitivity(filepath.Dir(path), recs)
	for _, f := range drawn {
		fmt.Fprintln(stdout, f)
	}
	return err
}

// flagColumns are the flag columns of the merged table: every flag of
// any point, and policy.
func flagColumns(recs []record) []string {
	set := map[string]bool{"policy": true}
	for _, r := range recs {
		for k := range r.Flags {
			set[k] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// flagOf is a record's value of a flag column; a point's policy is the
// one its run reports, whether the grid named it or not.
func flagOf(r record, name string) string {
	if name == "policy" {
		return r.Policy
	}
	return r.Flags[name]
}

// cmpRecords orders points by their flags, by flag name, numbers and
// durations by value, and then by key.
func cmpRecords(a, b record) int {
	names := flagColumns([]record{a, b})
	for _, n := range names {
		if c := cmpValues(flagOf(a, n), flagOf(b, n)); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.Key, b.Key)
}

// cmpValues compares two flag values: as durations or numbers when both
// are, as strings otherwise.
func cmpValues(a, b string) int {
	if da, err := time.ParseDuration(a); err == nil {
		if db, err := time.ParseDuration(b); err == nil {
			return cmp.Compare(da, db)
		}
	}
	if fa, err := strconv.ParseFloat(a, 64); err == nil {
		if fb, err := strconv.ParseFloat(b, 64); err == nil {
			return cmp.Compare(fa, fb)
		}
	}
	return cmp.Compare(a, b)
}

// writeLong writes the long table: point, the flag columns, metric,
// value, min, max.
func writeLong(path string, recs []record) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w := csv.NewWriter(f)
	cols := flagColumns(recs)
	header := append(append([]string{"point"}, cols...), "metric", "value", "min", "max")
	if err := w.Write(header); err != nil {
		return err
	}
	row := make([]string, len(header))
	for _, r := range recs {
		row[0] = r.Key
		for i, c := range cols {
			row[1+i] = flagOf(r, c)
		}
		for _, m := range r.Metrics {
			n := 1 + len(cols)
			row[n], row[n+1], row[n+2], row[n+3] = m.Name, ffmt(m.Value), ffmt(m.Min), ffmt(m.Max)
			if err := w.Write(row); err != nil {
				return err
			}
		}
	}
	w.Flush()
	return w.Error()
}

func ffmt(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// writeSensitivity draws, for every flag of sensitivities the records
// vary over two values or more, one SVG per metric, named
// sweep_<flag>_<metric>.svg: the metric against the flag, one line for
// every combination of the other flags (labelled by those that vary),
// with the range over tick phases shaded. It returns the files written.
func writeSensitivity(dir string, recs []record) ([]string, error) {
	sensitivities := []struct {
		flag, xLabel string
		metrics      []string
	}{
		{"lease", "lease length (s)", []string{"jct_mean_seconds", "overhead_direct", "sharing_loss_jobs"}},
		{"nodes", "nodes", []string{"jct_mean_seconds", "sharing_loss_jobs"}},
	}
	labels := map[string]string{
		"jct_mean_seconds":  "average JCT (s)",
		"overhead_direct":   "direct overhead (GPU time held without progress ÷ Σ JCT)",
		"sharing_loss_jobs": "share of jobs with ρ_job < 0.95",
	}
	var files []string
	for _, s := range sensitivities {
		xs := map[string]bool{}
		for _, r := range recs {
			if v, ok := r.Flags[s.flag]; ok {
				xs[v] = true
			}
		}
		if len(xs) < 2 {
			continue
		}
		for _, m := range s.metrics {
			curves := sensitivityCurves(recs, s.flag, m)
			path := filepath.Join(dir, "sweep_"+s.flag+"_"+m+".svg")
			title := labels[m] + " against " + s.flag
			if err := metrics.WriteSensitivity(path, title, s.xLabel, labels[m], curves...); err != nil {
				return files, err
			}
			files = append(files, path)
		}
	}
	return files, nil
}

// sensitivityCurves groups the records that set flag by their other
// flags, one curve per group, its points in the order of the flag's values.
func sensitivityCurves(recs []record, flagName, metricName string) []metrics.Curve {
	others := slices.DeleteFunc(flagColumns(recs), func(c string) bool { return c == flagName })
	// The label names only the flags that differ between groups.
	varies := map[string]bool{}
	for _, c := range others {
		vals := map[string]bool{}
		for _, r := range recs {
			vals[flagOf(r, c)] = true
		}
		varies[c] = len(vals) > 1
	}
	var curves []metrics.Curve
	index := map[string]int{}
	for _, r := range recs { // in flag order, so x rises within a group
		x, ok := r.Flags[flagName]
		if !ok {
			continue
		}
		i := slices.IndexFunc(r.Metrics, func(m metric) bool { return m.Name == metricName })
		if i < 0 {
			continue
		}
		label := ""
		for _, c := range others {
			if varies[c] {
				label += " " + c + "=" + flagOf(r, c)
			}
		}
		if label == "" {
			label = " " + r.Policy
		}
		label = label[1:]
		g, ok := index[label]
		if !ok {
			g = len(curves)
			index[label] = g
			curves = append(curves, metrics.Curve{Name: label})
		}
		c, m := &curves[g], r.Metrics[i]
		c.X = append(c.X, axisValue(x))
		c.Y = append(c.Y, metrics.Band{Mean: m.Value, Min: m.Min, Max: m.Max})
	}
	slices.SortStableFunc(curves, func(a, b metrics.Curve) int { return cmpValues(a.Name, b.Name) })
	return curves
}

// axisValue places a flag value on an axis: durations in seconds,
// numbers as they are.
func axisValue(v string) float64 {
	if d, err := time.ParseDuration(v); err == nil {
		return d.Seconds()
	}
	f, _ := strconv.ParseFloat(v, 64)
	return f
}
