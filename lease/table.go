package lease

import (
	"cmp"
	"fmt"
	"iter"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/google/btree"
)

// Billing receives the moments a job starts and stops holding GPUs, so the
// accounts bill exactly the time GPUs are held: from Start (or Restore,
// whose cold start is billed) to Release (or Finish). *ledger.Ledger
// satisfies it; so does any simulator bookkeeping with the same two methods.
//
// The table calls Start/Stop inside the transition; if the call fails the
// transition is rejected and the table is unchanged. Calls for one job come
// in non-decreasing time order; across jobs the order is the order of the
// table's events. The [Coordinator] makes a boundary's calls in time order:
// Stops at the release times (between the boundary time and the deadline),
// then Starts at Outcome.StartAt. A ledger that requires globally
// non-decreasing times therefore needs events of other jobs that fall inside
// [at, StartAt) — say a renewed job completing while the others flush — to
// be recorded after Boundary returns, through a billing adapter that orders
// them, or with a grace period shorter than the time to the next event.
type Billing interface {
	Start(at time.Time, job ledger.JobID) error
	Stop(at time.Time, job ledger.JobID) error
}

// Config configures a [Table].
type Config struct {
	// Lease is the lease length L: a job started or restored at t holds a
	// lease until t+L, and renewal at t' extends it to t'+L. The paper uses
	// 900 s. Must be > 0.
	Lease time.Duration
	// MinRuntime, if > 0, guards against preemption thrash: a running job is
	// not checkpointed before it has run this long since its last start or
	// the end of its last cold start (renewals do not reset the clock).
	// Checkpoint of a guarded job fails with ErrGuarded; the [Coordinator]
	// renews such a job instead, with a reason. Zero disables the guard.
	MinRuntime time.Duration
	// Billing, if non-nil, is told when GPUs start and stop being held.
	Billing Billing
}

// Usage splits the wall time a job held GPUs into useful progress and
// overhead. Invariant: Progress + Overhead() == Held, exactly.
type Usage struct {
	// Held is the wall time the job held GPUs (running, checkpointing,
	// restoring): what the ledger bills, divided by the job's GPUs.
	Held time.Duration
	// Progress is running time whose work survived: it was not discarded by a
	// preemption and not spent flushing a renewal checkpoint.
	Progress time.Duration
	// Checkpoint is time spent checkpointing while holding GPUs: after a
	// checkpoint signal until the release, plus renewal flushes.
	Checkpoint time.Duration
	// ColdStart is time spent restoring from a snapshot while holding GPUs.
	ColdStart time.Duration
	// Lost is running time whose work was discarded at a preemption: work
	// since the last complete snapshot that reached the disk.
	Lost time.Duration
	// Spread is running time that did no work because the job ran at a
	// rate below one ([Progress.SetRate]: spread over more nodes than it
	// needs): running time less the work done in it. A Table's jobs
	// always run at full rate and have none.
	Spread time.Duration
}

// Overhead is the held time that produced no progress:
// Checkpoint + ColdStart + Lost + Spread, saturating as [Usage.Add] does.
func (u Usage) Overhead() time.Duration {
	return satAdd(satAdd(satAdd(u.Checkpoint, u.ColdStart), u.Lost), u.Spread)
}

// Add returns the field-wise sum of u and v. A field whose sum lies past
// the ±292 years a Duration holds saturates at ±math.MaxInt64 ns instead
// of wrapping round to a wrong sign: one job's usage never comes near
// (a [Table] bounds it by [MaxSpan]), but the total of a long simulation
// of many jobs may, and there a saturated field (the true sum lies beyond
// it) is an answer a caller can recognise ([Usage.Saturated]), where a
// wrapped one would be a plausible lie.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		Held:       satAdd(u.Held, v.Held),
		Progress:   satAdd(u.Progress, v.Progress),
		Checkpoint: satAdd(u.Checkpoint, v.Checkpoint),
		ColdStart:  satAdd(u.ColdStart, v.ColdStart),
		Lost:       satAdd(u.Lost, v.Lost),
		Spread:     satAdd(u.Spread, v.Spread),
	}
}

// satAdd is a + b, saturated at the ends of the Duration range.
func satAdd(a, b time.Duration) time.Duration {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// Saturated reports whether a field of u is at the end of the Duration
// range: a sum by [Usage.Add] that did not fit, whose parts no longer add
// up exactly.
func (u Usage) Saturated() bool {
	for _, d := range [...]time.Duration{u.Held, u.Progress, u.Checkpoint, u.ColdStart, u.Lost, u.Spread} {
		if d == math.MaxInt64 || d == math.MinInt64 {
			return true
		}
	}
	return false
}

func (u Usage) negative() bool {
	return u.Held < 0 || u.Progress < 0 || u.Checkpoint < 0 || u.ColdStart < 0 || u.Lost < 0 || u.Spread < 0
}

// Check verifies Progress + Overhead == Held and that no field is negative
// or saturated ([Usage.Saturated]).
func (u Usage) Check() error {
	if u.negative() {
		return fmt.Errorf("lease: negative usage %+v", u)
	}
	if u.Saturated() {
		return fmt.Errorf("lease: usage %+v saturated: a sum past the 292 years a Duration holds", u)
	}
	if u.Progress+u.Overhead() != u.Held {
		return fmt.Errorf("lease: usage %+v: progress %v + overhead %v != held %v",
			u, u.Progress, u.Overhead(), u.Held)
	}
	return nil
}

// Info is a read-only view of one job.
type Info struct {
	ID    ledger.JobID
	State State
	// Since is the time of the job's last event (or the query time, for
	// [Table.InfoAt]); its Usage is accrued up to Since.
	Since time.Time
	// Submitted is when the job entered the table.
	Submitted time.Time
	// LeaseStart and LeaseEnd bound the current lease while the job holds
	// GPUs (zero otherwise). A lease starts when GPUs are granted: at Start,
	// at Restore (the cold start consumes lease time), and at each Renew.
	LeaseStart, LeaseEnd time.Time
	// RunningSince is the last start or end of cold start; the minimum
	// runtime guard counts from it. Zero unless running or checkpointing.
	RunningSince time.Time
	// ReadyAt is when the cold start of a restoring job ends.
	ReadyAt time.Time
	// Usage is the job's held time split into progress and overhead.
	Usage Usage
	// Renewals, Preemptions (checkpoint signals) and Restores count events.
	Renewals, Preemptions, Restores int
}

type job struct {
	id           ledger.JobID
	state        State
	last         time.Time // time of the last event; usage accrued to here
	submitted    time.Time
	leaseStart   time.Time
	leaseEnd     time.Time
	runningSince time.Time
	readyAt      time.Time
	pause        time.Duration // remaining renewal flush: held, no progress
	atRisk       time.Duration // progress since the last start or end of cold start: the most a preemption may lose
	usage        Usage
	renewals     int
	preemptions  int
	restores     int
}

// advance accrues held time up to at (at >= j.last) and performs the lazy
// restoring → running transition when the cold start is over.
func (j *job) advance(at time.Time) {
	if j.state == Restoring {
		end := minTime(at, j.readyAt)
		d := end.Sub(j.last)
		j.usage.Held += d
		j.usage.ColdStart += d
		j.last = end
		if !at.Before(j.readyAt) {
			j.state = Running
			j.runningSince = j.readyAt
			j.atRisk = 0
		}
	}
	d := at.Sub(j.last)
	j.last = at
	switch j.state {
	case Running:
		j.usage.Held += d
		p := min(d, j.pause)
		j.pause -= p
		j.usage.Checkpoint += p
		j.usage.Progress += d - p
		j.atRisk += d - p
	case Checkpointing:
		j.usage.Held += d
		j.usage.Checkpoint += d
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func (j *job) info() Info {
	return Info{
		ID: j.id, State: j.state, Since: j.last, Submitted: j.submitted,
		LeaseStart: j.leaseStart, LeaseEnd: j.leaseEnd,
		RunningSince: j.runningSince, ReadyAt: j.readyAt,
		Usage: j.usage, Renewals: j.renewals, Preemptions: j.preemptions, Restores: j.restores,
	}
}

// Table is the lease state machine of a set of jobs. Every event takes its
// time explicitly; times are checked per job (an event may not be earlier
// than the same job's previous event; equal times are applied in call
// order). A rejected event returns an *[Error] and leaves the table exactly
// as it was. A Table is not safe for concurrent use.
//
// Events cost O(log n) (a map lookup and, when a lease starts or ends, a
// B-tree update of the lease index); Expired costs O(log n + k).
type Table struct {
	cfg     Config
	jobs    map[ledger.JobID]*job
	leases  *btree.BTreeG[leaseKey] // running and restoring jobs by lease end
	retired Usage                   // usage of forgotten jobs
}

// NewTable returns an empty table. It fails with ErrConfig unless Lease
// lies in (0, MaxSpan] and MinRuntime in [0, MaxSpan].
//
// Times, as in [Progress], are read as Unix nanoseconds: every event time
// and every lease end must lie between the years 1678 and 2262, each flush
// and cold start is at most [MaxSpan], and so is the time from a job's
// submission to any of its events (or an [Table.InfoAt]), so that no
// lease end is clamped and no field of a job's [Usage] — at most its time
// in the table — can exceed MaxSpan, let alone overflow. Anything else is
// [ErrInvalidValue] and leaves the table unchanged. A job must therefore
// end within MaxSpan (50 years) of its submission. Sums over many jobs
// ([Table.Totals]) saturate instead, as [Usage.Add] documents.
func NewTable(cfg Config) (*Table, error) {
	if cfg.Lease <= 0 || cfg.Lease > MaxSpan {
		return nil, &Error{Op: "new table", Err: ErrConfig, Detail: fmt.Sprintf("lease %v must lie in (0, %v]", cfg.Lease, MaxSpan)}
	}
	if cfg.MinRuntime < 0 || cfg.MinRuntime > MaxSpan {
		return nil, &Error{Op: "new table", Err: ErrConfig, Detail: fmt.Sprintf("minimum runtime %v must lie in [0, %v]", cfg.MinRuntime, MaxSpan)}
	}
	return &Table{cfg: cfg, jobs: make(map[ledger.JobID]*job), leases: btree.NewG(16, leaseKey.less)}, nil
}

// leaseKey orders leases by end (Unix nanoseconds, cheap to compare), then
// job ID.
type leaseKey struct {
	end int64
	id  ledger.JobID
}

func (a leaseKey) less(b leaseKey) bool {
	return cmp.Or(cmp.Compare(a.end, b.end), cmp.Compare(a.id, b.id)) < 0
}

func keyOf(j *job) leaseKey { return leaseKey{j.leaseEnd.UnixNano(), j.id} }

// indexed reports whether a job in state s is in the lease index: running
// or restoring (a restoring job turns running lazily, without an event).
func indexed(s State) bool { return s == Running || s == Restoring }

// put commits the new record j of the job stored at p and keeps the lease
// index in step. It is the only place a successful event writes.
func (t *Table) put(p *job, j job) {
	if indexed(p.state) {
		t.leases.Delete(keyOf(p))
	}
	if indexed(j.state) {
		t.leases.ReplaceOrInsert(keyOf(&j))
	}
	*p = j
}

// Config returns the table's configuration.
func (t *Table) Config() Config { return t.cfg }

// Len is the number of jobs in the table, terminal ones included until
// they are forgotten.
func (t *Table) Len() int { return len(t.jobs) }

// Submit adds a pending job at time at.
func (t *Table) Submit(at time.Time, id ledger.JobID) error {
	if id == "" {
		return &Error{Op: "submit", At: at, Err: ErrInvalidValue, Detail: "empty job ID"}
	}
	if !countable(at) {
		return &Error{Op: "submit", Job: id, At: at, Err: ErrInvalidValue, Detail: outOfYears}
	}
	if j, ok := t.jobs[id]; ok {
		return &Error{Op: "submit", Job: id, State: j.state, At: at, Err: ErrDuplicateJob}
	}
	t.jobs[id] = &job{id: id, state: Pending, last: at, submitted: at}
	return nil
}

// begin loads a copy of the job advanced to at, checking the job exists,
// time order and that its state is one of from.
// The returned copy is written back by put only when the whole event
// succeeded, so a rejected event leaves the table unchanged.
func (t *Table) begin(op string, at time.Time, id ledger.JobID, to State, from ...State) (*job, job, error) {
	p, ok := t.jobs[id]
	if !ok {
		return nil, job{}, &Error{Op: op, Job: id, At: at, To: to, Err: ErrUnknownJob}
	}
	j := *p
	if !countable(at) || (leases(to) && !countable(at.Add(t.cfg.Lease))) {
		return nil, job{}, &Error{Op: op, Job: id, State: j.state, To: to, At: at, Err: ErrInvalidValue, Detail: outOfYears}
	}
	if at.Before(j.last) {
		return nil, job{}, &Error{Op: op, Job: id, State: j.state, To: to, At: at, Err: ErrTimeBackwards,
			Detail: "previous event at " + j.last.UTC().Format(time.RFC3339Nano)}
	}
	if !j.spans(at) {
		return nil, job{}, &Error{Op: op, Job: id, State: j.state, To: to, At: at, Err: ErrInvalidValue, Detail: j.pastSpan()}
	}
	j.advance(at)
	if !slices.Contains(from, j.state) {
		return nil, job{}, &Error{Op: op, Job: id, State: j.state, To: to, At: at, Err: ErrInvalidTransition}
	}
	return p, j, nil
}

// countable reports whether t lies in the years Unix nanoseconds hold.
func countable(t time.Time) bool {
	s := t.Unix()
	return s >= minProgressSec && s <= maxProgressSec
}

// spans reports whether at, not before the job's submission, lies within
// MaxSpan of it: the longest a job may live in the table, so that the held
// time advance adds up never passes MaxSpan.
func (j *job) spans(at time.Time) bool { return at.Sub(j.submitted) <= MaxSpan }

func (j *job) pastSpan() string {
	return fmt.Sprintf("more than %v after the job's submission at %s", MaxSpan, j.submitted.UTC().Format(time.RFC3339Nano))
}

const outOfYears = "time or lease end outside the years 1678 to 2262, which Unix nanoseconds can hold"

// leases reports whether an event into state s grants a lease from its time.
func leases(s State) bool { return s == Running || s == Restoring }

func (t *Table) bill(op string, j *job, at time.Time, to State, start bool) error {
	if t.cfg.Billing == nil {
		return nil
	}
	var err error
	if start {
		err = t.cfg.Billing.Start(at, j.id)
	} else {
		err = t.cfg.Billing.Stop(at, j.id)
	}
	if err != nil {
		return &Error{Op: op, Job: j.id, State: j.state, To: to, At: at, Err: ErrEffect, Detail: "billing", Cause: err}
	}
	return nil
}

// Start grants a pending job its GPUs at at: pending → running, with a lease
// until at+Lease. A first start pays no cold start. Billing starts at at.
func (t *Table) Start(at time.Time, id ledger.JobID) error {
	p, j, err := t.begin("start", at, id, Running, Pending)
	if err != nil {
		return err
	}
	if err := t.bill("start", &j, at, Running, true); err != nil {
		return err
	}
	j.state = Running
	j.leaseStart, j.leaseEnd = at, at.Add(t.cfg.Lease)
	j.runningSince = at
	j.atRisk = 0
	t.put(p, j)
	return nil
}

// Renew extends the lease of a running job in place: running → running,
// new lease [at, at+Lease), same GPUs, no cold start, no billing change.
// flush is the time the job spends writing a renewal checkpoint (the paper
// checkpoints at every lease end in case renewal fails): the next flush of
// held time counts as Checkpoint overhead instead of Progress. Zero means no
// renewal checkpoint. Renewal is allowed at any time while running; the
// [Coordinator] renews at lease boundaries.
func (t *Table) Renew(at time.Time, id ledger.JobID, flush time.Duration) error {
	if flush < 0 || flush > MaxSpan {
		return t.valueErr("renew", at, id, Running, fmt.Sprintf("flush time %v outside [0, %v]", flush, MaxSpan))
	}
	p, j, err := t.begin("renew", at, id, Running, Running)
	if err != nil {
		return err
	}
	if j.pause > MaxSpan-flush {
		return t.valueErr("renew", at, id, Running, fmt.Sprintf("flush time %v piles the renewal pauses ahead past %v", flush, MaxSpan))
	}
	j.leaseStart, j.leaseEnd = at, at.Add(t.cfg.Lease)
	j.pause += flush
	j.renewals++
	t.put(p, j)
	return nil
}

func (t *Table) valueErr(op string, at time.Time, id ledger.JobID, to State, detail string) error {
	var st State
	if j, ok := t.jobs[id]; ok {
		st = j.state
	}
	return &Error{Op: op, Job: id, State: st, To: to, At: at, Err: ErrInvalidValue, Detail: detail}
}

// Guarded reports whether the running job id is still protected by the
// minimum-runtime guard at time at, and until when. A job that is not
// running (or unknown) is not guarded.
func (t *Table) Guarded(at time.Time, id ledger.JobID) (until time.Time, guarded bool) {
	p, ok := t.jobs[id]
	if !ok || t.cfg.MinRuntime <= 0 || at.Before(p.last) {
		return time.Time{}, false
	}
	j := *p
	j.advance(at)
	if j.state != Running {
		return time.Time{}, false
	}
	until = j.runningSince.Add(t.cfg.MinRuntime)
	return until, at.Before(until)
}

// Checkpoint sends a running job its checkpoint signal at at: running →
// checkpointing. It keeps (and is billed for) its GPUs until [Table.Release].
// A job under the minimum-runtime guard is rejected with ErrGuarded.
func (t *Table) Checkpoint(at time.Time, id ledger.JobID) error {
	p, j, err := t.begin("checkpoint", at, id, Checkpointing, Running)
	if err != nil {
		return err
	}
	if t.cfg.MinRuntime > 0 {
		ran := at.Sub(j.runningSince)
		if ran < t.cfg.MinRuntime {
			return &Error{Op: "checkpoint", Job: id, State: j.state, To: Checkpointing, At: at, Err: ErrGuarded,
				Detail: fmt.Sprintf("ran %v of the %v minimum since %s", ran, t.cfg.MinRuntime,
					j.runningSince.UTC().Format(time.RFC3339Nano))}
		}
	}
	j.state = Checkpointing
	j.pause = 0
	j.preemptions++
	t.put(p, j)
	return nil
}

// Release records that a checkpointing job gave its GPUs back at at:
// checkpointing → suspended; billing stops at at. lost is the running time
// whose work is discarded because it is newer than the last snapshot that
// reached the disk (a partial iteration after a clean flush; everything since
// the previous durable snapshot when the deadline forced the release). It
// must be between 0 and the work at risk: the progress made since the job's
// last start or end of cold start (a renewal checkpoint does not lower the
// bound, since a release forced by the deadline may fall back to a snapshot
// taken before it).
func (t *Table) Release(at time.Time, id ledger.JobID, lost time.Duration) error {
	p, j, err := t.begin("release", at, id, Suspended, Checkpointing)
	if err != nil {
		return err
	}
	if lost < 0 || lost > j.atRisk {
		return &Error{Op: "release", Job: id, State: j.state, To: Suspended, At: at, Err: ErrInvalidValue,
			Detail: fmt.Sprintf("lost work %v outside [0, %v at risk]", lost, j.atRisk)}
	}
	if err := t.bill("release", &j, at, Suspended, false); err != nil {
		return err
	}
	j.usage.Progress -= lost
	j.usage.Lost += lost
	j.atRisk = 0
	j.state = Suspended
	j.leaseStart, j.leaseEnd, j.runningSince = time.Time{}, time.Time{}, time.Time{}
	t.put(p, j)
	return nil
}

// Restore grants a suspended job GPUs again at at: suspended → restoring.
// It holds (and is billed for) its GPUs from at, pays coldStart loading its
// snapshot, and is running from at+coldStart without a further call. Its
// lease runs from at. coldStart must be >= 0.
func (t *Table) Restore(at time.Time, id ledger.JobID, coldStart time.Duration) error {
	if coldStart < 0 || coldStart > MaxSpan {
		return t.valueErr("restore", at, id, Restoring, fmt.Sprintf("cold start %v outside [0, %v]", coldStart, MaxSpan))
	}
	p, j, err := t.begin("restore", at, id, Restoring, Suspended)
	if err != nil {
		return err
	}
	if err := t.bill("restore", &j, at, Restoring, true); err != nil {
		return err
	}
	j.state = Restoring
	j.readyAt = at.Add(coldStart)
	j.leaseStart, j.leaseEnd = at, at.Add(t.cfg.Lease)
	j.restores++
	j.advance(at) // a zero cold start is running at once
	t.put(p, j)
	return nil
}

// Finish ends a job at at in the final state s (Completed, Failed or
// Cancelled). A job holding GPUs releases them at once: billing stops at at,
// not at its lease end. Completed is accepted from running and
// checkpointing (the last iteration may end during a checkpoint); Failed and
// Cancelled from every non-terminal state. Work done is kept as Progress.
func (t *Table) Finish(at time.Time, id ledger.JobID, s State) error {
	var from []State
	switch s {
	case Completed:
		from = []State{Running, Checkpointing}
	case Failed, Cancelled:
		from = []State{Pending, Running, Checkpointing, Suspended, Restoring}
	default:
		return t.valueErr("finish", at, id, s, fmt.Sprintf("final state %v is not completed, failed or cancelled", s))
	}
	p, j, err := t.begin("finish", at, id, s, from...)
	if err != nil {
		return err
	}
	if j.state.Holds() {
		if err := t.bill("finish", &j, at, s, false); err != nil {
			return err
		}
	}
	j.state = s
	j.pause, j.atRisk = 0, 0
	j.leaseStart, j.leaseEnd, j.runningSince, j.readyAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	t.put(p, j)
	return nil
}

// Info returns the job as of its last event.
func (t *Table) Info(id ledger.JobID) (Info, bool) {
	p, ok := t.jobs[id]
	if !ok {
		return Info{}, false
	}
	return p.info(), true
}

// InfoAt returns the job as it stands at at, with usage accrued to at and a
// finished cold start turned into running. It never mutates the table. at
// must not be before the job's last event (ErrTimeBackwards).
func (t *Table) InfoAt(at time.Time, id ledger.JobID) (Info, error) {
	p, ok := t.jobs[id]
	if !ok {
		return Info{}, &Error{Op: "info", Job: id, At: at, Err: ErrUnknownJob}
	}
	if at.Before(p.last) {
		return Info{}, &Error{Op: "info", Job: id, State: p.state, At: at, Err: ErrTimeBackwards}
	}
	if !countable(at) {
		return Info{}, &Error{Op: "info", Job: id, State: p.state, At: at, Err: ErrInvalidValue, Detail: outOfYears}
	}
	if !p.spans(at) {
		return Info{}, &Error{Op: "info", Job: id, State: p.state, At: at, Err: ErrInvalidValue, Detail: p.pastSpan()}
	}
	j := *p
	j.advance(at)
	return j.info(), nil
}

// Jobs yields the IDs of the table's jobs in ascending order. O(n log n).
func (t *Table) Jobs() iter.Seq[ledger.JobID] {
	return slices.Values(slices.Sorted(maps.Keys(t.jobs)))
}

// Expired returns the running jobs whose lease has ended at or before at,
// ordered by lease end, then ID: the candidates of a lease boundary. A job
// whose cold start ended before its lease did is included; one still
// restoring at at is not. O(log n + k) for k leases ended by at.
func (t *Table) Expired(at time.Time) []ledger.JobID {
	var ids []ledger.JobID
	// Every lease end is countable (see NewTable), so a time past the
	// countable years is past every lease end; UnixNano would overflow.
	limit := at.UnixNano()
	switch {
	case at.Unix() > maxProgressSec:
		limit = math.MaxInt64
	case at.Unix() < minProgressSec:
		limit = math.MinInt64
	}
	t.leases.Ascend(func(k leaseKey) bool {
		if k.end > limit {
			return false
		}
		if j := t.jobs[k.id]; j.state == Running || !at.Before(j.readyAt) {
			ids = append(ids, k.id)
		}
		return true
	})
	return ids
}

// NextExpiry returns the earliest lease end among running and restoring
// jobs, so a simulator can jump to the next boundary. O(log n).
func (t *Table) NextExpiry() (time.Time, bool) {
	k, ok := t.leases.Min()
	if !ok {
		return time.Time{}, false
	}
	return t.jobs[k.id].leaseEnd, true
}

// Totals returns the usage of all jobs (forgotten ones included), each
// accrued to at, or to its last event if that is later. A job is counted
// at most to its last possible event: the year 2262 or [MaxSpan] after its
// submission, whichever comes first. The sum saturates as [Usage.Add]
// does, so a total past 292 years reports [Usage.Saturated]. O(n).
func (t *Table) Totals(at time.Time) Usage {
	if last := time.Unix(maxProgressSec, 0); at.After(last) {
		at = last // no usage can be counted past the countable years
	}
	u := t.retired
	for _, p := range t.jobs {
		j := *p
		to := at
		if !j.spans(to) {
			to = j.submitted.Add(MaxSpan)
		}
		if !to.Before(j.last) {
			j.advance(to)
		}
		u = u.Add(j.usage)
	}
	return u
}

// Forget removes a terminal job from the table to bound memory in long
// simulations; its usage stays in [Table.Totals]. Forgetting a job that is
// not terminal is ErrInvalidTransition.
func (t *Table) Forget(id ledger.JobID) error {
	p, ok := t.jobs[id]
	if !ok {
		return &Error{Op: "forget", Job: id, Err: ErrUnknownJob}
	}
	if !p.state.Terminal() {
		return &Error{Op: "forget", Job: id, State: p.state, Err: ErrInvalidTransition, Detail: "only terminal jobs can be forgotten"}
	}
	t.retired = t.retired.Add(p.usage)
	delete(t.jobs, id)
	return nil
}

// Check verifies the table's invariants: every job in one valid state, usage
// consistent (Progress + Overhead == Held, nothing negative), leases present
// exactly while GPUs are held and L long unless renewed, work at risk never
// above progress, terminal jobs without leases. Tests call it after every
// step. O(n).
func (t *Table) Check() error {
	// The usage of forgotten jobs is a sum that may saturate (see Totals);
	// it is consistent unless it did, and never negative.
	if err := t.retired.Check(); err != nil && (!t.retired.Saturated() || t.retired.negative()) {
		return fmt.Errorf("retired: %w", err)
	}
	n := 0
	for id, j := range t.jobs {
		if indexed(j.state) {
			n++
			if !t.leases.Has(keyOf(j)) {
				return fmt.Errorf("lease: %v job %q with lease end %v missing from the lease index", j.state, id, j.leaseEnd)
			}
		}
		if id != j.id {
			return fmt.Errorf("lease: job %q stored under %q", j.id, id)
		}
		if !j.state.Valid() {
			return fmt.Errorf("lease: job %q in invalid state %v", id, j.state)
		}
		if err := j.usage.Check(); err != nil {
			return fmt.Errorf("job %q: %w", id, err)
		}
		if j.atRisk < 0 || j.atRisk > j.usage.Progress {
			return fmt.Errorf("lease: job %q: work at risk %v outside [0, progress %v]", id, j.atRisk, j.usage.Progress)
		}
		if j.last.Before(j.submitted) {
			return fmt.Errorf("lease: job %q: last event %v before submit %v", id, j.last, j.submitted)
		}
		if j.state.Holds() {
			if j.leaseEnd.Sub(j.leaseStart) != t.cfg.Lease {
				return fmt.Errorf("lease: job %q %v: lease [%v, %v) is not %v long", id, j.state, j.leaseStart, j.leaseEnd, t.cfg.Lease)
			}
		} else if !j.leaseStart.IsZero() || !j.leaseEnd.IsZero() || j.pause != 0 {
			return fmt.Errorf("lease: job %q %v holds no GPUs but has lease [%v, %v) or flush %v", id, j.state, j.leaseStart, j.leaseEnd, j.pause)
		}
		if j.state == Restoring && !j.last.Before(j.readyAt) {
			return fmt.Errorf("lease: job %q restoring at %v past its ready time %v", id, j.last, j.readyAt)
		}
		if j.state == Pending && j.usage != (Usage{}) {
			return fmt.Errorf("lease: pending job %q has usage %+v", id, j.usage)
		}
	}
	if n != t.leases.Len() {
		return fmt.Errorf("lease: lease index holds %d entries for %d running or restoring jobs", t.leases.Len(), n)
	}
	return nil
}

// JobID is ledger.JobID, re-exported so that callers of this package need
// not import ledger for the type alone.
type JobID = ledger.JobID
