package lease

import (
	"fmt"
	"math"
	"time"
)

// Progress is one job's useful work and overhead in virtual time: the model
// behind [Sim], kept as a small value so that a simulator can hold one per
// job in its own records instead of looking jobs up in a map.
//
// While it holds GPUs a job either pauses (a cold start after a restore, then
// any renewal checkpoint) or makes progress at its rate until its work is
// done: one second of work per second held, or less for a job spread over
// more nodes than it needs ([Progress.SetRate]). A checkpoint signal
// ([Progress.Signal]) stops progress;
// [Progress.Release] ends the flush Checkpoint after the signal, losing the
// partial iteration in flight, or — if that is past the deadline — at the
// deadline, losing everything since the last snapshot that reached the disk.
// The overheads come from a [SimConfig] passed to each call that needs them.
//
// Every held moment is exactly one of progress, cold start, checkpoint,
// work later lost or the shortfall of a rate below one (Usage.Spread), so
// [Progress.Usage] always satisfies [Usage.Check] with
// Held equal to the wall time the job held GPUs (counted to the end of its
// work at the latest: a job whose work is done holds nothing more).
//
// The life cycle is that of the [Table]: [Pending] ─Start→ [Running]
// ─Signal→ [Checkpointing] ─Release→ [Suspended] ─Restore→ [Restoring]
// ─(cold start)→ [Running]; Renew keeps a running job running; Abort
// suspends a running job at once, losing its lease's work; Finish ends it. An event not allowed from the current state, or earlier than the
// previous event, returns an *[Error] matching [ErrInvalidTransition] or
// [ErrTimeBackwards] and leaves the value unchanged. Every method is O(1)
// and allocates nothing on success. Times are read as Unix nanoseconds, so
// they must lie between the years 1678 and 2262; the work, each overhead,
// the time from the job's first start to any event and the renewal pauses
// piled up ahead of an event are each at most [MaxSpan] ([ErrInvalidValue],
// or [ErrConfig] for an overhead, otherwise), so that no sum of them can
// overflow. The zero Progress is a pending job without work.
type Progress struct {
	loc     *time.Location // of the first Start or Restore, for the times returned
	epochNs int64          // that event in Unix nanoseconds; the offsets below count from it
	work    time.Duration

	// base is the retained progress when progress (re)starts at runFrom;
	// while Checkpointing, the progress at the signal.
	base    time.Duration
	durable time.Duration // progress in the last snapshot on disk

	// Offsets from the epoch.
	last      time.Duration // the latest event (a release counts at its time)
	pauseFrom time.Duration // the current pause began (a cold start, then renewal flushes)
	coldTo    time.Duration // its cold start ends
	runFrom   time.Duration // progress accrues from here; while Checkpointing, the signal

	// Settled overhead, of closed pauses and flushes and of holding
	// stretches at a rate below one. Held time is progress plus overhead:
	// every held moment is one of them.
	ckpt, cold, lost, spread time.Duration

	// The current holding stretch, from its Start or Restore: the progress
	// it began with (from), the running time it needs to finish the work
	// at its rate (need) and the running time it had before runFrom (ran).
	// Renewals only move runFrom and ran, whole nanoseconds, so a renewal
	// moves the completion by exactly its pause at any rate.
	from, need, ran time.Duration
	// leased is the progress when the current lease began (the last
	// Start, Restore or Renew): where [Progress.Abort] resumes from.
	leased time.Duration

	// rate is the work done per running second, in (0, 1); 0 means 1, so
	// that the zero Progress runs at full speed and the arithmetic at full
	// speed stays in whole nanoseconds.
	rate float64
	// next is the rate of the next holding stretch (SetRate); 0 means 1.
	next float64

	state uint8 // a State; Running also covers the cold start (see State)
}

// MaxSpan bounds every duration a [Progress] or a [Table] adds up: its work,
// an overhead, the time from its first start (a Table: its submission) to
// an event. Sums of a few such spans stay
// far inside the ±292 years an int64 of nanoseconds holds, so the model
// needs no overflow checks on its hot path; no real job comes near it.
const MaxSpan = 50 * 365 * 24 * time.Hour

// NewProgress returns a pending job that needs work of useful running time.
// A negative work, or one above [MaxSpan], is [ErrInvalidValue]; zero work
// completes at its start.
func NewProgress(work time.Duration) (Progress, error) {
	if work < 0 || work > MaxSpan {
		return Progress{}, &Error{Op: "progress", Err: ErrInvalidValue, Detail: fmt.Sprintf("work %v must lie in [0, %v]", work, MaxSpan)}
	}
	return Progress{work: work, state: uint8(Pending)}, nil
}

// Work returns the useful running time the job needs in total.
func (p *Progress) Work() time.Duration { return p.work }

// Durable returns the progress held by the job's last snapshot on disk: what
// a forced release falls back to.
func (p *Progress) Durable() time.Duration { return p.durable }

// st is the state of the last event; the zero Progress is pending.
func (p *Progress) st() State {
	if p.state == 0 {
		return Pending
	}
	return State(p.state)
}

// The range of Unix seconds a Progress accepts, a second inside what Unix
// nanoseconds in an int64 can hold, so offsets never overflow.
const (
	minProgressSec = math.MinInt64/int64(time.Second) + 1
	maxProgressSec = math.MaxInt64/int64(time.Second) - 1
)

// off is t's offset from the epoch. UnixNano is much cheaper than Sub,
// which checks for overflow by adding the difference back.
func (p *Progress) off(t time.Time) time.Duration { return time.Duration(t.UnixNano() - p.epochNs) }

// time returns the time at offset o, in the epoch's location.
func (p *Progress) time(o time.Duration) time.Time {
	return time.Unix(0, p.epochNs+int64(o)).In(p.loc)
}

// done is the offset at which a running job's work is done.
func (p *Progress) done() time.Duration { return p.runFrom + p.need - p.ran }

// progressTo is a running job's retained progress at offset o.
func (p *Progress) progressTo(o time.Duration) time.Duration {
	if o <= p.runFrom {
		return p.base
	}
	r := p.ran + o - p.runFrom // running time of the stretch at o
	if r >= p.need {
		return p.work
	}
	if p.rate == 0 {
		return p.from + r
	}
	// Before the stretch's need, short of the work even where a float
	// product rounds up to it: the work is first done at done().
	return min(p.from+p.worked(r), p.work-1)
}

// worked is the work done in running time r at the stretch's rate, below
// one: truncated to the nanosecond, never more than r.
func (p *Progress) worked(r time.Duration) time.Duration {
	return min(r, time.Duration(float64(r)*p.rate))
}

// needAt is the running time that work w needs at rate (0 meaning 1),
// rounded up to the nanosecond; ok is false beyond MaxSpan.
func needAt(w time.Duration, rate float64) (need time.Duration, ok bool) {
	if rate == 0 {
		return w, true
	}
	n := math.Ceil(float64(w) / rate)
	if n > float64(MaxSpan) {
		return 0, false
	}
	return time.Duration(n), true
}

// stretchSpread is the spread overhead of the current holding stretch up
// to offset o (at most done()): its running time less the work it did.
func (p *Progress) stretchSpread(o time.Duration) time.Duration {
	if p.rate == 0 {
		return 0
	}
	r, got := p.ran, p.base
	if o > p.runFrom {
		r, got = r+o-p.runFrom, p.progressTo(o)
	}
	return r - (got - p.from)
}

// Rate returns the work the job does per second of running time in its
// current holding stretch (1 unless SetRate lowered it before the stretch
// began; for a job not holding GPUs, the rate of its next stretch). O(1).
func (p *Progress) Rate() float64 {
	r := p.rate
	if s := p.st(); s == Pending || s == Suspended || s.Terminal() {
		r = p.next
	}
	if r == 0 {
		return 1
	}
	return r
}

// SetRate sets the work done per second of running time from the job's
// next Start or Restore on, until it is set again: r in (0, 1], below one
// for a job placed so that it runs slower (spread over more nodes than it
// needs). A holding stretch keeps the rate it began with — a renewal keeps
// the job where it is — so SetRate is allowed only while the job holds no
// GPUs (pending or suspended): otherwise [ErrInvalidTransition]; an r
// outside (0, 1] or NaN is [ErrInvalidValue]. The running time a stretch
// needs, work left ÷ r, must not exceed [MaxSpan] (Start and Restore
// refuse it, ErrInvalidValue). O(1).
func (p *Progress) SetRate(r float64) error {
	if !(r > 0 && r <= 1) {
		return &Error{Op: "progress rate", Err: ErrInvalidValue, Detail: fmt.Sprintf("rate %v must lie in (0, 1]", r)}
	}
	if s := p.st(); s != Pending && s != Suspended {
		return &Error{Op: "progress rate", State: s, Err: ErrInvalidTransition, Detail: "the rate is fixed while the job holds GPUs"}
	}
	if r == 1 {
		r = 0
	}
	p.next = r
	return nil
}

// At returns the job's retained progress at t: work done that survives.
// While the job checkpoints it is the progress at the signal (part of which
// the release may still discard). O(1).
func (p *Progress) At(t time.Time) time.Duration {
	if State(p.state) == Running {
		return p.progressTo(p.off(t))
	}
	return p.base
}

// Started returns when the job first held GPUs (its Start, or a Restore
// of a pending job); ok is false while it is pending. O(1).
func (p *Progress) Started() (at time.Time, ok bool) {
	if p.st() == Pending || p.loc == nil {
		return time.Time{}, false
	}
	return p.time(0), true
}

// CompletesAt returns when a running job finishes its work if nothing
// interrupts it; ok is false for jobs that are not running (a job in its
// cold start is running for this purpose). O(1).
func (p *Progress) CompletesAt() (at time.Time, ok bool) {
	if State(p.state) != Running {
		return time.Time{}, false
	}
	return p.time(p.done()), true
}

// TimeLeft returns how long after at a running job finishes its work if
// nothing interrupts it (negative if that is before at): CompletesAt − at,
// computed without building a time. ok is false for jobs that are not
// running. O(1).
func (p *Progress) TimeLeft(at time.Time) (left time.Duration, ok bool) {
	if State(p.state) != Running {
		return 0, false
	}
	return p.done() - p.off(at), true
}

// State returns where the job stands at t: [Restoring] during a cold start,
// [Checkpointing] from the signal until the release, otherwise the state of
// its last event. O(1).
func (p *Progress) State(t time.Time) State {
	s := p.st()
	if s != Running && s != Suspended {
		return s
	}
	o := p.off(t)
	switch {
	case s == Running && o < p.coldTo:
		return Restoring
	case s == Suspended && o < p.last:
		return Checkpointing
	}
	return s
}

// Usage splits the wall time the job held GPUs up to t into retained
// progress, checkpoint, cold start and lost work. A t before the last event
// counts as the last event; a running job is counted to the end of its work
// at the latest. O(1).
func (p *Progress) Usage(t time.Time) Usage {
	u := Usage{Progress: p.base, Checkpoint: p.ckpt, ColdStart: p.cold, Lost: p.lost, Spread: p.spread}
	switch State(p.state) {
	case Checkpointing:
		u.Checkpoint += max(p.off(t), p.last) - p.runFrom
	case Running:
		o := min(max(p.off(t), p.last), p.done())
		u.Progress = p.progressTo(o)
		cold, ckpt := p.pauseTo(o)
		u.ColdStart += cold
		u.Checkpoint += ckpt
		u.Spread += p.stretchSpread(o)
	}
	u.Held = u.Progress + u.Overhead()
	return u
}

// pauseTo splits the current pause up to offset o into cold start and
// checkpoint.
func (p *Progress) pauseTo(o time.Duration) (cold, ckpt time.Duration) {
	return max(0, min(o, p.coldTo)-p.pauseFrom), max(0, min(o, p.runFrom)-p.coldTo)
}

// settlePause adds the current pause up to offset o to the settled usage.
func (p *Progress) settlePause(o time.Duration) {
	cold, ckpt := p.pauseTo(o)
	p.cold += cold
	p.ckpt += ckpt
}

func (p *Progress) fail(op string, at time.Time, err error, to State, format string, args ...any) error {
	return &Error{Op: op, At: at, State: p.State(at), To: to, Err: err, Detail: fmt.Sprintf(format, args...)}
}

// states is a set of states, bit s for State s.
type states uint16

const (
	fromPending     states = 1 << Pending
	fromRunning     states = 1 << Running
	fromRestorable  states = 1<<Suspended | 1<<Pending
	fromCheckpoint  states = 1 << Checkpointing
	fromNonTerminal states = 1<<Pending | 1<<Running | 1<<Checkpointing | 1<<Suspended
)

// check rejects an event at at in a state other than want, or before the
// previous event; it returns at's offset.
func (p *Progress) check(op string, at time.Time, to State, want states) (time.Duration, error) {
	s := p.st()
	if want&(1<<s) == 0 {
		return 0, p.fail(op, at, ErrInvalidTransition, to, "progress model")
	}
	sec := at.Unix()
	if sec < minProgressSec || sec > maxProgressSec {
		return 0, p.fail(op, at, ErrInvalidValue, to, "time outside the years 1678 to 2262, which Unix nanoseconds can hold")
	}
	if s == Pending {
		return 0, nil
	}
	// at.UnixNano(), from the seconds already read
	ns := sec*int64(time.Second) + int64(at.Nanosecond())
	o := time.Duration(ns - p.epochNs)
	if (ns >= p.epochNs) != (o >= 0) || o > MaxSpan {
		return 0, p.fail(op, at, ErrInvalidValue, to, "more than %v after the first start at %v", MaxSpan, p.stamp(0))
	}
	if o < p.last {
		return 0, p.fail(op, at, ErrTimeBackwards, 0, "previous event at %v", p.stamp(p.last))
	}
	return o, nil
}

// stamp formats the time at offset o for an error.
func (p *Progress) stamp(o time.Duration) string {
	return p.time(o).UTC().Format(time.RFC3339Nano)
}

// inSpan reports whether d lies in [0, MaxSpan].
func inSpan(d time.Duration) bool { return d >= 0 && d <= MaxSpan }

// inSpans reports whether cfg's overheads all lie in [0, MaxSpan]; small
// enough to be inlined, so that a renewal makes no call to check them.
func (c SimConfig) inSpans() bool {
	return inSpan(c.Checkpoint) && inSpan(c.ColdStart) && inSpan(c.Iteration)
}

// checkOverheads rejects a cfg with an overhead outside [0, MaxSpan]:
// ErrConfig.
func checkOverheads(op string, at time.Time, cfg SimConfig) error {
	if cfg.inSpans() {
		return nil
	}
	return overheadsErr(op, at, cfg)
}

// overheadsErr is checkOverheads' error.
func overheadsErr(op string, at time.Time, cfg SimConfig) error {
	return &Error{Op: op, At: at, Err: ErrConfig, Detail: fmt.Sprintf("an overhead outside [0, %v] in %+v", MaxSpan, cfg)}
}

// holdNeed is the running time the next holding stretch needs: the work
// left at the next rate. It fails beyond MaxSpan.
func (p *Progress) holdNeed(op string, at time.Time, to State) (time.Duration, error) {
	need, ok := needAt(p.work-p.base, p.next)
	if !ok {
		return 0, p.fail(op, at, ErrInvalidValue, to, "work left %v at rate %v needs more than %v", p.work-p.base, p.next, MaxSpan)
	}
	return need, nil
}

// hold begins a holding stretch at t whose progress starts after cold and
// needs need of running time.
func (p *Progress) hold(t time.Time, cold, need time.Duration) {
	if p.st() == Pending {
		p.loc, p.epochNs = t.Location(), t.UnixNano()
	}
	o := p.off(t)
	p.state = uint8(Running)
	p.last, p.pauseFrom = o, o
	p.coldTo = o + cold
	p.runFrom = p.coldTo
	p.from, p.need, p.ran, p.rate = p.base, need, 0, p.next
	p.leased = p.base
}

// Start runs a pending job from at: progress accrues at once. O(1).
func (p *Progress) Start(at time.Time) error {
	if _, err := p.check("progress start", at, Running, fromPending); err != nil {
		return err
	}
	need, err := p.holdNeed("progress start", at, Running)
	if err != nil {
		return err
	}
	p.hold(at, 0, need)
	return nil
}

// Restore gives a suspended (or pending) job its GPUs again at at: it loads
// its last snapshot for cfg.ColdStart, then runs. It returns the cold start.
// O(1).
func (p *Progress) Restore(at time.Time, cfg SimConfig) (time.Duration, error) {
	if _, err := p.check("progress restore", at, Restoring, fromRestorable); err != nil {
		return 0, err
	}
	if err := checkOverheads("progress restore", at, cfg); err != nil {
		return 0, err
	}
	need, err := p.holdNeed("progress restore", at, Restoring)
	if err != nil {
		return 0, err
	}
	p.hold(at, cfg.ColdStart, need)
	return cfg.ColdStart, nil
}

// Renew keeps a running job in place at at. Unless cfg disables it
// (NoRenewalCheckpoint, or a zero Checkpoint), the job pauses for a renewal
// checkpoint of cfg.Checkpoint — after any cold start or flush still under
// way — which makes its last complete iteration durable; the pause is
// returned and moves [Progress.CompletesAt] later by as much. A renewal after
// the job's work is done is [ErrInvalidTransition]. O(1).
func (p *Progress) Renew(at time.Time, cfg SimConfig) (time.Duration, error) {
	o, err := p.check("progress renew", at, Running, fromRunning)
	if err != nil {
		return 0, err
	}
	if !cfg.inSpans() {
		return 0, overheadsErr("progress renew", at, cfg)
	}
	if d := p.done(); o > d {
		return 0, p.fail("progress renew", at, ErrInvalidTransition, Running, "work done at %v", p.stamp(d))
	}
	if cfg.NoRenewalCheckpoint || cfg.Checkpoint == 0 {
		p.last, p.leased = o, p.progressTo(o)
		return 0, nil
	}
	if max(p.runFrom, o)+cfg.Checkpoint-o > MaxSpan {
		return 0, p.fail("progress renew", at, ErrInvalidValue, Running, "renewal pauses would pile up more than %v ahead", MaxSpan)
	}
	p.last = o
	cur := p.progressTo(o)
	if o >= p.runFrom { // a new pause; the previous one is over
		p.settlePause(o)
		p.ran += o - p.runFrom
		p.pauseFrom, p.coldTo, p.runFrom = o, o, o
	}
	p.base, p.leased = cur, cur
	p.runFrom += cfg.Checkpoint
	p.durable = cfg.wholeIterations(cur)
	return cfg.Checkpoint, nil
}

// Abort stops a running job at at without a checkpoint: it releases its
// GPUs at once and is suspended with the progress it had when its current
// lease began (its Start, Restore or last Renew), which becomes its
// snapshot; the work done since is lost and returned. This is how the
// authors' public simulator preempts a job early in its lease: no flush is
// charged, the lease's work is thrown away. It ignores SimConfig.Iteration:
// the lease's start is the restart point even mid-iteration, as in that
// simulator, which models none. An abort during the cold start or a
// renewal's checkpoint loses nothing. Aborting after the job's work is done is
// [ErrInvalidTransition]. O(1).
func (p *Progress) Abort(at time.Time) (lost time.Duration, err error) {
	o, err := p.check("progress abort", at, Suspended, fromRunning)
	if err != nil {
		return 0, err
	}
	if d := p.done(); o > d {
		return 0, p.fail("progress abort", at, ErrInvalidTransition, Suspended, "work done at %v", p.stamp(d))
	}
	p.settlePause(o)
	p.spread += p.stretchSpread(o)
	lost = p.progressTo(o) - p.leased
	p.lost += lost
	p.base, p.durable = p.leased, p.leased
	p.state, p.last, p.runFrom = uint8(Suspended), o, o
	return lost, nil
}

// Signal stops a running job's progress at at: it starts flushing its last
// complete snapshot and holds its GPUs until [Progress.Release]. A signal
// after the job's work is done is [ErrInvalidTransition]. O(1).
func (p *Progress) Signal(at time.Time) error {
	o, err := p.check("progress signal", at, Checkpointing, fromRunning)
	if err != nil {
		return err
	}
	if d := p.done(); o > d {
		return p.fail("progress signal", at, ErrInvalidTransition, Checkpointing, "work done at %v", p.stamp(d))
	}
	p.settlePause(o)
	p.spread += p.stretchSpread(o)
	p.base = p.progressTo(o)
	p.state, p.last, p.runFrom = uint8(Checkpointing), o, o
	return nil
}

// Release ends the flush begun at the signal: at signal+cfg.Checkpoint,
// losing the partial iteration in flight (nothing if cfg.Iteration is zero),
// or, if that is after deadline, at deadline with everything since the last
// durable snapshot lost (Forced). The job holds its GPUs until the reported
// time, then is suspended with its durable progress. A deadline before the
// signal is [ErrTimeBackwards]. O(1).
func (p *Progress) Release(deadline time.Time, cfg SimConfig) (ReleaseReport, error) {
	dl, err := p.check("progress release", deadline, Suspended, fromCheckpoint)
	if err != nil {
		return ReleaseReport{}, err
	}
	if err := checkOverheads("progress release", deadline, cfg); err != nil {
		return ReleaseReport{}, err
	}
	sig := p.runFrom
	var r ReleaseReport
	rel := sig + cfg.Checkpoint
	if rel <= dl {
		kept := cfg.wholeIterations(p.base)
		r = ReleaseReport{At: p.time(rel), Lost: p.base - kept}
		p.durable = kept
	} else {
		rel = dl
		r = ReleaseReport{At: deadline, Lost: p.base - p.durable, Forced: true}
	}
	p.ckpt += rel - sig
	p.lost += r.Lost
	p.base = p.durable
	p.state, p.last = uint8(Suspended), rel
	return r, nil
}

// Finish ends the job at at in the terminal state final ([Completed],
// [Failed] or [Cancelled]); a job that holds GPUs stops holding them then.
// Finishing a running job after its work is done is [ErrInvalidValue]: it
// completes at [Progress.CompletesAt]. O(1).
func (p *Progress) Finish(at time.Time, final State) error {
	if !final.Terminal() {
		return p.fail("progress finish", at, ErrInvalidValue, final, "final state must be terminal")
	}
	o, err := p.check("progress finish", at, final, fromNonTerminal)
	if err != nil {
		return err
	}
	switch p.st() {
	case Running:
		if d := p.done(); o > d {
			return p.fail("progress finish", at, ErrInvalidValue, final, "work done at %v", p.stamp(d))
		}
		p.settlePause(o)
		p.spread += p.stretchSpread(o)
		p.base = p.progressTo(o)
	case Checkpointing:
		p.ckpt += o - p.runFrom
	}
	if p.st() != Pending {
		p.last = o
	}
	p.state = uint8(final)
	return nil
}

// wholeIterations is the part of progress p held by whole iterations: what a
// snapshot stores.
func (c SimConfig) wholeIterations(p time.Duration) time.Duration {
	if c.Iteration <= 0 {
		return p
	}
	return p - p%c.Iteration
}
