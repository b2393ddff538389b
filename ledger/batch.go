package ledger

import "time"

// StartAll records that every job of ids starts at at, as Start would for
// each in turn, in one call that applies all of them or none: if Start
// would reject one of them (a time before Now(), an unknown or finished
// job, one already running, or a job named twice), StartAll returns that
// error, for the first such id in ids, and leaves the ledger exactly as it
// was. A scheduler applying a round's grants calls it once: the records are
// found and brought into cache in batches, with the memory loads of
// different jobs overlapped, where one Start after another waits for each
// job's in turn. An empty list does nothing. O(len(ids)) amortized.
func (l *Ledger) StartAll(at time.Time, ids []JobID) error {
	return l.setRunningAll("StartAll", at, ids, true)
}

// StopAll records that every job of ids stops at at, as Stop would for each
// in turn, all or none, as StartAll does for Start: a job not running (or
// named twice) rejects the whole call. O(len(ids)) amortized.
func (l *Ledger) StopAll(at time.Time, ids []JobID) error {
	return l.setRunningAll("StopAll", at, ids, false)
}

// setRunningAll is StartAll (on) and StopAll. It first checks every job,
// switching each one's state as it goes, so that a job named twice is
// caught by its own switched state; on a rejection it switches back those
// it switched, the only change made so far. Then it moves the clock and
// records each job's allocation, as setRunning does for one.
func (l *Ledger) setRunningAll(op string, at time.Time, ids []JobID, on bool) error {
	if len(ids) == 0 {
		return nil
	}
	t, err := l.eventTime(op, at, "", ids[0])
	if err != nil {
		return err
	}
	from, to := pending, running // the state a job leaves and the one it takes
	if !on {
		from, to = running, pending
	}
	js := l.batch[:0]
	defer func() {
		clear(js) // hold no record between calls
		l.batch = js[:0]
	}()
	var (
		part [lookupBatch]*job
		hs   [lookupBatch]uint64
	)
	for k := 0; k < len(ids); k += lookupBatch {
		chunk := ids[k:min(k+lookupBatch, len(ids))]
		l.jobs.getBatch(chunk, part[:], hs[:])
		touchForEvent(part[:len(chunk)])
		for i, j := range part[:len(chunk)] {
			if j == nil || j.state != from || l.forgottenAt(j, t) {
				err := l.switchRejection(op, at, t, chunk[i], j, from) // before the states go back
				for _, x := range js {
					x.state = from
				}
				return err
			}
			j.state = to
			js = append(js, j)
		}
	}
	l.advanceTo(t)
	for _, j := range js {
		l.setRunning(j, t, on)
	}
	return nil
}

// switchRejection returns the error Start (from pending) or Stop (from
// running) returns for job id, whose record is j (nil if unknown), at t,
// when it is not an active job in state from.
func (l *Ledger) switchRejection(op string, at time.Time, t int64, id JobID, j *job, from jobState) error {
	if err := l.checkActive(op, at, t, id, j); err != nil {
		return err
	}
	return switchErr(op, at, id, j, from)
}

// touchForEvent reads, for a batch of records at once, a word of what a
// Start or Stop writes beyond the record's first cache line (which the
// lookup brought in): the alloc series' last breakpoint and the byte of its
// page where the next one goes. As touchRecords, it returns what it read
// only so that the loads are kept.
//
//go:noinline
func touchForEvent(js []*job) int64 {
	var sum int64
	for _, j := range js {
		if j == nil {
			continue
		}
		st := &j.alloc.st
		sum += st.head.t
		if tail := st.tail; len(tail) < cap(tail) {
			sum += int64(tail[:len(tail)+1][len(tail)])
		}
	}
	return sum
}
