package placement

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/astraea-sched/astraea/internal/idhash"
)

// plan is a placement decision before it is turned into GPU indices: the
// pool of nodes to choose from and the number of nodes to use.
type plan struct {
	pool  *freeIndex // (free, id) of candidate nodes, for a multi-node plan: the cluster's or a domain's
	nodes int
	best  key // the best-fitting node of a single-node plan
	// taken, for a multi-node plan under FirstFit, is the nodes chosen,
	// each with the GPUs it gives as its count, in node id order (pool is
	// then nil).
	taken []key
	// whole is the count of wholly free nodes a FirstFit gang larger
	// than any node sought when it was spread because it found too few of
	// them, or because no other node had rest free (for WhySpread).
	whole, rest int
}

// decide applies the placement rules to demand. It changes nothing a
// caller can see, but brings internal indexes up to date: it may build
// the free-capacity index and, for a job spanning several nodes, move the
// lagging domain keys and refresh the stale sums the span reads (see
// refreshSpan). For a single node O(counts/64 + n/4,096) (see freeIndex);
// for a job spanning k nodes O(counts + log n) plus O(levels·log domains)
// to choose a topology domain when k ≤ 16 (a scan of a level's domains for
// larger spans), plus those updates.
func (c *Cluster) decide(demand int) (plan, error) {
	if demand <= 0 {
		return plan{}, &Error{Op: "place", Err: ErrInvalidDemand,
			Detail: fmt.Sprintf("demand %d GPUs, want > 0", demand)}
	}
	if c.first {
		return c.decideFirst(demand)
	}
	fx := c.freeIdx()
	if b, ok := fx.bestFit(demand); ok {
		return plan{nodes: 1, best: b}, nil
	}
	largest := fx.largest()
	if !c.spread && demand <= c.largestNode() {
		return plan{}, newNoFit(demand, 1, largest, c.freeGPUs)
	}
	if c.freeGPUs < demand {
		return plan{}, newNoFit(demand, 0, largest, c.freeGPUs)
	}
	k := fx.minNodes(demand)
	c.refreshSpan(k)
	for l := len(c.levels) - 1; l >= 0; l-- {
		if d, ok := c.innermost(l, k, demand); ok {
			return plan{pool: &d.nodes, nodes: k}, nil
		}
	}
	return plan{pool: fx, nodes: k}, nil
}

// decideFirst is decide under FirstFit (see the mode's rules), for a
// positive demand: O(64 · log₆₄ n) for a gang on one node, O(k · 64 ·
// log₆₄ n) for one on k nodes (see orderIndex).
func (c *Cluster) decideFirst(demand int) (plan, error) {
	if c.freeGPUs < demand {
		return plan{}, newNoFit(demand, 0, c.freeIdx().largest(), c.freeGPUs)
	}
	g := c.largestNode()
	if demand <= g {
		if o := c.order.next(0, demand, false); o >= 0 {
			n := c.recs.at(o)
			return plan{nodes: 1, best: key{n: n.free, id: n.id, ord: o}}, nil
		}
		return c.spreadFirst(demand, 0, 0), nil
	}
	q, r := demand/g, demand%g
	taken := make([]key, 0, q+1)
	for from := 0; len(taken) < q; {
		o := c.order.next(from, g, true)
		if o < 0 {
			return c.spreadFirst(demand, q, 0), nil
		}
		taken = append(taken, key{n: g, id: c.recs.at(o).id, ord: o})
		from = o + 1
	}
	if r > 0 {
		// The first node with r free that is not taken whole: the taken
		// ones come in order, so the search steps over them as it meets
		// them.
		j := 0
		for from := 0; ; {
			o := c.order.next(from, r, false)
			if o < 0 {
				return c.spreadFirst(demand, q, r), nil
			}
			for j < len(taken) && taken[j].ord < o {
				j++
			}
			if j < len(taken) && taken[j].ord == o {
				from = o + 1
				continue
			}
			taken = append(taken, key{n: r, id: c.recs.at(o).id, ord: o})
			break
		}
	}
	return c.firstPlan(taken), nil
}

// spreadFirst is FirstFit's spread of demand GPUs, which the free GPUs of
// the accepting nodes hold: every node in order gives all its free GPUs,
// the last one what is still missing. whole and rest are what the gang
// sought consolidated, for WhySpread. O(k · 64 · log₆₄ n) on k nodes.
func (c *Cluster) spreadFirst(demand, whole, rest int) plan {
	var taken []key
	for o, left := 0, demand; left > 0; o++ {
		o = c.order.next(o, 1, false)
		n := c.recs.at(o)
		take := min(n.free, left)
		taken = append(taken, key{n: take, id: n.id, ord: o})
		left -= take
	}
	p := c.firstPlan(taken)
	p.whole, p.rest = whole, rest
	return p
}

// firstPlan is the plan of FirstFit's nodes taken, each with the GPUs it
// gives as its count: sorted by node id.
func (c *Cluster) firstPlan(taken []key) plan {
	if len(taken) == 1 {
		n := c.recs.at(taken[0].ord)
		return plan{nodes: 1, best: key{n: n.free, id: n.id, ord: n.ord}}
	}
	slices.SortFunc(taken, func(a, b key) int { return strings.Compare(a.id, b.id) })
	return plan{nodes: len(taken), taken: taken}
}

// largestNode returns the GPU count of the largest node that accepts
// placements. O(log n).
func (c *Cluster) largestNode() int {
	k, _ := c.caps.Max()
	return k.n
}

// MinNodes returns the fewest nodes that could hold a gang of demand GPUs
// if the cluster were empty: the count of its largest nodes that accept
// placements whose GPUs add up to demand. It is the node count Strict
// gives such a gang, and the minimum a placement's span is compared with
// (see Beyond). 0 for a demand that is not positive or that the nodes
// accepting placements cannot hold together. O(log n + k) for a result of
// k nodes.
func (c *Cluster) MinNodes(demand int) int {
	if demand <= 0 {
		return 0
	}
	k, sum := 0, 0
	c.caps.Descend(func(x key) bool {
		k++
		sum += x.n
		return sum < demand
	})
	if sum < demand {
		return 0
	}
	return k
}

// Beyond returns how many nodes p spans beyond the minimum for its GPUs
// (MinNodes): 0 for a consolidated placement, 1 for a gang of 8 spread
// over two nodes of 8 because no node had 8 free. O(log n + k).
func (c *Cluster) Beyond(p Placement) int {
	return max(0, p.Nodes()-c.MinNodes(p.GPUs()))
}

// Spread says why a gang placed now spans more nodes than it needs on an
// empty cluster: as data a scheduler can report ("why does my job run
// across nodes?"), beside [NoFitError] for a gang that waits.
type Spread struct {
	Demand   int // GPUs asked for
	Nodes    int // nodes Place spans now: the fewest the free GPUs allow (under FirstFit, those its spread in node order takes)
	MinNodes int // the fewest on an empty cluster (Cluster.MinNodes)
	// Fewer is the most free GPUs any Nodes−1 nodes hold together (the
	// largest free block when Nodes is 2): less than Demand, except under
	// FirstFit, whose spread takes the nodes in order rather than the
	// fewest.
	Fewer  int
	Reason string // a human sentence, e.g. "spread over 2 nodes: no node has 8 free (largest free block is 6)"
}

// WhySpread reports why Place(demand) would span more nodes than
// MinNodes(demand) now, and ok true, when it would; ok is false when it
// would not spread beyond that minimum or would fail (see [NoFitError]).
// The placement Place returns spans exactly Spread.Nodes nodes, so
// Beyond of it is Nodes − MinNodes. It changes nothing a caller can see.
// O(as Place's decision + counts).
func (c *Cluster) WhySpread(demand int) (s Spread, ok bool) {
	p, err := c.decide(demand)
	if err != nil || p.nodes <= 1 {
		return Spread{}, false
	}
	least := c.MinNodes(demand)
	if p.nodes <= least {
		return Spread{}, false
	}
	s = Spread{Demand: demand, Nodes: p.nodes, MinNodes: least, Fewer: c.freeIdx().topSum(p.nodes - 1)}
	switch {
	case c.first && p.whole == 0:
		s.Reason = fmt.Sprintf("spread over %d nodes in node order: no node has %d free (largest free block is %d)", p.nodes, demand, c.freeIdx().largest())
	case c.first && p.rest == 0:
		s.Reason = fmt.Sprintf("spread over %d nodes in node order: fewer than %d nodes of %d GPUs are wholly free", p.nodes, p.whole, c.largestNode())
	case c.first:
		s.Reason = fmt.Sprintf("spread over %d nodes in node order: no node besides the first %d wholly free ones has %d free", p.nodes, p.whole, p.rest)
	case p.nodes == 2:
		s.Reason = fmt.Sprintf("spread over 2 nodes: no node has %d free (largest free block is %d)", demand, s.Fewer)
	default:
		s.Reason = fmt.Sprintf("spread over %d nodes: no %d nodes have %d free (the %d largest free blocks hold %d)", p.nodes, p.nodes-1, demand, p.nodes-1, s.Fewer)
	}
	return s, true
}

// innermost finds, at topology level l, the domain that can hold demand on
// k nodes and whose k largest free blocks add up to the least (best fit
// among domains; the domain that appeared first among equals).
func (c *Cluster) innermost(l, k, demand int) (*domainState, bool) {
	lv := c.levels[l]
	var best dkey
	found := false
	if k <= maxIndexedSpan {
		lv.byTop[k].AscendGreaterOrEqual(dkey{n: demand, ord: -1}, func(x dkey) bool {
			best, found = x, true
			return false
		})
	} else {
		// Rare: spans beyond the indexed range scan the domains with
		// enough free GPUs. O(domains of the level · (log + k)).
		lv.byFree.AscendGreaterOrEqual(dkey{n: demand, ord: -1}, func(x dkey) bool {
			d := c.domains.at(x.ord)
			// The k largest blocks add up to at most the 16 largest plus
			// k−16 times the 16th: skip domains that cannot reach demand.
			const m = maxIndexedSpan
			if d.top[m]+(k-m)*(d.top[m]-d.top[m-1]) < demand {
				return true
			}
			if s := d.nodes.topSum(k); s >= demand {
				if cand := (dkey{n: s, ord: x.ord}); !found || lessDKey(cand, best) {
					best, found = cand, true
				}
			}
			return true
		})
	}
	if !found {
		return nil, false
	}
	return c.domains.at(best.ord), true
}

// topSum returns the sum of the k largest free blocks of x (of all of
// them if x has fewer). O(counts).
func (x *freeIndex) topSum(k int) int {
	sum := 0
	for v := x.prevCount(len(x.nonEmpty)*64 - 1); v > 0 && k > 0; v = x.prevCount(v - 1) {
		m := min(k, x.sets[v].n)
		sum += m * v
		k -= m
	}
	return sum
}

// choose picks the nodes of p for demand and the GPUs to use on each:
// single node: the best fit; k nodes: as pick says. O(k log n + GPUs of
// the chosen nodes).
func (c *Cluster) choose(p plan, demand int) Placement {
	if p.nodes == 1 {
		return c.onePlacement(p.best, demand)
	}
	taken := p.taken
	if taken == nil {
		taken = c.pick(p, demand, make([]key, 0, p.nodes))
	}
	slots := make([]Slot, 0, p.nodes)
	for _, x := range taken {
		slots = append(slots, Slot{Node: x.id, GPUs: c.recs.at(x.ord).lowestFree(x.n)})
	}
	return Placement{Slots: slots}
}

// onePlacement returns the placement of demand GPUs on the node of key b,
// its lowest free ones, in one allocation for up to 8 GPUs (see newSlot).
func (c *Cluster) onePlacement(b key, demand int) Placement {
	slot, gpus := newSlot(demand)
	slot[0] = Slot{Node: b.id, GPUs: c.recs.at(b.ord).appendLowestFree(gpus, demand)}
	return Placement{Slots: slot[:]}
}

// newSlot returns the slot of a one-node placement of demand GPUs and an
// empty slice with room for their indices: for up to 8 GPUs both in one
// allocation (48, 80 or 112 bytes, for 1, up to 4 and up to 8 GPUs),
// instead of one for each.
func newSlot(demand int) (*[1]Slot, []int) {
	switch {
	case demand == 1:
		q := new(struct {
			slot [1]Slot
			gpus [1]int
		})
		return &q.slot, q.gpus[:0:1]
	case demand <= 4:
		q := new(struct {
			slot [1]Slot
			gpus [4]int
		})
		return &q.slot, q.gpus[:0:demand]
	case demand <= 8:
		q := new(struct {
			slot [1]Slot
			gpus [8]int
		})
		return &q.slot, q.gpus[:0:demand]
	}
	return new([1]Slot), make([]int, 0, demand)
}

// pick chooses the nodes of p, a plan on several nodes, for demand: the
// k−1 largest free blocks whole (ties by lowest id), then the remainder
// from the best-fitting other node. It appends their keys to out, which is
// empty, each with the GPUs the node gives as its count, in node id order,
// and returns it. O(k log n).
func (c *Cluster) pick(p plan, demand int, out []key) []key {
	taken := out
	need := p.nodes - 1
	top, _ := p.pool.Max()
	v := top.n
	for need > 0 {
		// Within a group of equal free blocks take the lowest ids first.
		p.pool.AscendGreaterOrEqual(key{n: v}, func(x key) bool {
			if x.n != v {
				return false
			}
			taken = append(taken, x)
			need--
			return need > 0
		})
		if need == 0 {
			break
		}
		p.pool.DescendLessOrEqual(key{n: v}, func(x key) bool {
			v = x.n // the next smaller free block; {v, ""} precedes every key of value v
			return false
		})
	}
	sum := 0
	for _, x := range taken {
		sum += x.n
	}
	rest := demand - sum
	last := taken[len(taken)-1]
	isTaken := func(x key) bool { return x.n > last.n || (x.n == last.n && x.id <= last.id) }
	var rem key
	p.pool.AscendGreaterOrEqual(key{n: rest}, func(x key) bool {
		if isTaken(x) {
			return true
		}
		rem = x
		return false
	})
	rem.n = rest
	taken = append(taken, rem)
	slices.SortFunc(taken, func(a, b key) int { return strings.Compare(a.id, b.id) })
	return taken
}

// Place plans where demand GPUs would go, without changing the cluster's
// state (it may bring internal indexes up to date, so like every method it
// must not run concurrently with others on the same cluster). It fails with
// ErrInvalidDemand, or with a *NoFitError (matching ErrNoFit) that says
// why. See the package documentation for the rules.
// O(1) for a single-node job on up to 4,096 nodes (O(n/4,096) beyond, see
// the package documentation); O(k log n + levels·log domains) for a job
// spanning k ≤ 16 nodes, plus the deferred refresh of the top-k sums
// of the domains changed since the previous decision for a span of k nodes
// (O(log domains + k) each, paid once per domain however often it
// changed); plus the size of the result.
func (c *Cluster) Place(demand int) (Placement, error) {
	p, err := c.decide(demand)
	if err != nil {
		return Placement{}, err
	}
	return c.choose(p, demand), nil
}

// Assign places demand GPUs and allocates them under id in one step: it
// returns what Place(demand) would and leaves the cluster as
// Allocate(id, that placement) would, without checking again the placement
// it has just planned — the step a scheduler takes for every new grant.
// It fails, changing nothing, with ErrInvalidPlacement for an empty id, as
// Place fails, or with ErrDuplicateAllocation. The returned placement
// shares nothing with the one stored. O(as Place + s log n) for a placement
// on s nodes.
func (c *Cluster) Assign(id string, demand int) (Placement, error) {
	return c.AssignHashed(id, IDHash(id), demand)
}

// IDHash returns the hash under which a Cluster files allocation id, for
// [Cluster.AssignHashed]. It is a fixed function of the id (not seeded per
// process).
func IDHash(id string) uint64 { return idhash.String(id) }

// AssignHashed is [Cluster.Assign] for a caller that has hashed id with
// [IDHash] already, as a scheduler does when it checks a round's job ids for
// duplicates: filing the allocation then reads only the hash, not the id's
// bytes (a cache miss per grant in a round over a large set of jobs). h must
// be IDHash(id): under another hash the allocation is filed where a lookup
// by id does not find it, which [Cluster.Check] reports. O(as Assign).
func (c *Cluster) AssignHashed(id string, h uint64, demand int) (Placement, error) {
	if id == "" {
		return Placement{}, &Error{Op: "allocate", Err: ErrInvalidPlacement, Detail: "allocation id is empty"}
	}
	// The allocation table is read first, so that its likely cache miss
	// (the table is large, the slot random) overlaps the decision, which
	// does not change the table.
	slot, dup := c.allocs.probe(h, id)
	if demand > 0 && !c.first {
		// The single-node plan of decide, the common case, taken
		// without a plan (FirstFit's first fit is not the best fit).
		fx := c.freeIdx()
		if v := fx.nextCount(demand); v >= 0 {
			if dup {
				return Placement{}, &Error{Op: "allocate", Allocation: id, Err: ErrDuplicateAllocation}
			}
			return c.assignOne(id, h, slot, demand, fx.byRank[fx.firstRank(v)].ord), nil
		}
	}
	p, err := c.decide(demand)
	if err != nil {
		return Placement{}, err
	}
	if dup {
		return Placement{}, &Error{Op: "allocate", Allocation: id, Err: ErrDuplicateAllocation}
	}
	if p.nodes == 1 { // FirstFit's: the best fit is settled above
		return c.assignOne(id, h, slot, demand, p.best.ord), nil
	}
	if p.taken != nil {
		return c.assignSpan(id, h, slot, demand, p.taken), nil
	}
	var buf [maxIndexedSpan]key
	return c.assignSpan(id, h, slot, demand, c.pick(p, demand, buf[:0])), nil
}

// assignSpan allocates under id (hash h, not held, to be stored in slot i
// of the allocation table, which allocs.probe returned for it) the lowest
// free GPUs of the nodes taken, as many on each as its key counts, and
// returns the placement: AssignHashed's case of several nodes. As in
// assignOne, the returned and the stored placement share one array of
// slots and one of GPU indices (carved as assignOne's are), each using its
// own half. O(s log n + demand) for s slots.
func (c *Cluster) assignSpan(id string, h, i uint64, demand int, taken []key) Placement {
	k := len(taken)
	var r *allocRec
	var slots []Slot
	switch {
	case k <= 2:
		sr := new(spanRec2)
		r, slots = &sr.allocRec, sr.slots[:2*k]
	case k <= 4:
		sr := new(spanRec4)
		r, slots = &sr.allocRec, sr.slots[:2*k]
	default:
		r, slots = new(allocRec), make([]Slot, 2*k)
	}
	gpus := c.assignInts(2 * demand)
	off := 0
	for j, x := range taken {
		gpus = c.recs.at(x.ord).appendLowestFree(gpus, x.n)
		slots[j] = Slot{Node: x.id, GPUs: gpus[off : off+x.n : off+x.n]}
		off += x.n
	}
	gpus = append(gpus, gpus...) // each GPU again, for the stored half
	for j, x := range taken {
		slots[k+j] = Slot{Node: x.id, GPUs: gpus[off : off+x.n : off+x.n]}
		off += x.n
	}
	r.id, r.p, r.ord = id, Placement{Slots: slots[k:]}, -1
	c.storeAt(r, h, i)
	for j, x := range taken {
		c.markSlot(x.ord, slots[k+j], true)
	}
	return Placement{Slots: slots[:k:k]}
}

// assignOne allocates the demand lowest free GPUs of node ord, which has
// that many free, under id (hash h, not held, to be stored in slot i of
// the allocation table, which allocs.probe returned for it) and returns
// the placement: AssignHashed's single-node case. The returned and the
// stored placement share the record and the GPU indices (see
// newAssignRec), each using its own half of them. On a node of up to 64 GPUs the GPUs are taken from the
// occupancy bits in one pass, which marks them held. O(demand), plus the
// reindexing of the node (see reindex).
func (c *Cluster) assignOne(id string, h, i uint64, demand, ord int) Placement {
	r, gpus := c.newAssignRec(demand)
	n := c.recs.at(ord)
	if n.owner != c.tok {
		n = c.mutNode(ord)
	}
	old := n.snapshot()
	if n.gpus <= 64 {
		free := ^n.lo
		if n.gpus < 64 {
			free &= 1<<uint(n.gpus) - 1
		}
		gpus = gpus[:2*demand] // each GPU twice, in each half
		for k := range demand {
			bit := free & -free // the lowest free GPU
			g := bits.TrailingZeros64(bit)
			gpus[k], gpus[demand+k] = g, g
			free &^= bit
			n.lo |= bit
		}
	} else {
		gpus = n.appendLowestFree(gpus, demand)
		for _, g := range gpus {
			n.mark(g, true)
		}
		gpus = append(gpus, gpus...)
	}
	n.free -= demand
	c.used += demand
	c.reindex(n, old)
	r.id, r.h, r.ord, r.owner = id, h, int32(ord), c.tok
	r.slots[0].Node, r.slots[0].GPUs = n.id, gpus[:demand:demand]
	r.slots[1].Node, r.slots[1].GPUs = n.id, gpus[demand:]
	r.p.Slots = r.slots[1:2:2]
	c.allocs.insertAt(c.tok, i, &r.allocRec)
	return Placement{Slots: r.slots[0:1:1]}
}

// storeAt records r, whose placement no caller holds and whose id, hashing
// to h, the cluster does not hold, in slot i of the allocation table, which
// allocs.probe has returned for it with the table unchanged since.
func (c *Cluster) storeAt(r *allocRec, h, i uint64) {
	r.owner, r.h = c.tok, h
	c.allocs.insertAt(c.tok, i, r)
}

// Fits reports whether Place(demand) would succeed. O(log n) at most (the
// capacity index, when no single node fits), after an O(n) rebuild of the
// free-capacity index if a node was added or removed since it was last
// read.
func (c *Cluster) Fits(demand int) bool {
	if demand <= 0 {
		return false
	}
	if c.LargestFree() >= demand {
		return true
	}
	if !c.spread && demand <= c.largestNode() {
		return false
	}
	return c.freeGPUs >= demand
}

// Allocate occupies exactly the GPUs of p under allocation id, typically a
// placement just returned by Place. Slots must be ordered by node id, each
// with strictly ascending GPU indices. An explicit placement on a draining
// node is accepted — draining only keeps Place and Fits away, as a cordon
// does in Kubernetes for pods bound to a node by name — so that a caller can
// put back what it released, for example to undo a planned round.
// It fails, changing nothing, with ErrInvalidPlacement,
// ErrDuplicateAllocation, ErrUnknownNode or ErrConflict.
// O(s log n + GPUs) for a placement on s nodes.
func (c *Cluster) Allocate(id string, p Placement) error {
	fail := func(node string, sentinel error, detail string) error {
		return &Error{Op: "allocate", Allocation: id, Node: node, Err: sentinel, Detail: detail}
	}
	if id == "" {
		return fail("", ErrInvalidPlacement, "allocation id is empty")
	}
	// Room for the ordinals of a placement of up to 4 nodes on the stack:
	// small, since clearing it is part of every call.
	var buf [4]int32
	ords, err := c.validate(p, buf[:0], fail)
	if err != nil {
		// A duplicate id is reported first, whatever else is wrong.
		if _, ok := c.getAlloc(id); ok {
			return fail("", ErrDuplicateAllocation, "")
		}
		return err
	}
	// The duplicate is found before the record is made, so that a
	// rejected call leaves no record in the current batch (see slotBatch).
	h := IDHash(id)
	slot, dup := c.allocs.probe(h, id)
	if dup {
		return fail("", ErrDuplicateAllocation, "")
	}
	c.storeAt(c.newAllocRec(id, p, int(ords[0])), h, slot)
	for i, s := range p.Slots {
		c.markSlot(int(ords[i]), s, true)
	}
	return nil
}

// validate checks that p can be allocated and appends the ordinal of every
// slot's node to ords, in slot order. fail builds the error.
func (c *Cluster) validate(p Placement, ords []int32, fail func(node string, sentinel error, detail string) error) ([]int32, error) {
	if len(p.Slots) == 0 {
		return nil, fail("", ErrInvalidPlacement, "placement has no slot")
	}
	for i, s := range p.Slots {
		if i > 0 && s.Node <= p.Slots[i-1].Node {
			return nil, fail(s.Node, ErrInvalidPlacement, "slots are not ordered by node id, or a node repeats")
		}
		ord, ok := c.nodeOrd(s.Node)
		if !ok {
			return nil, fail(s.Node, ErrUnknownNode, "")
		}
		n := c.recs.at(ord)
		if len(s.GPUs) == 0 {
			return nil, fail(s.Node, ErrInvalidPlacement, "slot has no GPU")
		}
		for j, g := range s.GPUs {
			if g < 0 || g >= n.gpus {
				return nil, fail(s.Node, ErrInvalidPlacement,
					fmt.Sprintf("GPU %d out of range [0, %d)", g, n.gpus))
			}
			if j > 0 && g <= s.GPUs[j-1] {
				return nil, fail(s.Node, ErrInvalidPlacement, "GPU indices are not strictly ascending")
			}
			if n.held(g) {
				return nil, fail(s.Node, ErrConflict, fmt.Sprintf("GPU %d is already held", g))
			}
		}
		ords = append(ords, int32(ord))
	}
	return ords, nil
}

// Release frees the GPUs held by allocation id and returns its placement,
// which is the caller's own: no cluster or clone sees changes to it. It
// fails with ErrUnknownAllocation for an id never allocated or already
// released. O(s log n + GPUs) for a placement on s nodes, plus a copy of
// the placement if c was cloned since the allocation was made.
func (c *Cluster) Release(id string) (Placement, error) {
	r, ok := c.allocs.delete(c.tok, idhash.String(id), id)
	if !ok {
		return Placement{}, &Error{Op: "release", Allocation: id, Err: ErrUnknownAllocation}
	}
	c.markAll(r, false)
	if r.owner != c.tok {
		// Clones of c may hold the record: the caller gets a copy, so
		// that writing to it cannot reach them.
		return r.p.clone(), nil
	}
	return r.p, nil
}

// PlaceWithout returns what Place(demand) would return if the allocations
// ids were released first, and leaves the cluster as it was: the look a
// scheduler takes at an optimistic view in which some running jobs let go,
// without the Release and Allocate of each (it frees their GPUs for a
// moment and holds them again, leaving the allocations themselves alone).
// It fails as Place does, or with ErrUnknownAllocation for an id not
// allocated or listed twice, changing nothing. O(as Place + s log n + GPUs)
// for the s slots of the listed allocations.
func (c *Cluster) PlaceWithout(demand int, ids []string) (Placement, error) {
	if p, ok, err := c.lookOneNode(demand, ids); ok {
		return p, err
	}
	freed := 0
	var err error
	for _, id := range ids {
		r, ok := c.getAlloc(id)
		if !ok || !c.heldAll(r) {
			err = &Error{Op: "place", Allocation: id, Err: ErrUnknownAllocation,
				Detail: "not allocated, or listed twice"}
			break
		}
		c.markAll(r, false)
		freed++
	}
	var q Placement
	if err == nil {
		q, err = c.Place(demand)
	}
	for _, id := range ids[:freed] {
		r, _ := c.getAlloc(id)
		c.markAll(r, true)
	}
	if err != nil {
		return Placement{}, err
	}
	return q, nil
}

// lookNode is a node whose GPUs a look frees: mask holds the GPUs freed
// (the node has at most 64), count how many.
type lookNode struct {
	n     *nodeState
	mask  uint64
	count int
}

// maxLookNodes bounds the nodes lookOneNode tracks, on the stack.
const maxLookNodes = 8

// lookOneNode answers PlaceWithout without marking any GPU when the look
// fits on one node, the common case: the best fit of the view is the
// better (by free GPUs, then id) of the best-fitting node the look leaves
// alone and the nodes it frees GPUs on, counted with them; its GPUs are the
// lowest free ones of that view. When no single node of the view fits, it
// answers as well if the view cannot hold the demand at all, with the
// *NoFitError that Place in the view returns (see decide): the largest free
// block of the view is the larger of the cluster's and those of the nodes
// the look frees GPUs on, and its free total the cluster's plus the GPUs
// freed on nodes that accept placements. It declines (ok false), for
// PlaceWithout's long way to answer, under FirstFit (whose choice is not
// the best fit), when a listed allocation is unknown,
// listed twice or not held, when its GPUs span more than maxLookNodes nodes
// or sit on a node of more than 64 GPUs, or when the demand would be spread
// over several nodes of the view. O(s log n + L log n), plus an O(1)
// expected lookup per id, for the s slots of the listed allocations, over
// at most L ≤ maxLookNodes + 1 keys scanned.
func (c *Cluster) lookOneNode(demand int, ids []string) (p Placement, ok bool, err error) {
	if demand <= 0 || c.first {
		return Placement{}, false, nil
	}
	var buf [maxLookNodes]lookNode
	look := buf[:0]
	for _, id := range ids {
		r, ok := c.getAlloc(id)
		if !ok {
			return Placement{}, false, nil
		}
		for k, s := range r.p.Slots {
			n := c.recs.at(c.slotOrd(r, k))
			if n.gpus > 64 {
				return Placement{}, false, nil
			}
			i := 0
			for i < len(look) && look[i].n != n {
				i++
			}
			if i == len(look) {
				if i == maxLookNodes {
					return Placement{}, false, nil
				}
				look = append(look, lookNode{n: n})
			}
			for _, g := range s.GPUs {
				bit := uint64(1) << uint(g)
				if g < 0 || g >= n.gpus || !n.held(g) || look[i].mask&bit != 0 {
					return Placement{}, false, nil // listed twice, or not held
				}
				look[i].mask |= bit
				look[i].count++
			}
		}
	}
	var best key
	found := false
	c.freeIdx().AscendGreaterOrEqual(key{n: demand}, func(x key) bool {
		for _, l := range look {
			if l.n.ord == x.ord {
				return true // its free count is the view's below
			}
		}
		best, found = x, true
		return false
	})
	var mask uint64
	largest, free := 0, c.freeGPUs // of the view, over the nodes the look frees GPUs on
	for _, l := range look {
		if !l.n.accepting() {
			continue
		}
		f := l.n.free + l.count
		largest, free = max(largest, f), free+l.count
		if f < demand {
			continue
		}
		// The key, whose id prefix is read from the id, only for a node
		// at least as good by its count.
		if !found || f < best.n || f == best.n && lessKey(nodeKey(f, l.n), best) {
			best, found, mask = nodeKey(f, l.n), true, l.mask
		}
	}
	if !found {
		largest = max(largest, c.freeIdx().largest())
		if !c.spread && demand <= c.largestNode() {
			return Placement{}, true, newNoFit(demand, 1, largest, free)
		}
		if free < demand {
			return Placement{}, true, newNoFit(demand, 0, largest, free)
		}
		return Placement{}, false, nil
	}
	if mask == 0 {
		return c.onePlacement(best, demand), true, nil
	}
	// The lowest GPUs free in the view: free now or freed by the look (the
	// node has at most 64).
	n := c.recs.at(best.ord)
	bitsFree := ^(n.lo &^ mask)
	if n.gpus < 64 {
		bitsFree &= 1<<uint(n.gpus) - 1
	}
	slot, gpus := newSlot(demand)
	for ; len(gpus) < demand && bitsFree != 0; bitsFree &= bitsFree - 1 {
		gpus = append(gpus, bits.TrailingZeros64(bitsFree))
	}
	slot[0] = Slot{Node: n.id, GPUs: gpus}
	return Placement{Slots: slot[:]}, true, nil
}

// slotOrd returns the ordinal of the node of slot k of r, a stored
// allocation: from the record for a one-slot placement, else by name.
func (c *Cluster) slotOrd(r *allocRec, k int) int {
	if len(r.p.Slots) == 1 && r.ord >= 0 {
		return int(r.ord)
	}
	ord, _ := c.nodeOrd(r.p.Slots[k].Node)
	return ord
}

// heldAll reports whether every GPU of r, a stored allocation, is held.
func (c *Cluster) heldAll(r *allocRec) bool {
	for k, s := range r.p.Slots {
		n := c.recs.at(c.slotOrd(r, k))
		for _, g := range s.GPUs {
			if !n.held(g) {
				return false
			}
		}
	}
	return true
}

// markAll marks the GPUs of r, a stored allocation, held (or free).
func (c *Cluster) markAll(r *allocRec, held bool) {
	for k, s := range r.p.Slots {
		c.markSlot(c.slotOrd(r, k), s, held)
	}
}

// markSlot marks the GPUs of slot s held (or free) on their node, whose
// ordinal is ord, updates the counts and reindexes the node. The caller has
// validated s.
func (c *Cluster) markSlot(ord int, s Slot, held bool) {
	n := c.recs.at(ord)
	if n.owner != c.tok {
		n = c.mutNode(ord)
	}
	old := n.snapshot()
	for _, g := range s.GPUs {
		n.mark(g, held)
	}
	d := len(s.GPUs)
	if held {
		d = -d
	}
	n.free += d
	c.used -= d
	c.reindex(n, old)
}
