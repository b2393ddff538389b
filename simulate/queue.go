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

// eventQueue pops events in (at, kind, j, seq) order; push, pop and remove
// are O(log n). Starts, completions and releases sit in a 4-ary min-heap:
// pos[j*slots+slot] is 1 + the heap index of job j's event of that slot (0:
// none), so that an event that became stale can be taken out at once
// instead of lingering until its time (a long job renewed every lease would
// leave thousands). Lease ends, most of the events (one per grant and
// renewal), sit in buckets by time instead (see leaseEnds): the jobs renewed
// at one tick share their lease end, so a lease end costs a slice append
// and a read, not a sift through the heap.
type eventQueue struct {
	h   []event
	pos []int32
	seq uint64
	le  leaseEnds
}

// leaseEnds holds the queued lease-end events in buckets by time. ends[j]
// is job j's queued lease end (seq 0: none); a bucket lists (job, seq)
// entries, and an entry whose seq is no longer its job's is dead (removed
// or replaced) and skipped when its time comes, so that remove is O(1).
// The buckets are kept in order of time (order[head:]): a new time is
// almost always later than every other (now + lease), so it is appended;
// the front bucket is sorted by (job, seq) before it is read, which gives
// the heap's order within one time. Cost: push O(1) amortized for a time
// equal to the last one pushed or after every other, O(log b + b) for b
// buckets otherwise; pop O(1) amortized plus the front bucket's sort.
type leaseEnds struct {
	ends    []event
	n       int // live lease ends
	buckets []endBucket
	// order[head:] lists the buckets in use by increasing time
	order []int32
	head  int
	free  []int32 // indices of emptied buckets, for reuse
	// the bucket of the last push
	last   int32
	lastOK bool
	// top's answer, kept until the next push or take
	cur   *event
	curOK bool
}

// endBucket is the lease ends queued for one time; entries before next
// have been read.
type endBucket struct {
	at     time.Duration
	ents   []endEnt
	next   int
	sorted bool // ents[next:] is in (j, seq) order
}

type endEnt struct {
	j   int32
	seq uint64
}

func (l *leaseEnds) push(e event) {
	l.curOK = false
	if int(e.j) >= len(l.ends) {
		l.ends = append(l.ends, make([]event, int(e.j)+1-len(l.ends))...)
	}
	if l.ends[e.j].seq == 0 {
		l.n++
	}
	l.ends[e.j] = e
	if !l.lastOK || l.buckets[l.last].at != e.at {
		l.last, l.lastOK = l.bucket(e.at), true
	}
	b := &l.buckets[l.last]
	if n := len(b.ents); n > b.next && b.ents[n-1].j > e.j {
		b.sorted = false
	}
	b.ents = append(b.ents, endEnt{j: e.j, seq: e.seq})
}

// bucket returns the index of the bucket of time at, made if need be.
// O(1) for a time after every other (the usual case: now + lease),
// O(log b + b) otherwise, for b buckets.
func (l *leaseEnds) bucket(at time.Duration) int32 {
	live := l.order[l.head:]
	k := len(live)
	if k > 0 && l.buckets[live[k-1]].at >= at {
		k, _ = slices.BinarySearchFunc(live, at, func(i int32, t time.Duration) int { return cmp.Compare(l.buckets[i].at, t) })
		if k < len(live) && l.buckets[live[k]].at == at {
			return live[k]
		}
	}
	var i int32
	if n := len(l.free); n > 0 {
		i, l.free = l.free[n-1], l.free[:n-1]
	} else {
		i = int32(len(l.buckets))
		l.buckets = append(l.buckets, endBucket{})
	}
	l.buckets[i].at, l.buckets[i].sorted = at, true
	if l.head > 0 && l.head >= len(l.order)/2 {
		// Move the live part down rather than let the array grow.
		n := copy(l.order, l.order[l.head:])
		l.order, l.head = l.order[:n], 0
	}
	if l.head+k == len(l.order) {
		l.order = append(l.order, i) // the usual case: after every other
	} else {
		l.order = slices.Insert(l.order, l.head+k, i)
	}
	return i
}

// top is the first live lease end, or nil. It drops the dead entries and
// empty buckets it passes (first), and keeps its answer until the next
// change.
func (l *leaseEnds) top() *event {
	if l.curOK {
		return l.cur
	}
	l.cur, l.curOK = l.first(), true
	return l.cur
}

func (l *leaseEnds) first() *event {
	for l.head < len(l.order) {
		b := &l.buckets[l.order[l.head]]
		if !b.sorted {
			slices.SortFunc(b.ents[b.next:], func(x, y endEnt) int {
				if x.j != y.j {
					return int(x.j - y.j)
				}
				return cmp.Compare(x.seq, y.seq)
			})
			b.sorted = true
		}
		for ; b.next < len(b.ents); b.next++ {
			if x := b.ents[b.next]; l.ends[x.j].seq == x.seq {
				return &l.ends[x.j]
			}
		}
		b.ents, b.next = b.ents[:0], 0
		i := l.order[l.head]
		l.head++
		l.free = append(l.free, i)
		if l.lastOK && l.last == i {
			l.lastOK = false
		}
	}
	return nil
}

// popTop takes out the event top returned.
func (l *leaseEnds) popTop() event {
	b := &l.buckets[l.order[l.head]]
	x := b.ents[b.next]
	b.next++
	return l.take(x.j)
}

// take takes out job j's queued lease end (its entry becomes dead).
func (l *leaseEnds) take(j int32) event {
	l.curOK = false
	e := l.ends[j]
	l.ends[j] = event{}
	l.n--
	return e
}

func (q *eventQueue) Len() int { return len(q.h) + q.le.n }

func (q *eventQueue) key(e *event) int { return int(e.j)*slots + int(e.slot()) }

// set stores e at heap index i.
func (q *eventQueue) set(i int, e event) {
	q.h[i] = e
	q.pos[q.key(&e)] = int32(i) + 1
}

func (q *eventQueue) push(e event) {
	q.seq++
	e.seq = q.seq
	if e.kind == evLeaseEnd {
		q.le.push(e)
		return
	}
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

// top is the first event; the queue must not be empty.
func (q *eventQueue) top() *event {
	if l := q.le.top(); l != nil && (len(q.h) == 0 || l.less(&q.h[0])) {
		return l
	}
	return &q.h[0]
}

// pop takes out the first event; the queue must not be empty.
func (q *eventQueue) pop() event {
	if l := q.le.top(); l != nil && (len(q.h) == 0 || l.less(&q.h[0])) {
		return q.le.popTop()
	}
	return q.removeAt(0)
}

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
	if e.kind == evLeaseEnd {
		old, ok := q.remove(e.j, slotLease)
		q.push(e)
		return old, ok
	}
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

// has reports whether job j has a pending event of slot in the heap (not
// slotLease).
func (q *eventQueue) has(j int32, slot int) bool {
	k := int(j)*slots + slot
	return k < len(q.pos) && q.pos[k] != 0
}

// hasLeaseEnd reports whether job j has a pending lease end.
func (q *eventQueue) hasLeaseEnd(j int32) bool {
	return int(j) < len(q.le.ends) && q.le.ends[j].seq != 0
}

// get returns job j's pending event of slot in the heap (not slotLease),
// if any.
func (q *eventQueue) get(j int32, slot int) (event, bool) {
	if !q.has(j, slot) {
		return event{}, false
	}
	return q.h[q.pos[int(j)*slots+slot]-1], true
}

// remove takes out job j's pending event of slot, if any.
func (q *eventQueue) remove(j int32, slot int) (event, bool) {
	if slot == slotLease {
		if int(j) >= len(q.le.ends) || q.le.ends[j].seq == 0 {
			return event{}, false
		}
		return q.le.take(j), true
	}
	k := int(j)*slots + slot
	if k >= len(q.pos) || q.pos[k] == 0 {
		return event{}, false
	}
	return q.removeAt(int(q.pos[k] - 1)), true
}

// CompareJobs orders job states by (Submit, ID), the order of
// State.Pending and State.Running: a policy that keeps its own copy of
// either list, or breaks ties the engine's way, sorts by it.
func CompareJobs(a, b *JobState) int {
	// The ids are compared only on equal submit times: cmp.Or would
	// compare them every time, and this order is searched at every tick.
	if c := a.Job.Submit.Compare(b.Job.Submit); c != 0 {
		return c
	}
	return strings.Compare(a.Job.ID, b.Job.ID)
}

// insertSorted inserts x into s, kept sorted by CompareJobs. O(log n) to find
// the place plus a copy of the tail (usually empty: new jobs arrive in order).
func insertSorted(s []*JobState, x *JobState) []*JobState {
	i, _ := slices.BinarySearchFunc(s, x, CompareJobs)
	return slices.Insert(s, i, x)
}

// removeSorted removes x from s, kept sorted by CompareJobs.
func removeSorted(s []*JobState, x *JobState) []*JobState {
	i, ok := slices.BinarySearchFunc(s, x, CompareJobs)
	if !ok || s[i] != x {
		return s
	}
	return slices.Delete(s, i, i+1)
}

// runSet is a set of the engine's jobs, the running ones or the pending
// ones, sorted by CompareJobs. A state leads to its engine record
// (JobState.eng), so that a tick reaches the jobs without lookups, and one
// array is shifted per change: O(log n) to find the place plus a copy of
// the tail, for n jobs.

type runSet struct {
	states []*JobState
}

func (r *runSet) insert(j *job) {
	i, _ := slices.BinarySearchFunc(r.states, &j.st, CompareJobs)
	r.states = slices.Insert(r.states, i, &j.st)
}

func (r *runSet) remove(j *job) {
	i, ok := slices.BinarySearchFunc(r.states, &j.st, CompareJobs)
	if !ok || r.states[i] != &j.st {
		return
	}
	r.states = slices.Delete(r.states, i, i+1)
}
