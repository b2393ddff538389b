package ledger

import "github.com/astraea-sched/astraea/internal/idhash"

// jobTable indexes job records by id: open addressing with linear probing
// over slots of (hash, record), keyed by idhash.String. Every Start, Stop
// and Finish begins with this lookup, and at 100k jobs a Go map spends
// most of an event there: a seeded hash of the string, then a control word,
// a slot and the key's bytes, each likely a cache miss. Here a lookup is a
// cheap fixed hash and one 16-byte slot (four to a cache line), and the
// id's bytes are compared only on a full 64-bit hash match, against the
// record the event needs anyway.
//
// Capacity is a power of two, at least twice the entries (it doubles when
// an insert would pass half full), so probe runs stay short; it never
// shrinks. A removal shifts back the entries of its probe run that could
// move, so no tombstones accumulate. The zero table is empty.
type jobTable struct {
	slots []jobSlot
	n     int
}

// jobSlot is one slot; j == nil marks it empty.
type jobSlot struct {
	h uint64
	j *job
}

// len returns the number of records. O(1).
func (t *jobTable) len() int { return t.n }

// get returns the record of id, or nil. O(1) expected.
func (t *jobTable) get(id JobID) *job {
	if t.n == 0 {
		return nil
	}
	h := idhash.String(string(id))
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.j == nil {
			return nil
		}
		if s.h == h && s.j.id == id {
			return s.j
		}
	}
}

// put indexes j under its id, replacing the record of the same id if there
// is one. O(1) amortized: a doubling rehashes every record.
func (t *jobTable) put(j *job) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	h := idhash.String(string(j.id))
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.j == nil {
			*s = jobSlot{h, j}
			t.n++
			return
		}
		if s.h == h && s.j.id == j.id {
			s.j = j
			return
		}
	}
}

// grow doubles the capacity (to 16 slots from empty) and reinserts every
// record. O(capacity).
func (t *jobTable) grow() {
	old := t.slots
	t.slots = make([]jobSlot, max(16, 2*len(old)))
	mask := uint64(len(t.slots) - 1)
	for _, s := range old {
		if s.j == nil {
			continue
		}
		i := s.h & mask
		for t.slots[i].j != nil {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// remove drops j if it is the record indexed under its id (a newer record
// of the same id is left alone). O(1) expected.
func (t *jobTable) remove(j *job) {
	if t.n == 0 {
		return
	}
	h := idhash.String(string(j.id))
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for ; t.slots[i].j != j; i = (i + 1) & mask {
		if t.slots[i].j == nil {
			return
		}
	}
	// Backward-shift deletion: walk the rest of the run and move back every
	// entry whose home slot does not lie cyclically in (hole, entry], so
	// that a lookup never meets the hole before the entry it is after.
	hole := i
	for k := (i + 1) & mask; t.slots[k].j != nil; k = (k + 1) & mask {
		home := t.slots[k].h & mask
		if (k-home)&mask >= (k-hole)&mask {
			t.slots[hole] = t.slots[k]
			hole = k
		}
	}
	t.slots[hole] = jobSlot{}
	t.n--
}

// all returns the records in slot order, which is unspecified: callers that
// need an order sort. O(capacity).
func (t *jobTable) all() []*job {
	out := make([]*job, 0, t.n)
	for _, s := range t.slots {
		if s.j != nil {
			out = append(out, s.j)
		}
	}
	return out
}
