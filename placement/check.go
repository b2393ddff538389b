package placement

import (
	"fmt"
	"slices"

	"github.com/astraea-sched/astraea/internal/idhash"
	"github.com/google/btree"
)

// Check verifies the cluster's invariants and returns the first violation
// found, or nil. Tests call it after every mutation. It costs
// O(n log n + allocated GPUs + nodes and domains ever added + slots of the
// allocation table × their probe runs), plus the free-capacity index built
// aside when it awaits a rebuild, and never mutates.
//
// The invariants: every node has 0 ≤ free ≤ GPUs and exactly GPUs − free
// held GPUs, all below GPUs; the held GPUs are exactly the union of the
// allocations' GPUs, which are disjoint, on known nodes, ordered by node and
// strictly ascending; Capacity, Free and Used are the sums they claim; the
// free-capacity index holds exactly the nodes that accept placements and
// have free GPUs, keyed by (free, id); every topology domain indexes exactly
// its member nodes that way (as of the last flush for a node listed dirty,
// whose keys move before the next multi-node decision), with its free
// total and top-k sums (exact unless the domain is listed as stale, to be
// refreshed before the next multi-node decision), and every level index
// agrees with the sums its domains record; under FirstFit, the order index
// holds every node's free GPUs (and its GPUs when it is wholly free), 0
// for nodes that do not accept placements, and the largest of each over
// every block below.
func (c *Cluster) Check() error {
	var capacity, free, used, dirty int
	var wantFree, wantCaps []key
	type domWant struct {
		level   int
		members int
		nodes   []key
		ranked  []key // the members in id order, as the domain's index ranks them
		free    int
	}
	doms := map[int]*domWant{}
	held := map[string][]int{}
	var err error
	c.nodes.Ascend(func(e nodeEntry) bool {
		n := c.recs.at(e.ord)
		if n == nil || e.id != n.id || n.ord != e.ord || e.ord >= c.nextNod {
			err = fmt.Errorf("placement: check: node entry %q (ordinal %d) holds another node or none", e.id, e.ord)
			return false
		}
		if n.dirty {
			dirty++
		} else if n.tin != (n.indexed() && len(n.domains) > 0) || n.tin && int(n.tfree) != n.free {
			err = fmt.Errorf("placement: check: node %q is not listed dirty, but its domains' trees lag behind it", n.id)
			return false
		}
		if n.gpus <= 0 || n.free < 0 || n.free > n.gpus {
			err = fmt.Errorf("placement: check: node %q has %d GPUs, %d free", n.id, n.gpus, n.free)
			return false
		}
		if h := n.heldCount(); h != n.gpus-n.free {
			err = fmt.Errorf("placement: check: node %q has %d GPUs held, want %d", n.id, h, n.gpus-n.free)
			return false
		}
		if want := max(0, (n.gpus-64+63)/64); len(n.high()) != want {
			err = fmt.Errorf("placement: check: node %q has %d high occupancy words, want %d", n.id, len(n.high()), want)
			return false
		}
		for i := n.gpus; i < 64+64*len(n.high()); i++ {
			if n.held(i) {
				err = fmt.Errorf("placement: check: node %q holds GPU %d beyond its %d GPUs", n.id, i, n.gpus)
				return false
			}
		}
		topology := c.topology(n)
		if len(n.domains) != len(topology) {
			err = fmt.Errorf("placement: check: node %q has %d domains for %d labels", n.id, len(n.domains), len(topology))
			return false
		}
		capacity += n.gpus
		used += n.gpus - n.free
		if n.accepting() {
			wantCaps = append(wantCaps, nodeKey(n.gpus, n))
			free += n.free
		}
		if n.indexed() {
			wantFree = append(wantFree, nodeKey(n.free, n))
		}
		for l, ord := range n.domains {
			if pe, ok := c.paths.Get(pathEntry{path: domainKey(topology, l)}); !ok || pe.ord != ord {
				err = fmt.Errorf("placement: check: node %q level %d domain %d is stale", n.id, l, ord)
				return false
			}
			d := doms[ord]
			if d == nil {
				d = &domWant{level: l}
				doms[ord] = d
			}
			d.members++
			d.ranked = append(d.ranked, nodeKey(0, n))
			if n.tin { // the trees may lag behind the node while it is listed dirty
				d.nodes = append(d.nodes, nodeKey(int(n.tfree), n))
			}
			if n.indexed() {
				d.free += n.free
			}
		}
		for i := range n.gpus {
			if n.held(i) {
				held[n.id] = append(held[n.id], i)
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	if capacity != c.capacity || free != c.freeGPUs || used != c.used {
		return fmt.Errorf("placement: check: capacity/free/used %d/%d/%d, recomputed %d/%d/%d",
			c.capacity, c.freeGPUs, c.used, capacity, free, used)
	}
	// The free-capacity index as it stands, or as the next read will
	// build it (built aside here: Check does not change the cluster).
	fx := &c.fx
	if !fx.valid {
		fx = new(freeIndex)
		fx.build(c)
	}
	if err := fx.check(c); err != nil {
		return err
	}
	if err := sameKeysUnordered("free index", fx, wantFree); err != nil {
		return err
	}
	if err := sameKeysUnordered("capacity index", c.caps, wantCaps); err != nil {
		return err
	}
	switch {
	case c.first:
		if err := c.order.check(c); err != nil {
			return err
		}
	case len(c.order.lv) > 0:
		return fmt.Errorf("placement: check: an order index outside FirstFit")
	}
	// Allocations: disjoint, well formed, and exactly the held GPUs.
	got := map[string][]int{}
	if err := c.allocs.check(); err != nil {
		return err
	}
	c.allocs.all(func(r *allocRec) bool {
		if r.h != idhash.String(r.id) {
			err = fmt.Errorf("placement: check: allocation %q indexed under a stale hash", r.id)
			return false
		}
		for i, s := range r.p.Slots {
			if i > 0 && s.Node <= r.p.Slots[i-1].Node {
				err = fmt.Errorf("placement: check: allocation %q slots not ordered by node", r.id)
				return false
			}
			ne, ok := c.nodes.Get(nodeEntry{id: s.Node})
			if !ok {
				err = fmt.Errorf("placement: check: allocation %q on unknown node %q", r.id, s.Node)
				return false
			}
			if len(r.p.Slots) == 1 && r.ord >= 0 && int(r.ord) != ne.ord {
				err = fmt.Errorf("placement: check: allocation %q records node ordinal %d, node %q has %d", r.id, r.ord, s.Node, ne.ord)
				return false
			}
			if len(s.GPUs) == 0 || !slices.IsSorted(s.GPUs) {
				err = fmt.Errorf("placement: check: allocation %q on node %q has GPUs %v", r.id, s.Node, s.GPUs)
				return false
			}
			got[s.Node] = append(got[s.Node], s.GPUs...)
		}
		return true
	})
	if err != nil {
		return err
	}
	if len(got) != len(held) {
		return fmt.Errorf("placement: check: allocations cover %d nodes, %d nodes hold GPUs", len(got), len(held))
	}
	for id, gs := range got {
		slices.Sort(gs)
		if !slices.Equal(gs, held[id]) {
			return fmt.Errorf("placement: check: node %q holds GPUs %v, allocations name %v", id, held[id], gs)
		}
	}
	if dirty != len(c.dirty) {
		return fmt.Errorf("placement: check: %d nodes marked dirty, %d listed", dirty, len(c.dirty))
	}
	for i, ord := range c.dirty {
		if n := c.recs.at(ord); n == nil || !n.dirty || slices.Contains(c.dirty[:i], ord) {
			return fmt.Errorf("placement: check: dirty list entry %d (node ordinal %d) is stale or repeated", i, ord)
		}
	}
	// Domains and level indexes: a record for every domain recomputed
	// (the loop below) and nothing else, and a path for each.
	if c.paths.Len() != len(doms) {
		return fmt.Errorf("placement: check: %d paths, recomputed %d domains", c.paths.Len(), len(doms))
	}
	live := 0
	for ord := range c.nextNod {
		if c.recs.at(ord) != nil {
			live++
		}
	}
	if live != c.nodes.Len() {
		return fmt.Errorf("placement: check: %d node records for %d nodes", live, c.nodes.Len())
	}
	// The domains' indexes as they stand, or as the next flush will
	// rebuild them (built aside, as the free-capacity index).
	dpos, built := c.dpos, []freeIndex(nil)
	if !c.dvalid {
		dpos, built = c.domainIndexes()
	}
	levelFree := make([][]dkey, len(c.levels))
	levelTop := make([][maxIndexedSpan + 1][]dkey, len(c.levels))
	for ord := range c.nextOrd {
		d, w := c.domains.at(ord), doms[ord]
		if d == nil && w == nil {
			continue
		}
		if d == nil || w == nil || d.ord != ord || d.level != w.level || d.members != w.members || d.free != w.free {
			return fmt.Errorf("placement: check: domain %d is stale", ord)
		}
		x := &d.nodes
		if built != nil {
			x = &built[ord]
		}
		if err := checkDomainIndex(d, x, w.ranked, dpos); err != nil {
			return err
		}
		if err := sameKeysUnordered("domain "+d.path, x, w.nodes); err != nil {
			return err
		}
		for j := 1; j <= maxIndexedSpan; j++ {
			if lags := d.lag&(1<<j) != 0; lags != slices.Contains(c.stale[j], d.ord) {
				return fmt.Errorf("placement: check: domain %q lag bit %d is %t, disagreeing with the stale list", d.path, j, lags)
			}
		}
		if d.lag&^lagAll != 0 || d.lag&2 == 0 && d.idxFree != d.free {
			return fmt.Errorf("placement: check: domain %q free total is stale but not listed", d.path)
		}
		top := topSums(x)
		for k := 2; k <= maxIndexedSpan; k++ {
			if d.lag&(1<<k) == 0 && d.top[k] != top[k] {
				return fmt.Errorf("placement: check: domain %q top-%d sum %d is stale but not marked, want %d", d.path, k, d.top[k], top[k])
			}
		}
		if d.level >= len(c.levels) {
			return fmt.Errorf("placement: check: domain %q at missing level %d", d.path, d.level)
		}
		levelFree[d.level] = append(levelFree[d.level], dkey{n: d.idxFree, ord: d.ord})
		for k := 2; k <= maxIndexedSpan; k++ {
			levelTop[d.level][k] = append(levelTop[d.level][k], dkey{n: d.top[k], ord: d.ord})
		}
	}
	for l, lv := range c.levels {
		if err := sameItems(fmt.Sprintf("level %d free index", l), lv.byFree, levelFree[l], lessDKey); err != nil {
			return err
		}
		for k := 2; k <= maxIndexedSpan; k++ {
			if err := sameItems(fmt.Sprintf("level %d top-%d index", l, k), lv.byTop[k], levelTop[l][k], lessDKey); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkDomainIndex verifies the index x of domain d: its ranks are the
// members in id order (ranked) and agree with dpos, and its sets are
// consistent.
func checkDomainIndex(d *domainState, x *freeIndex, ranked []key, dpos [][]int32) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("placement: check: domain %q index: "+format, append([]any{d.path}, args...)...)
	}
	if len(x.byRank) != len(ranked) {
		return fail("%d ranks for %d members", len(x.byRank), len(ranked))
	}
	for r, k := range ranked {
		if x.byRank[r] != k || d.level >= len(dpos) || k.ord >= len(dpos[d.level]) || int(dpos[d.level][k.ord]) != r {
			return fail("node %q is not at rank %d", k.id, r)
		}
	}
	return x.checkSets(fail)
}

func sameKeysUnordered(what string, t ascender[key], want []key) error {
	return sameItems(what, t, want, lessKey)
}

// ascender is an ordered set: a B-tree, or the free-capacity index.
type ascender[T any] interface {
	Len() int
	Ascend(iterator btree.ItemIteratorG[T])
}

// sameItems reports whether t holds exactly want, in any order.
func sameItems[T comparable](what string, t ascender[T], want []T, less func(a, b T) bool) error {
	slices.SortFunc(want, func(a, b T) int {
		if less(a, b) {
			return -1
		}
		if less(b, a) {
			return 1
		}
		return 0
	})
	if t.Len() != len(want) {
		return fmt.Errorf("placement: check: %s has %d entries, want %d", what, t.Len(), len(want))
	}
	i := 0
	var err error
	t.Ascend(func(x T) bool {
		if x != want[i] {
			err = fmt.Errorf("placement: check: %s entry %d is %v, want %v", what, i, x, want[i])
			return false
		}
		i++
		return true
	})
	return err
}
