package placement

import (
	"fmt"
	"iter"
	"math/bits"
	"slices"
	"strings"

	"github.com/astraea-sched/astraea/internal/idhash"
	"github.com/google/btree"
)

// MaxNodeGPUs is the largest GPU count of a node. Occupancy is kept per GPU,
// so a node costs memory and placement time in proportion to its GPUs.
const MaxNodeGPUs = 1 << 16

// maxIndexedSpan is the largest node count for which every topology level
// keeps a ready index of its domains by "sum of the k largest free blocks".
// A job spanning more nodes finds its domain by a scan of the level.
const maxIndexedSpan = 16

// treeDegree is the degree of the cluster-wide B-trees.
const treeDegree = 16

// cowToken identifies the owner of mutable node and domain records and of
// the chunks of the arrays holding them. A record or chunk whose owner is
// not the cluster's current token is shared with a clone and is copied
// before it is changed; an allocation record (allocRec), never changed,
// is copied before its placement is given away. It is not zero-sized, so
// that every token has its own address.
type cowToken struct{ _ byte }

// key orders (count, id) pairs: free GPUs of a node, GPUs of a node, free
// GPUs of a domain or a domain's top-k sum, then the unique id. The first
// sixteen bytes of the id, kept as two big-endian integers (pre), decide
// most ties between equal counts without reading the id's bytes, which
// live elsewhere in memory: generated node ids share long prefixes, and a
// free-capacity index holds thousands of nodes with the same count. ord is
// the node's ordinal, so that a decision reaches the node's record
// (Cluster.recs) without a search by id; it never takes part in the order.
// The id is the key's one pointer: the indexes shift keys on every change,
// and while the garbage collector marks, each pointer shifted costs a
// write barrier.
type key struct {
	n   int
	pre [2]uint64 // idPrefix16(id)
	id  string
	ord int
}

func lessKey(a, b key) bool {
	if a.n != b.n {
		return a.n < b.n
	}
	if a.pre != b.pre {
		if a.pre[0] != b.pre[0] {
			return a.pre[0] < b.pre[0]
		}
		return a.pre[1] < b.pre[1]
	}
	return a.id < b.id
}

// nodeKey is node n's key with count v.
func nodeKey(v int, n *nodeState) key { return key{n: v, pre: idPrefix16(n.id), id: n.id, ord: n.ord} }

// idPrefix returns the first eight bytes of s as a big-endian integer, the
// missing bytes of a shorter s as zeros: ids with different prefixes
// compare as their prefixes do. The eight bytes of a long enough s are
// read in one load, which the compiler makes of the shifts.
func idPrefix(s string) uint64 {
	if len(s) >= 8 {
		_ = s[7]
		return uint64(s[0])<<56 | uint64(s[1])<<48 | uint64(s[2])<<40 | uint64(s[3])<<32 |
			uint64(s[4])<<24 | uint64(s[5])<<16 | uint64(s[6])<<8 | uint64(s[7])
	}
	var p uint64
	for i := range 8 {
		p <<= 8
		if i < len(s) {
			p |= uint64(s[i])
		}
	}
	return p
}

// idPrefix16 returns the first sixteen bytes of s as two big-endian
// integers, as idPrefix does for eight.
func idPrefix16(s string) [2]uint64 {
	p := [2]uint64{idPrefix(s), 0}
	if len(s) > 8 {
		p[1] = idPrefix(s[8:])
	}
	return p
}

type nodeState struct {
	owner *cowToken
	ord   int // index in Cluster.recs, immutable
	id    string
	gpus  int
	free  int
	// The node's key in its domains' indexes, which lag behind it while
	// it is listed in Cluster.dirty: in them (tin) with tfree free GPUs.
	// (tfree and the flags share a word, and the id's prefix of the
	// node's keys is not kept here but read from the id where a key is
	// made, so that the record takes 96 bytes and a group of 4 a block
	// of 384: the copies of the nodes a round changes after a clone.)
	tfree    int32
	draining bool
	tin      bool
	dirty    bool
	// domains holds the node's domain ordinal per level, immutable and
	// shared by copies; nil for a node added with a nil topology. The
	// labels are those of the innermost domain's path (see
	// Cluster.topology).
	domains []int
	lo      uint64    // occupancy of GPUs 0..63
	hi      *[]uint64 // occupancy of GPUs 64.., nil when gpus ≤ 64 (few nodes have more)
}

// high returns the occupancy words of GPUs 64.., nil when gpus ≤ 64.
func (n *nodeState) high() []uint64 {
	if n.hi == nil {
		return nil
	}
	return *n.hi
}

func (n *nodeState) held(i int) bool {
	if i < 64 {
		return n.lo&(1<<uint(i)) != 0
	}
	i -= 64
	return (*n.hi)[i/64]&(1<<uint(i%64)) != 0
}

func (n *nodeState) mark(i int, v bool) {
	w, b := &n.lo, uint(i)
	if i >= 64 {
		w, b = &(*n.hi)[(i-64)/64], uint((i-64)%64)
	}
	if v {
		*w |= 1 << b
	} else {
		*w &^= 1 << b
	}
}

func (n *nodeState) heldCount() int {
	c := bits.OnesCount64(n.lo)
	for _, w := range n.high() {
		c += bits.OnesCount64(w)
	}
	return c
}

// lowestFree returns the k lowest free GPU indices, ascending. Costs as
// appendLowestFree.
func (n *nodeState) lowestFree(k int) []int {
	return n.appendLowestFree(make([]int, 0, k), k)
}

// appendLowestFree appends the k lowest free GPU indices to out, ascending:
// O(k) from the occupancy bits of a node of up to 64 GPUs, O(gpus) for a
// larger one.
func (n *nodeState) appendLowestFree(out []int, k int) []int {
	if n.gpus <= 64 {
		free := ^n.lo
		if n.gpus < 64 {
			free &= 1<<uint(n.gpus) - 1
		}
		for ; k > 0 && free != 0; k-- {
			out = append(out, bits.TrailingZeros64(free))
			free &= free - 1 // the next one
		}
		return out
	}
	for i := 0; i < n.gpus && k > 0; i++ {
		if !n.held(i) {
			out = append(out, i)
			k--
		}
	}
	return out
}

// accepting reports whether the node takes new placements.
func (n *nodeState) accepting() bool { return !n.draining }

// indexed reports whether the node is in the free-capacity indexes.
func (n *nodeState) indexed() bool { return !n.draining && n.free > 0 }

// nodeEntry maps a node id to its ordinal, the node's index in
// Cluster.recs. It never changes while the node exists, so that copying a
// node's record leaves the id index alone.
type nodeEntry struct {
	id  string
	ord int
}

// cowChunkBits sets the length of a cowChunk: 16 entries. The allocation
// table's leaves are as long: small leaves make the first change of a slot
// after a Clone cheap (it copies 16 slots), where a busy cluster's round
// changes slots all over the table.
const cowChunkBits = 4

// cowChunk is a part of a cowArray or of the allocation table, changed in
// place only by its owner.
type cowChunk[T any] struct {
	owner *cowToken
	v     [1 << cowChunkBits]T
}

// cowArrayBits sets the length of a cowArray chunk: 64 entries, in 16
// groups of 4 (a cowChunk of groups), so that a clone of a cluster of many
// nodes copies one pointer per 64 records.
const cowArrayBits = 6

// cowGroup is a group of 1<<(cowArrayBits−cowChunkBits) entries of a
// cowArray chunk.
type cowGroup[T any] [1 << (cowArrayBits - cowChunkBits)]T

// cowArray is an array indexed by ordinal whose chunks clones share until
// one of them changes a chunk, which it copies first: a clone copies only
// the list of chunks, one pointer per 64 entries, and a change copies at
// most one chunk of 64 entries. Reading is two loads, without a search.
type cowArray[T any] struct {
	chunks []*cowChunk[cowGroup[T]]
}

// at returns entry i, or the zero T beyond the end. O(1).
func (a *cowArray[T]) at(i int) T {
	if c := i >> cowArrayBits; c < len(a.chunks) {
		return a.chunks[c].v[i>>(cowArrayBits-cowChunkBits)&(1<<cowChunkBits-1)][i&(1<<(cowArrayBits-cowChunkBits)-1)]
	}
	var zero T
	return zero
}

// set makes x entry i, copying its chunk first unless tok owns it, and
// growing the array as needed. O(1) amortized, plus a chunk copy.
func (a *cowArray[T]) set(tok *cowToken, i int, x T) {
	c := i >> cowArrayBits
	for c >= len(a.chunks) {
		a.chunks = append(a.chunks, &cowChunk[cowGroup[T]]{owner: tok})
	}
	ch := a.chunks[c].mut(tok)
	a.chunks[c] = ch
	ch.v[i>>(cowArrayBits-cowChunkBits)&(1<<cowChunkBits-1)][i&(1<<(cowArrayBits-cowChunkBits)-1)] = x
}

// mut returns ch if tok owns it, or else a copy that tok owns.
func (ch *cowChunk[T]) mut(tok *cowToken) *cowChunk[T] {
	if ch.owner == tok {
		return ch
	}
	cp := *ch
	cp.owner = tok
	return &cp
}

// clone returns a copy sharing every chunk. O(len/64).
func (a *cowArray[T]) clone() cowArray[T] { return cowArray[T]{chunks: slices.Clone(a.chunks)} }

// dkey orders the domains of a level by a count, then by ordinal. It holds
// no pointer, which keeps the level indexes cheap to update.
type dkey struct{ n, ord int }

func lessDKey(a, b dkey) bool {
	if a.n != b.n {
		return a.n < b.n
	}
	return a.ord < b.ord
}

// domainState is one topology domain. Its ordinal is assigned when it is
// created, in order of appearance, and breaks ties between domains.
type domainState struct {
	owner   *cowToken
	ord     int
	path    string // domainKey of the domain
	level   int
	members int                     // nodes in the domain, whatever their state
	nodes   freeIndex               // (free, node id) of the domain's indexed nodes, ranked by id among the members (see domainIndexes)
	free    int                     // free GPUs of the domain's indexed nodes
	top     [maxIndexedSpan + 1]int // top[k], k ≥ 2: sum of the k largest free blocks (all of them if fewer), as of the last refresh of k, the domain's key in the level's byTop[k] index
	idxFree int                     // free as of the last refresh, the domain's key in the level's byFree index
	lag     uint32                  // bit 1: idxFree, bit k ≥ 2: top[k] may lag behind nodes; the domain is then in Cluster.stale[k]
}

// lagAll marks idxFree and every top[k], 2 ≤ k ≤ maxIndexedSpan, as
// lagging.
const lagAll = uint32(1<<(maxIndexedSpan+1)) - 2

type pathEntry struct {
	path string
	ord  int
}

// levelIndex indexes the domains of one topology level.
type levelIndex struct {
	byFree *btree.BTreeG[dkey]                     // (domain free, ordinal)
	byTop  [maxIndexedSpan + 1]*btree.BTreeG[dkey] // [k] for 2 ≤ k ≤ maxIndexedSpan: (top[k], ordinal); small separate trees update faster than one
}

func newLevelIndex() *levelIndex {
	lv := &levelIndex{byFree: btree.NewG(treeDegree, lessDKey)}
	for k := 2; k <= maxIndexedSpan; k++ {
		lv.byTop[k] = btree.NewG(treeDegree, lessDKey)
	}
	return lv
}

func (lv *levelIndex) clone() *levelIndex {
	out := &levelIndex{byFree: lv.byFree.Clone()}
	for k := 2; k <= maxIndexedSpan; k++ {
		out.byTop[k] = lv.byTop[k].Clone()
	}
	return out
}

// allocRec is an allocation's record, immutable once stored. A one-node
// allocation's record is the head of a larger object that also holds its
// slot and, for a few GPUs, their indices (slotRec, gpuRec), so that it
// costs one allocation.
//
// owner is the token of the cluster that stored it: while that cluster
// keeps the token (it has not been cloned since), no other cluster holds
// the record, and Release may give its placement to the caller without a
// copy.
//
// h is the hash under which the allocation table files it
// (idhash.String(id)), kept here rather than beside the pointer in the
// table's slot (see allocLeaf), so that the slots of a large table take
// half the memory: a lookup reads the record only where the slot's tag
// matches (and a caller that finds it reads it anyway), a delete the
// records of the entries it may move back.
type allocRec struct {
	owner *cowToken
	id    string
	h     uint64
	p     Placement
	// ord is the ordinal of the node of a one-slot placement, or -1, so
	// that releasing or looking past the allocation finds its node without
	// a lookup by name. It stays valid as long as the record: a node that
	// holds GPUs is never removed, so its ordinal is never reused.
	ord int32
}

// slotRec is the record of a one-node allocation stored by Allocate: the
// record, the slot p.Slots names and, up to 4 GPUs, the GPU indices (136
// bytes).
type slotRec struct {
	allocRec
	slot [1]Slot
	gpus [4]int
}

// assignRec is the record of a one-node allocation made by Assign: slots[1]
// backs p.Slots and slots[0] is the copy Assign returns (144 bytes). The
// GPU indices of both are in the same object outside a burst (gpuRec) and
// carved from an array of ints during one (see assignInts): an array that
// holds no pointer, which the collector does not scan, and each record
// takes only the ints it uses.
type assignRec struct {
	allocRec
	slots [2]Slot
}

// gpuRec is the record of a one-node allocation made by Assign outside a
// burst: gpus holds the GPU indices of the allocation's two placements up
// to 4 GPUs (208 bytes).
type gpuRec struct {
	assignRec
	gpus [8]int
}

// spanRec2 and spanRec4 are the records of allocations on up to 2 and up
// to 4 nodes made by Assign: slots backs both the placement stored and
// the one returned, each using its half (224 and 384 bytes), so that the
// record and its slots take one allocation.
type (
	spanRec2 struct {
		allocRec
		slots [4]Slot
	}
	spanRec4 struct {
		allocRec
		slots [8]Slot
	}
)

// recBatch is the most records Assign carves from one array during a burst
// announced by [Cluster.ReserveAllocations]: an array holds as many records
// as the burst has allocations left, up to 227 records of 144 bytes
// (32,688 bytes, which the allocator's 32 KiB size class holds with little
// waste, where a larger array is rounded up to whole pages of 8 KiB), one
// allocation instead of hundreds where a round on an idle cluster makes
// tens of thousands. An array stays in memory until every allocation in it
// is released and no caller holds a placement Assign returned from it, so
// one record of a burst may keep up to 226 released neighbours alive
// (32 KiB, and as much again in its array of GPU indices, see assignInts,
// for one allocation at the very most), though the arrays of a burst of n
// allocations never take more than the memory of n records; outside a
// burst every record is its own allocation.
const recBatch = 227

// newAssignRec returns a zero record for Assign of demand GPUs and an
// empty slice with room for the GPU indices of its two placements: carved
// from the current arrays while a reserved burst lasts (see recBatch and
// assignInts), else one allocation holding both, as a gpuRec, up to 4
// GPUs. A clone starts without a batch, so no two clusters carve from the
// same array.
func (c *Cluster) newAssignRec(demand int) (*assignRec, []int) {
	if len(c.recs1) == 0 && c.burst <= 1 {
		c.burst = 0
		if 2*demand > len(gpuRec{}.gpus) {
			return new(assignRec), make([]int, 0, 2*demand)
		}
		r := new(gpuRec)
		return &r.assignRec, r.gpus[:0]
	}
	gpus := c.assignInts(2 * demand)
	c.burst--
	return carve(&c.recs1, min(c.burst+1, recBatch)), gpus
}

// carve returns the first element of *batch and drops it from the batch,
// which it first refills with a new array of n zero elements if it is
// empty: the records of many allocations in one allocation.
func carve[T any](batch *[]T, n int) *T {
	if len(*batch) == 0 {
		*batch = make([]T, n)
	}
	r := &(*batch)[0]
	*batch = (*batch)[1:]
	return r
}

// assignInts returns an empty slice with room for k ints, for the GPU
// indices of an Assign record that does not hold them: carved from the
// current array while a reserved burst lasts, as the records are (see
// recBatch: an array stays in memory as long as any of the placements
// carved from it: up to maxIntBatch ints, 32 KiB, for one allocation at
// the very most), else allocated alone.
func (c *Cluster) assignInts(k int) []int {
	if len(c.ints) < k {
		if c.burst <= 1 {
			return make([]int, 0, k)
		}
		c.ints = make([]int, max(k, min(max(intBatch, 8*c.burst), maxIntBatch)))
	}
	s := c.ints[:0:k]
	c.ints = c.ints[k:]
	return s
}

// intBatch and maxIntBatch bound the length of the arrays assignInts
// carves: room for eight ints per allocation the burst has left (each GPU
// is held twice, see assignRec, and a production mix averages about three
// GPUs an allocation), at least the GPU indices of 16 allocations of 8
// GPUs and at most 4,096 ints (32 KiB, a size class of the allocator).
const (
	intBatch    = 256
	maxIntBatch = 4096
)

// slotBatch is how many records of Allocate's one-node allocations
// (slotRec) come in one array: 4 records of 136 bytes, one allocation
// instead of 4. As with Assign's batches (see recBatch), an array stays in
// memory until every allocation in it is released and no caller holds a
// placement Release returned from it, so a record may keep up to 3
// released neighbours (408 bytes) alive.
const slotBatch = 4

// newAllocRec returns the record of allocation id holding a copy of p
// that shares nothing with p; ord is the ordinal of the node of p's slot
// if p has one slot (ignored otherwise). A one-node record is carved from
// the current batch (see slotBatch); a clone starts without a batch, so no
// two clusters carve from the same array.
func (c *Cluster) newAllocRec(id string, p Placement, ord int) *allocRec {
	if len(p.Slots) == 1 {
		s := p.Slots[0]
		r := carve(&c.slotRecs, slotBatch)
		r.id, r.ord = id, int32(ord)
		gpus := r.gpus[:0]
		if len(s.GPUs) > len(r.gpus) {
			gpus = nil
		}
		r.slot[0] = Slot{Node: s.Node, GPUs: append(gpus, s.GPUs...)}
		r.p = Placement{Slots: r.slot[:]}
		return &r.allocRec
	}
	return &allocRec{id: id, p: p.clone(), ord: -1}
}

// ReserveAllocations makes room for n allocations beyond those the cluster
// holds, so that a caller about to make many (a scheduling round on an idle
// cluster makes tens of thousands) grows the allocation index once instead
// of doubling it each time it fills, and the records of the next n
// one-node allocations [Cluster.Assign] makes are allocated up to recBatch
// (227) at a time, their GPU indices too (see recBatch and assignInts for the memory
// this may keep). It changes nothing a caller
// can see. n ≤ 0 does nothing, and n counts at most the GPUs no allocation holds
// (each allocation holds one at least). O(allocations + n) if the index
// grows, else O(1).
func (c *Cluster) ReserveAllocations(n int) {
	n = min(n, c.capacity-c.used)
	c.allocs.reserve(c.tok, n)
	// The records of the burst's one-node allocations come in batches.
	c.burst = max(c.burst, n)
}

// getAlloc returns the record of allocation id. O(1) expected.
func (c *Cluster) getAlloc(id string) (*allocRec, bool) {
	return c.allocs.get(idhash.String(id), id)
}

// Cluster is the consolidated [Placer]: it tracks which GPU of which node is
// held by which allocation, and places gangs on the fewest nodes, best fit,
// innermost topology domain first, or under [FirstFit] first fit in node
// order. See the package documentation for the exact rules.
//
// A Cluster is not safe for concurrent use; clones are independent of each
// other and of the original, and may be used from different goroutines. The
// zero Cluster is not usable: create one with [NewCluster].
type Cluster struct {
	tok    *cowToken
	spread bool // a gang no node holds now may be spread (FewestNodes, FirstFit)
	first  bool // FirstFit: placed in node order, through order
	order  orderIndex

	nodes   *btree.BTreeG[nodeEntry] // all nodes by id, to their ordinals
	recs    cowArray[*nodeState]     // node records by ordinal; nil for a removed node
	nextNod int                      // ordinal of the next new node
	fx      freeIndex                // (free, id) of nodes that accept placements and have free GPUs; read through freeIdx
	caps    *btree.BTreeG[key]       // (gpus, id) of nodes that accept placements
	domains cowArray[*domainState]   // topology domains by ordinal; nil for a removed domain
	paths   *btree.BTreeG[pathEntry] // domain ordinals by path
	nextOrd int                      // ordinal of the next new domain
	levels  []*levelIndex            // per topology level, outermost first
	allocs  allocTable               // allocations by id hash
	// dpos[l][ord] is the rank of node ord among the members of its
	// domain at level l, in id order: its bit in that domain's index.
	// Shared by clones, never changed; dvalid is false, and the domains'
	// indexes await a rebuild (see domainIndexes), once a node was added
	// or removed since they were built.
	dpos   [][]int32
	dvalid bool

	// stale[1] lists the domains whose free total (as byFree indexes it)
	// lags behind their nodes, stale[k] for k ≥ 2 those whose top-k sum
	// (as byTop[k] indexes it) does: changes only mark a domain, and
	// refreshSpan brings the marked ones up to date for the one span a
	// multi-node decision reads, so that a domain changed many times in
	// between is refreshed once, and only for the spans asked for.
	stale [maxIndexedSpan + 1][]int
	// dirty lists the nodes whose keys in their domains' indexes lag
	// behind them (nodeState.dirty): changes only list a node, and
	// flushDomains moves its keys before anything reads the indexes, so
	// that a node changed many times in between (best-fit packing fills
	// one node by many grants) moves once.
	dirty []int

	capacity int // GPUs of all nodes
	freeGPUs int // free GPUs of nodes that accept placements
	used     int // GPUs held by allocations

	// seen remembers, by a hash of a node's id (seenSlot), the
	// ordinal of a node lately looked up by id: 1 + ordinal, 0 = none. An
	// entry is only a guess, taken when the record at that ordinal is live
	// and has that id (ids are unique, so that is the node), so that
	// entries never need to be forgotten; a clone starts without any.
	seen [seenSize]int32

	// recs1 is what is left of the current batch of Assign's records, and
	// burst how many more allocations the last ReserveAllocations
	// announced (see recBatch); a clone starts with neither.
	recs1 []assignRec
	burst int
	// slotRecs is what is left of the current batch of Allocate's
	// one-node records (see slotBatch); a clone starts without one.
	slotRecs []slotRec
	// ints is what is left of the current array of GPU indices that
	// Assign carves during a burst (see assignInts); a clone starts
	// without one.
	ints []int
}

// seenSlot is the entry of Cluster.seen for node id.
func seenSlot(id string) int { return int(idhash.String(id) & (seenSize - 1)) }

// seenSize is the number of entries of Cluster.seen: room for the nodes of
// a few hundred without many of them sharing one (1 KiB).
const seenSize = 256

// nodeOrd returns the ordinal of node id, or false if there is no such
// node: from seen when it guesses right, else from the node tree, and
// then remembered. O(length of id) on a hit, O(log n) otherwise.
func (c *Cluster) nodeOrd(id string) (int, bool) {
	k := seenSlot(id)
	if g := c.seen[k]; g > 0 {
		if n := c.recs.at(int(g - 1)); n != nil && n.id == id {
			return int(g - 1), true
		}
	}
	e, ok := c.nodes.Get(nodeEntry{id: id})
	if !ok {
		return 0, false
	}
	c.seen[k] = int32(e.ord + 1)
	return e.ord, true
}

// NewCluster returns a cluster of the given nodes, all free, with strict
// consolidation unless an [Option] says otherwise. It fails with
// ErrInvalidNode or ErrDuplicateNode. O(n log n).
func NewCluster(nodes []Node, opts ...Option) (*Cluster, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.bad {
		return nil, &Error{Op: "new cluster", Err: ErrInvalidMode}
	}
	c := &Cluster{
		tok:    new(cowToken),
		spread: cfg.mode != Strict,
		first:  cfg.mode == FirstFit,
		nodes:  btree.NewG(treeDegree, func(a, b nodeEntry) bool { return a.id < b.id }),
		caps:   btree.NewG(treeDegree, lessKey),
		paths:  btree.NewG(treeDegree, func(a, b pathEntry) bool { return a.path < b.path }),
	}
	for _, n := range nodes {
		if err := c.AddNode(n); err != nil {
			return nil, err
		}
	}
	c.refresh()
	return c, nil
}

// Clone returns an independent copy of c, for planning a round without
// committing it. It costs O(topology levels + (nodes + domains)/64 +
// slots/4096 + largest free count), nodes and domains counted since the
// first (ordinals are never reused) and slots being those of the
// allocation table (between two and four per allocation at the most
// allocations held so far), plus the rebuild of the free-capacity index if
// a node was added or removed since it was last read, plus moving the
// keys of the nodes changed since the last multi-node decision in their
// domains' indexes (rebuilt first, in O(n·levels), if a node was added or
// removed since) and bringing every domain of c whose top sums lag behind
// its nodes up to date, for every span (once: further clones of an
// unchanged c find nothing to do) — the indexes are copy-on-write B-trees
// and bitsets (see freeIndex), the node and
// domain records sit in copy-on-write arrays of 64-entry chunks (the clone
// copies one pointer per chunk), the allocation table's slots in
// copy-on-write leaves of 16 and pages of 64 leaves (the clone copies one
// pointer per page), and records are copied lazily, the first
// time either cluster changes them — so later mutations of either cluster
// pay a little more until they have copied what they touch.
func (c *Cluster) Clone() *Cluster {
	c.refresh()           // so that neither copy inherits stale domains
	fx := c.freeIdx()     // built, if it must be, before its sets are shared
	c.tok = new(cowToken) // records shared from now on belong to neither
	out := &Cluster{
		tok:      new(cowToken),
		spread:   c.spread,
		first:    c.first,
		order:    c.order.clone(),
		nodes:    c.nodes.Clone(),
		caps:     c.caps.Clone(),
		recs:     c.recs.clone(),
		nextNod:  c.nextNod,
		domains:  c.domains.clone(),
		paths:    c.paths.Clone(),
		nextOrd:  c.nextOrd,
		allocs:   c.allocs.clone(),
		levels:   make([]*levelIndex, len(c.levels)),
		dpos:     c.dpos,
		dvalid:   c.dvalid,
		capacity: c.capacity,
		freeGPUs: c.freeGPUs,
		used:     c.used,
	}
	for i, lv := range c.levels {
		out.levels[i] = lv.clone()
	}
	out.fx = fx.clone()
	// One small array for the copy's first lag lists, rather than one per
	// list: a clone that changes a few nodes then makes one allocation.
	const room = 4
	buf := make([]int, (maxIndexedSpan+1)*room)
	for j := range out.stale {
		out.stale[j] = buf[j*room : j*room : (j+1)*room]
	}
	return out
}

// Capacity returns the GPUs of all nodes, draining ones included. O(1).
func (c *Cluster) Capacity() int { return c.capacity }

// Free returns the free GPUs on nodes that accept placements (draining
// nodes excluded). O(1).
func (c *Cluster) Free() int { return c.freeGPUs }

// Used returns the GPUs held by allocations. Capacity() ≥ Used() + Free(),
// with equality when no node is draining. O(1).
func (c *Cluster) Used() int { return c.used }

// LargestFree returns the most free GPUs on a single node that accepts
// placements: the largest demand that fits on one node. O(largest
// count/64), after an O(n) rebuild of the free-capacity index if a node was
// added or removed since it was last read.
func (c *Cluster) LargestFree() int { return c.freeIdx().largest() }

// freeIdx returns the free-capacity index, built first if a node was added
// or removed since it was last read. O(1), or O(n + counts·n/4,096) to
// build.
func (c *Cluster) freeIdx() *freeIndex {
	if !c.fx.valid {
		c.fx.build(c)
	}
	return &c.fx
}

// Len returns the number of nodes. O(1).
func (c *Cluster) Len() int { return c.nodes.Len() }

// NodeInfo is the state of one node as reported by [Cluster.Node].
type NodeInfo struct {
	Node
	Free     int   // free GPUs
	Held     []int // indices of held GPUs, ascending
	Draining bool
}

// info returns the state of node n.
func (c *Cluster) info(n *nodeState) NodeInfo {
	held := make([]int, 0, n.gpus-n.free)
	for i := range n.gpus {
		if n.held(i) {
			held = append(held, i)
		}
	}
	return NodeInfo{
		Node:     Node{ID: n.id, GPUs: n.gpus, Topology: c.topology(n)},
		Free:     n.free,
		Held:     held,
		Draining: n.draining,
	}
}

// Node returns the state of node id. O(log n + GPUs of the node).
func (c *Cluster) Node(id string) (NodeInfo, bool) {
	e, ok := c.nodes.Get(nodeEntry{id: id})
	if !ok {
		return NodeInfo{}, false
	}
	return c.info(c.recs.at(e.ord)), true
}

// Nodes yields the state of every node in id order.
func (c *Cluster) Nodes() iter.Seq[NodeInfo] {
	return func(yield func(NodeInfo) bool) {
		c.nodes.Ascend(func(e nodeEntry) bool { return yield(c.info(c.recs.at(e.ord))) })
	}
}

// Allocation returns the placement held by allocation id. O(1) expected
// (a hash table lookup) + size of the placement.
func (c *Cluster) Allocation(id string) (Placement, bool) {
	r, ok := c.getAlloc(id)
	if !ok {
		return Placement{}, false
	}
	return r.p.clone(), true
}

// Holds reports whether allocation id holds exactly placement p: the
// check [Cluster.Allocation] allows without copying the placement.
// O(1) expected + GPUs of p.
func (c *Cluster) Holds(id string, p Placement) bool {
	r, ok := c.getAlloc(id)
	return ok && r.p.Equal(p)
}

// Allocations yields every allocation in id order. O(a log a) for a
// allocations, the sort by id, before the first one.
func (c *Cluster) Allocations() iter.Seq2[string, Placement] {
	return func(yield func(string, Placement) bool) {
		rs := make([]*allocRec, 0, c.allocs.Len())
		for r := range c.allocs.all {
			rs = append(rs, r)
		}
		slices.SortFunc(rs, func(a, b *allocRec) int { return strings.Compare(a.id, b.id) })
		for _, r := range rs {
			if !yield(r.id, r.p.clone()) {
				return
			}
		}
	}
}

// topology returns a new copy of node n's topology labels: those of the
// path of its innermost domain (nil or empty as the node was added with).
func (c *Cluster) topology(n *nodeState) []string {
	switch {
	case n.domains == nil:
		return nil
	case len(n.domains) == 0:
		return []string{}
	}
	return strings.Split(c.domains.at(n.domains[len(n.domains)-1]).path, "\x00")
}

// domainKey encodes the path prefix topology[:level+1]. Labels cannot
// contain NUL, so the encoding is unambiguous.
func domainKey(topology []string, level int) string {
	return strings.Join(topology[:level+1], "\x00")
}

func validateNode(n Node) error {
	fail := func(detail string) error {
		return &Error{Op: "add node", Node: n.ID, Detail: detail, Err: ErrInvalidNode}
	}
	if n.ID == "" {
		return fail("node id is empty")
	}
	if n.GPUs <= 0 || n.GPUs > MaxNodeGPUs {
		return fail(fmt.Sprintf("node has %d GPUs, want 1 to %d", n.GPUs, MaxNodeGPUs))
	}
	for i, l := range n.Topology {
		if l == "" || strings.IndexByte(l, 0) >= 0 {
			return fail(fmt.Sprintf("topology label %d is empty or contains NUL", i))
		}
	}
	return nil
}

// AddNode adds a free node. It fails with ErrInvalidNode or
// ErrDuplicateNode. O(log n + levels·log domains), plus an O(n) rebuild of
// the free-capacity index by the next call that reads it and an
// O(n·levels) rebuild of the domains' indexes by the next multi-node
// decision or Clone (once for any number of nodes added or removed in
// between).
func (c *Cluster) AddNode(n Node) error {
	if err := validateNode(n); err != nil {
		return err
	}
	if c.nodes.Has(nodeEntry{id: n.ID}) {
		return &Error{Op: "add node", Node: n.ID, Err: ErrDuplicateNode}
	}
	c.fx.valid = false // the ranks change
	c.dvalid = false
	ns := &nodeState{
		owner:    c.tok,
		ord:      c.nextNod,
		id:       n.ID,
		gpus:     n.GPUs,
		free:     n.GPUs,
		draining: true, // indexed by reindex below
	}
	if n.GPUs > 64 {
		hi := make([]uint64, (n.GPUs-64+63)/64)
		ns.hi = &hi
	}
	if n.Topology != nil {
		ns.domains = make([]int, len(n.Topology))
	}
	c.nextNod++
	c.recs.set(c.tok, ns.ord, ns)
	c.nodes.ReplaceOrInsert(nodeEntry{id: ns.id, ord: ns.ord})
	c.capacity += ns.gpus
	for l := range n.Topology {
		for len(c.levels) <= l {
			c.levels = append(c.levels, newLevelIndex())
		}
		path := domainKey(n.Topology, l)
		if pe, ok := c.paths.Get(pathEntry{path: path}); ok {
			c.mutDomain(pe.ord).members++
			ns.domains[l] = pe.ord
			continue
		}
		ord := c.nextOrd
		c.nextOrd++
		ns.domains[l] = ord
		d := &domainState{owner: c.tok, ord: ord, path: path, level: l, members: 1}
		c.domains.set(c.tok, ord, d)
		c.paths.ReplaceOrInsert(pathEntry{path: path, ord: ord})
		lv := c.levels[l]
		lv.byFree.ReplaceOrInsert(dkey{n: 0, ord: ord})
		for j := 2; j <= maxIndexedSpan; j++ {
			lv.byTop[j].ReplaceOrInsert(dkey{n: 0, ord: ord})
		}
	}
	old := ns.snapshot()
	ns.draining = false
	c.reindex(ns, old)
	return nil
}

// DrainNode stops new placements on node id: Place and Fits no longer
// consider it and its free GPUs leave Free. Allocations already there stay
// until they are released, and explicit Allocate calls are still accepted
// (see [Cluster.Allocate]). Draining a draining node is a no-op. It fails
// with ErrUnknownNode. O(log n + levels·log domains).
func (c *Cluster) DrainNode(id string) error {
	return c.setDraining("drain node", id, true)
}

// UndrainNode lets node id take new placements again. It fails with
// ErrUnknownNode.
func (c *Cluster) UndrainNode(id string) error {
	return c.setDraining("undrain node", id, false)
}

func (c *Cluster) setDraining(op, id string, v bool) error {
	e, ok := c.nodes.Get(nodeEntry{id: id})
	if !ok {
		return &Error{Op: op, Node: id, Err: ErrUnknownNode}
	}
	if c.recs.at(e.ord).draining == v {
		return nil
	}
	n := c.mutNode(e.ord)
	old := n.snapshot()
	n.draining = v
	c.reindex(n, old)
	return nil
}

// RemoveNode removes node id, which must hold no allocation (drain it first
// and wait for its allocations to be released). It fails with
// ErrUnknownNode or ErrNodeBusy. O(log n + levels·log domains), plus the
// rebuilds of the indexes that AddNode entails.
func (c *Cluster) RemoveNode(id string) error {
	e, ok := c.nodes.Get(nodeEntry{id: id})
	if !ok {
		return &Error{Op: "remove node", Node: id, Err: ErrUnknownNode}
	}
	if n := c.recs.at(e.ord); n.gpus-n.free > 0 {
		return &Error{Op: "remove node", Node: id, Err: ErrNodeBusy,
			Detail: fmt.Sprintf("%d GPUs still held", n.gpus-n.free)}
	}
	n := c.mutNode(e.ord)
	old := n.snapshot()
	n.draining = true
	c.reindex(n, old)
	c.flushDomains() // its keys leave the domains' indexes while it has a record
	c.nodes.Delete(nodeEntry{id: id})
	c.fx.valid = false // the ranks change
	c.dvalid = false
	c.recs.set(c.tok, e.ord, nil)
	c.capacity -= n.gpus
	for _, ord := range n.domains {
		d := c.mutDomain(ord)
		d.members--
		if d.members > 0 {
			continue
		}
		c.domains.set(c.tok, ord, nil)
		c.paths.Delete(pathEntry{path: d.path})
		lv := c.levels[d.level]
		lv.byFree.Delete(dkey{n: d.idxFree, ord: ord})
		for j := 2; j <= maxIndexedSpan; j++ {
			lv.byTop[j].Delete(dkey{n: d.top[j], ord: ord})
		}
	}
	return nil
}

// mutNode returns a record of node ord that c may change in place. When
// the record is shared (c was cloned since it was made), it copies with it
// every other shared record of the same group of 4 ordinals (a cowGroup),
// all in one array: a round that changes many nodes after a clone makes one
// allocation per group instead of one per node, and since the group's
// shared records are always copied together, c holds all of an array's
// records or none of them (none is kept alive by a neighbour it no longer
// uses).
//
// Callers on hot paths test the owner themselves first, a test the
// compiler inlines (the call it saves costs more than the test):
//
//	if n = c.recs.at(ord); n.owner != c.tok {
//		n = c.mutNode(ord)
//	}
func (c *Cluster) mutNode(ord int) *nodeState {
	if n := c.recs.at(ord); n.owner == c.tok {
		return n
	}
	return c.copyNodes(ord)
}

// copyNodes copies the shared records of the group of node ord, as
// mutNode describes, and returns the copy of node ord.
func (c *Cluster) copyNodes(ord int) *nodeState {
	const group = 1 << (cowArrayBits - cowChunkBits)
	base := ord &^ (group - 1)
	batch := new([group]nodeState)
	for k := range group {
		m := c.recs.at(base + k)
		if m == nil || m.owner == c.tok {
			continue
		}
		cp := &batch[k]
		*cp = *m
		cp.owner = c.tok
		if cp.hi != nil {
			hi := slices.Clone(*cp.hi)
			cp.hi = &hi
		}
		c.recs.set(c.tok, base+k, cp)
	}
	return &batch[ord-base]
}

// mutDomain returns a record of domain ord that c may change in place.
// Callers on hot paths test the owner themselves first (see mutNode).
func (c *Cluster) mutDomain(ord int) *domainState {
	d, _ := c.liveDomain(ord)
	return d
}

// liveDomain returns a record of domain ord that c may change in place, or
// false if there is no such domain.
func (c *Cluster) liveDomain(ord int) (*domainState, bool) {
	d := c.domains.at(ord)
	if d == nil {
		return nil, false
	}
	if d.owner == c.tok {
		return d, true
	}
	cp := *d
	cp.owner = c.tok
	// A private copy of the index's lists of sets: the shared index is
	// never written, so other clones may keep reading it concurrently.
	cp.nodes = d.nodes.clone()
	c.domains.set(c.tok, ord, &cp)
	return &cp, true
}

type nodeSnapshot struct {
	indexed   bool
	accepting bool
	free      int
}

func (n *nodeState) snapshot() nodeSnapshot {
	return nodeSnapshot{indexed: n.indexed(), accepting: n.accepting(), free: n.free}
}

// reindex brings every index up to date after n changed from old: O(1)
// for the free-capacity index (nothing while it awaits a rebuild), O(log n)
// for the capacity index when n starts or stops accepting placements, and
// O(levels) for the domains' free totals; n is only listed for
// flushDomains to move its keys in the domains' indexes, and the domains'
// sums only marked stale, for refreshSpan.
func (c *Cluster) reindex(n *nodeState, old nodeSnapshot) {
	now := n.snapshot()
	if old == now {
		return
	}
	if c.first {
		c.order.set(c.tok, n.ord, orderValOf(n))
	}
	switch {
	case old.indexed && now.indexed:
		// The common change: a node that stays indexed with another
		// free count.
		if c.fx.valid {
			c.fx.move(c.tok, old.free, now.free, int(c.fx.rank[n.ord]))
		}
		c.freeGPUs += now.free - old.free
	case old.indexed:
		if c.fx.valid {
			c.fx.remove(c.tok, old.free, int(c.fx.rank[n.ord]))
		}
		c.freeGPUs -= old.free
	case now.indexed:
		if c.fx.valid {
			c.fx.add(c.tok, now.free, int(c.fx.rank[n.ord]))
		}
		c.freeGPUs += now.free
	}
	if old.accepting != now.accepting {
		if old.accepting {
			c.caps.Delete(nodeKey(n.gpus, n))
		} else {
			c.caps.ReplaceOrInsert(nodeKey(n.gpus, n))
		}
	}
	if !old.indexed && !now.indexed {
		return
	}
	if !n.dirty && len(n.domains) > 0 {
		n.dirty = true
		c.dirty = append(c.dirty, n.ord)
	}
	for _, ord := range n.domains {
		d := c.domains.at(ord)
		if d.owner != c.tok {
			d = c.mutDomain(ord)
		}
		if old.indexed {
			d.free -= old.free
		}
		if now.indexed {
			d.free += now.free
		}
		for fresh := lagAll &^ d.lag; fresh != 0; fresh &= fresh - 1 {
			j := bits.TrailingZeros32(fresh)
			c.stale[j] = append(c.stale[j], ord)
		}
		d.lag = lagAll
	}
}

// topSums returns s with s[k] = the sum of the k largest free blocks of x
// (of all of them when x has fewer), for k = 1..maxIndexedSpan.
// O(counts/64 + maxIndexedSpan).
func topSums(x *freeIndex) (s [maxIndexedSpan + 1]int) {
	k, sum := 0, 0
	for v := x.prevCount(len(x.nonEmpty)*64 - 1); v > 0 && k < maxIndexedSpan; v = x.prevCount(v - 1) {
		for m := x.sets[v].n; m > 0 && k < maxIndexedSpan; m-- {
			k++
			sum += v
			s[k] = sum
		}
	}
	for j := k + 1; j <= maxIndexedSpan; j++ {
		s[j] = sum
	}
	return s
}

// refresh brings the free totals, top sums and top-k index entries of the
// stale domains fully up to date: each span's list in turn, as
// refreshSpan does. O(maxIndexedSpan · stale domains · (counts +
// log domains)), counts being the distinct free counts of a domain's nodes,
// after the flush (see flushDomains).
func (c *Cluster) refresh() {
	c.flushDomains()
	for j := 1; j <= maxIndexedSpan; j++ {
		c.refreshList(j)
	}
}

// flushDomains moves the keys of the listed nodes in their domains'
// indexes to where the nodes stand now, first rebuilding the indexes if a
// node was added or removed since they were built (see domainIndexes).
// O(listed nodes · levels), each node once however often it changed since
// the last flush: a move clears one bit of a domain's index and sets
// another.
func (c *Cluster) flushDomains() {
	if !c.dvalid {
		c.rebuildDomains()
	}
	for _, ord := range c.dirty {
		n := c.recs.at(ord)
		if n.owner != c.tok {
			n = c.mutNode(ord)
		}
		if now := n.indexed(); n.tin != now || now && int(n.tfree) != n.free {
			for l, dord := range n.domains {
				d := c.domains.at(dord)
				if d.owner != c.tok {
					d = c.mutDomain(dord)
				}
				switch r := int(c.dpos[l][ord]); {
				case n.tin && now:
					d.nodes.move(c.tok, int(n.tfree), n.free, r)
				case n.tin:
					d.nodes.remove(c.tok, int(n.tfree), r)
				case now:
					d.nodes.add(c.tok, n.free, r)
				}
			}
			n.tin, n.tfree = now, int32(n.free)
		}
		n.dirty = false
	}
	c.dirty = c.dirty[:0]
}

// rebuildDomains makes every domain's index that of domainIndexes and
// keeps its ranks. O(n · levels + domains · counts/64).
func (c *Cluster) rebuildDomains() {
	pos, xs := c.domainIndexes()
	for ord, x := range xs {
		if x.valid {
			c.mutDomain(ord).nodes = x
		}
	}
	c.dpos, c.dvalid = pos, true
}

// domainIndexes returns the ranks of the nodes in their domains (see
// Cluster.dpos) and the index of each domain by ordinal (valid for the
// live ones): the members ranked in id order, and those in the domain's
// index as of the last flush (nodeState.tin) with their free GPUs as of
// then (tfree), so that the nodes listed dirty move as usual at the next
// flush. It changes nothing, so that Check can build them aside.
// O(n · levels + domains · counts/64).
func (c *Cluster) domainIndexes() ([][]int32, []freeIndex) {
	pos := make([][]int32, len(c.levels))
	for l := range pos {
		pos[l] = make([]int32, c.nextNod)
	}
	xs := make([]freeIndex, c.nextOrd)
	for ord := range xs {
		if c.domains.at(ord) != nil {
			xs[ord].valid = true
		}
	}
	c.nodes.Ascend(func(e nodeEntry) bool {
		n := c.recs.at(e.ord)
		for l, dord := range n.domains {
			x := &xs[dord]
			pos[l][e.ord] = int32(len(x.byRank))
			x.byRank = append(x.byRank, nodeKey(0, n))
			if n.tin {
				x.add(c.tok, int(n.tfree), int(pos[l][e.ord]))
			}
		}
		return true
	})
	return pos, xs
}

// refreshSpan brings up to date what a decision for a span of k nodes
// reads: for k ≤ maxIndexedSpan the top-k sums and byTop[k] entries of the
// domains changed since the last such refresh, for a larger k everything.
// O(those domains · (counts + log domains)), counts being the distinct
// free counts of a domain's nodes, after the flush (see flushDomains), or
// as refresh for k > maxIndexedSpan.
func (c *Cluster) refreshSpan(k int) {
	c.flushDomains()
	if k > maxIndexedSpan {
		c.refresh()
		return
	}
	c.refreshList(k)
}

// refreshList brings up to date, for every domain of the lag list j, its
// free total and byFree entry (j = 1) or its top-j sum and byTop[j] entry.
func (c *Cluster) refreshList(j int) {
	for _, ord := range c.stale[j] {
		d, ok := c.liveDomain(ord)
		if !ok {
			continue // removed since; ordinals are never reused
		}
		lv := c.levels[d.level]
		if j == 1 {
			if d.idxFree != d.free {
				lv.byFree.Delete(dkey{n: d.idxFree, ord: d.ord})
				lv.byFree.ReplaceOrInsert(dkey{n: d.free, ord: d.ord})
				d.idxFree = d.free
			}
		} else {
			c.setTop(d, lv, j, d.nodes.topSum(j))
		}
		d.lag &^= 1 << j
	}
	c.stale[j] = c.stale[j][:0]
}

// setTop makes s domain d's top[j] and its key in the level's byTop[j].
func (c *Cluster) setTop(d *domainState, lv *levelIndex, j, s int) {
	if s != d.top[j] {
		lv.byTop[j].Delete(dkey{n: d.top[j], ord: d.ord})
		lv.byTop[j].ReplaceOrInsert(dkey{n: s, ord: d.ord})
		d.top[j] = s
	}
}
