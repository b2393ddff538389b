package simulate

import (
	"fmt"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/lease"
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
		if e.cfg.Admit == AdmitAtTick {
			if err := e.admit(j, t); err != nil {
				return err
			}
		}
		j.phase = phPending
		e.addPending(j)
	}
	if len(e.arrived) > 0 { // else nothing to forget
		wipe(e.arrived)
		e.arrived = e.arrived[:0]
	}
	e.collectExpired()
	if !e.cfg.Exhaustive {
		if e.traits.IdleWhenNothingFits && len(e.expired) == 0 && !e.anyFits() {
			return e.checkAt()
		}
		if e.traits.RenewsWhenNothingFits && len(e.expired) > 0 && !e.anyFitsWithout() {
			err := e.renewAll()
			e.clearExpired()
			if err != nil {
				return err
			}
			return e.checkAt()
		}
	}
	s := e.fillState()
	used, free := e.cluster.Used(), e.cluster.Free()
	d, err := e.pol.Schedule(s)
	if err != nil {
		return fmt.Errorf("simulate: policy %s at %v: %w", e.pol.Name(), e.at(t), err)
	}
	if e.cluster.Used() != used || e.cluster.Free() != free {
		return fmt.Errorf("%w: policy %s at %v changed the cluster (%d GPUs used, %d before)",
			ErrBadDecision, e.pol.Name(), e.at(t), e.cluster.Used(), used)
	}
	err = e.apply(d)
	e.clearExpired()
	if err != nil {
		return err
	}
	if e.waker != nil {
		s = e.fillState()
		if w := e.waker.NextWakeup(s); !w.IsZero() && w.After(e.at(t)) {
			e.schedTick(w.Sub(e.start))
		}
	}
	return e.checkAt()
}

// checkAt runs the invariant checks at every Config.CheckEvery-th tick
// when Config.Check is set.
func (e *engine) checkAt() error {
	if e.cfg.Check && e.res.Stats.Ticks%e.cfg.CheckEvery == 0 {
		return e.check()
	}
	return nil
}

// anyFits reports whether some pending job fits the free GPUs now (see
// Traits.IdleWhenNothingFits): O(distinct pending demands) placement
// checks, the demands being ascending and Fits monotone in them.
func (e *engine) anyFits() bool {
	free := e.cluster.Free()
	for _, d := range e.demands {
		if d > free {
			return false
		}
		if e.cluster.Fits(d) {
			return true
		}
	}
	return false
}

// anyFitsWithout reports whether some pending job would fit if every
// expiring job let go of its GPUs (see Traits.RenewsWhenNothingFits).
func (e *engine) anyFitsWithout() bool {
	room, err := e.expiringRoom()
	if err != nil {
		return true // a round then reports what is wrong
	}
	for _, d := range e.demands {
		if d > room.Free() {
			return false
		}
		if room.Gangs(d) > 0 { // exactly when one gang of d fits
			return true
		}
	}
	return false
}

// expiringRoom returns the room of the cluster with every expiring job let
// go (State.ExpiringRoom), filled once a tick, for the engine's check and
// the policy alike.
func (e *engine) expiringRoom() (*placement.Room, error) {
	if !e.roomSet {
		ids := e.expIDs[:0]
		for _, j := range e.expired {
			ids = append(ids, j.st.Job.ID)
		}
		e.expIDs = ids
		e.roomErr = e.cluster.RoomWithout(&e.room, ids)
		e.roomSet = true
	}
	return &e.room, e.roomErr
}

// renewAll renews every expiring job in place for the configured lease
// (see Traits.RenewsWhenNothingFits).
func (e *engine) renewAll() error {
	l := grantedLease(e.cfg.Lease)
	for _, j := range e.expired {
		if err := e.renew(j, Grant{Job: j.st.Job.ID, Lease: l, Renew: true}); err != nil {
			return err
		}
	}
	return nil
}

// fillState refreshes the State policies see: running jobs' attained time
// (unless the policy is ProgressBlind), the jobs whose lease ended, and the
// ledger view at now.
func (e *engine) fillState() *State {
	at := e.nowAt
	if !e.traits.ProgressBlind || e.cfg.Exhaustive {
		for _, s := range e.running.states {
			s.eng.progressed(at)
		}
	}
	e.state = State{
		Now:            at,
		Interval:       e.cfg.Interval,
		Lease:          e.cfg.Lease,
		Cluster:        e.cluster,
		Pending:        e.pending.states,
		Running:        e.running.states,
		Expiring:       e.expState,
		PendingDemands: e.demands,
		Accounts:       e.books[0].View(at),
		Quotas:         e.quotas,
		Capacity:       e.capacity,
		Exhaustive:     e.cfg.Exhaustive,
		eng:            e,
	}
	return &e.state
}

// collectExpired turns the lease-end events since the last tick into the
// sorted list of running jobs whose lease has ended.
func (e *engine) collectExpired() {
	keep := e.expired[:0]
	for _, j := range e.expired {
		ended := j.leaseSet && j.leaseEndD <= e.now
		if e.cfg.Exhaustive {
			ended = !j.st.LeaseEnd.IsZero() && !j.st.LeaseEnd.After(e.nowAt)
		}
		if j.phase == phRunning && ended && !j.listed {
			j.listed = true
			keep = append(keep, j)
		}
	}
	if len(keep) > 1 {
		slices.SortFunc(keep, func(a, b *job) int { return CompareJobs(&a.st, &b.st) })
	}
	e.expired = keep
	e.expState = e.expState[:0]
	for _, j := range keep {
		e.expState = append(e.expState, &j.st)
	}
}

// clearExpired forgets the jobs whose lease ended, after a decision.
func (e *engine) clearExpired() {
	e.roomSet = false
	if len(e.expired) == 0 && len(e.expState) == 0 {
		return // no lease ended: nothing to forget
	}
	// A tick has a few: a loop costs less than clear's call.
	for _, j := range e.expired {
		j.listed = false
	}
	wipe(e.expired)
	e.expired = e.expired[:0]
	wipe(e.expState)
	e.expState = e.expState[:0]
}

func (e *engine) badDecision(job, format string, args ...any) error {
	return fmt.Errorf("%w: policy %s at %v, job %s: %s", ErrBadDecision, e.pol.Name(), e.nowAt, job, fmt.Sprintf(format, args...))
}

// apply carries out a decision: preemptions (checkpoint, then release), lapsed
// leases, renewals, then new grants, which start once every release in flight
// has completed. A running job that is preempted (or whose lease lapses) may
// also get a new grant in the same decision: it moves, paying a checkpoint
// and a cold start.
func (e *engine) apply(d Decision) error {
	err := e.applyDecision(d)
	// Forget the decision's jobs (a deferred call would cost more:
	// applyDecision has too many returns for an inlined one).
	wipe(e.preemptJobs)
	wipe(e.grantJobs)
	e.preemptJobs, e.grantJobs = e.preemptJobs[:0], e.grantJobs[:0]
	return err
}

// applyDecision is apply's work; apply forgets the decision's jobs it
// leaves in the engine.
func (e *engine) applyDecision(d Decision) error {
	now := e.now
	e.stamp++
	st := e.stamp
	// Each job of the decision is looked up once (apply forgets them).
	for _, ids := range [2][]string{d.Preempt, d.Abort} {
		for _, id := range ids {
			j := e.jobs[id]
			e.preemptJobs = append(e.preemptJobs, j)
			switch {
			case j == nil:
				return e.badDecision(id, "preempts an unknown job")
			case j.stopMark == st:
				return e.badDecision(id, "preempted twice")
			case j.st.Status != Running:
				return e.badDecision(id, "preempts a job that is not running")
			}
			j.stopMark = st
		}
	}
	for _, g := range d.Grants {
		j := e.jobs[g.Job]
		e.grantJobs = append(e.grantJobs, j)
		switch {
		case j == nil:
			return e.badDecision(g.Job, "grants an unknown job")
		case j.grantMark == st:
			return e.badDecision(g.Job, "granted twice")
		case g.Lease < 0:
			return e.badDecision(g.Job, "negative lease %v", g.Lease)
		case j.phase == phArrived:
			return e.badDecision(g.Job, "grants a job not yet submitted")
		case g.Renew && (j.st.Status != Running || j.stopMark == st):
			return e.badDecision(g.Job, "renews a job that is not running")
		}
		j.grantMark = st
		if g.Renew {
			j.renewMark = st
		}
	}
	for k, j := range e.preemptJobs {
		if err := e.preempt(j, k >= len(d.Preempt)); err != nil {
			return err
		}
	}
	// A running job whose lease ended and that was not renewed is suspended.
	lapsed := e.lapsed[:0]
	for _, j := range e.expired {
		if j.st.Status == Running && j.renewMark != st {
			lapsed = append(lapsed, j)
		}
	}
	for _, j := range lapsed {
		if err := e.preempt(j, false); err != nil {
			return err
		}
	}
	wipe(lapsed)
	e.lapsed = lapsed[:0]
	for i, g := range d.Grants {
		if g.Renew {
			if err := e.renew(e.grantJobs[i], g); err != nil {
				return err
			}
		}
	}
	barrier := max(now, e.lastRelease)
	for i, g := range d.Grants {
		if g.Renew {
			continue
		}
		j := e.grantJobs[i]
		if j.st.Status != Pending {
			return e.badDecision(g.Job, "grants a job that keeps running (renew it instead)")
		}
		if err := e.grant(j, g, barrier); err != nil {
			return err
		}
	}
	return nil
}

// preempt suspends a running job now: it stops making progress, writes its
// checkpoint while still holding its GPUs, then releases them; or, if
// abort, releases them at once, losing its lease's work. A job still
// waiting for its start barrier is simply put back.
func (e *engine) preempt(j *job, abort bool) error {
	now := e.now
	if err := e.leaveCluster(j); err != nil {
		return err
	}
	wasRunning := j.phase == phRunning
	at := e.nowAt
	var r lease.ReleaseReport
	switch {
	case wasRunning && abort:
		lost, err := j.prog.Abort(at)
		if err != nil {
			return e.modelErr(j, err)
		}
		r = lease.ReleaseReport{At: at, Lost: lost}
	case wasRunning:
		// The release deadline is the end of the checkpoint: the flush
		// always completes, losing only the partial iteration.
		if err := j.prog.Signal(at); err != nil {
			return e.modelErr(j, err)
		}
		var err error
		if r, err = j.prog.Release(at.Add(e.cfg.Checkpoint), e.ov); err != nil {
			return e.modelErr(j, err)
		}
	}
	j.gen++
	j.leaseGen++
	e.drop(j, slotRun)
	e.drop(j, slotLease)
	j.phase = phPending
	j.st.Status = Pending
	j.st.Placement = placement.Placement{}
	e.setLeaseEnd(j, 0, false)
	j.progressed(at)
	e.addPending(j)
	if !wasRunning {
		return nil
	}
	j.st.Preemptions++
	j.st.LastStop = at
	e.res.Stats.Preemptions++
	e.schedTick(now) // the policy may resume it once released
	if !abort {
		e.res.Stats.Checkpoints++
	}
	gpus := float64(j.st.Job.GPUs)
	e.res.Stats.LostGPUSeconds += r.Lost.Seconds() * gpus
	e.res.Stats.OverheadGPUSeconds += r.Lost.Seconds() * gpus
	rel := now + time.Duration(r.At.UnixNano()-at.UnixNano()) // cheaper than Sub
	if rel == now {
		return e.stopHolding(j)
	}
	e.res.Stats.OverheadGPUSeconds += (rel - now).Seconds() * gpus
	j.relGen++
	e.drop(j, slotRelease)
	e.lastRelease = max(e.lastRelease, rel)
	e.q.push(event{at: rel, kind: evRelease, j: j.idx, gen: j.relGen})
	return nil
}

// renew keeps a running job in place for another lease from now. Its
// completion event stays valid unless the renewal pauses it.
func (e *engine) renew(j *job, g Grant) error {
	now := e.now
	if len(g.Placement.Slots) > 0 && !samePlacement(g.Placement, j.st.Placement) {
		return e.badDecision(g.Job, "renewal moves the job")
	}
	e.res.Stats.Renewals++
	j.st.Leases++
	j.leaseGen++
	if e.cfg.Exhaustive || e.q.hasLeaseEnd(j.idx) { // not when its lease end was taken out (the usual case)
		e.drop(j, slotLease)
	}
	from := now
	if j.phase == phStarting {
		// Not holding yet: the lease runs from its start, where begin
		// arms the lease-end event.
		from = j.startAt
	}
	e.setLeaseEnd(j, from+g.Lease, g.Lease > 0)
	if j.phase == phStarting {
		return nil
	}
	at := e.nowAt
	pause, err := j.prog.Renew(at, e.ov)
	if err != nil {
		return e.modelErr(j, err)
	}
	if pause > 0 {
		// The renewal checkpoint pauses the job (after any cold start).
		e.res.Stats.Checkpoints++
		e.res.Stats.OverheadGPUSeconds += pause.Seconds() * float64(j.st.Job.GPUs)
		// The new completion takes the stale one's place in the queue:
		// at once the long way, else when the event comes first (settle).
		done := e.completesAt(j, at)
		if e.cfg.Exhaustive {
			j.gen++
			if old, ok := e.q.replace(event{at: done, kind: evComplete, j: j.idx, gen: j.gen}); ok {
				e.staleAt(old.at)
			}
		} else if e.q.has(j.idx, slotRun) {
			e.staleAt(j.doneD)
		} else {
			e.q.push(event{at: done, kind: evComplete, j: j.idx, gen: j.gen})
		}
		j.doneD = done
	}
	if g.Lease > 0 {
		e.q.push(event{at: now + g.Lease, kind: evLeaseEnd, j: j.idx, gen: j.leaseGen})
	}
	return nil
}

// samePlacement is a.Equal(b), at once when both share their slots (a
// renewal usually hands the job's own placement back).
func samePlacement(a, b placement.Placement) bool {
	if len(a.Slots) == len(b.Slots) && len(a.Slots) > 0 && &a.Slots[0] == &b.Slots[0] {
		return true
	}
	return a.Equal(b)
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
	e.removePending(j)
	j.st.Status = Running
	j.st.Placement = p
	j.st.Leases++
	j.gen++
	j.leaseGen++
	e.drop(j, slotRun)
	e.drop(j, slotLease)
	e.res.Stats.Grants++
	e.running.insert(j)
	j.startAt = barrier
	j.st.LastStart = e.at(barrier)
	e.setLeaseEnd(j, barrier+g.Lease, g.Lease > 0)
	e.stallTicks = 0
	if barrier == e.now && !j.st.Holding {
		return e.begin(j)
	}
	j.phase = phStarting
	e.q.push(event{at: barrier, kind: evStart, j: j.idx, gen: j.gen})
	return nil
}

func (e *engine) addPending(j *job) {
	e.pending.insert(j)
	d := j.st.Job.GPUs
	if d >= len(e.demandCount) {
		e.demandCount = append(e.demandCount, make([]int, d+1-len(e.demandCount))...)
	}
	if e.demandCount[d] == 0 {
		i, _ := slices.BinarySearch(e.demands, d)
		e.demands = slices.Insert(e.demands, i, d)
	}
	e.demandCount[d]++
}

func (e *engine) removePending(j *job) {
	e.pending.remove(j)
	d := j.st.Job.GPUs
	e.demandCount[d]--
	if e.demandCount[d] == 0 {
		if i, ok := slices.BinarySearch(e.demands, d); ok {
			e.demands = slices.Delete(e.demands, i, i+1)
		}
	}
}
