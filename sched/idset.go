package sched

import (
	"github.com/astraea-sched/astraea/internal/idhash"
	"github.com/astraea-sched/astraea/ledger"
)

// strTable maps strings to dense int32 indices: open addressing with linear
// probing over a power-of-two table of uint64 entries, each holding 32 bits
// of the key's 64-bit hash beside 1 + the index (0 = empty), so that a probe
// touches one word and most probes never touch the strings. The caller
// keeps the strings and says, through same, whether index j holds the key
// being looked up; it is asked only when the stored hash bits match. The
// hash is fixed, not seeded per process, so that a round probes the same
// slots, in the same time, on every run; where keys land never decides
// which keys are equal.
type strTable struct {
	slot []uint64
	mask uint64
	n    int // keys stored
}

// reset empties the table and sizes it for at least n keys at a load of at
// most one half, reusing its array when large enough. O(size).
func (t *strTable) reset(n int) {
	size := 8
	for size < 2*n {
		size <<= 1
	}
	if cap(t.slot) >= size {
		t.slot = t.slot[:size]
		clear(t.slot)
	} else {
		t.slot = make([]uint64, size)
	}
	t.mask = uint64(size - 1)
	t.n = 0
}

// find returns the index stored for the key with hash h, or -1 and the slot
// where the key would go. O(1) expected.
func (t *strTable) find(h uint64, same func(j int32) bool) (int32, uint64) {
	tag := h >> 32
	for p := h & t.mask; ; p = (p + 1) & t.mask {
		e := t.slot[p]
		if e == 0 {
			return -1, p
		}
		if e>>32 == tag && same(int32(uint32(e))-1) {
			return int32(uint32(e)) - 1, p
		}
	}
}

// put stores index i for the key with hash h in slot p, as returned by find.
func (t *strTable) put(p, h uint64, i int32) {
	t.set(p, h, i)
	t.n++
}

// set stores index i for the key with hash h in slot p, which find
// returned, replacing what the slot held.
func (t *strTable) set(p, h uint64, i int32) {
	t.slot[p] = h&^0xffffffff | uint64(uint32(i+1))
}

// putNew stores index i for a key with hash h that the table does not
// hold. O(1) expected.
func (t *strTable) putNew(h uint64, i int32) {
	_, p := t.find(h, func(int32) bool { return false })
	t.put(p, h, i)
}

// idSet finds duplicate job ids among the candidates: add hashes them one
// by one during validation, and firstDuplicate checks them all at once in
// cache-sized groups, where one large table (or a Go map) would cost a cache
// miss or more per id.
type idSet struct {
	t     strTable
	names []Candidate
	// state of begin, add and firstDuplicate
	n       int      // ids added
	groups  int      // a power of two
	shift   uint     // 64 − log2(groups)
	hashed  []uint64 // the ids added (see hashedID), in input order
	grouped []uint64 // the same, grouped by firstDuplicate
	starts  []int32  // starts[g+1] counts group g, then prefix sums
	next    []int32  // firstDuplicate's position in each group
}

// hashedID packs candidate index i with the top 32 bits of h, the hash of
// its job id, in one word: 8 bytes an id instead of 16. The top bits choose
// the group, and the table needs only 32 bits of a hash (see strTable).
func hashedID(h uint64, i int) uint64 { return h&^0xffffffff | uint64(uint32(i)) }

// probeHash is the hash a packed id is probed with: its stored 32 bits, in
// the top half as strTable keeps them and in the bottom half, whose low
// bits choose the slot (the group's top bits lie far above them).
func probeHash(e uint64) uint64 { return e&^0xffffffff | e>>32 }

// groupSize is about how many ids firstDuplicate checks in one table: 1,024
// ids take a 16 KiB table, which stays in the fastest cache.
const groupSize = 1024

// smallIDs is the most ids firstDuplicate compares pair by pair, in
// O(n²) word comparisons that cost less than setting up the table.
const smallIDs = 16

// begin prepares the set for the ids of cands, to be hashed in order by
// add. O(n / groupSize).
func (s *idSet) begin(cands []Candidate) {
	n := len(cands)
	s.names = cands
	if s.t.slot == nil {
		s.t.reset(groupSize)
	}
	s.groups, s.shift = 1, 64
	for s.groups*groupSize < n {
		s.groups <<= 1
		s.shift--
	}
	s.starts = resize(s.starts, s.groups+1)
	clear(s.starts)
	s.hashed = resize(s.hashed, n)
	s.n = 0
}

// group returns the group of the ids with hash h: its top bits (none, so
// group 0, when the shift is 64: Go shifts every bit out).
func (s *idSet) group(h uint64) uint64 { return h >> s.shift }

// add hashes the id of the next candidate and returns the hash
// (placement.IDHash of the id). O(length of the id).
func (s *idSet) add() uint64 {
	i := s.n
	h := idhash.String(string(s.names[i].Job))
	s.hashed[i] = hashedID(h, i)
	s.starts[s.group(h)+1]++
	s.n++
	return h
}

// firstDuplicate returns the first candidate, in input order, among those
// added, whose job id an earlier candidate has, and the first candidate with
// that id; or -1, -1. It sorts the hashes into groups of about groupSize by
// their top bits (one counting pass during add, one pass here that copies
// them, in order, to their groups' places in a second array: its reads go
// in order and its writes to as many places as groups, none waiting for
// another, where a permutation in place would chain one random access to
// the next) and looks for equal ids group by group in a table small
// enough to stay in cache, so that it touches memory in order instead of
// at random. O(n) expected for n added.
//
// Within a group the ids come in no particular order, so the table keeps,
// for every id, the least index seen so far, and every repeat yields the
// pair (later, earlier) of its index and that one. The answer is the pair
// whose first index is least: for the id whose second occurrence s2 comes
// first in input order, with first occurrence s1, the pair (s2, s1) is
// yielded whichever of the two is met first (the other indices of that id
// exceed s2), and every pair of any id has a first index at least that
// id's second occurrence.
func (s *idSet) firstDuplicate() (int, int) {
	n, groups, cands := s.n, s.groups, s.names
	a := s.hashed[:n]
	if n <= smallIDs {
		// A few ids, as in the round of a simulator's tick: every pair,
		// in input order, without the groups and the table to set up.
		for i := 1; i < n; i++ {
			for j := range i {
				if a[i]>>32 == a[j]>>32 && cands[i].Job == cands[j].Job {
					return i, j
				}
			}
		}
		return -1, -1
	}
	st := s.starts
	for g := 1; g <= groups; g++ {
		st[g] += st[g-1]
	}
	s.next = resize(s.next, groups)
	next := s.next
	copy(next, st[:groups])
	s.grouped = resize(s.grouped, n)
	b := s.grouped
	for _, e := range a {
		g := s.group(e)
		b[next[g]] = e
		next[g]++
	}
	a = b
	dupI, dupJ := -1, -1
	for g := range groups {
		lo, hi := st[g], st[g+1]
		s.t.reset(int(hi - lo))
		for _, e := range a[lo:hi] {
			i, h := int32(uint32(e)), probeHash(e)
			j, p := s.t.find(h, func(j int32) bool { return cands[j].Job == cands[i].Job })
			if j < 0 {
				s.t.put(p, h, i)
				continue
			}
			later, earlier := max(i, j), min(i, j)
			if dupI < 0 || int(later) < dupI {
				dupI, dupJ = int(later), int(earlier)
			}
			if i < j {
				s.t.set(p, h, i)
			}
		}
	}
	return dupI, dupJ
}

// tenantSet interns the tenant ids of a round: index i names tenant ids[i].
// It grows by doubling, so a round with few tenants keeps a table that stays
// in cache.
//
// In front of the table, seen remembers for each tail slot (see tailSlot)
// the last id added or found with that tail: a round whose candidates come
// in no order of tenant looks its tenants up once a candidate, and most
// such lookups are then one comparison of ids, without hashing the id and
// probing the table. An entry is only a guess, always checked against the
// ids held, so it never decides which ids are equal, and reset leaves the
// entries as they are. A set of fewer than seenFrom ids, whose table is
// small, neither reads nor writes them: a round of a few tenants pays
// nothing for them.
type tenantSet struct {
	t    strTable
	ids  []ledger.TenantID
	seen [tailSlots]int32 // 1 + the index of an id with that tail slot, or 0 (or stale)
}

// tailSlots is the size of tenantSet.seen: 4 KiB of cache, a slot for
// each of a thousand numbered ids.
const tailSlots = 1024

// seenFrom is the number of ids from which a tenantSet uses seen.
const seenFrom = 16

// tailSlot returns the seen slot of id: its length and last three bytes,
// weighted so that ids numbered in decimal with the same length differ in
// their last three digits land in different slots. O(1).
func tailSlot(id ledger.TenantID) int {
	n := len(id)
	h := 7 * n
	if n > 0 {
		h += int(id[n-1])
	}
	if n > 1 {
		h += 10 * int(id[n-2])
	}
	if n > 2 {
		h += 100 * int(id[n-3])
	}
	return h & (tailSlots - 1)
}

// reset empties the set, keeping a small table.
func (s *tenantSet) reset() {
	s.t.reset(32)
	clear(s.ids)
	s.ids = s.ids[:0]
}

// index returns the index of tenant id, or -1. O(1) expected.
func (s *tenantSet) index(id ledger.TenantID) int32 {
	if len(s.ids) < seenFrom {
		j, _ := s.t.find(idhash.String(string(id)), func(j int32) bool { return s.ids[j] == id })
		return j
	}
	slot := tailSlot(id)
	if j := s.seen[slot] - 1; j >= 0 && int(j) < len(s.ids) && s.ids[j] == id {
		return j
	}
	j, _ := s.t.find(idhash.String(string(id)), func(j int32) bool { return s.ids[j] == id })
	if j >= 0 {
		s.seen[slot] = j + 1
	}
	return j
}

// add interns id, which index reported absent, as the next index.
func (s *tenantSet) add(id ledger.TenantID) {
	if 2*(s.t.n+1) > len(s.t.slot) {
		s.t.reset(len(s.t.slot))
		for j, x := range s.ids {
			s.t.putNew(idhash.String(string(x)), int32(j))
		}
	}
	s.t.putNew(idhash.String(string(id)), int32(len(s.ids)))
	if len(s.ids) >= seenFrom {
		s.seen[tailSlot(id)] = int32(len(s.ids)) + 1
	}
	s.ids = append(s.ids, id)
}
