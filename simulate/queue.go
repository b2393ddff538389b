package simulate

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// evKind orders events that happen at the same instant: GPUs released by a
// checkpoint first, then completions, then delayed starts, then lease ends.
type evKind uint8

const (
	evRelease  evKind = iota // a checkpoint finished: the job's GPUs are released
	evComplete               // a job ran its trace duration
	evStart                  // a granted job starts holding its GPUs (after the release barrier)
	evLeaseEnd               // a job's lease ended: it becomes a candidate again
)

// event is one scheduled engine event. Times are offsets from the engine's
// start. j indexes the engine's job slab; gen must match the job's
// generation for the event to be live. An event holds no pointer, so moving
// events in the heap costs no write barriers and the GC never scans it.
type event struct {
	at   time.Duration
	seq  uint64
	j    int32
	gen  uint32
	kind evKind
}

func (a *event) less(b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.seq < b.seq
}

// eventQueue is a binary min-heap of events ordered by (at, kind, seq);
// push and pop are O(log n).
type eventQueue struct {
	h   []event
	seq uint64
}

func (q *eventQueue) Len() int { return len(q.h) }

func (q *eventQueue) push(e event) {
	q.seq++
	e.seq = q.seq
	q.h = append(q.h, e)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.h[i].less(&q.h[p]) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *eventQueue) top() *event { return &q.h[0] }

func (q *eventQueue) pop() event {
	e := q.h[0]
	n := len(q.h) - 1
	q.h[0] = q.h[n]
	q.h[n] = event{}
	q.h = q.h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.h[r].less(&q.h[l]) {
			m = r
		}
		if !q.h[m].less(&q.h[i]) {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return e
}

// compareJobs orders job states by (Submit, ID), the order of State.Pending
// and State.Running.
func compareJobs(a, b *JobState) int {
	return cmp.Or(a.Job.Submit.Compare(b.Job.Submit), strings.Compare(a.Job.ID, b.Job.ID))
}

// insertSorted inserts x into s, kept sorted by compareJobs. O(log n) to find
// the place plus a copy of the tail (usually empty: new jobs arrive in order).
func insertSorted(s []*JobState, x *JobState) []*JobState {
	i, _ := slices.BinarySearchFunc(s, x, compareJobs)
	return slices.Insert(s, i, x)
}

// removeSorted removes x from s, kept sorted by compareJobs.
func removeSorted(s []*JobState, x *JobState) []*JobState {
	i, ok := slices.BinarySearchFunc(s, x, compareJobs)
	if !ok || s[i] != x {
		return s
	}
	return slices.Delete(s, i, i+1)
}

// runSet is the running jobs, sorted by compareJobs, with their engine
// records in a parallel slice so that a tick reaches them without lookups.
type runSet struct {
	states []*JobState
	jobs   []*job
}

func (r *runSet) insert(j *job) {
	i, _ := slices.BinarySearchFunc(r.states, &j.st, compareJobs)
	r.states = slices.Insert(r.states, i, &j.st)
	r.jobs = slices.Insert(r.jobs, i, j)
}

func (r *runSet) remove(j *job) {
	i, ok := slices.BinarySearchFunc(r.states, &j.st, compareJobs)
	if !ok || r.jobs[i] != j {
		return
	}
	r.states = slices.Delete(r.states, i, i+1)
	r.jobs = slices.Delete(r.jobs, i, i+1)
}
