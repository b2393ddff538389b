package placement

import (
	"fmt"
	"math/bits"
	"slices"
	"sort"

	"github.com/google/btree"
)

// The free-capacity index holds the nodes that accept placements and have
// free GPUs, in the order of their keys (free GPUs, then node id), as a
// bitset per free count over the nodes' ranks, a node's rank being its
// position among all nodes in id order: the nodes with v free GPUs, in id
// order, are the set bits of bitset v, in bit order. Moving a node from one
// count to another clears one bit and sets another, O(1), where an ordered
// tree deletes and inserts a key at O(log n) each; the best fit for d GPUs
// is the first bit of the first non-empty bitset from d up, found through
// a bit per count that says whether its bitset is empty and, inside a
// bitset, a bit per 64-bit word that says whether the word is zero: O(1)
// for clusters of up to 4,096 nodes, O(n/4,096) beyond.
//
// A bitset is cut in chunks of 64 words (4,096 ranks) that, like the set
// itself, are copy-on-write: a clone copies the list of sets and the
// counts' bits, O(largest count), and adding or removing a rank copies at
// most one set's list of chunks and one chunk of 528 bytes that a clone
// still shares (a node moving between counts does both).
//
// Ranks change only when a node is added or removed: that drops the index,
// which the next read rebuilds from the nodes in O(n + counts·n/4,096), so
// that a burst of node changes pays once.
//
// Every topology domain indexes its nodes the same way, ranked among its
// members (see Cluster.domainIndexes): a node that fills or frees GPUs
// moves in its domains' indexes by a bit cleared and a bit set, where a
// tree of keys would search for the key, shift the keys after it and do
// it again to insert.
type freeIndex struct {
	valid    bool        // false until (re)built after a node was added or removed
	rank     []int32     // by node ordinal: the node's rank (-1: no node); shared by clones, never changed
	byRank   []key       // by rank: the node's key without a count, for the keys yielded; shared by clones, never changed
	sets     []*countSet // by free count: the ranks of the indexed nodes with that many free GPUs; nil if never used
	nonEmpty []uint64    // bit v: sets[v] has a member
	n        int         // members
}

// countSet is the bitset of one free count. The set of an index of at
// most 64 ranks (a small index: a rack's or a switch's nodes) is one word
// of its own, w0, without chunks, so that a domain's index takes a word
// per count, not a chunk of 4,096 ranks, and a clone's first change
// copies the set alone.
type countSet struct {
	owned
	n      int         // members
	chunks []*bitChunk // by rank / 4,096; nil when empty, or in a small index
	w0     uint64      // the set of a small index
}

// smallIndex is the most ranks an index holds in countSet.w0.
const smallIndex = 64

// small reports whether x keeps its sets in countSet.w0.
func (x *freeIndex) small() bool { return len(x.byRank) <= smallIndex }

// bitChunk holds 4,096 ranks of a bitset.
type bitChunk struct {
	owned
	any uint64 // bit i: w[i] != 0
	w   [64]uint64
}

// owned is the owner token of a copy-on-write record.
type owned struct{ owner *cowToken }

func (o *owned) own(tok *cowToken)          { o.owner = tok }
func (o *owned) ownedBy(tok *cowToken) bool { return o.owner == tok }

// ownable is a pointer to a copy-on-write record.
type ownable[T any] interface {
	*T
	own(tok *cowToken)
	ownedBy(tok *cowToken) bool
}

// ownedAt returns (*s)[i], growing *s with nils to reach it, after making
// it a new record if nil or a copy if tok does not own it (then copied is
// true), tok's either way. O(1) plus the copy.
func ownedAt[T any, P ownable[T]](tok *cowToken, s *[]P, i int) (p P, copied bool) {
	for i >= len(*s) {
		*s = append(*s, nil)
	}
	p = (*s)[i]
	switch {
	case p == nil:
		p = new(T)
	case !p.ownedBy(tok):
		cp := *p
		p, copied = &cp, true
	default:
		return p, false
	}
	p.own(tok)
	(*s)[i] = p
	return p, copied
}

// clone returns a copy sharing every set and chunk. O(largest count).
func (x *freeIndex) clone() freeIndex {
	out := *x
	out.sets = slices.Clone(x.sets)
	out.nonEmpty = slices.Clone(x.nonEmpty)
	return out
}

// build makes x the index of the nodes of c, in c's id order. O(n +
// counts·n/4,096).
func (x *freeIndex) build(c *Cluster) {
	rank := make([]int32, c.nextNod)
	for i := range rank {
		rank[i] = -1
	}
	byRank := make([]key, 0, c.nodes.Len())
	c.nodes.Ascend(func(e nodeEntry) bool {
		rank[e.ord] = int32(len(byRank))
		byRank = append(byRank, nodeKey(0, c.recs.at(e.ord)))
		return true
	})
	*x = freeIndex{valid: true, rank: rank, byRank: byRank}
	for r, k := range byRank {
		if n := c.recs.at(k.ord); n.indexed() {
			x.add(c.tok, n.free, r)
		}
	}
}

// key returns the key of the node of rank r with v free GPUs.
func (x *freeIndex) key(v, r int) key {
	k := x.byRank[r]
	k.n = v
	return k
}

// mutSet returns set v, created or copied as needed so that tok owns it.
func (x *freeIndex) mutSet(tok *cowToken, v int) *countSet {
	s, copied := ownedAt(tok, &x.sets, v)
	if copied {
		s.chunks = slices.Clone(s.chunks) // the chunks stay shared
	}
	return s
}

// mutChunk returns chunk ci of s, created or copied as needed so that tok
// owns it. s is tok's.
func (s *countSet) mutChunk(tok *cowToken, ci int) *bitChunk {
	ch, _ := ownedAt(tok, &s.chunks, ci)
	return ch
}

// mutBits returns set v and its chunk of rank r, each created or copied as
// needed so that tok owns it. The common case, both tok's already, is
// settled without the generic ownedAt, whose calls through its shape's
// dictionary cost more than the bit changes they precede.
func (x *freeIndex) mutBits(tok *cowToken, v, r int) (*countSet, *bitChunk) {
	if v < len(x.sets) {
		if s := x.sets[v]; s != nil && s.owner == tok {
			if ci := r >> 12; ci < len(s.chunks) {
				if ch := s.chunks[ci]; ch != nil && ch.owner == tok {
					return s, ch
				}
			}
		}
	}
	s := x.mutSet(tok, v)
	return s, s.mutChunk(tok, r>>12)
}

// mutSmall returns set v of a small index, created or copied as needed so
// that tok owns it, settling the common case, tok's already, inline (see
// mutBits).
func (x *freeIndex) mutSmall(tok *cowToken, v int) *countSet {
	if v < len(x.sets) {
		if s := x.sets[v]; s != nil && s.owner == tok {
			return s
		}
	}
	s, _ := ownedAt(tok, &x.sets, v)
	return s
}

// add puts rank r in set v; r is in no set. O(1) plus a copy of what a
// clone shares.
func (x *freeIndex) add(tok *cowToken, v, r int) {
	var s *countSet
	if x.small() {
		s = x.mutSmall(tok, v)
		s.w0 |= 1 << uint(r)
	} else {
		var ch *bitChunk
		s, ch = x.mutBits(tok, v, r)
		wi := (r >> 6) & 63
		ch.w[wi] |= 1 << uint(r&63)
		ch.any |= 1 << uint(wi)
	}
	s.n++
	x.n++
	x.markNonEmpty(v)
}

// remove takes rank r out of set v, which holds it. O(1) plus a copy of
// what a clone shares.
func (x *freeIndex) remove(tok *cowToken, v, r int) {
	var s *countSet
	if x.small() {
		s = x.mutSmall(tok, v)
		s.w0 &^= 1 << uint(r)
	} else {
		var ch *bitChunk
		s, ch = x.mutBits(tok, v, r)
		wi := (r >> 6) & 63
		ch.w[wi] &^= 1 << uint(r&63)
		if ch.w[wi] == 0 {
			ch.any &^= 1 << uint(wi)
		}
	}
	s.n--
	x.n--
	x.leftEmpty(s, v)
}

// move takes rank r from set from, which holds it, to set to, another
// count, as remove then add do, in one call: the step of a node whose free
// count changes while it stays in the index. O(1) plus a copy of what a
// clone shares.
func (x *freeIndex) move(tok *cowToken, from, to, r int) {
	var s, t *countSet
	if x.small() {
		s, t = x.mutSmall(tok, from), x.mutSmall(tok, to)
		s.w0 &^= 1 << uint(r)
		t.w0 |= 1 << uint(r)
	} else {
		var ch, ct *bitChunk
		s, ch = x.mutBits(tok, from, r)
		t, ct = x.mutBits(tok, to, r)
		wi, bit := (r>>6)&63, uint64(1)<<uint(r&63)
		ch.w[wi] &^= bit
		if ch.w[wi] == 0 {
			ch.any &^= 1 << uint(wi)
		}
		ct.w[wi] |= bit
		ct.any |= 1 << uint(wi)
	}
	s.n--
	t.n++
	x.leftEmpty(s, from)
	x.markNonEmpty(to)
}

// markNonEmpty records that set v has a member.
func (x *freeIndex) markNonEmpty(v int) {
	for v>>6 >= len(x.nonEmpty) {
		x.nonEmpty = append(x.nonEmpty, 0)
	}
	x.nonEmpty[v>>6] |= 1 << uint(v&63)
}

// leftEmpty clears set v's emptiness bit if s, set v, has no member left.
// The set and its chunks stay, for the nodes that come back to this count:
// best-fit packing empties and refills the partly free counts all the time.
func (x *freeIndex) leftEmpty(s *countSet, v int) {
	if s.n == 0 {
		x.nonEmpty[v>>6] &^= 1 << uint(v&63)
	}
}

// nextCount returns the least non-empty count ≥ v, or -1. O(counts/64).
func (x *freeIndex) nextCount(v int) int {
	v = max(v, 0)
	for i := v >> 6; i < len(x.nonEmpty); i++ {
		w := x.nonEmpty[i]
		if i == v>>6 {
			w &^= 1<<uint(v&63) - 1
		}
		if w != 0 {
			return i<<6 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

// prevCount returns the greatest non-empty count ≤ v, or -1. O(counts/64).
func (x *freeIndex) prevCount(v int) int {
	if v < 0 {
		return -1
	}
	for i := min(v>>6, len(x.nonEmpty)-1); i >= 0; i-- {
		w := x.nonEmpty[i]
		if i == v>>6 && v&63 != 63 {
			w &= 1<<uint(v&63+1) - 1
		}
		if w != 0 {
			return i<<6 + 63 - bits.LeadingZeros64(w)
		}
	}
	return -1
}

// set returns the bitset of count v, or nil if it is empty.
func (x *freeIndex) set(v int) *countSet {
	if v < 0 || v >= len(x.sets) {
		return nil
	}
	return x.sets[v]
}

// nextRank returns the least rank ≥ r in set v, or -1. O(n/4,096).
func (x *freeIndex) nextRank(v, r int) int {
	s := x.set(v)
	if s == nil {
		return -1
	}
	r = max(r, 0)
	if x.small() {
		if w := s.w0 &^ (1<<uint(r) - 1); r < 64 && w != 0 {
			return bits.TrailingZeros64(w)
		}
		return -1
	}
	for ci := r >> 12; ci < len(s.chunks); ci++ {
		if ch := s.chunks[ci]; ch != nil {
			if i := ch.next(max(r-ci<<12, 0)); i >= 0 {
				return ci<<12 | i
			}
		}
	}
	return -1
}

// firstRank returns the least rank in set v, which has a member: nextRank(v,
// 0) for the best fit, reading one summary word per chunk. O(n/4,096).
func (x *freeIndex) firstRank(v int) int {
	if x.small() {
		return bits.TrailingZeros64(x.sets[v].w0)
	}
	for ci, ch := range x.sets[v].chunks {
		if ch != nil && ch.any != 0 {
			wi := bits.TrailingZeros64(ch.any)
			return ci<<12 | wi<<6 | bits.TrailingZeros64(ch.w[wi])
		}
	}
	return -1 // not reached: v has a member
}

// prevRank returns the greatest rank ≤ r in set v, or -1. O(n/4,096).
func (x *freeIndex) prevRank(v, r int) int {
	s := x.set(v)
	if s == nil || r < 0 {
		return -1
	}
	if x.small() {
		if w := s.w0 & (2<<uint(min(r, 63)) - 1); w != 0 { // bits 0..r (all for 63: 2<<63 is 0)
			return 63 - bits.LeadingZeros64(w)
		}
		return -1
	}
	for ci := min(r>>12, len(s.chunks)-1); ci >= 0; ci-- {
		if ch := s.chunks[ci]; ch != nil {
			if i := ch.prev(min(r-ci<<12, 1<<12-1)); i >= 0 {
				return ci<<12 | i
			}
		}
	}
	return -1
}

// next returns the least bit ≥ i (i < 4,096) of the chunk, or -1. O(1).
func (ch *bitChunk) next(i int) int {
	wi := i >> 6
	if w := ch.w[wi] &^ (1<<uint(i&63) - 1); w != 0 {
		return wi<<6 | bits.TrailingZeros64(w)
	}
	if words := ch.any &^ (2<<uint(wi) - 1); words != 0 { // the words after wi
		wi = bits.TrailingZeros64(words)
		return wi<<6 | bits.TrailingZeros64(ch.w[wi])
	}
	return -1
}

// prev returns the greatest bit ≤ i (i ≥ 0) of the chunk, or -1. O(1).
func (ch *bitChunk) prev(i int) int {
	wi := i >> 6
	if w := ch.w[wi] & (2<<uint(i&63) - 1); w != 0 { // bits 0..i&63 (all for 63: 2<<63 is 0)
		return wi<<6 | (63 - bits.LeadingZeros64(w))
	}
	if words := ch.any & (1<<uint(wi) - 1); words != 0 { // the words before wi
		wi = 63 - bits.LeadingZeros64(words)
		return wi<<6 | (63 - bits.LeadingZeros64(ch.w[wi]))
	}
	return -1
}

// bestFit returns the key of the node with the fewest free GPUs that still
// holds demand, the lowest id among equals. O(counts/64 + n/4,096).
func (x *freeIndex) bestFit(demand int) (key, bool) {
	v := x.nextCount(demand)
	if v < 0 {
		return key{}, false
	}
	return x.key(v, x.firstRank(v)), true
}

// largest returns the most free GPUs of a node in the index, or 0.
// O(counts/64).
func (x *freeIndex) largest() int {
	return max(x.prevCount(len(x.nonEmpty)*64-1), 0)
}

// minNodes returns the fewest nodes whose free GPUs add up to demand, the
// largest blocks first; the index holds demand in total. O(counts).
func (x *freeIndex) minNodes(demand int) int {
	k := 0
	for v := x.prevCount(len(x.nonEmpty)*64 - 1); v > 0; v = x.prevCount(v - 1) {
		m := x.sets[v].n
		if need := (demand + v - 1) / v; need <= m {
			return k + need
		}
		k += m
		demand -= m * v
	}
	return k
}

// Len returns the number of nodes in the index. O(1).
func (x *freeIndex) Len() int { return x.n }

// Max returns the greatest key. O(counts/64 + n/4,096).
func (x *freeIndex) Max() (key, bool) {
	v := x.prevCount(len(x.nonEmpty)*64 - 1)
	if v < 0 {
		return key{}, false
	}
	return x.key(v, x.prevRank(v, len(x.byRank)-1)), true
}

// rankOf returns the number of nodes whose ids are below id: the rank of
// the first node with an id ≥ id. O(log n).
func (x *freeIndex) rankOf(id string) int {
	return sort.Search(len(x.byRank), func(i int) bool { return x.byRank[i].id >= id })
}

// AscendGreaterOrEqual calls iterator for every key ≥ pivot, ascending,
// until it returns false. O(counts/64 + n/4,096) to the first key, then
// O(1) amortized per key in a dense set.
func (x *freeIndex) AscendGreaterOrEqual(pivot key, iterator btree.ItemIteratorG[key]) {
	r0 := 0
	if pivot.id != "" {
		r0 = x.rankOf(pivot.id)
	}
	for v := x.nextCount(pivot.n); v >= 0; v = x.nextCount(v + 1) {
		if v > pivot.n {
			r0 = 0
		}
		if !x.ascendSet(v, r0, iterator) {
			return
		}
	}
}

// ascendSet calls iterator for the key of every rank ≥ r0 in set v,
// ascending, and reports whether it never returned false. O(1) per key in a
// dense set, reading the words one by one.
func (x *freeIndex) ascendSet(v, r0 int, iterator btree.ItemIteratorG[key]) bool {
	s := x.set(v)
	if s == nil {
		return true
	}
	r0 = max(r0, 0)
	if x.small() {
		if r0 >= 64 {
			return true
		}
		for w := s.w0 &^ (1<<uint(r0) - 1); w != 0; w &= w - 1 {
			if !iterator(x.key(v, bits.TrailingZeros64(w))) {
				return false
			}
		}
		return true
	}
	c0, w0 := r0>>12, (r0>>6)&63
	for ci := c0; ci < len(s.chunks); ci++ {
		ch := s.chunks[ci]
		if ch == nil {
			continue
		}
		words := ch.any
		if ci == c0 {
			words &^= 1<<uint(w0) - 1 // from r0's word on
		}
		for ; words != 0; words &= words - 1 {
			wi := bits.TrailingZeros64(words)
			w := ch.w[wi]
			if ci == c0 && wi == w0 {
				w &^= 1<<uint(r0&63) - 1 // from r0 on
			}
			for ; w != 0; w &= w - 1 {
				if !iterator(x.key(v, ci<<12|wi<<6|bits.TrailingZeros64(w))) {
					return false
				}
			}
		}
	}
	return true
}

// Ascend calls iterator for every key, ascending, until it returns false.
func (x *freeIndex) Ascend(iterator btree.ItemIteratorG[key]) {
	x.AscendGreaterOrEqual(key{}, iterator)
}

// DescendLessOrEqual calls iterator for every key ≤ pivot, descending,
// until it returns false. Costs as AscendGreaterOrEqual.
func (x *freeIndex) DescendLessOrEqual(pivot key, iterator btree.ItemIteratorG[key]) {
	r0 := -1 // no id is ≤ ""
	if pivot.id != "" {
		r0 = x.rankOf(pivot.id) - 1 // the last rank whose id is < pivot.id
		if r0+1 < len(x.byRank) && x.byRank[r0+1].id == pivot.id {
			r0++ // and the one equal to it
		}
	}
	for v := x.prevCount(pivot.n); v >= 0; v = x.prevCount(v - 1) {
		if v < pivot.n {
			r0 = len(x.byRank) - 1
		}
		if !x.descendSet(v, r0, iterator) {
			return
		}
	}
}

// descendSet calls iterator for the key of every rank ≤ r0 in set v,
// descending, and reports whether it never returned false. Costs as
// ascendSet.
func (x *freeIndex) descendSet(v, r0 int, iterator btree.ItemIteratorG[key]) bool {
	s := x.set(v)
	if s == nil || r0 < 0 {
		return true
	}
	if x.small() {
		for w := s.w0 & (2<<uint(min(r0, 63)) - 1); w != 0; {
			b := 63 - bits.LeadingZeros64(w)
			w &^= 1 << uint(b)
			if !iterator(x.key(v, b)) {
				return false
			}
		}
		return true
	}
	c0, w0 := r0>>12, (r0>>6)&63
	for ci := min(c0, len(s.chunks)-1); ci >= 0; ci-- {
		ch := s.chunks[ci]
		if ch == nil {
			continue
		}
		words := ch.any
		if ci == c0 {
			words &= 2<<uint(w0) - 1 // up to r0's word (all for 63: 2<<63 is 0)
		}
		for words != 0 {
			wi := 63 - bits.LeadingZeros64(words)
			words &^= 1 << uint(wi)
			w := ch.w[wi]
			if ci == c0 && wi == w0 {
				w &= 2<<uint(r0&63) - 1 // up to r0
			}
			for w != 0 {
				b := 63 - bits.LeadingZeros64(w)
				w &^= 1 << uint(b)
				if !iterator(x.key(v, ci<<12|wi<<6|b)) {
					return false
				}
			}
		}
	}
	return true
}

// check verifies the index's own invariants: ranks in id order for the
// nodes of c, every set's count, chunk summaries and emptiness bit, and
// the total. O(n + counts·n/64).
func (x *freeIndex) check(c *Cluster) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("placement: check: free index: "+format, args...)
	}
	if len(x.byRank) != c.nodes.Len() {
		return fail("%d ranks for %d nodes", len(x.byRank), c.nodes.Len())
	}
	r := 0
	var err error
	c.nodes.Ascend(func(e nodeEntry) bool {
		if k := x.byRank[r]; k.ord != e.ord || k.id != e.id || k.pre != idPrefix16(e.id) || k.n != 0 || int(x.rank[e.ord]) != r {
			err = fail("node %q has rank %d, want %d", e.id, x.rank[e.ord], r)
			return false
		}
		r++
		return true
	})
	if err != nil {
		return err
	}
	return x.checkSets(fail)
}

// checkSets verifies every set's count, chunk summaries and emptiness bit,
// and the total, for a set of len(x.byRank) ranks. fail builds the error.
// O(counts·ranks/64).
func (x *freeIndex) checkSets(fail func(format string, args ...any) error) error {
	total := 0
	for v, s := range x.sets {
		nonEmpty := v>>6 < len(x.nonEmpty) && x.nonEmpty[v>>6]&(1<<uint(v&63)) != 0
		if s == nil {
			if nonEmpty {
				return fail("count %d marked non-empty without a set", v)
			}
			continue
		}
		m := bits.OnesCount64(s.w0)
		if x.small() && s.chunks != nil || !x.small() && s.w0 != 0 {
			return fail("count %d keeps its set in the wrong form for %d ranks", v, len(x.byRank))
		}
		if s.w0 != 0 && 63-bits.LeadingZeros64(s.w0) >= len(x.byRank) {
			return fail("count %d holds a rank beyond the nodes", v)
		}
		for ci, ch := range s.chunks {
			if ch == nil {
				continue
			}
			for wi, w := range ch.w {
				if (w != 0) != (ch.any&(1<<uint(wi)) != 0) {
					return fail("count %d chunk %d word %d summary is wrong", v, ci, wi)
				}
				if w != 0 && (ci<<12|wi<<6|63-bits.LeadingZeros64(w)) >= len(x.byRank) {
					return fail("count %d holds a rank beyond the nodes", v)
				}
				m += bits.OnesCount64(w)
			}
		}
		if m != s.n || (m > 0) != nonEmpty {
			return fail("count %d holds %d ranks, counts %d, marked non-empty %t", v, m, s.n, nonEmpty)
		}
		total += m
	}
	for i, w := range x.nonEmpty {
		if w != 0 && i<<6|(63-bits.LeadingZeros64(w)) >= len(x.sets) {
			return fail("a count beyond the sets is marked non-empty")
		}
	}
	if total != x.n {
		return fail("holds %d nodes, counts %d", total, x.n)
	}
	return nil
}
