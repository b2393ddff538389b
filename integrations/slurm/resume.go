package slurm

import (
	"errors"
	"fmt"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// ErrState: a saved ledger that this replay cannot continue (another mode,
// a tenant moved in the tree, a time before the state's).
var ErrState = errors.New("slurm: saved state does not fit")

// replayLedger is the ledger a replay writes to: the resumed one, brought
// to cfg's capacity, or a new one beginning at begin.
func replayLedger(cfg Config, begin time.Time) (*ledger.Ledger, error) {
	if l := cfg.Resume; l != nil {
		if l.Mode() != cfg.Mode {
			return nil, fmt.Errorf("%w: the state is in %s mode, not %s", ErrState, modeName(l.Mode()), modeName(cfg.Mode))
		}
		if l.Capacity() != cfg.Capacity {
			if err := l.SetCapacity(begin, cfg.Capacity); err != nil {
				return nil, fmt.Errorf("slurm: replay: %w", err)
			}
		}
		return l, nil
	}
	hist := ledger.Unbounded()
	if cfg.HalfLife > 0 {
		hist = ledger.HalfLife(cfg.HalfLife)
	}
	l, err := ledger.New(ledger.Config{Mode: cfg.Mode, Capacity: cfg.Capacity, Start: begin, History: hist})
	if err != nil {
		return nil, fmt.Errorf("slurm: replay: %w", err)
	}
	return l, nil
}

// ensureTenant registers tenant id under parent with weight w at time at,
// or, when a resumed ledger has it, sets its new weight. A tenant that
// moved to another parent is ErrState: the ledger cannot move accounts.
func ensureTenant(l *ledger.Ledger, at time.Time, id, parent ledger.TenantID, w float64) error {
	info, ok := l.Tenant(id)
	switch {
	case !ok || !info.Registered:
		err := l.AddTenantUnder(at, id, parent, w)
		if err != nil {
			return fmt.Errorf("slurm: replay: tenant %s: %w", id, err)
		}
	case info.Parent != parent:
		return fmt.Errorf("%w: %s moved from parent %q to %q; start a new state", ErrState, id, info.Parent, parent)
	case info.Weight != w:
		if err := l.SetTenantWeight(at, id, w); err != nil {
			return fmt.Errorf("slurm: replay: tenant %s: %w", id, err)
		}
	}
	return nil
}

// resumeEvents turns the events of job j (index i), which the resumed
// ledger holds as active (running or not) since before begin, into those
// that continue it: the ledger has accounted it up to begin, so its Submit
// and, if it was running then, the Start of the run that went on past
// begin are dropped. A run the ledger holds as running that the accounting
// shows ended by begin (slurmdbd records ends a little late) stops at
// begin, and a job that ended by begin finishes at begin: the ledger cannot
// go back, so those seconds are billed rather than lost or counted twice.
func resumeEvents(j Job, i int, running bool, begin time.Time, evs []event, reason string) ([]event, string) {
	fin, final := j.State.Final()
	if reason == "ended before window" {
		if !final {
			return nil, reason
		}
		return []event{{at: begin, kind: evFinish, job: i, fin: fin}}, ""
	}
	if reason != "" {
		return nil, reason
	}
	out := evs[:0]
	startAtBegin := false
	for _, e := range evs {
		switch {
		case e.kind == evSubmit:
			continue
		case e.kind == evStart && e.at.Equal(begin) && running && !startAtBegin:
			startAtBegin = true
			continue
		}
		out = append(out, e)
	}
	if running && !startAtBegin && (len(out) == 0 || !(out[0].kind == evFinish && out[0].at.Equal(begin))) {
		out = append([]event{{at: begin, kind: evStop, job: i}}, out...)
	}
	return out, ""
}

// forgetFinished drops the records of the jobs that have finished, when
// the ledger is to be persisted.
func forgetFinished(l *ledger.Ledger, jobs []Job, persist bool) error {
	if !persist {
		return nil
	}
	for _, j := range jobs {
		if info, ok := l.Job(ledger.JobID(j.ID)); ok && !info.Active {
			if err := l.Forget(info.ID); err != nil {
				return fmt.Errorf("slurm: replay: %w", err)
			}
		}
	}
	return nil
}
