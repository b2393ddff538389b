package lease

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// ReleaseReport is what a job's side of the world reports when its GPUs are
// free again after a checkpoint signal.
type ReleaseReport struct {
	// At is when the GPUs were released: at or after the signal, never after
	// the deadline.
	At time.Time
	// Lost is running time whose work is discarded: newer than the last
	// snapshot that reached the disk.
	Lost time.Duration
	// Forced reports that the deadline passed before the job finished its
	// flush: it was stopped (SIGKILL) and its last flushed snapshot stands.
	Forced bool
}

// Effects performs the side effects of a lease boundary. A real integration
// signals processes or pods; [Sim] computes the outcome in virtual time.
// Times are explicit: the coordinator passes the boundary time and the
// deadline, and the implementation reports when things happened.
type Effects interface {
	// Checkpoint sends the job its checkpoint signal at at (POSIX SIGTERM or
	// SIGUSR1 in the paper): flush the last complete snapshot and exit.
	Checkpoint(at time.Time, job ledger.JobID) error
	// WaitReleased blocks until the job has released its GPUs or the
	// deadline has passed; past the deadline the implementation stops the
	// job by force and reports Forced.
	WaitReleased(job ledger.JobID, deadline time.Time) (ReleaseReport, error)
	// Start launches a job for the first time on its GPUs at at.
	Start(at time.Time, job ledger.JobID) error
	// Restore relaunches a suspended job from its last flushed snapshot at at
	// and returns its cold start: the time until it runs again.
	Restore(at time.Time, job ledger.JobID) (coldStart time.Duration, err error)
}

// Renewer is implemented by Effects that charge a renewal checkpoint: the
// paper checkpoints at every lease end, in case renewal fails. Renew returns
// the time the renewed job spends flushing (held, no progress). Effects
// without Renew renew for free.
type Renewer interface {
	Renew(at time.Time, job ledger.JobID) (flush time.Duration, err error)
}

// Grant names a job and the GPUs it holds or is given. The coordinator does
// no placement; it uses the counts only when the minimum-runtime guard keeps
// a job the plan preempts: the plan's last starts are deferred until their
// GPUs cover the GPUs kept. With zero counts nothing would be deferred.
type Grant struct {
	Job  ledger.JobID
	GPUs ledger.GPUs
}

// Plan is the scheduler's decision for one lease boundary.
type Plan struct {
	// Renew lists running jobs whose lease is renewed in place.
	Renew []ledger.JobID
	// Preempt lists running jobs that are not renewed and must release
	// their GPUs, with the GPUs they hold.
	Preempt []Grant
	// Start lists pending jobs (fresh start) and suspended jobs (restore)
	// that get GPUs once every release has completed, in priority order.
	Start []Grant
}

// Action is what the coordinator did to a job.
type Action int

const (
	// Renewed: kept its GPUs under a new lease.
	Renewed Action = iota + 1
	// Preempted: checkpointed and released its GPUs.
	Preempted
	// Started: launched for the first time.
	Started
	// Restored: relaunched from its snapshot, paying a cold start.
	Restored
	// Deferred: selected, but not started in this boundary.
	Deferred
)

// String returns the action's name, as logs and reasons print it.
func (a Action) String() string {
	switch a {
	case Renewed:
		return "renewed"
	case Preempted:
		return "preempted"
	case Started:
		return "started"
	case Restored:
		return "restored"
	case Deferred:
		return "deferred"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// MarshalText encodes the action by name for JSON reports.
func (a Action) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// Reason says why, as data.
type Reason int

const (
	// ReasonSelected: the plan asked for this action.
	ReasonSelected Reason = iota + 1
	// ReasonGuarded: the plan asked to preempt the job, but it had not yet
	// run for the minimum runtime; it was renewed instead.
	ReasonGuarded
	// ReasonGPUsKept: a start was deferred because a guarded job kept GPUs
	// the plan expected to be freed.
	ReasonGPUsKept
)

// String returns the reason's name, as logs print it.
func (r Reason) String() string {
	switch r {
	case ReasonSelected:
		return "selected"
	case ReasonGuarded:
		return "guarded by minimum runtime"
	case ReasonGPUsKept:
		return "GPUs kept by a guarded job"
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// MarshalText encodes the reason by name for JSON reports.
func (r Reason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// Decision records one action of a boundary.
type Decision struct {
	Job    ledger.JobID
	Action Action
	Reason Reason
	// At is when the action took effect: the boundary time for renewals,
	// the release time for preemptions, the start time for starts.
	At time.Time
	// Lost and Forced describe a preemption's release.
	Lost   time.Duration
	Forced bool
	// Flush is a renewal's checkpoint time; ColdStart a restore's.
	Flush, ColdStart time.Duration
	// Detail is a human sentence ("ran 5m0s of the 10m0s minimum ...").
	Detail string
}

// Outcome reports a boundary.
type Outcome struct {
	// At is the boundary time: when renewals took effect and signals were sent.
	At time.Time
	// Decisions in execution order: renewals, preemptions (by release time,
	// then ID), then starts and restores in plan order, then deferrals.
	Decisions []Decision
	// StartAt is when new jobs started: the latest release, or the boundary
	// time if nothing was released. Never after the deadline.
	StartAt time.Time
	// Deadline is the boundary time plus the grace period.
	Deadline time.Time
}

// CoordinatorConfig configures a [Coordinator].
type CoordinatorConfig struct {
	// Grace is how long after the checkpoint signal a job may take to
	// release its GPUs. Past it the job is stopped by force: its last
	// flushed snapshot stands and the progress since is lost. Must lie in
	// [0, MaxSpan], like every duration the table counts.
	Grace time.Duration
}

// Coordinator runs lease boundaries on a [Table] through [Effects].
type Coordinator struct {
	table *Table
	fx    Effects
	cfg   CoordinatorConfig
}

// NewCoordinator returns a coordinator for t and fx. It fails with ErrConfig
// if t or fx is nil or Grace lies outside [0, MaxSpan].
func NewCoordinator(t *Table, fx Effects, cfg CoordinatorConfig) (*Coordinator, error) {
	if t == nil || fx == nil {
		return nil, &Error{Op: "new coordinator", Err: ErrConfig, Detail: "nil table or effects"}
	}
	if cfg.Grace < 0 || cfg.Grace > MaxSpan {
		return nil, &Error{Op: "new coordinator", Err: ErrConfig, Detail: fmt.Sprintf("grace %v must lie in [0, %v]", cfg.Grace, MaxSpan)}
	}
	return &Coordinator{table: t, fx: fx, cfg: cfg}, nil
}

// Table returns the coordinator's table.
func (c *Coordinator) Table() *Table { return c.table }

// validate checks a plan against the table at at without changing anything.
func (c *Coordinator) validate(at time.Time, p Plan) error {
	seen := make(map[ledger.JobID]bool, len(p.Renew)+len(p.Preempt)+len(p.Start))
	need := func(id ledger.JobID, to State, want ...State) error {
		if seen[id] {
			return &Error{Op: "boundary", Job: id, At: at, To: to, Err: ErrInvalidValue, Detail: "job listed twice in the plan"}
		}
		seen[id] = true
		in, err := c.table.InfoAt(at, id)
		if err != nil {
			e := err.(*Error)
			e.Op, e.To = "boundary", to
			return e
		}
		if !slices.Contains(want, in.State) {
			return &Error{Op: "boundary", Job: id, State: in.State, To: to, At: at, Err: ErrInvalidTransition}
		}
		return nil
	}
	for _, id := range p.Renew {
		if err := need(id, Running, Running); err != nil {
			return err
		}
	}
	for _, g := range p.Preempt {
		if err := need(g.Job, Checkpointing, Running); err != nil {
			return err
		}
	}
	for _, g := range p.Start {
		if err := need(g.Job, Running, Pending, Suspended); err != nil {
			return err
		}
		if g.GPUs < 0 {
			return &Error{Op: "boundary", Job: g.Job, At: at, Err: ErrInvalidValue, Detail: fmt.Sprintf("negative GPUs %d", g.GPUs)}
		}
	}
	return nil
}

func (c *Coordinator) effectErr(step string, id ledger.JobID, at time.Time, err error) error {
	st := State(0)
	if in, ok := c.table.Info(id); ok {
		st = in.State
	}
	return &Error{Op: "boundary", Job: id, State: st, At: at, Err: ErrEffect, Detail: step, Cause: err}
}

// Boundary runs one lease boundary at time at:
//
//  1. The plan is validated against the table; a bad plan (unknown job, a
//     job listed twice, a renewal of a job that is not running, a start of
//     a running job...) is rejected before any side effect, with the table
//     unchanged.
//  2. Jobs under the minimum-runtime guard that the plan preempts are
//     renewed instead (ReasonGuarded).
//  3. Renewals: each renewed job keeps its GPUs under a new lease.
//  4. Every preempted job gets its checkpoint signal at at.
//  5. The coordinator waits for every release until at+Grace; a job past the
//     deadline is stopped by force and loses the progress since its last
//     flushed snapshot. Releases are applied to the table in time order.
//  6. Only then are the plan's starts launched — fresh starts and restores
//     (which pay a cold start) — at StartAt, the latest release time. If
//     guarded jobs kept GPUs, the last starts of the plan are deferred
//     until their GPUs cover what was kept.
//
// The plan is the whole decision: a running job that it neither renews nor
// preempts keeps running, even on an expired lease, and stays in
// [Table.Expired] until a plan handles it. A scheduler renews or preempts
// every job of Expired(at) at each boundary.
//
// A side effect that fails stops the boundary and returns an error matching
// ErrEffect, wrapping the cause; the table then reflects every step that
// had succeeded, and the partial Outcome lists them.
//
// Cost: O(k log k) for k jobs in the plan, plus the side effects.
func (c *Coordinator) Boundary(at time.Time, p Plan) (Outcome, error) {
	out := Outcome{At: at, StartAt: at, Deadline: at.Add(c.cfg.Grace)}
	if err := c.validate(at, p); err != nil {
		return out, err
	}
	t := c.table

	// 2. Guard.
	renew := make([]Decision, 0, len(p.Renew)+len(p.Preempt))
	for _, id := range p.Renew {
		renew = append(renew, Decision{Job: id, Action: Renewed, Reason: ReasonSelected, At: at})
	}
	var kept ledger.GPUs
	preempt := make([]Grant, 0, len(p.Preempt))
	for _, g := range p.Preempt {
		if until, guarded := t.Guarded(at, g.Job); guarded {
			in, _ := t.InfoAt(at, g.Job)
			renew = append(renew, Decision{Job: g.Job, Action: Renewed, Reason: ReasonGuarded, At: at,
				Detail: fmt.Sprintf("ran %v of the %v minimum; preemptible from %s",
					at.Sub(in.RunningSince), t.cfg.MinRuntime, until.UTC().Format(time.RFC3339Nano))})
			kept += g.GPUs
			continue
		}
		preempt = append(preempt, g)
	}

	// 3. Renewals.
	renewer, _ := c.fx.(Renewer)
	for _, d := range renew {
		if renewer != nil {
			f, err := renewer.Renew(at, d.Job)
			if err != nil {
				return out, c.effectErr("renew", d.Job, at, err)
			}
			d.Flush = f
		}
		if err := t.Renew(at, d.Job, d.Flush); err != nil {
			return out, err
		}
		out.Decisions = append(out.Decisions, d)
	}

	// 4. Signals.
	for _, g := range preempt {
		if err := c.fx.Checkpoint(at, g.Job); err != nil {
			return out, c.effectErr("checkpoint signal", g.Job, at, err)
		}
		if err := t.Checkpoint(at, g.Job); err != nil {
			return out, err
		}
	}

	// 5. Releases.
	rels := make([]Decision, 0, len(preempt))
	for _, g := range preempt {
		r, err := c.fx.WaitReleased(g.Job, out.Deadline)
		if err != nil {
			return out, c.effectErr("wait for release", g.Job, at, err)
		}
		if r.At.Before(at) || r.At.After(out.Deadline) {
			return out, c.effectErr("wait for release", g.Job, at,
				fmt.Errorf("release at %s outside [%s, %s]", r.At.UTC().Format(time.RFC3339Nano),
					at.UTC().Format(time.RFC3339Nano), out.Deadline.UTC().Format(time.RFC3339Nano)))
		}
		rels = append(rels, Decision{Job: g.Job, Action: Preempted, Reason: ReasonSelected, At: r.At, Lost: r.Lost, Forced: r.Forced})
	}
	slices.SortFunc(rels, func(a, b Decision) int { return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.Job, b.Job)) })
	for _, d := range rels {
		if err := t.Release(d.At, d.Job, d.Lost); err != nil {
			return out, err
		}
		out.Decisions = append(out.Decisions, d)
		if d.At.After(out.StartAt) {
			out.StartAt = d.At
		}
	}

	// 6. Starts, after every release.
	starts := p.Start
	var deferred []Decision
	if kept > 0 {
		var freed ledger.GPUs
		n := len(starts)
		for n > 0 && freed < kept {
			n--
			freed += starts[n].GPUs
		}
		for _, g := range starts[n:] {
			deferred = append(deferred, Decision{Job: g.Job, Action: Deferred, Reason: ReasonGPUsKept, At: out.StartAt,
				Detail: fmt.Sprintf("guarded jobs kept %d GPUs the plan expected to be freed", kept)})
		}
		starts = starts[:n]
	}
	for _, g := range starts {
		in, _ := t.Info(g.Job)
		d := Decision{Job: g.Job, Reason: ReasonSelected, At: out.StartAt}
		if in.State == Pending {
			d.Action = Started
			if err := c.fx.Start(out.StartAt, g.Job); err != nil {
				return out, c.effectErr("start", g.Job, out.StartAt, err)
			}
			if err := t.Start(out.StartAt, g.Job); err != nil {
				return out, err
			}
		} else {
			d.Action = Restored
			cold, err := c.fx.Restore(out.StartAt, g.Job)
			if err != nil {
				return out, c.effectErr("restore", g.Job, out.StartAt, err)
			}
			d.ColdStart = cold
			if err := t.Restore(out.StartAt, g.Job, cold); err != nil {
				return out, err
			}
		}
		out.Decisions = append(out.Decisions, d)
	}
	out.Decisions = append(out.Decisions, deferred...)
	return out, nil
}
