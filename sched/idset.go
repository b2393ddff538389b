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

// idSet finds duplicate job ids among the candidates. add hashes the ids
// one by one during validation and marks each in a bit set indexed by the
// top bits of its hash, eight bits an id: a bit that an id finds set already
// marks a possible repeat in a second set. firstDuplicate then compares, in
// input order, only the ids whose bit was marked twice — a few in a hundred,
// most of them different ids sharing a bit — in a small table. Each id costs
// its hash and a bit tested and set in a set that stays in cache, where a
// table of every id (or a Go map) would cost a cache miss or more per id.
type idSet struct {
	t     strTable
	names []Candidate
	// state of begin, add and firstDuplicate
	n      int      // ids added
	hashed []uint64 // the hashes of the ids added, in input order
	seen   []uint64 // bit set: some id's hash has these top bits
	twice  []uint64 // bit set: more than one id's hash has these top bits
	shift  uint     // 64 − log2(bits in seen)
	repeat int      // how many ids found their bit set
}

// smallIDs is the most ids firstDuplicate compares pair by pair, in
// O(n²) word comparisons that cost less than setting up the bit sets.
const smallIDs = 16

// begin prepares the set for the ids of cands, to be hashed in order by
// add. O(n / 32) to clear the bit sets of a large list.
func (s *idSet) begin(cands []Candidate) {
	n := len(cands)
	s.names = cands
	s.hashed = resize(s.hashed, n)
	s.n, s.repeat = 0, 0
	if n <= smallIDs {
		s.shift = 64 // no bit set
		return
	}
	bits, shift := 1024, uint(64-10)
	for bits < 8*n {
		bits <<= 1
		shift--
	}
	s.seen = resize(s.seen, bits/64)
	clear(s.seen)
	s.twice = resize(s.twice, bits/64)
	clear(s.twice)
	s.shift = shift
}

// add hashes the id of the next candidate and returns the hash
// (placement.IDHash of the id). O(length of the id).
func (s *idSet) add() uint64 {
	i := s.n
	h := idhash.String(string(s.names[i].Job))
	s.hashed[i] = h
	s.n++
	if s.shift < 64 {
		b := h >> s.shift
		w, m := b/64, uint64(1)<<(b%64)
		if s.seen[w]&m == 0 {
			s.seen[w] |= m
		} else {
			s.twice[w] |= m
			s.repeat++
		}
	}
	return h
}

// firstDuplicate returns the first candidate, in input order, among those
// added, whose job id an earlier candidate has, and the first candidate with
// that id; or -1, -1. Every id of a repeated id shares its bit, which add
// marked twice; going through the ids whose bit is marked in input order,
// the first found in the table of those before it is the answer, and the
// table holds the first candidate of each id. O(n) for n added, plus O(1)
// expected for each of the ids compared.
func (s *idSet) firstDuplicate() (int, int) {
	n, cands := s.n, s.names
	a := s.hashed[:n]
	if s.shift == 64 {
		// A few ids, as in the round of a simulator's tick: every pair,
		// in input order, without a table to set up.
		for i := 1; i < n; i++ {
			for j := range i {
				if a[i] == a[j] && cands[i].Job == cands[j].Job {
					return i, j
				}
			}
		}
		return -1, -1
	}
	if s.repeat == 0 {
		return -1, -1
	}
	// At most 2 × repeat ids have a bit marked twice.
	s.t.reset(2 * s.repeat)
	twice, shift := s.twice, s.shift
	for i, h := range a {
		if b := h >> shift; twice[b/64]&(1<<(b%64)) == 0 {
			continue
		}
		j, p := s.t.find(h, func(j int32) bool { return cands[j].Job == cands[i].Job })
		if j >= 0 {
			return i, int(j)
		}
		s.t.put(p, h, int32(i))
	}
	return -1, -1
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
