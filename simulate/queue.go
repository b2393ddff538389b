package simulate

import (
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

// less orders events by time, then kind, then job (the slab index, which
// follows submission), then sequence. Ordering same-time events of one kind
// by job rather than by when they were queued keeps a run independent of
// the order in which a decision lists its grants: two jobs renewed at one
// tick that complete at one instant end in the same order either way.
func (a *event) less(b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	if a.j != b.j {
		return a.j < b.j
	}
	return a.seq < b.seq
}

// Event slots: a job has at most one pending event of each slot, the one
// that carries the slot's current generation (j.gen for starts and
// completions, j.leaseGen for lease ends, j.relGen for releases).
const (
	slotRun = iota
	slotLease
	slotRelease
	slots
)

func (e *event) slot() int32 {
	switch e.kind {
	case evRelease:
		return slotRelease
	case evLeaseEnd:
		return slotLease
	}
	return slotRun
}

// arity is the eventQueue's fan-out: a 4-ary heap is half as deep as a
// binary one, and a node's four children share one or two cache lines.
const arity = 4

// eventQueue is a 4-ary min-heap of events ordered by (at, kind, j, seq);
// push, pop and remove are O(log n). pos[j*slots+slot] is 1 + the heap
// index of job j's event of that slot (0: none), so that an event that
// became stale can be taken out at once instead of lingering until its
// time (a long job renewed every lease would leave thousands).
type eventQueue struct {
	h   []event
	pos []int32
	seq uint64
}

func (q *eventQueue) Len() int { return len(q.h) }

func (q *eventQueue) key(e *event) int { return int(e.j)*slots + int(e.slot()) }

// set stores e at heap index i.
func (q *eventQueue) set(i int, e event) {
	q.h[i] = e
	q.pos[q.key(&e)] = int32(i) + 1
}

func (q *eventQueue) push(e event) {
	q.seq++
	e.seq = q.seq
	if k := q.key(&e); k >= len(q.pos) {
		q.pos = append(q.pos, make([]int32, k+1-len(q.pos))...)
	}
	q.h = append(q.h, e)
	q.up(len(q.h)-1, e)
}

// up moves e, at index i, towards the root.
func (q *eventQueue) up(i int, e event) {
	for i > 0 {
		p := (i - 1) / arity
		if !e.less(&q.h[p]) {
			break
		}
		q.set(i, q.h[p])
		i = p
	}
	q.set(i, e)
}

// down moves e, at index i, towards the leaves.
func (q *eventQueue) down(i int, e event) {
	n := len(q.h)
	for {
		l := arity*i + 1
		if l >= n {
			break
		}
		m := l
		for r := l + 1; r < min(l+arity, n); r++ {
			if q.h[r].less(&q.h[m]) {
				m = r
			}
		}
		if !q.h[m].less(&e) {
			break
		}
		q.set(i, q.h[m])
		i = m
	}
	q.set(i, e)
}

func (q *eventQueue) top() *event { return &q.h[0] }

func (q *eventQueue) pop() event { return q.removeAt(0) }

// removeAt takes out the event at heap index i.
func (q *eventQueue) removeAt(i int) event {
	e := q.h[i]
	q.pos[q.key(&e)] = 0
	n := len(q.h) - 1
	last := q.h[n]
	q.h[n] = event{}
	q.h = q.h[:n]
	if i == n {
		return e
	}
	if i > 0 && last.less(&q.h[(i-1)/arity]) {
		q.up(i, last)
	} else {
		q.down(i, last)
	}
	return e
}

// replace queues e in place of its job's pending event of the same slot
// and returns that event, if any: one sift instead of a removal and a push,
// with the same order (e gets the next sequence number, as from push).
func (q *eventQueue) replace(e event) (event, bool) {
	k := q.key(&e)
	if k >= len(q.pos) || q.pos[k] == 0 {
		q.push(e)
		return event{}, false
	}
	i := int(q.pos[k] - 1)
	old := q.h[i]
	q.seq++
	e.seq = q.seq
	if i > 0 && e.less(&q.h[(i-1)/arity]) {
		q.up(i, e)
	} else {
		q.down(i, e)
	}
	return old, true
}

// remove takes out job j's pending event of slot, if any.
func (q *eventQueue) remove(j int32, slot int) (event, bool) {
	k := int(j)*slots + slot
	if k >= len(q.pos) || q.pos[k] == 0 {
		return event{}, false
	}
	return q.removeAt(int(q.pos[k] - 1)), true
}

// timeHeap is a binary min-heap of times.
type timeHeap []time.Duration

func (h *timeHeap) push(t time.Duration) {
	*h = append(*h, t)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p] <= t {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = t
}

func (h *timeHeap) pop() time.Duration {
	s := *h
	t := s[0]
	n := len(s) - 1
	x := s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s[r] < s[l] {
			m = r
		}
		if s[m] >= x {
			break
		}
		s[i] = s[m]
		i = m
	}
	if n > 0 {
		s[i] = x
	}
	*h = s
	return t
}

// compareJobs orders job states by (Submit, ID), the order of State.Pending
// and State.Running.
func compareJobs(a, b *JobState) int {
	// The ids are compared only on equal submit times: cmp.Or would
	// compare them every time, and this order is searched at every tick.
	if c := a.Job.Submit.Compare(b.Job.Submit); c != 0 {
		return c
	}
	return strings.Compare(a.Job.ID, b.Job.ID)
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
