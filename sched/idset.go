package sched

import (
	"hash/maphash"

	"github.com/astraea-sched/astraea/ledger"
)

// idSet finds duplicate job ids among the candidates: open addressing with
// linear probing over a power-of-two table of candidate indices, keyed by a
// 64-bit hash of the id, with 32 bits of the hash kept beside each slot so
// that most probes never touch the strings. The table is at least twice the
// number of ids. Insert is O(1) expected; it costs about one cache miss,
// where a Go map of 100,000 strings costs two or three. The random seed only
// affects where ids land, never which ids are duplicates.
type idSet struct {
	seed  maphash.Seed
	slot  []int32  // 1 + candidate index; 0 = empty
	tag   []uint32 // high bits of the hash of the id in slot
	mask  uint64
	names []Candidate
}

// reset empties the set for cands, reusing its tables when large enough.
func (s *idSet) reset(cands []Candidate) {
	size := 1
	for size < 2*len(cands) {
		size <<= 1
	}
	if s.slot == nil {
		s.seed = maphash.MakeSeed()
	}
	if cap(s.slot) >= size {
		s.slot, s.tag = s.slot[:size], s.tag[:size]
		clear(s.slot)
	} else {
		s.slot, s.tag = make([]int32, size), make([]uint32, size)
	}
	s.mask = uint64(size - 1)
	s.names = cands
}

// insert adds the id of candidate i and reports the index of an earlier
// candidate with the same id, or -1.
func (s *idSet) insert(i int, id ledger.JobID) int {
	h := maphash.String(s.seed, string(id))
	tag := uint32(h >> 32)
	for p := h & s.mask; ; p = (p + 1) & s.mask {
		j := s.slot[p]
		if j == 0 {
			s.slot[p] = int32(i) + 1
			s.tag[p] = tag
			return -1
		}
		if s.tag[p] == tag && s.names[j-1].Job == id {
			return int(j - 1)
		}
	}
}
