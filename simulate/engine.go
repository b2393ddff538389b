package simulate

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/astraea-sched/astraea/lease"
	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate/metrics"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// Errors of a run, matched with errors.Is. The concrete error names the job,
// the policy and the simulated time at fault.
var (
	// ErrBadDecision: a policy returned an impossible decision (unknown or
	// duplicate job, a renewal of a job that is not running, a grant that
	// does not fit or breaks the gang, a cluster left changed).
	ErrBadDecision = errors.New("simulate: invalid policy decision")
	// ErrUnknownTenant: a job's tenant has no quota.
	ErrUnknownTenant = errors.New("simulate: job of a tenant without quota")
	// ErrBadJob: a job with GPUs ≤ 0, a negative duration or a duplicate id.
	ErrBadJob = errors.New("simulate: invalid job")
	// ErrUnsorted: the source returned a job submitted before the previous one.
	ErrUnsorted = errors.New("simulate: jobs not in submit order")
	// ErrStalled: active jobs remain but the policy schedules nothing and
	// nothing else can happen.
	ErrStalled = errors.New("simulate: policy stalled with jobs waiting")
	// ErrInvariant: an invariant check failed (an engine or dependency bug).
	ErrInvariant = errors.New("simulate: invariant violated")
	// ErrHorizon: a job is in the cluster more than lease.MaxSpan after its
	// first start (it waited or was preempted for decades of simulated
	// time), or at a time outside the years 1678 to 2262; the progress
	// model counts neither. (A job submitted beyond Horizon is excluded
	// instead, see ExcludedBeyondHorizon.)
	ErrHorizon = errors.New("simulate: beyond the engine's horizon")
)

// Horizon is the latest submission, after the run's start, that a run
// simulates. The engine's clock counts int64 nanoseconds from the start,
// which hold 292 years; a job may run for up to lease.MaxSpan (50 years)
// after its first start, and the rest is margin for its wait.
const Horizon = 200 * 365 * 24 * time.Hour

// phase is where a job is in the engine's lifecycle.
type phase uint8

const (
	phPending  phase = iota // waiting (possibly still writing its checkpoint)
	phStarting              // granted, waiting for in-flight releases to complete
	phRunning               // holding its GPUs (possibly in cold start or a renewal checkpoint)
	phArrived               // submitted, joins Pending at the next tick
)

// job is the engine's record of one active job.
type job struct {
	st     JobState
	idx    int32 // index in the engine's slab
	id     ledger.JobID
	tenant ledger.TenantID
	phase  phase

	// prog is the job's progress under the lease model: what it has done,
	// its cold starts and checkpoints, the work it lost, when it completes.
	prog    lease.Progress
	startAt time.Duration // while starting: when it will start holding
	// doneD is when the job completes, as an offset, while its completion
	// event is queued: a renewal that pauses the job moves it, and the
	// event is moved only once it comes first (see settle; Config.Exhaustive
	// moves the event at every renewal)
	doneD time.Duration
	// leaseEndD is the lease end (st.LeaseEnd) as an offset, when
	// leaseSet (see setLeaseEnd)
	leaseEndD time.Duration
	leaseSet  bool

	listed bool // in the engine's list of expired leases this tick
	// marks of apply: equal to the engine's stamp when the current decision
	// preempts, grants or renews the job
	stopMark, grantMark, renewMark uint64
	gen                            uint32 // invalidates complete and start events
	leaseGen                       uint32 // invalidates lease-end events
	relGen                         uint32 // invalidates release events
}

// progressed sets the job's attained and remaining time from its progress at
// t (the engine's now).
func (j *job) progressed(t time.Time) {
	j.st.Attained = j.prog.At(t)
	j.st.Remaining = j.st.Job.Duration - j.st.Attained
}

// ExcludedJob is a job the run left out, and why: it asks for more GPUs
// than the whole cluster has (ExcludedTooLarge), or, with
// Config.DropOverQuota, than its tenant's quota (ExcludedOverQuota), or it
// is submitted beyond the Horizon (ExcludedBeyondHorizon).
type ExcludedJob struct {
	ID     string `json:"id"`
	Tenant string `json:"tenant"`
	GPUs   int    `json:"gpus"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// Reasons recorded in ExcludedJob.Reason and metrics.Run.Excluded.
const (
	// ExcludedTooLarge: the job asks for more GPUs than the cluster has.
	ExcludedTooLarge = "larger than the cluster"
	// ExcludedOverQuota: the job asks for more GPUs than its tenant's
	// quota and Config.DropOverQuota is set.
	ExcludedOverQuota = "larger than its tenant's quota"
	// ExcludedBeyondHorizon: the job is submitted more than Horizon after
	// the run's start, or outside the years 1678 to 2262.
	ExcludedBeyondHorizon = "submitted beyond the horizon"
)

// Stats counts what happened in a run.
type Stats struct {
	Jobs        int `json:"jobs"`     // jobs simulated to the end
	Excluded    int `json:"excluded"` // jobs not simulated (Result.Excluded says why)
	Ticks       int `json:"ticks"`    // scheduling decisions (the policy was called)
	Events      int `json:"events"`   // engine events processed
	Grants      int `json:"grants"`   // new grants (first starts and resumes)
	Renewals    int `json:"renewals"`
	Preemptions int `json:"preemptions"` // suspensions of running jobs (explicit or by an unrenewed lease)
	Checkpoints int `json:"checkpoints"` // checkpoints written (preemptions, plus renewals with CheckpointOnRenew)
	ColdStarts  int `json:"cold_starts"` // resumes
	// OverheadGPUSeconds is GPU time held without progress: checkpoints,
	// cold starts, lost work and the shortfall of spread jobs (start
	// barriers are not counted: a starting job holds nothing).
	OverheadGPUSeconds float64 `json:"overhead_gpu_seconds"`
	// LostGPUSeconds is the part of OverheadGPUSeconds that ran but was
	// discarded at a preemption: the partial iteration in flight (zero when
	// Config.Iteration is zero).
	LostGPUSeconds float64 `json:"lost_gpu_seconds"`
	// SpreadGPUSeconds is the part of OverheadGPUSeconds that jobs spread
	// over more nodes than their minimum ran without doing work, at
	// Config.SpreadSlowdown: (1 − s) of their running time there (zero
	// without a slowdown). It is counted as jobs complete.
	SpreadGPUSeconds float64   `json:"spread_gpu_seconds"`
	Start            time.Time `json:"start"`
	End              time.Time `json:"end"`
}

// Result is the outcome of one run.
type Result struct {
	Run      metrics.Run
	Excluded []ExcludedJob
	Stats    Stats
}

// engine is one run's state.
type engine struct {
	cfg      Config
	ov       lease.SimConfig // the overheads of every job's progress model
	slow     float64         // Config.SpreadSlowdown, 1 for none
	pol      Policy
	waker    Waker
	src      trace.Source
	start    time.Time
	capacity int
	quotas   map[string]float64 // normalised
	cluster  *placement.Cluster
	books    []*ledger.Ledger  // books[0] accounts; every mode a figure needs once
	metrics  *ledger.Ledger    // the book in Config.Metrics mode: job ρ, tenant totals
	byMode   [2]*ledger.Ledger // the books by mode (DemandAware, QuotaShare), when kept

	jobs    map[string]*job
	slab    []*job // by job index; nil once a job has ended
	arrived []*job
	pending runSet // the jobs waiting for GPUs
	running runSet
	traits  Traits // what the policy lets the engine assume

	expired     []*job         // lease ended since the last tick
	expState    []*JobState    // their states, for State.Expiring
	expIDs      []string       // their ids, scratch of expiringRoom
	room        placement.Room // expiringRoom's, valid while roomSet
	roomErr     error
	roomSet     bool  // room is this tick's (cleared with the expiring jobs)
	demandCount []int // pending jobs by GPU demand (index), at most the capacity
	demands     []int // distinct pending demands, ascending
	q           eventQueue
	// Stale events are taken out of q (see drop); the latest of their
	// times is where the clock ends if nothing comes after them.
	staleMax time.Duration

	next    trace.Job // lookahead
	hasNext bool
	srcDone bool
	lastSub time.Duration
	// nextSub is next.Submit.Sub(start) when nextSubOK: the loop asks for
	// it at every turn, readNext forgets it (Config.Exhaustive computes it
	// every time)
	nextSub   time.Duration
	nextSubOK bool

	now   time.Duration
	nowAt time.Time // e.at(e.now), kept by advance: renewals, states and ledger events all ask for it
	// leaseEnd is e.at(leaseEndD) when leaseEndOK (see leaseEndAt)
	leaseEnd    time.Time
	leaseEndD   time.Duration
	leaseEndOK  bool
	lastTick    time.Duration
	ticked      bool
	tickAt      time.Duration
	tickSet     bool
	lastRelease time.Duration // latest release time scheduled (start barrier)
	held        int           // GPUs held now
	state       State

	boundaries []time.Duration // next interval end per Intervals entry
	startSet   bool            // start is known: readNext excludes jobs beyond the Horizon
	nextEnd    time.Duration   // the least of boundaries (never without any); Config.Exhaustive looks at each
	tenants    []string        // sorted tenant names

	// scratch space of apply, reused across ticks
	stamp  uint64 // decision counter; a job's marks equal it when named
	lapsed []*job
	// jobs of a decision's preemptions and grants, reused by apply
	preemptJobs, grantJobs []*job
	res                    Result
	done                   int
	stallTicks             int
}

// Run simulates the jobs of src on the configured cluster under policy p and
// returns per-job and per-tenant records for package metrics.
//
// The run is deterministic: the same jobs, configuration and policy give the
// same result. Memory follows active jobs plus one record per finished job and
// one utilization point per change of held GPUs: the ledgers forget a job
// once its record is written. Cost: O(E log E) for E
// engine events, plus the policy's cost at each tick; ticks at which nothing
// can change are skipped.
func Run(cfg Config, src trace.Source, p Policy) (*Result, error) {
	cl, err := cfg.cluster()
	if err != nil {
		return nil, err
	}
	if m, ok := p.(AccountsModer); ok {
		cfg.Accounts = m.AccountsMode()
	}
	e := &engine{
		cfg:      cfg,
		pol:      p,
		src:      src,
		capacity: cl.Capacity(),
		cluster:  cl,
		jobs:     make(map[string]*job),
		ov: lease.SimConfig{
			Checkpoint:          cfg.Checkpoint,
			ColdStart:           cfg.ColdStart,
			Iteration:           cfg.Iteration,
			NoRenewalCheckpoint: !cfg.CheckpointOnRenew,
		},
	}
	if tr, ok := p.(TraitsReporter); ok {
		e.traits = tr.Traits()
	}
	e.slow = cfg.SpreadSlowdown
	if e.slow == 0 {
		e.slow = 1
	}
	if cfg.CheckEvery <= 0 {
		e.cfg.CheckEvery = DefaultCheckEvery
	}
	e.waker, _ = p.(Waker)
	// Sum in a fixed order: float addition is not associative, and map
	// order is random.
	e.tenants = slices.Sorted(maps.Keys(cfg.Quotas))
	var sum float64
	for _, t := range e.tenants {
		sum += cfg.Quotas[t]
	}
	e.quotas = make(map[string]float64, len(cfg.Quotas))
	for _, t := range e.tenants {
		e.quotas[t] = cfg.Quotas[t] / sum
	}
	if err := e.readNext(); err != nil {
		return nil, err
	}
	e.start = cfg.Start
	if e.start.IsZero() {
		if e.hasNext {
			e.start = e.next.Submit
		} else {
			e.start = time.Unix(0, 0).UTC()
		}
	}
	e.nowAt = e.start
	if e.hasNext && e.next.Submit.Before(e.start) {
		return nil, configErr("Start %v is after the first submission %v (job %s)", e.start, e.next.Submit, e.next.ID)
	}
	e.startSet = true
	if e.hasNext && !e.withinHorizon(e.next.Submit) {
		e.excludeJob(e.next, ExcludedBeyondHorizon)
		if err := e.readNext(); err != nil {
			return nil, err
		}
	}
	if err := e.openBooks(); err != nil {
		return nil, err
	}
	if err := e.loop(); err != nil {
		return nil, err
	}
	if err := e.finish(); err != nil {
		return nil, err
	}
	return &e.res, nil
}

func (e *engine) openBooks() error {
	// Tenant intervals are recorded under both equations (the paper's
	// simulator selects by Eq. 16 and reports Eq. 8), so a run with
	// intervals keeps a book of each mode.
	//
	// The policies read the first book. When their accounts forget the
	// past (Config.History) or split a tenant's share without the demand
	// cap (Config.JobShare), that book serves them alone and the others
	// are kept as without it.
	var modes []ledger.Mode
	own := e.cfg.History != ledger.Unbounded() || e.cfg.JobShare != ledger.CappedJobShare
	if own {
		l, err := e.openBook(ledger.Config{Mode: e.cfg.Accounts, History: e.cfg.History, JobShare: e.cfg.JobShare})
		if err != nil {
			return err
		}
		e.books = append(e.books, l)
	} else {
		modes = append(modes, e.cfg.Accounts)
	}
	for _, m := range []ledger.Mode{e.cfg.Metrics, ledger.DemandAware, ledger.QuotaShare} {
		if !slices.Contains(modes, m) && (m == e.cfg.Metrics || len(e.cfg.Intervals) > 0) {
			modes = append(modes, m)
		}
	}
	for _, m := range modes {
		lc := ledger.Config{Mode: m}
		if m != e.cfg.Metrics && (own || m != e.cfg.Accounts) {
			// A book kept for tenant intervals alone is never asked
			// about anything older than the longest interval, so it
			// keeps no more: its memory stays that of a window, not of
			// the whole run.
			lc.History = ledger.TrailingWindow(slices.Max(e.cfg.Intervals))
		}
		l, err := e.openBook(lc)
		if err != nil {
			return err
		}
		e.books = append(e.books, l)
		e.byMode[modeIndex(m)] = l
	}
	e.metrics = e.byMode[modeIndex(e.cfg.Metrics)]
	e.boundaries = make([]time.Duration, len(e.cfg.Intervals))
	copy(e.boundaries, e.cfg.Intervals)
	e.nextEnd = never
	if len(e.boundaries) > 0 {
		e.nextEnd = slices.Min(e.boundaries)
	}
	e.res.Stats.Start = e.start
	return nil
}

func (e *engine) at(d time.Duration) time.Time { return e.start.Add(d) }

// openBook returns a ledger of the cluster's capacity from the start, of
// mode and history c, with every tenant added.
func (e *engine) openBook(c ledger.Config) (*ledger.Ledger, error) {
	c.Capacity, c.Start = ledger.GPUs(e.capacity), e.start
	l, err := ledger.New(c)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	for _, t := range e.tenants {
		if err := l.AddTenant(e.start, ledger.TenantID(t), e.cfg.Quotas[t]); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	return l, nil
}

// modeIndex is the index of mode m in engine.byMode.
func modeIndex(m ledger.Mode) int {
	if m == ledger.QuotaShare {
		return 1
	}
	return 0
}

// setLeaseEnd sets job j's lease end to d (JobState.LeaseEnd at(d)), or
// to none when set is false, and keeps d with the job, which the engine
// compares with its clock instead of times (Config.Exhaustive compares the
// times).
func (e *engine) setLeaseEnd(j *job, d time.Duration, set bool) {
	j.leaseEndD, j.leaseSet = d, set
	if set {
		j.st.LeaseEnd = e.leaseEndAt(d)
	} else {
		j.st.LeaseEnd = time.Time{}
	}
}

// leaseEndAt is e.at(d) for the end d of a lease granted or renewed now:
// the jobs of one tick mostly share it, so the last one is kept
// (Config.Exhaustive converts every time).
func (e *engine) leaseEndAt(d time.Duration) time.Time {
	if !e.leaseEndOK || d != e.leaseEndD || e.cfg.Exhaustive {
		e.leaseEnd, e.leaseEndD, e.leaseEndOK = e.at(d), d, true
	}
	return e.leaseEnd
}

// readNext fills the one-job lookahead from the source. Once the start is
// known, jobs submitted beyond the Horizon are excluded as they are read.
func (e *engine) readNext() error {
	for {
		if e.srcDone {
			e.hasNext = false
			return nil
		}
		j, err := e.src.Next()
		if errors.Is(err, io.EOF) {
			e.srcDone, e.hasNext = true, false
			return nil
		}
		if err != nil {
			return fmt.Errorf("simulate: reading jobs: %w", err)
		}
		if e.hasNext && j.Submit.Before(e.next.Submit) {
			return fmt.Errorf("%w: job %s (line %d) submitted at %v, after job %s at %v",
				ErrUnsorted, j.ID, j.Line, j.Submit, e.next.ID, e.next.Submit)
		}
		e.next, e.hasNext = j, true
		e.nextSubOK = false
		if !e.startSet || e.withinHorizon(j.Submit) {
			return nil
		}
		e.excludeJob(j, ExcludedBeyondHorizon)
	}
}

// withinHorizon reports whether a job submitted at t is simulated: at most
// Horizon after the start, in the years the progress model counts.
func (e *engine) withinHorizon(t time.Time) bool {
	s := t.Unix()
	return t.Sub(e.start) <= Horizon && s >= minUnixNanoSec && s <= maxUnixNanoSec
}

// The seconds of the first and last times Unix nanoseconds can hold.
var minUnixNanoSec, maxUnixNanoSec = time.Unix(0, math.MinInt64).Unix() + 1, time.Unix(0, math.MaxInt64).Unix() - 1

func (e *engine) excludeJob(j trace.Job, reason string) {
	e.res.Excluded = append(e.res.Excluded, ExcludedJob{ID: j.ID, Tenant: j.Tenant, GPUs: j.GPUs, Line: j.Line, Reason: reason})
	e.res.Stats.Excluded++
}

// ledger helpers: every accounting event goes to each book.

func (e *engine) ledgerDo(op string, j *job, at time.Duration, f func(l *ledger.Ledger) error) error {
	for _, l := range e.books {
		if err := f(l); err != nil {
			return fmt.Errorf("simulate: ledger %s of job %s at %v: %w", op, j.st.Job.ID, e.at(at), err)
		}
	}
	return nil
}

func (e *engine) schedTick(t time.Duration) {
	iv, ph := e.cfg.Interval, e.cfg.TickPhase
	k := ph
	if t > ph {
		k += (t - ph + iv - 1) / iv * iv
	}
	if e.ticked && k <= e.lastTick {
		k = e.lastTick + iv
	}
	if !e.tickSet || k < e.tickAt {
		e.tickAt, e.tickSet = k, true
	}
}

const never = time.Duration(math.MaxInt64)

func (e *engine) loop() error {
	for {
		te := never
		if e.q.Len() > 0 {
			e.settle()
			te = e.q.top().at
		}
		if e.hasNext {
			if !e.nextSubOK || e.cfg.Exhaustive {
				e.nextSub, e.nextSubOK = e.next.Submit.Sub(e.start), true
			}
			if e.nextSub < te {
				te = e.nextSub
			}
		}
		switch {
		case e.tickSet && e.tickAt < te:
			if err := e.tick(e.tickAt); err != nil {
				return err
			}
		case te != never:
			if err := e.step(te); err != nil {
				return err
			}
		case e.staleMax > e.now:
			// The stale events taken out of the queue would have been
			// popped last: the clock ends at the latest of them.
			if err := e.advance(e.staleMax); err != nil {
				return err
			}
		case len(e.jobs) == 0:
			return nil
		default:
			// Nothing is scheduled, yet jobs wait: give the policy one more
			// tick, then report the stall.
			if e.stallTicks > 0 {
				return e.stalled()
			}
			e.stallTicks++
			e.schedTick(e.now)
		}
	}
}

func (e *engine) stalled() error {
	ids := slices.Sorted(maps.Keys(e.jobs))
	if len(ids) > 5 {
		ids = append(ids[:5], "...")
	}
	return fmt.Errorf("%w: policy %s at %v: %d jobs never finish (%s)",
		ErrStalled, e.pol.Name(), e.nowAt, len(e.jobs), strings.Join(ids, ", "))
}

// advance moves the clock to t, closing tenant intervals that end by t.
func (e *engine) advance(t time.Duration) error {
	if t != e.now || e.cfg.Exhaustive {
		// A tick mostly comes at the time of the step before it: the
		// clock's time.Time is then kept (Config.Exhaustive converts it).
		e.now, e.nowAt = t, e.at(t)
	}
	if t < e.nextEnd && !e.cfg.Exhaustive {
		return nil // no interval ends by t
	}
	e.nextEnd = never
	for i, b := range e.boundaries {
		for b <= t {
			if err := e.closeInterval(e.cfg.Intervals[i], b); err != nil {
				return err
			}
			b += e.cfg.Intervals[i]
		}
		e.boundaries[i] = b
		e.nextEnd = min(e.nextEnd, b)
	}
	return nil
}

// closeInterval records every tenant's account over [end-length, end). It is
// called before any event at or after end is applied, so the ledger's
// constant extrapolation since its last event is exact.
//
// Once every job has been submitted, an interval that begins after the
// last submission is not recorded: finish would drop it (Config.Exhaustive
// records it). The tail of a run whose last jobs run long after it closes
// most of its intervals so.
func (e *engine) closeInterval(length, end time.Duration) error {
	if !e.hasNext && e.srcDone && end-length > e.lastSub && !e.cfg.Exhaustive {
		return nil
	}
	from, to := e.at(end-length), e.at(end)
	e.res.Run.Tenants = roomFor(e.res.Run.Tenants, len(e.tenants))
	for _, t := range e.tenants {
		var acc [2]ledger.Account
		for i, l := range e.byMode {
			a, err := l.TenantAccount(ledger.TenantID(t), from, to)
			if err != nil {
				return fmt.Errorf("simulate: tenant %s account over [%v, %v): %w", t, from, to, err)
			}
			acc[i] = a
		}
		e.res.Run.Tenants = append(e.res.Run.Tenants, metrics.TenantInterval{
			Tenant: t, From: from, To: to, Length: length,
			Account: acc[modeIndex(e.cfg.Metrics)], Eq8: acc[0], Eq16: acc[1],
		})
	}
	return nil
}

// step processes the next event or submission, both at time t.
func (e *engine) step(t time.Duration) error {
	if err := e.advance(t); err != nil {
		return err
	}
	e.res.Stats.Events++
	if e.q.Len() > 0 && e.q.top().at == t { // an event is due
		ev := e.q.pop()
		if ev.kind == evLeaseEnd && !e.cfg.Exhaustive {
			e.leaseEndsAt(ev, t)
			return nil
		}
		return e.handle(ev)
	}
	return e.submit()
}

// exclude returns why the run leaves job tj out, or "" to simulate it.
func (e *engine) exclude(tj trace.Job) string {
	switch {
	case tj.GPUs > e.capacity:
		return ExcludedTooLarge
	case e.cfg.DropOverQuota && float64(tj.GPUs) > float64(e.capacity)*e.quotas[tj.Tenant]:
		return ExcludedOverQuota
	}
	return ""
}

func (e *engine) submit() error {
	tj := e.next
	if err := e.readNext(); err != nil {
		return err
	}
	t := e.now
	e.lastSub = t
	e.stallTicks = 0
	if tj.GPUs <= 0 || tj.Duration < 0 {
		return fmt.Errorf("%w: job %s (line %d): %d GPUs, duration %v", ErrBadJob, tj.ID, tj.Line, tj.GPUs, tj.Duration)
	}
	if _, ok := e.quotas[tj.Tenant]; !ok {
		return fmt.Errorf("%w: job %s (line %d) of tenant %q", ErrUnknownTenant, tj.ID, tj.Line, tj.Tenant)
	}
	if why := e.exclude(tj); why != "" {
		e.excludeJob(tj, why)
		return nil
	}
	if _, dup := e.jobs[tj.ID]; dup {
		return fmt.Errorf("%w: job %s (line %d): duplicate id", ErrBadJob, tj.ID, tj.Line)
	}
	prog, err := lease.NewProgress(tj.Duration)
	if err != nil {
		return fmt.Errorf("%w: job %s (line %d): %w", ErrBadJob, tj.ID, tj.Line, err)
	}
	j := &job{st: JobState{Job: tj, Remaining: tj.Duration}, id: ledger.JobID(tj.ID), tenant: ledger.TenantID(tj.Tenant), phase: phArrived, prog: prog}
	j.st.eng = j
	if e.cfg.Admit == AdmitOnSubmit {
		if err := e.admit(j, t); err != nil {
			return err
		}
	}
	if len(e.slab) >= math.MaxInt32 {
		return fmt.Errorf("%w: job %s (line %d): more than %d jobs", ErrBadJob, tj.ID, tj.Line, math.MaxInt32)
	}
	j.idx = int32(len(e.slab))
	e.slab = append(e.slab, j)
	e.jobs[tj.ID] = j
	e.arrived = append(e.arrived, j)
	e.schedTick(t)
	return nil
}

// admit enters job j in the ledgers at t: at its submission, or at the
// first tick that sees it (Config.Admit).
func (e *engine) admit(j *job, t time.Duration) error {
	w := j.st.Job.EffectiveWeight()
	return e.ledgerDo("submit", j, t, func(l *ledger.Ledger) error {
		return l.Submit(e.at(t), j.id, j.tenant, ledger.GPUs(j.st.Job.GPUs), w)
	})
}

// drop takes job j's pending event of slot out of the queue when it has
// become stale (its generation was just bumped, or the job ended), so
// that the queue holds only live events, and the run is as if the stale
// event had been popped and ignored. Popping it would only count it and
// advance the clock to its time t, closing the tenant intervals that end
// by t. The count is taken now; the closing needs no step of its own,
// since the next step (or tick) closes the same intervals, in the same
// order, before it applies anything, and an interval's record does not
// depend on when it is closed (closeInterval); and t moves the clock at
// the end when nothing comes after it.
func (e *engine) drop(j *job, slot int) {
	if ev, ok := e.q.remove(j.idx, slot); ok {
		if ev.kind == evComplete {
			ev.at = j.doneD // a renewal may have moved it (see settle)
		}
		e.staleAt(ev.at)
	}
}

// settle moves the completions that renewals have postponed (job.doneD)
// from the front of the heap of events to their times, until the first
// event there is due at its time: a renewal that pauses a job only moves
// its doneD, and the event is moved when it comes first, once for many
// renewals instead of at each. Every other event is at its time, and a
// postponed completion's time is before its job's doneD, so after settle
// the first event of the queue is the one the run takes next, as if every
// renewal had moved its job's event. O(log n) per postponed completion
// moved, for n queued events; O(1) otherwise.
func (e *engine) settle() {
	for len(e.q.h) > 0 {
		ev := e.q.h[0]
		if ev.kind != evComplete {
			return
		}
		j := e.slab[ev.j]
		if j == nil || ev.gen != j.gen || j.doneD <= ev.at {
			return
		}
		ev.at = j.doneD
		e.q.down(0, ev)
	}
}

// staleAt records an event at t that a naive queue would pop and ignore:
// one taken out of the queue (see drop), or the completion a renewal
// postpones (see renew and settle). It counts as an event, and the clock
// ends no earlier than t.
func (e *engine) staleAt(t time.Duration) {
	e.res.Stats.Events++
	e.staleMax = max(e.staleMax, t)
}

// leaseEndsAt handles the lease end ev at t and every other event due at
// t, as many steps would: lease ends come last among events of one time, so
// the others are lease ends too, and between them the loop would only step
// again (no tick can come first: the tick they ask for is not before t,
// and submissions at t come after the events at t). Each is counted as an
// event. They are taken from the lease ends' buckets without a look at the
// heap of other events: every event of the heap at t came before ev, and
// handling a lease end queues none. O(1) per event, without the loop's look
// at what comes next.
func (e *engine) leaseEndsAt(ev event, t time.Duration) {
	ended := false
	for {
		if j := e.slab[ev.j]; j != nil && ev.gen == j.leaseGen && j.phase == phRunning {
			e.expired = append(e.expired, j)
			ended = true
		}
		if next := e.q.le.top(); next == nil || next.at != t {
			if ended {
				e.schedTick(t) // the tick each would ask for
			}
			return
		}
		ev = e.q.le.popTop()
		e.res.Stats.Events++
	}
}

func (e *engine) handle(ev event) error {
	j := e.slab[ev.j]
	if j == nil {
		return nil // the job has ended
	}
	switch ev.kind {
	case evRelease:
		if ev.gen != j.relGen || !j.st.Holding {
			return nil
		}
		// The GPUs were already free for planning; a policy that waits for
		// the physical release (or for the job to be resumable) is called.
		e.schedTick(e.now)
		return e.stopHolding(j)
	case evComplete:
		if ev.gen != j.gen || j.phase != phRunning {
			return nil
		}
		return e.complete(j)
	case evStart:
		if ev.gen != j.gen || j.phase != phStarting {
			return nil
		}
		return e.begin(j)
	case evLeaseEnd:
		if ev.gen != j.leaseGen || j.phase != phRunning {
			return nil
		}
		e.expired = append(e.expired, j)
		e.schedTick(e.now)
	}
	return nil
}

// setHeld changes the GPUs held now and records a utilization point.
func (e *engine) setHeld(delta int) error {
	e.held += delta
	if e.held < 0 || e.held > e.capacity {
		return fmt.Errorf("%w: %d GPUs held of %d at %v", ErrInvariant, e.held, e.capacity, e.nowAt)
	}
	at := e.nowAt
	u := e.res.Run.Util
	if n := len(u); n > 0 && u[n-1].At.Equal(at) {
		u[n-1].Used = e.held
		if n > 1 && u[n-2].Used == e.held {
			e.res.Run.Util = u[:n-1]
		}
		return nil
	} else if n > 0 && u[n-1].Used == e.held {
		return nil
	}
	e.res.Run.Util = append(roomFor(u, 1), metrics.UtilPoint{At: at, Used: e.held, Capacity: e.capacity})
	return nil
}

// roomFor returns s with room for n more elements, doubling its capacity
// when it must grow: append grows a large slice by 1.25×, which copies the
// records of a long run (jobs, tenant intervals, utilization points) many
// times over.
func roomFor[T any](s []T, n int) []T {
	if len(s)+n <= cap(s) {
		return s
	}
	t := make([]T, len(s), 2*(len(s)+n)+256)
	copy(t, s)
	return t
}

// wipe zeroes the elements of s one by one, for the short lists of the
// engine's and the policy's scratch (a few jobs or accounts): clear, and a
// range loop that zeroes each element, which the compiler turns into the
// same, call the runtime, some 100 instructions however short s is, where
// storing a few zeros costs a few.
func wipe[T any](s []T) {
	var z T
	for i := 0; i < len(s); i++ {
		s[i] = z
	}
}

// stopHolding ends the job's GPU holding now (checkpoint written, or finish).
func (e *engine) stopHolding(j *job) error {
	if err := e.ledgerDo("stop", j, e.now, func(l *ledger.Ledger) error { return l.Stop(e.nowAt, j.id) }); err != nil {
		return err
	}
	j.st.Holding = false
	return e.setHeld(-j.st.Job.GPUs)
}

// begin makes a granted job hold its GPUs from now: a resume pays a cold start.
func (e *engine) begin(j *job) error {
	if j.st.Holding {
		return fmt.Errorf("%w: job %s starts while still holding GPUs at %v", ErrInvariant, j.st.Job.ID, e.nowAt)
	}
	if err := e.ledgerDo("start", j, e.now, func(l *ledger.Ledger) error { return l.Start(e.nowAt, j.id) }); err != nil {
		return err
	}
	j.st.Holding = true
	if err := e.setHeld(j.st.Job.GPUs); err != nil {
		return err
	}
	j.phase = phRunning
	at := e.nowAt
	if e.slow < 1 {
		// The rate of this holding stretch, from where the job was placed.
		r := 1.0
		if e.cluster.Beyond(j.st.Placement) > 0 {
			r = e.slow
		}
		if err := j.prog.SetRate(r); err != nil {
			return e.modelErr(j, err)
		}
	}
	if j.st.Ran {
		cold, err := j.prog.Restore(at, e.ov)
		if err != nil {
			return e.modelErr(j, err)
		}
		e.res.Stats.ColdStarts++
		e.res.Stats.OverheadGPUSeconds += cold.Seconds() * float64(j.st.Job.GPUs)
	} else {
		if err := j.prog.Start(at); err != nil {
			return e.modelErr(j, err)
		}
		j.st.Ran = true
	}
	j.st.LastStart = at
	j.doneD = e.completesAt(j, at)
	e.q.push(event{at: j.doneD, kind: evComplete, j: j.idx, gen: j.gen})
	if e.cfg.Exhaustive && !j.st.LeaseEnd.IsZero() {
		e.q.push(event{at: j.st.LeaseEnd.Sub(e.start), kind: evLeaseEnd, j: j.idx, gen: j.leaseGen})
	} else if !e.cfg.Exhaustive && j.leaseSet {
		e.q.push(event{at: j.leaseEndD, kind: evLeaseEnd, j: j.idx, gen: j.leaseGen})
	}
	return nil
}

// completesAt is when the running job j completes, from its progress model
// at now (at is now as a time).
func (e *engine) completesAt(j *job, at time.Time) time.Duration {
	left, _ := j.prog.TimeLeft(at)
	return e.now + left
}

// modelErr reports a transition the job's progress model refused: the
// engine asked for an impossible one.
func (e *engine) modelErr(j *job, err error) error {
	if errors.Is(err, lease.ErrInvalidValue) {
		// The engine asks only for transitions the model allows: a value
		// out of range is a time the model cannot count.
		return fmt.Errorf("%w: job %s (line %d) at %v: %w", ErrHorizon, j.st.Job.ID, j.st.Job.Line, e.nowAt, err)
	}
	return fmt.Errorf("%w: progress of job %s at %v: %w", ErrInvariant, j.st.Job.ID, e.nowAt, err)
}

// leaveCluster frees a running job's GPUs in the cluster and takes it out
// of the running set (it finishes or is suspended).
func (e *engine) leaveCluster(j *job) error {
	if _, err := e.cluster.Release(j.st.Job.ID); err != nil {
		return fmt.Errorf("%w: releasing job %s: %w", ErrInvariant, j.st.Job.ID, err)
	}
	e.running.remove(j)
	return nil
}

// complete finishes a job that has run its trace duration.
func (e *engine) complete(j *job) error {
	t := e.now
	if err := e.leaveCluster(j); err != nil {
		return err
	}
	fs := finalState(j.st.Job.FinalState())
	at := e.at(t)
	if err := j.prog.Finish(at, lease.Completed); err != nil {
		return e.modelErr(j, err)
	}
	if err := e.ledgerDo("finish", j, t, func(l *ledger.Ledger) error { return l.Finish(at, j.id, fs) }); err != nil {
		return err
	}
	j.st.Holding = false
	if err := e.setHeld(-j.st.Job.GPUs); err != nil {
		return err
	}
	j.st.Attained, j.st.Remaining = j.st.Job.Duration, 0
	m := e.metrics
	sub := j.st.Job.Submit
	first, _ := j.prog.Started()
	acct, err := m.JobAccount(j.id, sub, at)
	if err != nil {
		return fmt.Errorf("simulate: job %s account: %w", j.st.Job.ID, err)
	}
	// ρ_job over its lifetime is all the results read of a finished job's
	// accounts, and no policy reads them later: the books forget the job,
	// so they hold the active jobs only (tenant accounts do not change).
	if err := e.ledgerDo("forget", j, t, func(l *ledger.Ledger) error { return l.Forget(j.id) }); err != nil {
		return err
	}
	use := j.prog.Usage(at)
	rec := metrics.JobRecord{
		ID:          j.st.Job.ID,
		Tenant:      j.st.Job.Tenant,
		GPUs:        j.st.Job.GPUs,
		Submit:      sub,
		FirstStart:  first,
		End:         at,
		Run:         j.st.Job.Duration,
		Held:        use.Held,
		Checkpoint:  use.Checkpoint,
		ColdStart:   use.ColdStart,
		Lost:        use.Lost,
		Spread:      use.Spread,
		Rho:         acct.Rho,
		Preemptions: j.st.Preemptions,
		State:       j.st.Job.FinalState(),
	}
	if use.Spread > 0 {
		gs := use.Spread.Seconds() * float64(j.st.Job.GPUs)
		e.res.Stats.SpreadGPUSeconds += gs
		e.res.Stats.OverheadGPUSeconds += gs
	}
	e.res.Run.Jobs = append(roomFor(e.res.Run.Jobs, 1), rec)
	delete(e.jobs, j.st.Job.ID)
	e.slab[j.idx] = nil
	j.phase = phPending
	j.gen++
	e.drop(j, slotRun)
	e.drop(j, slotLease)
	e.drop(j, slotRelease)
	e.done++
	e.stallTicks = 0
	if e.cfg.Progress != nil && e.done%256 == 0 {
		e.cfg.Progress(e.done, e.at(t))
	}
	e.schedTick(t)
	return nil
}

// finalState maps a trace state to the ledger's final states: COMPLETED (or
// PASS) is Completed, CANCELLED or KILLED is Cancelled, anything else
// (FAILED, NODE_FAIL, TIMEOUT, ...) is Failed.
func finalState(s string) ledger.FinalState {
	u := strings.ToUpper(s)
	switch {
	case u == "COMPLETED" || u == "PASS" || u == "":
		return ledger.Completed
	case strings.HasPrefix(u, "CANCEL") || strings.HasPrefix(u, "KILL"):
		return ledger.Cancelled
	}
	return ledger.Failed
}

// finish checks the end state and fills the result.
func (e *engine) finish() error {
	if err := e.advance(e.now); err != nil {
		return err
	}
	if e.held != 0 || len(e.jobs) != 0 || len(e.running.states) != 0 || len(e.pending.states) != 0 {
		return fmt.Errorf("%w: at the end %d GPUs held, %d jobs active", ErrInvariant, e.held, len(e.jobs))
	}
	if err := e.check(); err != nil {
		return err
	}
	// Keep whole intervals that begin by the last submission.
	ts := e.res.Run.Tenants[:0]
	last := e.at(e.lastSub)
	for _, ti := range e.res.Run.Tenants {
		if !ti.From.After(last) {
			ts = append(ts, ti)
		}
	}
	e.res.Run.Tenants = ts
	e.res.Run.End = e.nowAt
	if e.now > 0 {
		m := e.metrics
		e.res.Run.TenantTotals = make(map[string]ledger.Account, len(e.tenants))
		for _, t := range e.tenants {
			a, err := m.TenantAccount(ledger.TenantID(t), e.start, e.nowAt)
			if err != nil {
				return fmt.Errorf("simulate: tenant %s account: %w", t, err)
			}
			e.res.Run.TenantTotals[t] = a
		}
	}
	for _, x := range e.res.Excluded {
		if e.res.Run.Excluded == nil {
			e.res.Run.Excluded = map[string]int{}
		}
		e.res.Run.Excluded[x.Reason]++
	}
	e.res.Run.Policy = e.pol.Name()
	e.res.Run.BothModes = len(e.cfg.Intervals) > 0
	e.res.Run.Quotas = maps.Clone(e.quotas)
	e.res.Stats.Jobs = e.done
	e.res.Stats.End = e.nowAt
	if e.cfg.Progress != nil {
		e.cfg.Progress(e.done, e.nowAt)
	}
	return nil
}

// check runs the expensive invariant checks of the ledgers and the cluster.
func (e *engine) check() error {
	for _, l := range e.books {
		if err := l.Check(); err != nil {
			return fmt.Errorf("%w: ledger at %v: %w", ErrInvariant, e.nowAt, err)
		}
	}
	if err := e.cluster.Check(); err != nil {
		return fmt.Errorf("%w: cluster at %v: %w", ErrInvariant, e.nowAt, err)
	}
	for _, c := range []struct {
		set  *runSet
		name string
	}{{&e.running, "running"}, {&e.pending, "pending"}} {
		if !slices.IsSortedFunc(c.set.states, CompareJobs) {
			return fmt.Errorf("%w: the %s set is out of order", ErrInvariant, c.name)
		}
	}
	var used int
	for _, s := range e.running.states {
		if s.eng == nil || &s.eng.st != s || e.jobs[s.Job.ID] != s.eng {
			return fmt.Errorf("%w: running job %s does not lead to its record", ErrInvariant, s.Job.ID)
		}
		if j := s.eng; j.leaseSet == s.LeaseEnd.IsZero() || j.leaseSet && !e.at(j.leaseEndD).Equal(s.LeaseEnd) {
			return fmt.Errorf("%w: running job %s has lease end %v, its record says %v (%v)", ErrInvariant, s.Job.ID, s.LeaseEnd, e.at(j.leaseEndD), j.leaseSet)
		}
		if j := s.eng; j.phase == phRunning {
			// Its completion is queued, at its time or, postponed by
			// renewals, before it (settle).
			ev, ok := e.q.get(j.idx, slotRun)
			if done := e.completesAt(j, e.nowAt); !ok || ev.kind != evComplete || j.doneD != done || ev.at > done || e.cfg.Exhaustive && ev.at != done {
				return fmt.Errorf("%w: running job %s completes at %v, its record says %v, its queued event %+v (%v)", ErrInvariant, s.Job.ID, done, j.doneD, ev, ok)
			}
		}
		used += s.Placement.GPUs()
		if s.Placement.GPUs() != s.Job.GPUs {
			return fmt.Errorf("%w: job %s holds %d GPUs, its gang is %d", ErrInvariant, s.Job.ID, s.Placement.GPUs(), s.Job.GPUs)
		}
	}
	if free := e.cluster.Free(); used+free != e.capacity {
		return fmt.Errorf("%w: running jobs hold %d GPUs and %d are free, of %d", ErrInvariant, used, free, e.capacity)
	}
	for _, s := range e.pending.states {
		if s.eng == nil || &s.eng.st != s || e.jobs[s.Job.ID] != s.eng || s.Status != Pending {
			return fmt.Errorf("%w: pending job %s does not lead to its record", ErrInvariant, s.Job.ID)
		}
	}
	return nil
}
