package ledger

import (
	"cmp"

	"github.com/astraea-sched/astraea/internal/idhash"
)

// jobTable indexes job records by id. Every Start, Stop and Finish begins
// with this lookup, and at 100k jobs a Go map spends most of an event there:
// a seeded hash of the string, then a control word, a slot and the key's
// bytes, each likely a cache miss. Here a lookup is a cheap fixed hash
// (idhash.String), a directory entry and a table header that stay cached,
// and one 16-byte slot (four to a cache line); the id's bytes are compared
// only on a full 64-bit hash match, against the record the event needs
// anyway.
//
// The table is extendible hashing: a directory, indexed by the top bits of
// the hash, points to small open-addressing tables of 1,024 slots with
// linear probing, indexed by the low bits. A table that would pass half
// full splits in two by its next hash bit, doubling the directory (a copy of
// its pointers) when it is as deep as the directory. So no insert moves more
// than one table's records: a ledger of millions of jobs never pauses an
// event to rehash them all, as one table doubling in place would (tens of
// milliseconds at a million jobs). A removal shifts back the
// entries of its probe run that could move, so no tombstones accumulate.
// Tables never merge; the zero table is empty.
type jobTable struct {
	dir   []*jobTab // 2^depth entries; entry k serves the hashes whose top depth bits are k
	depth uint
	n     int

	// size and perEntry, when not zero, replace tabSlots and
	// recordsPerEntry: tests use tiny tables to reach deep directories
	// and the growth fallback with a few ids.
	size, perEntry int
}

// jobTab is one open-addressing table. It serves the hashes whose top depth
// bits are its prefix: the 2^(directory depth − depth) directory entries
// that share them point to it.
type jobTab struct {
	depth uint
	n     int
	slots []jobSlot // tabSlots, a power of two; more only for ids whose hashes share many top bits
}

// jobSlot is one slot; j == nil marks it empty.
type jobSlot struct {
	h uint64
	j *job
}

const (
	// tabSlots is the size of a table: splitting one moves at most half
	// as many records.
	tabSlots = 1 << 10
	// recordsPerEntry bounds the directory: it doubles only while it has
	// at most one entry per recordsPerEntry records.
	recordsPerEntry = 64
)

// tabSize returns the slots of a new table.
func (t *jobTable) tabSize() int { return cmp.Or(t.size, tabSlots) }

// len returns the number of records. O(1).
func (t *jobTable) len() int { return t.n }

// tab returns the table serving hash h; the directory must not be empty.
func (t *jobTable) tab(h uint64) *jobTab { return t.dir[h>>(64-t.depth)] }

// find returns the slot of hash h and id in tb, or the empty slot that ends
// its probe run.
func (tb *jobTab) find(h uint64, id JobID) *jobSlot {
	mask := uint64(len(tb.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &tb.slots[i]
		if s.j == nil || s.h == h && s.j.id == id {
			return s
		}
	}
}

// get returns the record of id, or nil. O(1) expected.
func (t *jobTable) get(id JobID) *job {
	if t.n == 0 {
		return nil
	}
	h := idhash.String(string(id))
	return t.tab(h).find(h, id).j
}

// put indexes j under its id, replacing the record of the same id if there
// is one. O(1) expected; a split moves at most one table's records.
func (t *jobTable) put(j *job) {
	if t.dir == nil {
		t.dir = []*jobTab{{slots: make([]jobSlot, t.tabSize())}}
	}
	h := idhash.String(string(j.id))
	tb := t.tab(h)
	s := tb.find(h, j.id)
	if s.j != nil {
		s.j = j
		return
	}
	if 2*(tb.n+1) > len(tb.slots) {
		// Split, unless that would double a directory that already has an
		// entry per recordsPerEntry records: only ids whose hashes share
		// many top bits (which random ids never do in numbers) fill one
		// table that far, and splitting it would double the directory to
		// no avail. Such a table grows instead, so memory stays
		// O(records) whatever the ids.
		if tb.depth < t.depth || len(t.dir) <= t.n/cmp.Or(t.perEntry, recordsPerEntry) {
			t.split(tb, h)
		} else {
			tb.rehash(2 * len(tb.slots))
		}
		tb = t.tab(h)
		s = tb.find(h, j.id) // the empty slot in the table h now goes to
	}
	*s = jobSlot{h, j}
	tb.n++
	t.n++
}

// split replaces tb, the table serving hash h, by two tables one bit
// deeper, doubling the directory first if tb is as deep as it.
// O(slots of tb + directory entries of tb).
func (t *jobTable) split(tb *jobTab, h uint64) {
	if tb.depth == t.depth {
		dir := make([]*jobTab, 2*len(t.dir))
		for i, x := range t.dir {
			dir[2*i], dir[2*i+1] = x, x
		}
		t.dir, t.depth = dir, t.depth+1
	}
	d := tb.depth + 1
	side := func(h uint64) uint64 { return h >> (64 - d) & 1 }
	var n [2]int
	for _, s := range tb.slots {
		if s.j != nil {
			n[side(s.h)]++
		}
	}
	var halves [2]*jobTab
	for k := range halves {
		size := t.tabSize()
		for size < 2*(n[k]+1) { // a grown table may not halve evenly
			size *= 2
		}
		halves[k] = &jobTab{depth: d, n: n[k], slots: make([]jobSlot, size)}
	}
	for _, s := range tb.slots {
		if s.j != nil {
			x := halves[side(s.h)]
			*x.find(s.h, s.j.id) = s
		}
	}
	// tb served a run of 2^(t.depth − tb.depth) directory entries, those
	// whose top tb.depth bits are h's; the first half of the run has next
	// bit 0.
	span := 1 << (t.depth - tb.depth)
	first := int(h>>(64-tb.depth)) * span
	for k := range span {
		t.dir[first+k] = halves[k/(span/2)]
	}
}

// rehash moves tb's records to size slots. O(size).
func (tb *jobTab) rehash(size int) {
	old := tb.slots
	tb.slots = make([]jobSlot, size)
	for _, s := range old {
		if s.j != nil {
			*tb.find(s.h, s.j.id) = s
		}
	}
}

// remove drops j if it is the record indexed under its id (a newer record
// of the same id is left alone). O(1) expected.
func (t *jobTable) remove(j *job) {
	if t.n == 0 {
		return
	}
	h := idhash.String(string(j.id))
	tb := t.tab(h)
	mask := uint64(len(tb.slots) - 1)
	i := h & mask
	for ; tb.slots[i].j != j; i = (i + 1) & mask {
		if tb.slots[i].j == nil {
			return
		}
	}
	// Backward-shift deletion: walk the rest of the run and move back every
	// entry whose home slot does not lie cyclically in (hole, entry], so
	// that a lookup never meets the hole before the entry it is after.
	hole := i
	for k := (i + 1) & mask; tb.slots[k].j != nil; k = (k + 1) & mask {
		home := tb.slots[k].h & mask
		if (k-home)&mask >= (k-hole)&mask {
			tb.slots[hole] = tb.slots[k]
			hole = k
		}
	}
	tb.slots[hole] = jobSlot{}
	tb.n--
	t.n--
}

// all returns the records in table order, which is unspecified: callers
// that need an order sort. O(capacity).
func (t *jobTable) all() []*job {
	out := make([]*job, 0, t.n)
	for i, tb := range t.dir {
		if i > 0 && t.dir[i-1] == tb {
			continue // a table is listed once per run of its entries
		}
		for _, s := range tb.slots {
			if s.j != nil {
				out = append(out, s.j)
			}
		}
	}
	return out
}

// getBatch sets js[i] to the record of ids[i], or nil, for every i (len(js)
// and len(hs), its scratch, ≥ len(ids)). It finds the records of a batch
// the way get finds one, in passes over the batch instead of one id after
// another: the first reads a byte of every id, the second computes every
// hash and reads every first slot, the third follows the probes and
// compares the ids. Looked up one by one, ids at random in a large table
// each wait for a slot and then a record to come from memory, one miss
// after another; in passes, the loads of different ids do not depend on
// one another, so the processor has many of them in flight at once.
// O(len(ids)) expected.
func (t *jobTable) getBatch(ids []JobID, js []*job, hs []uint64) {
	if t.n == 0 {
		clear(js[:len(ids)])
		return
	}
	hs = hs[:len(ids)]
	js = js[:len(ids)]
	// The ids' bytes first, which hashing waits for: a byte of each, kept
	// in hs[0] (overwritten below) so that the loads stay.
	var x byte
	for _, id := range ids {
		if len(id) > 0 {
			x ^= id[len(id)-1]
		}
	}
	if len(hs) > 0 {
		hs[0] = uint64(x)
	}
	for i, id := range ids {
		h := idhash.String(string(id))
		hs[i] = h
		tb := t.tab(h)
		js[i] = tb.slots[h&uint64(len(tb.slots)-1)].j
	}
	for i, id := range ids {
		if j := js[i]; j != nil && j.id == id {
			continue
		}
		h := hs[i]
		js[i] = t.tab(h).find(h, id).j
	}
}
