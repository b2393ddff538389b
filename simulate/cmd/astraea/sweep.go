package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/metrics"
)

// Errors of the sweep subcommand; each is wrapped with the flag, line,
// file or point at fault.
var (
	// errGrid marks a bad grid: an unknown flag, a value its flag refuses,
	// a value listed twice, a malformed grid file, too many points.
	errGrid = errors.New("bad grid")
	// errShard marks a bad -shard or an array index the environment does
	// not give.
	errShard = errors.New("bad shard")
	// errRecord marks a line of a part file that is not a point's record.
	errRecord = errors.New("bad sweep record")
	// errConflict marks two records of one point with different results.
	errConflict = errors.New("conflicting sweep records")
)

// Bounds on what a grid may ask for, so that its memory is bounded: the
// points, and the bytes of a grid file.
const (
	maxGridPoints = 1_000_000
	maxGridFile   = 1 << 20
)

// workerMemory is the soft memory limit of the command per point run at
// once. The garbage collector's default pacing lets the heap grow to
// twice the live heap: a run of Philly 14 d at 140 × 8 GPUs with 5 min
// leases then takes 78 MiB of memory; under this limit 51 MiB (under
// 56 MiB, 59 MiB), at no measurable cost in processor time (under 40 MiB
// it costs some 15 % more), so that a worker stays within 64 MiB.
const workerMemory = 48 << 20

// sweepOwned reports whether the sweep sets the main command's flag name
// itself, so that a grid may not vary it: the runs' output goes to the
// sweep's records, and the sweep decides what runs at once.
func sweepOwned(name string) bool {
	switch name {
	case "json", "out", "quiet", "parallel":
		return true
	}
	return false
}

// flagValue is one flag of a point, its value in canonical form (the
// flag's own String of the value it parsed).
type flagValue struct{ flag, value string }

// dimension is one flag of a grid and its values, canonical, each once.
type dimension struct {
	flag   string
	values []string
}

// point is one run of a grid: a value for every dimension, in the
// grid's order (by flag name). index is its place in the grid.
type point struct {
	index    int
	settings []flagValue
}

// key is the point's identity in records and merges: its flags as the
// command line that runs it, by flag name, -flag=value (quoted when the
// value is empty or holds a space, quote or backslash).
func (p point) key() string {
	parts := make([]string, len(p.settings))
	for i, s := range p.settings {
		parts[i] = "-" + s.flag + "=" + quoteValue(s.value)
	}
	return strings.Join(parts, " ")
}

func quoteValue(v string) string {
	if v == "" || strings.ContainsAny(v, " \t\n\"\\") {
		return strconv.Quote(v)
	}
	return v
}

// args is the command line of the point's run.
func (p point) args() []string {
	args := make([]string, 0, len(p.settings)+2)
	for _, s := range p.settings {
		args = append(args, "-"+s.flag+"="+s.value)
	}
	return append(args, "-json", "-quiet")
}

// grid is the dimensions of a sweep, by flag name.
type grid []dimension

// size is the number of points.
func (g grid) size() int {
	n := 1
	for _, d := range g {
		n *= len(d.values)
	}
	return n
}

// point returns the i-th point, the last dimension varying fastest.
func (g grid) point(i int) point {
	p := point{index: i, settings: make([]flagValue, len(g))}
	for k := len(g) - 1; k >= 0; k-- {
		d := g[k]
		p.settings[k] = flagValue{d.flag, d.values[i%len(d.values)]}
		i /= len(d.values)
	}
	return p
}

// newGrid checks raw dimensions (flag name → values as given) against
// the main command's flags and returns the grid: every value is set on a
// fresh flag set as the command would parse it, and kept in the flag's
// own form, so that 1200s and 20m are one value and a refused value fails
// here, not in the middle of the sweep. A -policy value of "all" stands
// for every policy of -policy all, and a -policy value names one policy.
func newGrid(raw map[string][]string) (grid, error) {
	var g grid
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range raw {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		if sweepOwned(name) {
			return nil, fmt.Errorf("%w: -%s is set by the sweep itself", errGrid, name)
		}
		d := dimension{flag: name}
		for _, v := range raw[name] {
			vals := []string{v}
			if name == "policy" {
				pol, err := selectPolicies(v, knownPolicies())
				if err != nil {
					return nil, fmt.Errorf("%w: -policy %q: %v", errGrid, v, err)
				}
				vals = pol
			}
			for _, v := range vals {
				c, err := canonical(name, v)
				if err != nil {
					return nil, err
				}
				if slices.Contains(d.values, c) {
					return nil, fmt.Errorf("%w: -%s value %q listed twice (as %q)", errGrid, name, v, c)
				}
				d.values = append(d.values, c)
			}
		}
		if len(d.values) == 0 {
			return nil, fmt.Errorf("%w: -%s has no value", errGrid, name)
		}
		g = append(g, d)
		if n := g.size(); n > maxGridPoints || n <= 0 {
			return nil, fmt.Errorf("%w: more than %d points", errGrid, maxGridPoints)
		}
	}
	return g, nil
}

// knownPolicies is every policy name -policy accepts (only the names
// are of use: astraea-reserve's constructor is made by each run).
func knownPolicies() map[string]simulate.Constructor {
	m := constructors()
	m[reservePolicy] = nil
	return m
}

// canonical returns v as the flag name reads it back.
func canonical(name, v string) (string, error) {
	fs := newFlagSet(&options{})
	f := fs.Lookup(name)
	if f == nil {
		return "", fmt.Errorf("%w: no flag -%s", errGrid, name)
	}
	if err := f.Value.Set(v); err != nil {
		return "", fmt.Errorf("%w: -%s %q: %v", errGrid, name, v, err)
	}
	return f.Value.String(), nil
}

// splitList splits a list of values at its commas, trims the spaces
// around each and expands ranges: FROM..TO/STEP, FROM and TO integers or
// durations, is FROM, FROM+STEP, … up to TO. A blank item is no value.
func splitList(flagName, list string) ([]string, error) {
	var out []string
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		r, ok, err := expandRange(item)
		if err != nil {
			return nil, fmt.Errorf("%w: -%s range %q: %v", errGrid, flagName, item, err)
		}
		if !ok {
			r = []string{item}
		}
		if len(out)+len(r) > maxGridPoints {
			return nil, fmt.Errorf("%w: -%s has more than %d values", errGrid, flagName, maxGridPoints)
		}
		out = append(out, r...)
	}
	return out, nil
}

// expandRange expands FROM..TO/STEP; ok is false when item is no range.
func expandRange(item string) (vals []string, ok bool, err error) {
	from, rest, found := strings.Cut(item, "..")
	to, step, stepped := strings.Cut(rest, "/")
	if !found || !isNumber(from) || !isNumber(to) {
		return nil, false, nil // a value with dots, such as ../traces/x.csv
	}
	if !stepped {
		return nil, true, errors.New("want FROM..TO/STEP")
	}
	a, errA := strconv.ParseInt(from, 10, 64)
	b, errB := strconv.ParseInt(to, 10, 64)
	s, errS := strconv.ParseInt(step, 10, 64)
	format := func(x int64) string { return strconv.FormatInt(x, 10) }
	if errA != nil || errB != nil || errS != nil {
		da, errA := time.ParseDuration(from)
		db, errB := time.ParseDuration(to)
		ds, errS := time.ParseDuration(step)
		if err := cmp.Or(errA, errB, errS); err != nil {
			return nil, true, errors.New("want integers or durations")
		}
		a, b, s = int64(da), int64(db), int64(ds)
		format = func(x int64) string { return time.Duration(x).String() }
	}
	if s <= 0 || b < a {
		return nil, true, errors.New("want FROM ≤ TO and a positive STEP")
	}
	if (b-a)/s >= maxGridPoints {
		return nil, true, fmt.Errorf("more than %d values", maxGridPoints)
	}
	for x := a; x <= b; x += s {
		vals = append(vals, format(x))
		if x > math.MaxInt64-s {
			break
		}
	}
	return vals, true, nil
}

// isNumber reports whether s is an integer or a duration.
func isNumber(s string) bool {
	_, errI := strconv.ParseInt(s, 10, 64)
	_, errD := time.ParseDuration(s)
	return errI == nil || errD == nil
}

// readGridFile reads a grid file: one dimension a line, "flag = list"
// (the flag with or without its dash, the list as on the command line),
// "#" starting a comment, blank lines ignored.
func readGridFile(path string) (map[string][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errGrid, err)
	}
	defer f.Close()
	return parseGrid(io.LimitReader(f, maxGridFile+1), path)
}

func parseGrid(r io.Reader, name string) (map[string][]string, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errGrid, name, err)
	}
	if len(data) > maxGridFile {
		return nil, fmt.Errorf("%w: %s: larger than %d bytes", errGrid, name, maxGridFile)
	}
	raw := map[string][]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		if strings.TrimSpace(line) == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimPrefix(strings.TrimSpace(k), "-")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("%w: %s:%d: want \"flag = value, value, …\"", errGrid, name, i+1)
		}
		if _, dup := raw[k]; dup {
			return nil, fmt.Errorf("%w: %s:%d: flag %s given twice", errGrid, name, i+1, k)
		}
		vals, err := splitList(k, v)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, i+1, err)
		}
		raw[k] = vals
	}
	return raw, nil
}

// shard is the part of a grid one process runs: the points whose index
// is index modulo count.
type shard struct{ index, count int }

func (s shard) has(p point) bool { return p.index%s.count == s.index }

// partFile is the name of the shard's records in the output directory.
func (s shard) partFile() string { return fmt.Sprintf("part-%d-of-%d.jsonl", s.index, s.count) }

// parseShard reads -shard: "" (the whole grid), "I/N", or "env/N", whose
// index is the Slurm array task's (SLURM_ARRAY_TASK_ID less
// SLURM_ARRAY_TASK_MIN, over SLURM_ARRAY_TASK_STEP) or the Kubernetes
// Indexed Job's (JOB_COMPLETION_INDEX).
func parseShard(s string, getenv func(string) string) (shard, error) {
	if s == "" {
		return shard{0, 1}, nil
	}
	is, ns, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(ns)
	if !ok || err != nil || n < 1 {
		return shard{}, fmt.Errorf("%w: -shard %q: want I/N or env/N with N ≥ 1", errShard, s)
	}
	if is == "env" {
		i, err := envIndex(n, getenv)
		if err != nil {
			return shard{}, fmt.Errorf("%w: -shard %q: %v", errShard, s, err)
		}
		return shard{i, n}, nil
	}
	i, err := strconv.Atoi(is)
	if err != nil || i < 0 || i >= n {
		return shard{}, fmt.Errorf("%w: -shard %q: want 0 ≤ I < N", errShard, s)
	}
	return shard{i, n}, nil
}

func envIndex(n int, getenv func(string) string) (int, error) {
	num := func(name string, def int) (int, error) {
		v := getenv(name)
		if v == "" {
			return def, nil
		}
		x, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("%s=%q is not an integer", name, v)
		}
		return x, nil
	}
	var i int
	switch {
	case getenv("SLURM_ARRAY_TASK_ID") != "":
		id, err1 := num("SLURM_ARRAY_TASK_ID", 0)
		lo, err2 := num("SLURM_ARRAY_TASK_MIN", 0)
		step, err3 := num("SLURM_ARRAY_TASK_STEP", 1)
		count, err4 := num("SLURM_ARRAY_TASK_COUNT", n)
		if err := cmp.Or(err1, err2, err3, err4); err != nil {
			return 0, err
		}
		if count != n {
			return 0, fmt.Errorf("the array has %d tasks (SLURM_ARRAY_TASK_COUNT), not %d", count, n)
		}
		if step < 1 || (id-lo)%step != 0 {
			return 0, fmt.Errorf("SLURM_ARRAY_TASK_ID %d is not on the array's steps", id)
		}
		i = (id - lo) / step
	case getenv("JOB_COMPLETION_INDEX") != "":
		var err error
		if i, err = num("JOB_COMPLETION_INDEX", 0); err != nil {
			return 0, err
		}
	default:
		return 0, errors.New("neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set")
	}
	if i < 0 || i >= n {
		return 0, fmt.Errorf("array index %d is not in 0..%d", i, n-1)
	}
	return i, nil
}

// record is one point's results, a line of a part file.
type record struct {
	Key     string            `json:"key"`
	Flags   map[string]string `json:"flags"`
	Policy  string            `json:"policy"`
	Metrics []metric          `json:"metrics"`
	// Seconds is the point's wall time; merge leaves it out, so that the
	// merged table depends only on the points.
	Seconds float64 `json:"seconds"`
}

// metric is one figure of a point: its value and, over the tick phases of
// a run with -phases, its range (Min = Max = Value for one phase).
type metric struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
}

// sameResults reports whether two records of one point agree.
func (r record) sameResults(o record) bool {
	return r.Policy == o.Policy && slices.Equal(r.Metrics, o.Metrics)
}

// readRecords reads every part file in dir (a missing dir has none) into
// done, keyed by point. A last line without its newline is a record being
// written (or cut short by a crash): it is not read, and ends reports, per
// file, the length of the complete lines.
func readRecords(dir string, done map[string]record) (ends map[string]int64, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "part-*.jsonl"))
	if err != nil {
		return nil, err
	}
	ends = map[string]int64{}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		complete := bytes.LastIndexByte(data, '\n') + 1
		ends[path] = int64(complete)
		sc := bufio.NewScanner(bytes.NewReader(data[:complete]))
		sc.Buffer(nil, 16<<20)
		for line := 1; sc.Scan(); line++ {
			var r record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Key == "" {
				return nil, fmt.Errorf("%w: %s:%d: %v", errRecord, path, line, cmp.Or(err, errors.New("no key")))
			}
			if old, ok := done[r.Key]; ok && !old.sameResults(r) {
				return nil, fmt.Errorf("%w: point %s in %s:%d differs from an earlier record", errConflict, r.Key, path, line)
			}
			done[r.Key] = r
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errRecord, path, err)
		}
	}
	return ends, nil
}

// sweepOptions are the sweep's own flags; the grid is the rest.
type sweepOptions struct {
	grid, out, shard string
	parallel         int
	quiet, list      bool
}

// listFlag is a main command's flag on the sweep's command line: a list
// of values.
type listFlag struct {
	name   string
	isBool bool
	raw    map[string][]string
	err    *error
}

func (l listFlag) String() string { return "" }

func (l listFlag) IsBoolFlag() bool { return l.isBool }

func (l listFlag) Set(s string) error {
	vals, err := splitList(l.name, s)
	if err != nil {
		return err
	}
	// A flag given twice lists the values of both.
	l.raw[l.name] = append(l.raw[l.name], vals...)
	return nil
}

// sweep is the sweep subcommand: "sweep merge …" merges, anything else
// runs a grid. procs, when not nil, is told how many points run at once.
func sweep(args []string, stdout, stderr io.Writer, procs func(n int)) error {
	if len(args) > 0 && args[0] == "merge" {
		return merge(args[1:], stdout, stderr)
	}
	var so sweepOptions
	cmdline := map[string][]string{}
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.StringVar(&so.grid, "grid", "", "grid `FILE`: one \"flag = value, value, …\" a line; flags on the command line replace its lines")
	fs.StringVar(&so.out, "out", "sweep", "`DIR` of the records (part-I-of-N.jsonl); points recorded there already are not run again")
	fs.StringVar(&so.shard, "shard", "", "run the I-th of N parts of the grid: `I/N`, or env/N for the index of a Slurm array task or Kubernetes Indexed Job")
	fs.IntVar(&so.parallel, "parallel", 0, "points run at once (0: as many as processors)")
	fs.BoolVar(&so.quiet, "quiet", false, "no line per point on stderr")
	fs.BoolVar(&so.list, "list", false, "print the shard's points, one key a line, and whether each is recorded, without running them")
	newFlagSet(&options{}).VisitAll(func(f *flag.Flag) {
		if sweepOwned(f.Name) {
			return
		}
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		fs.Var(listFlag{name: f.Name, isBool: ok && b.IsBoolFlag(), raw: cmdline},
			f.Name, "`LIST` of values of simulate's flag, comma-separated, FROM..TO/STEP a range: "+strings.ReplaceAll(f.Usage, "`", ""))
	})
	if err := parseCommandFlags(fs, commands(), args, stdout, stderr); err != nil {
		return err
	}
	raw := map[string][]string{}
	if so.grid != "" {
		var err error
		if raw, err = readGridFile(so.grid); err != nil {
			return err
		}
	}
	for k, v := range cmdline {
		raw[k] = v
	}
	g, err := newGrid(raw)
	if err != nil {
		return err
	}
	sh, err := parseShard(so.shard, os.Getenv)
	if err != nil {
		return err
	}
	done := map[string]record{}
	ends, err := readRecords(so.out, done)
	if err != nil {
		return err
	}
	var todo []point
	for i := range g.size() {
		p := g.point(i)
		if !sh.has(p) {
			continue
		}
		_, ok := done[p.key()]
		if so.list {
			state := "todo"
			if ok {
				state = "done"
			}
			fmt.Fprintf(stdout, "%s\t%s\n", state, p.key())
			continue
		}
		if !ok {
			todo = append(todo, p)
		}
	}
	if so.list || len(todo) == 0 {
		return nil
	}
	par := parallelism(so.parallel, len(todo))
	if procs != nil {
		procs(par)
		// A soft limit, which GOMEMLIMIT in the environment replaces:
		// the garbage collector works harder near it and a run never
		// fails for it.
		if os.Getenv("GOMEMLIMIT") == "" {
			debug.SetMemoryLimit(int64(par) * workerMemory)
		}
	}
	if err := os.MkdirAll(so.out, 0o755); err != nil {
		return err
	}
	part := filepath.Join(so.out, sh.partFile())
	// A record cut short by an earlier crash is dropped before new ones
	// follow it.
	if end, ok := ends[part]; ok {
		if err := os.Truncate(part, end); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	var mu sync.Mutex
	finished := 0
	errs := make([]error, len(todo))
	each(len(todo), par, func(i int) error {
		start := time.Now()
		rec, err := runPoint(todo[i])
		if err != nil {
			errs[i] = err
			return err
		}
		rec.Seconds = time.Since(start).Seconds()
		line, err := json.Marshal(rec)
		if err != nil {
			errs[i] = err
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		// One write per record, so that records of points finishing
		// at once do not interleave.
		if _, err := f.Write(append(line, '\n')); err != nil {
			errs[i] = err
			return err
		}
		finished++
		if !so.quiet {
			fmt.Fprintf(stderr, "sweep: [%d/%d] %s (%.1f s)\n", finished, len(todo), rec.Key, rec.Seconds)
		}
		return nil
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return f.Close()
}

// runPoint runs one point through the main command, as its command line
// would, and returns its record.
func runPoint(p point) (record, error) {
	var out, errOut bytes.Buffer
	if err := run(p.args(), &out, &errOut); err != nil {
		if msg := strings.TrimSpace(errOut.String()); msg != "" {
			err = fmt.Errorf("%v: %s", err, msg)
		}
		return record{}, fmt.Errorf("point %s: %w", p.key(), err)
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return record{}, fmt.Errorf("point %s: reading its report: %w", p.key(), err)
	}
	if len(rep.Runs) == 0 {
		return record{}, fmt.Errorf("point %s: no run", p.key())
	}
	agg, err := aggregateMetrics(out.Bytes(), rep.Runs[0])
	if err != nil {
		return record{}, fmt.Errorf("point %s: reading its aggregate: %w", p.key(), err)
	}
	// One policy is one run, or, at several tick phases, one run a
	// phase and their aggregate.
	if len(rep.Runs) > 1 && agg == nil {
		return record{}, fmt.Errorf("point %s: %d runs and no aggregate, want one run", p.key(), len(rep.Runs))
	}
	rec := record{Key: p.key(), Flags: map[string]string{}, Policy: rep.Runs[0].Summary.Policy}
	for _, s := range p.settings {
		rec.Flags[s.flag] = s.value
	}
	rec.Metrics = agg
	if agg == nil {
		rec.Metrics = runMetrics(rep.Runs[0])
	}
	return rec, nil
}

// runMetrics are the figures of one run, as the command's table has
// them (metrics.Values).
func runMetrics(r runReport) []metric {
	var ms []metric
	for _, v := range metrics.Values(r.Summary) {
		ms = append(ms, metric{v.Key, v.X, v.X, v.X})
	}
	return ms
}

// aggregateMetrics reads the "aggregate" of a report of a run at several
// tick phases (-phases): one metrics.Aggregate, the run's policy's, whose
// bands it returns in the order of the first run's figures. A report
// without it gives none.
func aggregateMetrics(report []byte, first runReport) ([]metric, error) {
	var doc struct {
		Aggregate []metrics.Aggregate `json:"aggregate"`
	}
	if err := json.Unmarshal(report, &doc); err != nil {
		return nil, err
	}
	switch len(doc.Aggregate) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, fmt.Errorf("%d aggregates, want one", len(doc.Aggregate))
	}
	a := doc.Aggregate[0]
	var ms []metric
	for _, v := range metrics.Values(first.Summary) {
		b, ok := a.Band(v.Key)
		if !ok {
			return nil, fmt.Errorf("the aggregate lacks %s", v.Key)
		}
		ms = append(ms, metric{v.Key, b.Mean, b.Min, b.Max})
	}
	if len(ms) != len(a.Metrics) {
		return nil, fmt.Errorf("the aggregate has %d figures, a run %d", len(a.Metrics), len(ms))
	}
	return ms, nil
}
