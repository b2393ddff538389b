package placement

import "fmt"

// orderBits sets the fan-out of the order index: 64 entries per block,
// the length of a cowArray chunk, so that block i of a level is chunk i of
// its array.
const orderBits = cowArrayBits

// orderVal is what the order index keeps of a node: its free GPUs and, if
// it is wholly free, its GPU count, both 0 for a node that does not accept
// placements (or no longer exists); at an upper level, the largest of each
// over a block of the level below.
type orderVal struct{ free, whole int32 }

// orderValOf is node n's entry in the order index.
func orderValOf(n *nodeState) orderVal {
	if !n.accepting() {
		return orderVal{}
	}
	v := orderVal{free: int32(n.free)}
	if n.free == n.gpus {
		v.whole = int32(n.gpus)
	}
	return v
}

// orderIndex finds nodes in the order the cluster received them, by
// ordinal, for [FirstFit]: the first node from a given ordinal on with at
// least so many free GPUs, or wholly free with at least so many GPUs. It
// is a tree of fan-out 64 whose levels are copy-on-write arrays: lv[0]
// holds every node's orderVal by ordinal, lv[l][i] the largest free and
// whole counts of lv[l−1][64i, 64i+64), and the top level has a single
// block. A search is O(64 · levels) = O(log n); a change O(levels),
// plus O(64) on each level where it lowers a block's largest count; a
// clone copies one pointer per 64 entries of each level, as the node
// records' array does, and the first change after it copies one chunk
// per level. Only a FirstFit cluster keeps it.
type orderIndex struct {
	lv []cowArray[orderVal]
}

// clone returns a copy sharing every chunk. O(n/64).
func (x *orderIndex) clone() orderIndex {
	out := orderIndex{lv: make([]cowArray[orderVal], len(x.lv))}
	for l := range x.lv {
		out.lv[l] = x.lv[l].clone()
	}
	return out
}

// set makes v the entry of node ord and brings the levels above up to
// date, adding a level first if ord lies beyond the top level's block.
func (x *orderIndex) set(tok *cowToken, ord int, v orderVal) {
	for len(x.lv) == 0 || ord>>(orderBits*len(x.lv)) > 0 {
		var top orderVal
		if len(x.lv) > 0 {
			top = x.blockMax(len(x.lv)-1, 0)
		}
		var a cowArray[orderVal]
		a.set(tok, 0, top)
		x.lv = append(x.lv, a)
	}
	old := x.lv[0].at(ord)
	if old == v {
		return
	}
	x.lv[0].set(tok, ord, v)
	i := ord
	for l := 1; l < len(x.lv); l++ {
		i >>= orderBits
		cur := x.lv[l].at(i)
		nv := cur
		var lowered bool
		nv.free, lowered = raise(cur.free, old.free, v.free)
		if lowered {
			nv = x.blockMax(l-1, i)
		} else if nv.whole, lowered = raise(cur.whole, old.whole, v.whole); lowered {
			nv = x.blockMax(l-1, i)
		}
		if nv == cur {
			return
		}
		x.lv[l].set(tok, i, nv)
		old, v = cur, nv
	}
}

// raise returns the largest count of a block whose largest was cur after
// one of its entries changed from old to v, or true when the block must
// be scanned to tell (the entry was the largest and went down).
func raise(cur, old, v int32) (int32, bool) {
	switch {
	case v >= cur:
		return v, false
	case old < cur:
		return cur, false
	}
	return 0, true
}

// blockMax returns the largest counts of block i of level l. O(64).
func (x *orderIndex) blockMax(l, i int) orderVal {
	var m orderVal
	a := &x.lv[l]
	if i >= len(a.chunks) {
		return m
	}
	for _, g := range &a.chunks[i].v {
		for _, e := range g {
			m.free = max(m.free, e.free)
			m.whole = max(m.whole, e.whole)
		}
	}
	return m
}

// scan returns the first index in [i, end of i's block) of level l whose
// free count (whole count, if whole is set) is at least need.
func (x *orderIndex) scan(l, i int, need int32, whole bool) (int, bool) {
	a := &x.lv[l]
	c := i >> orderBits
	if c >= len(a.chunks) {
		return 0, false
	}
	const g = cowArrayBits - cowChunkBits // entries of a group: 1<<g
	ch := &a.chunks[c].v
	for j := i & (1<<orderBits - 1); j < 1<<orderBits; j++ {
		e := &ch[j>>g][j&(1<<g-1)]
		if whole && e.whole >= need || !whole && e.free >= need {
			return c<<orderBits | j, true
		}
	}
	return 0, false
}

// next returns the first ordinal from from on whose node has at least
// need free GPUs (is wholly free with at least need GPUs, if whole is
// set), or −1. need must be positive. O(64 · levels).
func (x *orderIndex) next(from, need int, whole bool) int {
	if from < 0 || need <= 0 || need > MaxNodeGPUs {
		return -1
	}
	n := int32(need)
	l, i := 0, from
	for {
		if l == len(x.lv) {
			return -1
		}
		if j, ok := x.scan(l, i, n, whole); ok {
			i = j
			break
		}
		i = i>>orderBits + 1 // the next block, one level up
		l++
	}
	for l > 0 {
		l--
		i, _ = x.scan(l, i<<orderBits, n, whole)
	}
	return i
}

// check verifies that x is the order index of c's nodes: every node's
// entry as orderValOf gives it (0 past the last ordinal and for removed
// nodes), every upper entry the largest counts of its block, and a single
// block at the top.
func (x *orderIndex) check(c *Cluster) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("placement: check: order index: "+format, args...)
	}
	if c.nextNod > 0 && (len(x.lv) == 0 || (c.nextNod-1)>>(orderBits*len(x.lv)) > 0) {
		return fail("%d levels for %d ordinals", len(x.lv), c.nextNod)
	}
	for l := range x.lv {
		a := &x.lv[l]
		if l == len(x.lv)-1 && len(a.chunks) != 1 {
			return fail("top level %d has %d blocks", l, len(a.chunks))
		}
		for i := range len(a.chunks) << orderBits {
			var want orderVal
			switch {
			case l > 0:
				want = x.blockMax(l-1, i)
			case i < c.nextNod && c.recs.at(i) != nil:
				want = orderValOf(c.recs.at(i))
			}
			if got := a.at(i); got != want {
				return fail("level %d entry %d is %+v, want %+v", l, i, got, want)
			}
		}
	}
	return nil
}
