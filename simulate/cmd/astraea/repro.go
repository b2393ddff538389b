package main

import (
	"encoding/json"
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

	"github.com/astraea-sched/astraea/simulate/metrics"
)

// An experiment is one of the paper's two reference set-ups: a trace, a
// cluster and a quota rule, run for every policy.
type experiment struct {
	name, title string
	// args are the simulate flags of the experiment, with the trace
	// folder's path put in by with.
	args   func(traces string) []string
	claims []claim // the paper's figures (§十五, §十六)
	checks []check // the paper's orderings
}

// A claim is one figure the paper prints.
type claim struct {
	Metric string  `json:"metric"`
	Policy string  `json:"policy"`
	Paper  float64 `json:"paper"`
	Where  string  `json:"where"`
}

// A check is one ordering or bound the paper states, evaluated on the
// policies' mean figures.
type check struct {
	name string
	eval func(m figures) (ok bool, detail string)
	// key is the figure the check reads, and rekey the same check of
	// another figure (nil where there is none).
	key   string
	rekey func(key, what string) check
}

// figures are the aggregates of one experiment by policy.
type figures map[string]metrics.Aggregate

// mean is the mean of a figure of a policy, and whether it is known.
func (f figures) mean(policy, key string) (float64, bool) {
	a, ok := f[policy]
	if !ok {
		return 0, false
	}
	b, ok := a.Band(key)
	return b.Mean, ok
}

// lowest checks that policy has the lowest mean of key among all.
func lowest(policy, key, what string) check {
	return check{
		key:   key,
		rekey: func(k, w string) check { return lowest(policy, k, w) },
		name:  fmt.Sprintf("%s has the lowest %s of all policies", policy, what),
		eval: func(f figures) (bool, string) {
			x, ok := f.mean(policy, key)
			if !ok {
				return false, policy + " did not run"
			}
			best, who := x, policy
			for _, p := range slices.Sorted(maps.Keys(f)) {
				if y, ok := f.mean(p, key); ok && p != policy && y <= best {
					best, who = y, p
				}
			}
			if who == policy {
				return true, fmt.Sprintf("%s %s", policy, f.format(key, x))
			}
			return false, fmt.Sprintf("%s %s, %s %s", policy, f.format(key, x), who, f.format(key, best))
		},
	}
}

// ratio checks that num ÷ den of key lies within ±tol of want.
func ratio(num, den, key string, want, tol float64) check {
	return check{
		name: fmt.Sprintf("%s ÷ %s of %s is %.1f ± %.0f %%", num, den, key, want, 100*tol),
		eval: func(f figures) (bool, string) {
			a, ok1 := f.mean(num, key)
			b, ok2 := f.mean(den, key)
			if !ok1 || !ok2 || b == 0 {
				return false, "not measurable"
			}
			r := a / b
			return r >= want*(1-tol) && r <= want*(1+tol), fmt.Sprintf("%.2f", r)
		},
	}
}

// ordered checks that the policies' means of key rise in the order given;
// the last group's members may come in any order among themselves.
func ordered(key, what string, order []string, last []string) check {
	names := append(slices.Clone(order), "{"+strings.Join(last, ", ")+"}")
	return check{
		key:   key,
		rekey: func(k, w string) check { return ordered(k, w, order, last) },
		name:  fmt.Sprintf("%s: %s", what, strings.Join(names, " < ")),
		eval: func(f figures) (bool, string) {
			var vals []string
			prev, ok := -1.0, true
			for _, p := range order {
				x, known := f.mean(p, key)
				if !known {
					return false, p + " did not run"
				}
				ok = ok && x > prev
				prev = x
				vals = append(vals, p+" "+f.format(key, x))
			}
			for _, p := range last {
				x, known := f.mean(p, key)
				if !known {
					return false, p + " did not run"
				}
				ok = ok && x > prev
				vals = append(vals, p+" "+f.format(key, x))
			}
			return ok, strings.Join(vals, ", ")
		},
	}
}

// atMost checks that policy's mean of key is at most bound.
func atMost(policy, key string, bound float64, what string) check {
	return check{
		name: fmt.Sprintf("%s's %s is at most %s", policy, what, metrics.FormatValue(bound, metrics.Share)),
		eval: func(f figures) (bool, string) {
			x, ok := f.mean(policy, key)
			if !ok {
				return false, policy + " did not run"
			}
			return x <= bound, f.format(key, x)
		},
	}
}

// format prints x, a value of the figure key, in that figure's unit.
func (f figures) format(key string, x float64) string {
	for _, a := range f {
		if u, ok := a.Unit(key); ok {
			if u == metrics.Seconds {
				return metrics.FormatValue(x, u) + " s"
			}
			return metrics.FormatValue(x, u)
		}
	}
	return strconv.FormatFloat(x, 'g', 6, 64)
}

// experiments are the paper's two reference experiments (§十三, §十八).
func experiments() []experiment {
	return []experiment{
		{
			name:  "venus",
			title: "Venus two-week snapshot, 100 × 8 GPUs, quotas ∝ the official VC sizes",
			args: func(dir string) []string {
				return []string{"-trace", filepath.Join(dir, "venus", "venus_2week_snapshot.csv"),
					"-quota", filepath.Join(dir, "venus", "venus_2week_vc_quota_official.csv"), "-nodes", "100"}
			},
			claims: []claim{
				{"sharing_loss_jobs", "astraea", 0.071, "§十五"},
				{"sharing_loss_jobs", "themis", 0.197, "§十五"},
				{"sharing_loss_jobs", "yarn-cs", 0.736, "§十五"},
				{"tenant_loss_eq8_1h", "astraea", 0.052, "§十五 (interval length unpublished)"},
				{"tenant_loss_eq8_1h", "allox", 0.069, "§十五"},
				{"tenant_loss_eq8_1h", "gandiva-fair", 0.080, "§十五"},
				{"tenant_loss_eq8_1h", "tiresias-l", 0.490, "§十五"},
				{"tenant_loss_eq8_1h", "yarn-cs", 0.446, "§十五"},
				{"overhead_direct", "astraea", 0.008, "§十六 (≈ 0.8 % of average JCT)"},
			},
			checks: []check{
				lowest("astraea", "sharing_loss_jobs", "share of sharing-loss jobs"),
				ratio("themis", "astraea", "sharing_loss_jobs", 2.8, 0.3),
				ratio("yarn-cs", "astraea", "sharing_loss_jobs", 10.3, 0.3),
				lowest("astraea", "tenant_loss_eq8_1h", "tenant loss intervals (Eq. 8, 1 h)"),
				ordered("tenant_loss_eq8_1h", "tenant loss (Eq. 8, 1 h)", []string{"astraea", "allox", "gandiva-fair"}, []string{"yarn-cs", "tiresias-l"}),
				lowest("astraea", "jct_mean_seconds", "average JCT"),
				atMost("astraea", "overhead_direct", 0.01, "direct preemption overhead"),
			},
		},
		{
			name:  "philly",
			title: "Philly two-week snapshot, 210 × 8 GPUs, quotas ∝ GPUs requested (the paper's rule)",
			args: func(dir string) []string {
				return []string{"-trace", filepath.Join(dir, "philly", "philly_2week_snapshot.csv"), "-quota", "requested", "-nodes", "210"}
			},
			// §十五 prints no Philly figures, only that ASTRAEA's lead is
			// larger there and the tenant results are similar.
			checks: []check{
				lowest("astraea", "sharing_loss_jobs", "share of sharing-loss jobs"),
				lowest("astraea", "tenant_loss_eq8_1h", "tenant loss intervals (Eq. 8, 1 h)"),
				lowest("astraea", "jct_mean_seconds", "average JCT"),
			},
		},
	}
}

// tracesEnv names the environment variable that -traces defaults to.
const tracesEnv = "ASTRAEA_TRACES"

// reproOptions are the flags of the repro command.
type reproOptions struct {
	traces, only, out, profile string
	phases, parallel           int
	json, quiet                bool
	extra                      []string // simulate flags after --
}

func parseReproFlags(args []string, stdout, stderr io.Writer) (reproOptions, error) {
	var o reproOptions
	fs := flag.NewFlagSet("repro", flag.ContinueOnError)
	fs.StringVar(&o.traces, "traces", os.Getenv(tracesEnv), "`DIR` holding the public traces: venus/venus_2week_snapshot.csv, venus/venus_2week_vc_quota_official.csv, philly/philly_2week_snapshot.csv (default $"+tracesEnv+")")
	fs.StringVar(&o.only, "only", "", "run only this experiment: venus or philly")
	fs.StringVar(&o.out, "out", "", "write each experiment's CSVs and figures to `DIR`/NAME")
	fs.StringVar(&o.profile, "profile", defaultProfile, "`NAME` of the conventions ("+profileNames()+")")
	fs.IntVar(&o.phases, "phases", 5, "tick phases per policy")
	fs.IntVar(&o.parallel, "parallel", 0, "runs at once (0: as many as processors); the output does not depend on it")
	fs.BoolVar(&o.json, "json", false, "print JSON instead of tables")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress bar")
	var rest []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, rest = args[:i], args[i+1:]
	}
	if err := parseCommandFlags(fs, commands(), args, stdout, stderr); err != nil {
		return o, err
	}
	o.extra = rest
	if o.traces == "" {
		return o, errors.New("repro: -traces DIR is required (the folder with venus/ and philly/), or $" + tracesEnv)
	}
	if o.only != "" && !slices.ContainsFunc(experiments(), func(e experiment) bool { return e.name == o.only }) {
		return o, fmt.Errorf("repro: -only %q: want venus or philly", o.only)
	}
	return o, nil
}

// reproReport is the JSON of astraea repro.
type reproReport struct {
	SchemaVersion int                `json:"schema_version"`
	Profile       string             `json:"profile"`
	Phases        int                `json:"phases"`
	Experiments   []experimentReport `json:"experiments"`
}

type experimentReport struct {
	Name   string        `json:"name"`
	Title  string        `json:"title"`
	Claims []claimReport `json:"claims"`
	Checks []checkReport `json:"checks"`
	Report report        `json:"report"`
}

type claimReport struct {
	claim
	Ours metrics.Band `json:"ours"`
}

type checkReport struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// runRepro is the repro command: the paper's two reference experiments for
// every policy at several tick phases, the paper's figures beside ours.
func runRepro(args []string, stdout, stderr io.Writer, procs func(n int)) error {
	ro, err := parseReproFlags(args, stdout, stderr)
	if err != nil {
		return err
	}
	out := reproReport{SchemaVersion: schemaVersion, Profile: ro.profile, Phases: ro.phases}
	var texts []string
	for _, e := range experiments() {
		if ro.only != "" && e.name != ro.only {
			continue
		}
		args := append(e.args(ro.traces), "-policy", "all", "-profile", ro.profile,
			"-phases", strconv.Itoa(ro.phases), "-parallel", strconv.Itoa(ro.parallel))
		if ro.quiet {
			args = append(args, "-quiet")
		}
		if ro.out != "" {
			args = append(args, "-out", filepath.Join(ro.out, e.name))
		}
		args = append(args, ro.extra...)
		o, err := parseFlags(args, stdout, stderr)
		if err != nil {
			return fmt.Errorf("repro %s: %w", e.name, err)
		}
		if _, err := os.Stat(o.trace); err != nil {
			return fmt.Errorf("repro %s: %w (-traces must hold the public trace files)", e.name, err)
		}
		res, err := simulateAll(o, stderr, procs)
		if err != nil {
			return fmt.Errorf("repro %s: %w", e.name, err)
		}
		if o.out != "" {
			o.json = true // the files only; the text is printed below
			if err := res.write(o, io.Discard); err != nil {
				return err
			}
		}
		er := evaluate(e, res.rep)
		out.Experiments = append(out.Experiments, er)
		var sb strings.Builder
		writeExperiment(&sb, er)
		texts = append(texts, sb.String())
	}
	if ro.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(out.Experiments) > 0 {
		writeReproHeader(stdout, out.Experiments[0].Report, ro)
	}
	for _, t := range texts {
		fmt.Fprint(stdout, t)
	}
	return nil
}

// evaluate puts the paper's figures beside the experiment's results and
// evaluates its orderings.
func evaluate(e experiment, rep report) experimentReport {
	f := figures{}
	for _, a := range rep.Aggregate {
		f[a.Policy] = a
	}
	er := experimentReport{Name: e.name, Title: e.title, Report: rep, Claims: []claimReport{}, Checks: []checkReport{}}
	for _, c := range claimsFor(e, rep.Profile) {
		b, _ := f[c.Policy].Band(c.Metric)
		er.Claims = append(er.Claims, claimReport{claim: c, Ours: b})
	}
	for _, c := range checksFor(e, rep.Profile) {
		ok, detail := c.eval(f)
		er.Checks = append(er.Checks, checkReport{Check: c.name, OK: ok, Detail: detail})
	}
	return er
}

// windowLossKey is the figure of the Eq. 8 tenant loss over the last 24
// hourly buckets, sampled hourly (metrics.WindowLoss).
const windowLossKey = "tenant_loss_eq8_window_24h"

// claimsFor is e's claims as profile compares them: under the authors'
// profile each tenant-loss figure is also set beside our loss over the
// last 24 hourly buckets, the way the authors' simulator reports tenants.
func claimsFor(e experiment, profile string) []claim {
	return withWindowTwins(profile, e.claims, func(c claim) (claim, bool) {
		return claim{Metric: windowLossKey, Policy: c.Policy, Paper: c.Paper, Where: "§十五, as the authors' simulator reports it (Eq. 8, last 24 hourly buckets, hourly)"},
			c.Metric == "tenant_loss_eq8_1h"
	})
}

// checksFor is e's checks as profile evaluates them: under the authors'
// profile each check of the tenant loss over fixed hours is followed by the
// same check of the loss over the last 24 hourly buckets.
func checksFor(e experiment, profile string) []check {
	return withWindowTwins(profile, e.checks, func(c check) (check, bool) {
		if c.key != "tenant_loss_eq8_1h" || c.rekey == nil {
			return check{}, false
		}
		return c.rekey(windowLossKey, "tenant loss (Eq. 8, last 24 × 1 h, hourly)"), true
	})
}

// withWindowTwins returns items as they are, or, under the authors'
// profile, with each item's twin over the 24 hourly buckets right after
// it, for the items twin reports one for.
func withWindowTwins[T any](profile string, items []T, twin func(T) (T, bool)) []T {
	if profile != "authors" {
		return items
	}
	var out []T
	for _, it := range items {
		out = append(out, it)
		if w, ok := twin(it); ok {
			out = append(out, w)
		}
	}
	return out
}

func writeReproHeader(w io.Writer, rep report, ro reproOptions) {
	fmt.Fprintf(w, "astraea repro: the paper's reference experiments, every policy at %d tick phases; figures are mean [min–max] over them\n", ro.phases)
	fmt.Fprintf(w, "conventions (profile %s):", rep.Profile)
	for _, c := range rep.Conventions {
		fmt.Fprintf(w, " -%s=%s", c.Flag, c.Value)
	}
	fmt.Fprintf(w, "\ncluster: interval %gs, lease %gs, checkpoint %gs, cold start %gs; ρ_job over each job's life from its admission; tenant loss over fixed intervals and, under Eq. 8, over the last 24 hourly buckets sampled hourly\n\n",
		rep.Interval, rep.Lease, rep.Ckpt, rep.Cold)
}

func writeExperiment(w io.Writer, er experimentReport) {
	fmt.Fprintf(w, "== %s: %s\n", er.Name, er.Title)
	fmt.Fprintf(w, "workload: %s\n", er.Report.Workload)
	if n := len(er.Report.Excluded); n > 0 {
		fmt.Fprintf(w, "excluded: %d jobs\n", n)
	}
	metrics.WriteAggregateTable(w, er.Report.Aggregate...)
	if len(er.Claims) > 0 {
		fmt.Fprintf(w, "\nthe paper's figures beside ours:\n")
		grid := [][]string{{"figure", "policy", "paper", "ours", "source"}}
		for _, c := range er.Claims {
			grid = append(grid, []string{c.Metric, c.Policy, metrics.FormatValue(c.Paper, metrics.Share), metrics.FormatBand(c.Ours, metrics.Share), c.Where})
		}
		metrics.WriteGrid(w, grid)
	}
	fmt.Fprintf(w, "\nthe paper's orderings:\n")
	for _, c := range er.Checks {
		mark := "✗"
		if c.OK {
			mark = "✓"
		}
		fmt.Fprintf(w, "  %s %s (%s)\n", mark, c.Check, c.Detail)
	}
	fmt.Fprintln(w)
}
