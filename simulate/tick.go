package simulate

import (
	"fmt"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/placement"
)

// tick runs one scheduling decision at time t.
func (e *engine) tick(t time.Duration) error {
	if err := e.advance(t); err != nil {
		return err
	}
	e.tickSet = false
	e.ticked, e.lastTick = true, t
	e.res.Stats.Ticks++
	for _, j := range e.arrived {
		j.phase = phPending
		e.pending = insertSorted(e.pending, &j.st)
	}
	clear(e.arrived)
	e.arrived = e.arrived[:0]
	s := e.fillState()
	d, err := e.pol.Schedule(s)
	if err != nil {
		return fmt.Errorf("simulate: policy %s at %v: %w", e.pol.Name(), e.at(t), err)
	}
	if err := e.apply(d); err != nil {
		return err
	}
	if e.waker != nil {
		s = e.fillState()
		if w := e.waker.NextWakeup(s); !w.IsZero() && w.After(e.at(t)) {
			e.schedTick(w.Sub(e.start))
		}
	}
	if e.cfg.Check && e.res.Stats.Ticks%e.cfg.CheckEvery == 0 {
		return e.check()
	}
	return nil
}

// fillState refreshes the State policies see: running jobs' attained time and
// the ledger view at now.
func (e *engine) fillState() *State {
	now := e.now
	for _, s := range e.running {
		j := e.jobs[s.Job.ID]
		s.Attained = j.attained(now)
		s.Remaining = s.Job.Duration - s.Attained
	}
	at := e.at(now)
	e.state = State{
		Now:      at,
		Interval: e.cfg.Interval,
		Lease:    e.cfg.Lease,
		Cluster:  e.cluster,
		Pending:  e.pending,
		Running:  e.running,
		Accounts: e.books[0].View(at),
		Quotas:   e.quotas,
		Capacity: e.capacity,
	}
	return &e.state
}

func (e *engine) badDecision(job, format string, args ...any) error {
	return fmt.Errorf("%w: policy %s at %v, job %s: %s", ErrBadDecision, e.pol.Name(), e.at(e.now), job, fmt.Sprintf(format, args...))
}

// apply carries out a decision: preemptions (checkpoint, then release), lapsed
// leases, renewals, then new grants, which start once every release in flight
// has completed.
func (e *engine) apply(d Decision) error {
	now := e.now
	seen := make(map[string]bool, len(d.Preempt)+len(d.Grants))
	for _, id := range d.Preempt {
		j := e.jobs[id]
		switch {
		case j == nil:
			return e.badDecision(id, "preempts an unknown job")
		case seen[id]:
			return e.badDecision(id, "named twice")
		case j.st.Status != Running:
			return e.badDecision(id, "preempts a job that is not running")
		}
		seen[id] = true
	}
	renew := make(map[string]bool)
	for _, g := range d.Grants {
		j := e.jobs[g.Job]
		switch {
		case j == nil:
			return e.badDecision(g.Job, "grants an unknown job")
		case seen[g.Job]:
			return e.badDecision(g.Job, "named twice")
		case g.Lease < 0:
			return e.badDecision(g.Job, "negative lease %v", g.Lease)
		case g.Renew && j.st.Status != Running:
			return e.badDecision(g.Job, "renews a job that is not running")
		case !g.Renew && j.st.Status != Pending:
			return e.badDecision(g.Job, "grants a job that is already running (renew it instead)")
		case j.phase == phArrived:
			return e.badDecision(g.Job, "grants a job not yet submitted")
		}
		seen[g.Job] = true
		if g.Renew {
			renew[g.Job] = true
		}
	}
	for _, id := range d.Preempt {
		if err := e.preempt(e.jobs[id]); err != nil {
			return err
		}
	}
	// A running job whose lease ended and that was not renewed is suspended.
	var lapsed []*job
	for _, s := range e.running {
		if !s.LeaseEnd.IsZero() && !s.LeaseEnd.After(e.at(now)) && !renew[s.Job.ID] {
			lapsed = append(lapsed, e.jobs[s.Job.ID])
		}
	}
	for _, j := range lapsed {
		if err := e.preempt(j); err != nil {
			return err
		}
	}
	for _, g := range d.Grants {
		if g.Renew {
			if err := e.renew(e.jobs[g.Job], g); err != nil {
				return err
			}
		}
	}
	barrier := max(now, e.lastRelease)
	for _, g := range d.Grants {
		if !g.Renew {
			if err := e.grant(e.jobs[g.Job], g, barrier); err != nil {
				return err
			}
		}
	}
	return nil
}

// preempt suspends a running job now: it stops making progress, writes its
// checkpoint while still holding its GPUs, then releases them. A job still
// waiting for its start barrier is simply put back.
func (e *engine) preempt(j *job) error {
	now := e.now
	if _, err := e.cluster.Release(j.st.Job.ID); err != nil {
		return fmt.Errorf("%w: releasing job %s: %w", ErrInvariant, j.st.Job.ID, err)
	}
	e.running = removeSorted(e.running, &j.st)
	wasRunning := j.phase == phRunning
	j.base = j.attained(now)
	j.gen++
	j.phase = phPending
	j.st.Status = Pending
	j.st.Placement = placement.Placement{}
	j.st.LeaseEnd = time.Time{}
	j.st.Attained, j.st.Remaining = j.base, j.st.Job.Duration-j.base
	e.pending = insertSorted(e.pending, &j.st)
	if !wasRunning {
		return nil
	}
	j.st.Preemptions++
	e.res.Stats.Preemptions++
	e.schedTick(now) // the policy may resume it once released
	e.res.Stats.Checkpoints++
	if e.cfg.Checkpoint == 0 {
		return e.stopHolding(j)
	}
	e.res.Stats.OverheadGPUSeconds += e.cfg.Checkpoint.Seconds() * float64(j.st.Job.GPUs)
	j.relGen++
	rel := now + e.cfg.Checkpoint
	e.lastRelease = max(e.lastRelease, rel)
	e.q.push(event{at: rel, kind: evRelease, j: j, gen: j.relGen})
	return nil
}

// renew keeps a running job in place for another lease from now.
func (e *engine) renew(j *job, g Grant) error {
	now := e.now
	if len(g.Placement.Slots) > 0 && !samePlacement(g.Placement, j.st.Placement) {
		return e.badDecision(g.Job, "renewal moves the job")
	}
	e.res.Stats.Renewals++
	j.st.Leases++
	j.gen++
	if g.Lease > 0 {
		j.st.LeaseEnd = e.at(now + g.Lease)
	} else {
		j.st.LeaseEnd = time.Time{}
	}
	if j.phase == phStarting {
		// Not holding yet: the start event was invalidated; re-arm it.
		e.q.push(event{at: j.startAt, kind: evStart, j: j, gen: j.gen})
		if g.Lease > 0 {
			j.st.LeaseEnd = e.at(j.startAt + g.Lease)
		}
		return nil
	}
	if e.cfg.CheckpointOnRenew && e.cfg.Checkpoint > 0 {
		j.base = j.attained(now)
		j.progressFrom = max(j.progressFrom, now+e.cfg.Checkpoint)
		e.res.Stats.Checkpoints++
		e.res.Stats.OverheadGPUSeconds += e.cfg.Checkpoint.Seconds() * float64(j.st.Job.GPUs)
	}
	e.q.push(event{at: j.progressFrom + j.st.Job.Duration - j.base, kind: evComplete, j: j, gen: j.gen})
	if g.Lease > 0 {
		e.q.push(event{at: now + g.Lease, kind: evLeaseEnd, j: j, gen: j.gen})
	}
	return nil
}

// grant places a pending job and starts it at the barrier (now when no
// release is in flight).
func (e *engine) grant(j *job, g Grant, barrier time.Duration) error {
	p := g.Placement
	if len(p.Slots) == 0 {
		var err error
		if p, err = e.cluster.Place(j.st.Job.GPUs); err != nil {
			return e.badDecision(g.Job, "does not fit: %v", err)
		}
	}
	if p.GPUs() != j.st.Job.GPUs {
		return e.badDecision(g.Job, "placement of %d GPUs for a gang of %d", p.GPUs(), j.st.Job.GPUs)
	}
	if err := e.cluster.Allocate(j.st.Job.ID, p); err != nil {
		return e.badDecision(g.Job, "allocation failed: %v", err)
	}
	e.pending = removeSorted(e.pending, &j.st)
	j.st.Status = Running
	j.st.Placement = p
	j.st.Leases++
	j.gen++
	e.res.Stats.Grants++
	e.running = insertSorted(e.running, &j.st)
	j.startAt = barrier
	j.st.LastStart = e.at(barrier)
	if g.Lease > 0 {
		j.st.LeaseEnd = e.at(barrier + g.Lease)
	} else {
		j.st.LeaseEnd = time.Time{}
	}
	e.stallTicks = 0
	if barrier == e.now && !j.holding {
		return e.begin(j)
	}
	j.phase = phStarting
	e.q.push(event{at: barrier, kind: evStart, j: j, gen: j.gen})
	return nil
}

func samePlacement(a, b placement.Placement) bool {
	return slices.EqualFunc(a.Slots, b.Slots, func(x, y placement.Slot) bool {
		return x.Node == y.Node && slices.Equal(x.GPUs, y.GPUs)
	})
}
