package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/astraea"
	"github.com/astraea-sched/astraea/simulate/baselines"
	"github.com/astraea-sched/astraea/simulate/metrics"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// options are the command's flags.
type options struct {
	trace, quota      string
	nodes, gpn        int
	lease, interval   time.Duration
	checkpoint, cold  time.Duration
	policies          string
	seed              uint64
	jobs              int
	json, quiet       bool
	lenient, overhead bool
	check             bool
	out, metricsMode  string
	checkpointOnRenew bool
	iteration         time.Duration
	admit             string
	reserveAfter      time.Duration
	parallel          int
	profileName       string
	phases            int
	tickPhase         time.Duration
	dropOverQuota     bool
	noBackfill        bool
	placement         string
	spreadSlowdown    float64
	history           string
	jobShare          string
	newJobs           string
	starvedBelow      float64
	waitFirst         time.Duration
	displaceYoung     time.Duration
	// profile is the -profile bundle, and conv the conventions the run
	// used (the profile's settings as set, flags that overrode them marked).
	profile profile
	conv    []convention
}

// parseFlags reads the flags of the simulate command.
func parseFlags(args []string, stdout, stderr io.Writer) (options, error) {
	var o options
	fs := newFlagSet(&o)
	if err := parseCommandFlags(fs, commands(), args, stdout, stderr); err != nil {
		return o, err
	}
	var err error
	o.profile, o.conv, err = applyProfile(fs, o.profileName)
	return o, err
}

// newFlagSet defines the simulate command's flags on o. The sweep
// command reads the same set, so that every flag is a dimension a grid
// can vary.
func newFlagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.StringVar(&o.trace, "trace", "", "trace `FILE` (Venus, Philly, Pollux, artifact or generic CSV; .gz transparent); default: the embedded synthetic workload")
	fs.StringVar(&o.quota, "quota", "", "tenant quotas: a CSV `FILE`, \"requested\" (∝ Σ GPUs requested) or \"equal\"; default: the synthetic workload's VC sizes, or requested for a trace")
	fs.IntVar(&o.nodes, "nodes", 100, "nodes in the cluster")
	fs.IntVar(&o.gpn, "gpus-per-node", 8, "GPUs per node")
	fs.DurationVar(&o.lease, "lease", simulate.DefaultLease, "lease length")
	fs.DurationVar(&o.interval, "interval", simulate.DefaultInterval, "scheduling interval")
	fs.DurationVar(&o.checkpoint, "checkpoint", simulate.DefaultCheckpoint, "checkpoint time of a suspended job (the paper does not publish it)")
	fs.DurationVar(&o.cold, "coldstart", simulate.DefaultColdStart, "cold start of a resumed job (the paper does not publish it)")
	fs.DurationVar(&o.iteration, "iteration", 0, "training iteration length: a preempted job loses its partial iteration (0: continuous progress)")
	fs.BoolVar(&o.checkpointOnRenew, "checkpoint-on-renew", true, "charge the checkpoint at renewed lease ends too (the paper checkpoints at every lease end)")
	fs.StringVar(&o.policies, "policy", "astraea", "comma-separated `LIST` of policies, or \"all\"")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic workload")
	fs.IntVar(&o.jobs, "jobs", trace.DefaultSynthetic().Jobs, "jobs of the synthetic workload")
	fs.BoolVar(&o.json, "json", false, "print JSON instead of tables")
	fs.StringVar(&o.out, "out", "", "write per-job, per-tenant and utilization CSVs and SVG figures to `DIR`")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress line on stderr")
	fs.BoolVar(&o.lenient, "lenient", false, "skip bad trace rows and report them")
	fs.BoolVar(&o.overhead, "overhead", true, "run each policy again without overheads to report the preemption overhead")
	fs.StringVar(&o.metricsMode, "metrics", "eq16", "fairness mode of the reported ρ: eq16 or eq8")
	fs.StringVar(&o.admit, "admit", simulate.AdmitOnSubmit.String(), "when a job's accounts start: \"submit\" (its submission) or \"tick\" (the first scheduling tick that sees it)")
	fs.DurationVar(&o.reserveAfter, "reserve-after", astraea.DefaultReserveAfter, "how long the astraea-reserve policy lets the most under-served tenant's blocked gang wait before it holds nodes for it")
	fs.BoolVar(&o.check, "check", false, "check ledger and cluster invariants periodically during the run")
	fs.IntVar(&o.parallel, "parallel", 0, "policies simulated at once (0: as many as processors); the output does not depend on it")
	fs.StringVar(&o.profileName, "profile", defaultProfile, "`NAME` of a bundle of conventions ("+profileNames()+"); a flag given overrides its value")
	fs.IntVar(&o.phases, "phases", 1, "run every policy at `N` tick phases spread over one interval and report mean [min–max]")
	fs.DurationVar(&o.tickPhase, "tick-phase", 0, "offset of the tick grid from the first submission, in [0, -interval)")
	fs.BoolVar(&o.dropOverQuota, "drop-over-quota", false, "leave out (and count) jobs larger than their tenant's quota instead of letting them borrow")
	fs.StringVar(&o.placement, "placement", placement.Strict.String(), "placement of every policy: \"strict\" (a gang one node could hold waits for one node), \"spread\" (the fewest nodes its free GPUs allow) or \"firstfit\" (the first nodes in node order that hold it, else spread in that order)")
	fs.StringVar(&o.history, "history", "0s", "how far back the policies' accounts remember: a trailing window `D` (0: the whole run, the paper's), or NxD, the current bucket of D and the N−1 before it (the authors' simulator: 24x1h)")
	fs.StringVar(&o.jobShare, "job-share", ledger.CappedJobShare.String(), "how the policies' accounts divide a tenant's fair share among its jobs: \"capped\" (min(demand, equal split), the paper's) or \"split\" (equal split without the cap, the authors' simulator); ρ_job in the results is capped either way")
	fs.Float64Var(&o.spreadSlowdown, "spread-slowdown", 1, "progress rate `S` in (0, 1] of a job placed on more nodes than its minimum, until it is placed again (1: no slowdown)")
	fs.StringVar(&o.newJobs, "new-jobs", astraea.FIFO.String(), "astraea: order of a tenant's new jobs: \"fifo\" or \"smallest\" (smallest demand first)")
	fs.BoolVar(&o.noBackfill, "no-backfill", false, "astraea: end a round when every tenant has left play (no backfill stage)")
	fs.Float64Var(&o.starvedBelow, "starved-below", 0, "astraea: serve first every tenant holding less than `F` × its quota (0: off; the authors' simulator uses 0.2)")
	fs.DurationVar(&o.displaceYoung, "displace-young", 0, "astraea: a new job that does not fit may abort its own tenant's jobs less than this far into their lease, which lose the lease's work (0: off; the authors' simulator uses 300s)")
	fs.DurationVar(&o.waitFirst, "wait-first", 0, "astraea: rank first a job that waited this long since it last ran (0: off; the authors' simulator uses 6h)")
	return fs
}

// workload opens the job source, again for every run; runs may open it at
// the same time, and each gives its source back with release.
//
// A trace read to derive the quotas (-quota requested or equal) is read
// again by every run. The quota pass keeps the jobs it reads, as long as
// they fit in keptJobsBytes, and the runs replay them instead of parsing
// the file again; a larger trace is streamed by every pass as before. A
// trace that is not a regular file (a pipe, /dev/stdin) is read once,
// whole, before the first run.
type workload struct {
	name string
	open func() (trace.Source, error)
	kept []trace.Job // every job of the trace, read once, or nil
	keep int         // the bytes kept may take (keptJobsBytes)

	mu      sync.Mutex
	skipped trace.Skipped // the rows the last reader released skipped
}

// keptJobsBytes bounds the memory the jobs of a trace read for its quotas
// may keep (see workload): 16 MiB, some 100 k jobs.
const keptJobsBytes = 16 << 20

// keeper passes on the jobs of src and keeps them while they fit in limit
// bytes (full once they do not).
type keeper struct {
	src   trace.Source
	kept  []trace.Job
	bytes int
	limit int
	full  bool
}

func (k *keeper) Next() (trace.Job, error) {
	j, err := k.src.Next()
	if err != nil || k.full {
		return j, err
	}
	// The job's record (120 bytes on 64-bit platforms, rounded up) and
	// its id; tenants, users and states are shared.
	if k.bytes += 128 + len(j.ID); k.bytes > k.limit {
		k.full, k.kept = true, nil
		return j, nil
	}
	k.kept = append(k.kept, j)
	return j, nil
}

// jobs returns the jobs kept, never nil.
func (k *keeper) jobs() []trace.Job {
	if k.kept == nil {
		return []trace.Job{}
	}
	return slices.Clip(k.kept)
}

func newWorkload(o options) (*workload, error) {
	if o.trace == "" {
		cfg := trace.DefaultSynthetic()
		cfg.Seed, cfg.Jobs = o.seed, o.jobs
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
		return &workload{
			name: fmt.Sprintf("synthetic (Venus-calibrated, %d jobs, seed %d)", cfg.Jobs, cfg.Seed),
			open: func() (trace.Source, error) { return trace.Synthetic(cfg), nil },
		}, nil
	}
	w := &workload{name: o.trace, keep: keptJobsBytes}
	if st, err := os.Stat(o.trace); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		// A pipe, /dev/stdin or a device can be read only once: read it
		// whole now and let every run replay its jobs (memory then grows
		// with the trace, as with -sort).
		if err := w.readOnce(o); err != nil {
			return nil, err
		}
	}
	w.open = func() (trace.Source, error) {
		if w.kept != nil {
			return trace.FromJobs(w.kept), nil
		}
		r, err := trace.Open(o.trace, trace.Options{Lenient: o.lenient})
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	return w, nil
}

// readOnce reads the whole trace into w.kept and records its skipped rows.
func (w *workload) readOnce(o options) error {
	r, err := trace.Open(o.trace, trace.Options{Lenient: o.lenient})
	if err != nil {
		return err
	}
	jobs, err := trace.ReadAll(r)
	w.release(r)
	if err != nil {
		return err
	}
	w.kept = append([]trace.Job{}, jobs...)
	return nil
}

// release gives back a source open returned: a trace file's reader is
// closed and its skipped rows recorded (every pass over one file skips
// the same rows).
func (w *workload) release(src trace.Source) {
	r, ok := src.(*trace.Reader)
	if !ok {
		return
	}
	w.mu.Lock()
	w.skipped = r.Skipped()
	w.mu.Unlock()
	r.Close()
}

// quotas returns the tenant weights and the name of the rule that gave them.
func quotas(o options, w *workload) (map[string]float64, string, error) {
	rule := o.quota
	switch {
	case rule == "" && o.trace == "":
		return trace.SyntheticQuotas(), "official Venus VC sizes of the synthetic workload", nil
	case rule == "":
		rule = "requested"
	}
	if rule == "requested" || rule == "equal" {
		read, name := trace.RequestedQuotas, "∝ GPUs requested per tenant"
		if rule == "equal" {
			read, name = trace.EqualQuotas, "equal"
		}
		src, err := w.open()
		if err != nil {
			return nil, "", err
		}
		k := &keeper{src: src, limit: w.keep, full: o.trace == ""} // a synthetic workload is cheap to make again
		q, err := read(k)
		w.release(src)
		if err != nil {
			return nil, "", err
		}
		if sk := w.skipped; len(q) == 0 && sk.Rows > 0 {
			// Every row was skipped: say so, rather than "no tenant quotas".
			reasons := slices.Sorted(maps.Keys(sk.ByReason))
			for i, r := range reasons {
				reasons[i] = fmt.Sprintf("%s: %d", r, sk.ByReason[r])
			}
			return nil, "", fmt.Errorf("-trace %s: -lenient skipped all %d rows (%s); first: %s",
				o.trace, sk.Rows, strings.Join(reasons, ", "), sk.First[slices.Min(slices.Collect(maps.Keys(sk.First)))])
		}
		if !k.full {
			w.kept = k.jobs() // not nil, even for an empty trace
		}
		return q, name, nil
	}
	q, err := trace.ReadQuotas(rule)
	if err != nil {
		return nil, "", err
	}
	return q, "from " + rule, nil
}

// reservePolicy is the ASTRAEA variant whose holds -reserve-after tunes.
const reservePolicy = "astraea-reserve"

// constructors are every policy the command knows: ASTRAEA and its variants,
// and the baselines.
func constructors() map[string]simulate.Constructor {
	m := astraea.Policies()
	maps.Copy(m, baselines.Constructors())
	return m
}

func selectPolicies(list string, m map[string]simulate.Constructor) ([]string, error) {
	if list == "all" {
		names := []string{"astraea"}
		for _, e := range baselines.All() {
			names = append(names, e.Name)
		}
		return names, nil
	}
	var names []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if _, ok := m[n]; !ok {
			return nil, fmt.Errorf("unknown policy %q (known: %s, all)", n, strings.Join(simulate.PolicyNames(m), ", "))
		}
		if slices.Contains(names, n) {
			return nil, fmt.Errorf("policy %q listed twice", n)
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return nil, errors.New("no policy selected")
	}
	return names, nil
}

// schemaVersion is the -json document's schema_version. It changes when a
// key is renamed or removed or its meaning changes, not when one is added
// (docs/json.md).
const schemaVersion = 1

// report is the -json document. Every key is snake_case; a duration or a
// time of day carries its unit in its name (_seconds).
type report struct {
	SchemaVersion int                    `json:"schema_version"`
	Workload      string                 `json:"workload"`
	Skipped       *trace.Skipped         `json:"skipped,omitempty"`
	Nodes         int                    `json:"nodes"`
	GPUs          int                    `json:"gpus"`
	Interval      float64                `json:"interval_seconds"`
	Lease         float64                `json:"lease_seconds"`
	Ckpt          float64                `json:"checkpoint_seconds"`
	Cold          float64                `json:"cold_start_seconds"`
	Iteration     float64                `json:"iteration_seconds"`
	Admit         string                 `json:"admit"`
	Profile       string                 `json:"profile"`
	Conventions   []convention           `json:"conventions"`
	Phases        int                    `json:"phases"`
	Reserve       float64                `json:"reserve_after_seconds,omitempty"` // astraea-reserve's wait before a hold, when it runs
	QuotaRule     string                 `json:"quota_rule"`
	Quotas        map[string]float64     `json:"quotas"`
	Excluded      []simulate.ExcludedJob `json:"excluded,omitempty"` // jobs not simulated, each with its reason
	Runs          []runReport            `json:"runs"`
	// Aggregate has one entry per policy: every figure as mean, min and
	// max over the tick phases of its runs.
	Aggregate []metrics.Aggregate `json:"aggregate"`
}

type runReport struct {
	TickPhase float64         `json:"tick_phase_seconds"`
	Summary   metrics.Summary `json:"summary"`
	Stats     simulate.Stats  `json:"stats"`
}

// run is the astraea command on args, its subcommand first (see
// commands); with no subcommand it simulates.
func run(args []string, stdout, stderr io.Writer) error {
	return dispatch(commands(), args, stdout, stderr, nil)
}

// runWith is the simulate command: it parses args, simulates, and writes
// the results to stdout (progress to stderr when it is a terminal). It
// tells procs, when it is not nil, how many policies it will simulate at
// once, once the flags are read and before anything else (see main).
func runWith(args []string, stdout, stderr io.Writer, procs func(n int)) error {
	o, err := parseFlags(args, stdout, stderr)
	if err != nil {
		return err
	}
	res, err := simulateAll(o, stderr, procs)
	if err != nil {
		return err
	}
	return res.write(o, stdout)
}

// results are what simulateAll returns: the report, and the first tick
// phase's runs and summaries, one per policy, for the CSVs, figures and
// the single-run table.
type results struct {
	rep    report
	runs   []metrics.Run
	sums   []metrics.Summary
	phases [][]metrics.Run // every policy's runs, one per tick phase
}

// simulateAll runs every policy of o at every tick phase of o (progress to
// stderr), telling procs, when not nil, how many runs it makes at once.
func simulateAll(o options, stderr io.Writer, procs func(n int)) (*results, error) {
	if err := checkFlags(o); err != nil {
		return nil, err
	}
	var mmode ledger.Mode
	switch o.metricsMode {
	case "eq16":
		mmode = ledger.QuotaShare
	case "eq8":
		mmode = ledger.DemandAware
	default:
		return nil, fmt.Errorf("-metrics %q: want eq16 or eq8", o.metricsMode)
	}
	admit, err := simulate.ParseAdmission(o.admit)
	if err != nil {
		return nil, fmt.Errorf("-admit: %w", err)
	}
	if !(o.reserveAfter > 0) {
		return nil, fmt.Errorf("-reserve-after %v: want a positive duration", o.reserveAfter)
	}
	cons := constructors()
	aopt := astraea.DefaultOptions()
	aopt.NoBackfill, aopt.StarvedBelow, aopt.WaitFirstAfter = o.noBackfill, o.starvedBelow, o.waitFirst
	aopt.DisplaceYoung = o.displaceYoung
	if aopt.NewJobs, err = astraea.ParseNewJobOrder(o.newJobs); err != nil {
		return nil, fmt.Errorf("-new-jobs: %w", err)
	}
	pmode, err := placement.ParseMode(o.placement)
	if err != nil {
		return nil, fmt.Errorf("-placement: %w", err)
	}
	jobShare, err := ledger.ParseJobShare(o.jobShare)
	if err != nil {
		return nil, fmt.Errorf("-job-share: %w", err)
	}
	if _, err := astraea.New(aopt); err != nil {
		return nil, fmt.Errorf("-starved-below %v, -wait-first %v, -displace-young %v: %w", o.starvedBelow, o.waitFirst, o.displaceYoung, err)
	}
	maps.Copy(cons, astraea.Constructors(aopt))
	cons[reservePolicy] = func() (simulate.Policy, error) {
		opt := aopt
		opt.Name, opt.ReserveAfter = reservePolicy, o.reserveAfter
		return astraea.New(opt)
	}
	names, err := selectPolicies(o.policies, cons)
	if err != nil {
		return nil, err
	}
	par := parallelism(o.parallel, len(names))
	if procs != nil {
		procs(par)
	}
	w, err := newWorkload(o)
	if err != nil {
		return nil, err
	}
	q, rule, err := quotas(o, w)
	if err != nil {
		return nil, err
	}
	cfg := simulate.DefaultConfig(o.nodes, o.gpn, q)
	cfg.Interval, cfg.Lease = o.interval, o.lease
	cfg.Checkpoint, cfg.ColdStart = o.checkpoint, o.cold
	cfg.CheckpointOnRenew = o.checkpointOnRenew
	cfg.Iteration = o.iteration
	cfg.Metrics = mmode
	cfg.Admit = admit
	cfg.Check = o.check
	cfg.TickPhase = o.tickPhase
	cfg.DropOverQuota = o.dropOverQuota
	cfg.Placement = pmode
	cfg.SpreadSlowdown = o.spreadSlowdown
	cfg.JobShare = jobShare
	if cfg.History, err = parseHistory(o.history); err != nil {
		return nil, &flagError{flag: "history", msg: err.Error(), err: err}
	}
	if o.phases < 1 || o.phases > maxPhases || o.interval/time.Duration(max(o.phases, 1)) == 0 {
		return nil, fmt.Errorf("-phases %d: want 1 to %d, and at most one per nanosecond of -interval", o.phases, maxPhases)
	}
	// Bad flags and an output directory that cannot be made fail here,
	// not after the first runs.
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if o.out != "" {
		if err := checkOutDir(o.out); err != nil {
			return nil, err
		}
	}

	rep := report{
		SchemaVersion: schemaVersion,
		Workload:      w.name, Nodes: o.nodes, GPUs: o.nodes * o.gpn,
		Interval: o.interval.Seconds(), Lease: o.lease.Seconds(),
		Ckpt: o.checkpoint.Seconds(), Cold: o.cold.Seconds(), Iteration: o.iteration.Seconds(), QuotaRule: rule,
	}
	rep.Admit, rep.Profile, rep.Conventions, rep.Phases = admit.String(), o.profile.name, o.conv, o.phases
	if slices.Contains(names, reservePolicy) {
		rep.Reserve = o.reserveAfter.Seconds()
	}
	twin := o.overhead && (o.checkpoint > 0 || o.cold > 0 || o.iteration > 0)
	phases := tickPhases(o.tickPhase, o.interval, o.phases)
	outs := make([]policyRun, len(names)*len(phases))
	show := newDisplay(o, stderr, len(outs), twin, w.jobs(o))
	each(len(outs), par, func(i int) error {
		c := cfg
		c.TickPhase = phases[i%len(phases)]
		outs[i] = runPolicy(c, twin, w, cons[names[i/len(phases)]], names[i/len(phases)], show)
		if outs[i].err == nil && i%len(phases) != 0 && o.out == "" {
			// Only the first phase's records are written or drawn: the
			// others' summaries are all that is kept, so memory stays
			// that of one run per policy.
			r := &outs[i].res.Run
			r.Jobs, r.Tenants, r.Util = nil, nil, nil
		}
		return outs[i].err
	})
	show.finish()
	// A failure is reported as the first in the list; a run after it
	// may not have run.
	for _, out := range outs {
		if out.err != nil {
			return nil, out.err
		}
	}
	var runs []metrics.Run // the first phase's, for the CSVs and figures
	var sums []metrics.Summary
	for i, out := range outs {
		rep.Quotas = out.res.Run.Quotas
		rep.Excluded = out.res.Excluded
		if i%len(phases) == 0 {
			runs = append(runs, out.res.Run)
			sums = append(sums, out.sum)
		}
		rep.Runs = append(rep.Runs, runReport{TickPhase: phases[i%len(phases)].Seconds(), Summary: out.sum, Stats: out.res.Stats})
	}
	byPolicy := make([][]metrics.Run, len(names))
	for i := range names {
		ps := make([]metrics.Summary, len(phases))
		for k := range phases {
			ps[k] = outs[i*len(phases)+k].sum
			if o.out != "" { // the figures' bands; otherwise the runs go
				byPolicy[i] = append(byPolicy[i], outs[i*len(phases)+k].res.Run)
			}
		}
		a, err := metrics.AggregateRuns(ps...)
		if err != nil {
			return nil, err
		}
		rep.Aggregate = append(rep.Aggregate, a)
	}
	if w.skipped.Rows > 0 {
		sk := w.skipped
		rep.Skipped = &sk
	}
	return &results{rep: rep, runs: runs, sums: sums, phases: byPolicy}, nil
}

// write writes the results as o asks: CSVs and figures to -out, then JSON
// or the text tables to stdout.
func (r *results) write(o options, stdout io.Writer) error {
	if o.out != "" {
		if err := metrics.WriteCSV(o.out, r.runs...); err != nil {
			return err
		}
		if err := metrics.WriteAggregateCSV(o.out, r.rep.Aggregate...); err != nil {
			return err
		}
		if err := metrics.WritePhaseFigures(o.out, r.phases...); err != nil {
			return err
		}
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r.rep)
	}
	return writeText(stdout, r.rep, r.sums, o)
}

// maxPhases bounds -phases: each phase is one more run of every policy.
const maxPhases = 1000

// tickPhases returns n tick phases spread evenly over one interval from
// first: first + k·interval/n, modulo the interval, for k = 0 … n−1.
func tickPhases(first, interval time.Duration, n int) []time.Duration {
	ps := make([]time.Duration, n)
	for k := range ps {
		ps[k] = (first + time.Duration(k)*(interval/time.Duration(n))) % interval
	}
	return ps
}

// policyRun is one policy's outcome: its run with overheads and that run's
// summary, with the preemption overhead against the twin when there is one.
type policyRun struct {
	res *simulate.Result
	sum metrics.Summary
	err error
}

// runPolicy simulates one policy: first its twin without overheads, when
// twin is set, of which only the summary is kept (so one run's per-job
// results are in memory at a time), then the run itself.
func runPolicy(cfg simulate.Config, twin bool, w *workload, newPolicy simulate.Constructor, name string, show *display) policyRun {
	var sum0 *metrics.Summary
	if twin {
		zero := cfg
		zero.Checkpoint, zero.ColdStart, zero.Iteration = 0, 0, 0
		// Only its jobs are read (PreemptionOverhead compares the
		// average JCTs): it records no tenant intervals, which change
		// nothing else in a run.
		zero.Intervals = nil
		res0, err := simulateOnce(zero, w, newPolicy, name+" (no overhead)", show)
		if err != nil {
			return policyRun{err: err}
		}
		s0 := metrics.Summarize(res0.Run, metrics.DefaultSummaryConfig())
		sum0 = &s0
	}
	res, err := simulateOnce(cfg, w, newPolicy, name, show)
	if err != nil {
		return policyRun{err: err}
	}
	sum := metrics.Summarize(res.Run, metrics.DefaultSummaryConfig())
	if sum0 != nil {
		if ov, err := metrics.PreemptionOverhead(sum, *sum0); err == nil {
			sum.PreemptionOverhead = &ov
		}
	}
	return policyRun{res: res, sum: sum}
}

// parallelism is how many policies run at once: the -parallel flag, or
// GOMAXPROCS (the processors, unless the environment sets it) when it is
// 0 or less, and never more than the policies.
func parallelism(flag, policies int) int {
	if flag <= 0 {
		flag = runtime.GOMAXPROCS(0)
	}
	return max(1, min(flag, policies))
}

// each calls f(0), …, f(n-1), par at a time, starting them in increasing
// order; once a call has failed no further call starts (so with par 1
// the calls end with the failed one).
func each(n, par int, f func(i int) error) {
	var failed atomic.Bool
	next := make(chan int)
	var wg sync.WaitGroup
	for range par {
		wg.Go(func() {
			for i := range next {
				if !failed.Load() && f(i) != nil {
					failed.Store(true)
				}
			}
		})
	}
	for i := range n {
		if failed.Load() {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
}

func simulateOnce(cfg simulate.Config, w *workload, newPolicy simulate.Constructor, label string, show *display) (*simulate.Result, error) {
	p, err := newPolicy()
	if err != nil {
		return nil, err
	}
	src, err := w.open()
	if err != nil {
		return nil, err
	}
	defer w.release(src)
	r := show.start(label)
	cfg.Progress = r.update
	res, err := simulate.Run(cfg, src, p)
	r.end()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	return res, nil
}

func writeText(w io.Writer, rep report, sums []metrics.Summary, o options) error {
	fmt.Fprintf(w, "workload: %s\n", rep.Workload)
	if rep.Skipped != nil {
		fmt.Fprintf(w, "skipped rows: %d", rep.Skipped.Rows)
		for _, k := range slices.Sorted(maps.Keys(rep.Skipped.ByReason)) {
			fmt.Fprintf(w, "; %s: %d", k, rep.Skipped.ByReason[k])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "cluster: %d nodes × %d GPUs = %d GPUs; interval %v, lease %v, checkpoint %v, cold start %v, iteration %v\n",
		o.nodes, o.gpn, rep.GPUs, o.interval, o.lease, o.checkpoint, o.cold, o.iteration)
	fmt.Fprintf(w, "profile %s:", rep.Profile)
	for _, c := range rep.Conventions {
		mark := ""
		if c.Overridden {
			mark = " (given)"
		}
		fmt.Fprintf(w, " -%s=%s%s", c.Flag, c.Value, mark)
	}
	fmt.Fprintln(w)
	if rep.Phases > 1 {
		fmt.Fprintf(w, "tick phases: %d, spread over one interval; every figure is mean [min–max] over them\n", rep.Phases)
	}
	if rep.Reserve > 0 {
		fmt.Fprintf(w, "%s: nodes held for the most under-served tenant's gang blocked for %v\n", reservePolicy, o.reserveAfter)
	}
	if len(rep.Excluded) > 0 {
		why := map[string]int{}
		for _, x := range rep.Excluded {
			why[x.Reason]++
		}
		fmt.Fprintf(w, "excluded: %d jobs", len(rep.Excluded))
		for _, r := range slices.Sorted(maps.Keys(why)) {
			fmt.Fprintf(w, "; %s: %d", r, why[r])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "quotas (%s):\n", rep.QuotaRule)
	if err := metrics.WriteQuotas(w, rep.Quotas); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if rep.Phases > 1 {
		return metrics.WriteAggregateTable(w, rep.Aggregate...)
	}
	if err := metrics.WriteTable(w, sums...); err != nil {
		return err
	}
	// The overhead line: GPU time held without progress, of which lost
	// work and, with a spread slowdown, the spread jobs' shortfall.
	fmt.Fprintln(w)
	for _, r := range rep.Runs {
		fmt.Fprintf(w, "overhead %s: %.1f GPU·h held without progress (checkpoints, cold starts, lost work, spread slowdown), %.1f GPU·h of it lost work",
			r.Summary.Policy, r.Stats.OverheadGPUSeconds/3600, r.Stats.LostGPUSeconds/3600)
		if r.Stats.SpreadGPUSeconds > 0 {
			fmt.Fprintf(w, ", %.1f GPU·h spread slowdown", r.Stats.SpreadGPUSeconds/3600)
		}
		fmt.Fprintln(w)
	}
	return nil
}
