package placement

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// HoldFor chooses the nodes a scheduler should hold for a gang of demand
// GPUs that cannot be placed now: drain them ([Cluster.DrainNode], so that
// nothing new lands there), let their allocations go as their leases end,
// and place the gang there with [Cluster.PlaceOn] once they hold it. That
// is the reservation that keeps a large gang from starving behind smaller
// jobs, which otherwise take the GPUs that each release frees before
// enough of them are free at once.
//
// The choice follows the placement rules (see the package documentation):
// one node if a node accepting placements is large enough — the one with
// the most free GPUs; else nodes of one topology domain, the innermost
// able to hold the gang, taken by most free GPUs until their GPUs add up to
// demand, in the domain where the nodes taken have the most free GPUs, so
// that few GPUs have to come free for the gang. Ties go to the order of
// [Cluster.Nodes]. The nodes come sorted by id, as the slots of a
// placement. Draining nodes are not chosen. Nothing changes. The choice is
// the same in every [Mode], FirstFit's node order playing no part: a
// reservation waits for GPUs to come free rather than taking those free
// now.
//
// It fails with ErrInvalidDemand, or with a *NoFitError when the gang does
// not fit even on empty nodes. O(n × (levels + log n)) for n nodes.
func (c *Cluster) HoldFor(demand int) ([]string, error) {
	if demand <= 0 {
		return nil, &Error{Op: "hold", Err: ErrInvalidDemand, Detail: fmt.Sprintf("demand %d", demand)}
	}
	var infos []NodeInfo
	levels := 0
	for n := range c.Nodes() {
		if !n.Draining {
			infos = append(infos, n)
			levels = max(levels, len(n.Topology))
		}
	}
	slices.SortStableFunc(infos, func(x, y NodeInfo) int { return cmp.Compare(y.Free, x.Free) })
	for _, n := range infos {
		if n.GPUs >= demand {
			return []string{n.ID}, nil
		}
	}
	for l := levels; l >= 0; l-- {
		// The domains at depth l in order of first appearance (the node
		// with the most free GPUs first); each takes its nodes by most
		// free GPUs.
		var keys []string
		picks := map[string][]NodeInfo{}
		sums := map[string]int{}
		for _, n := range infos {
			if len(n.Topology) < l {
				continue // in no domain at this depth
			}
			k := strings.Join(n.Topology[:l], "\x00")
			if _, seen := picks[k]; !seen {
				keys = append(keys, k)
			}
			if sums[k] < demand {
				picks[k] = append(picks[k], n)
				sums[k] += n.GPUs
			}
		}
		best, bestFree := "", -1
		for _, k := range keys {
			if sums[k] < demand {
				continue
			}
			free := 0
			for _, n := range picks[k] {
				free += n.Free
			}
			if free > bestFree {
				best, bestFree = k, free
			}
		}
		if bestFree >= 0 {
			ids := make([]string, 0, len(picks[best]))
			for _, n := range picks[best] {
				ids = append(ids, n.ID)
			}
			slices.Sort(ids)
			return ids, nil
		}
	}
	return nil, c.holdNoFit(demand, "the nodes accepting placements do not have that many GPUs")
}

// holdNoFit is HoldFor's *NoFitError.
func (c *Cluster) holdNoFit(demand int, why string) *NoFitError {
	return &NoFitError{Demand: demand, LargestFree: c.LargestFree(), FreeTotal: c.Free(),
		Reason: fmt.Sprintf("needs %d: %s", demand, why)}
}

// PlaceOn plans demand GPUs on the free GPUs of the given nodes only,
// draining or not (a held set is drained while it empties): each node in
// id order gives its lowest free GPUs until the gang is whole. It is how a
// scheduler places a gang on the nodes [Cluster.HoldFor] chose once they
// hold it; it does not apply the consolidation rules, which chose the
// nodes. Nothing changes: commit with [Cluster.Allocate].
//
// It fails with ErrInvalidDemand; with ErrUnknownNode or ErrInvalidPlacement
// (nodes not strictly ascending) naming the node; or with a *NoFitError
// when the nodes' free GPUs do not hold the gang now. O(Σ GPUs of the
// nodes).
func (c *Cluster) PlaceOn(demand int, nodes []string) (Placement, error) {
	if demand <= 0 {
		return Placement{}, &Error{Op: "place on", Err: ErrInvalidDemand, Detail: fmt.Sprintf("demand %d", demand)}
	}
	free, largest := 0, 0
	for i, id := range nodes {
		if i > 0 && nodes[i-1] >= id {
			return Placement{}, &Error{Op: "place on", Node: id, Err: ErrInvalidPlacement, Detail: "nodes are not strictly ascending by id"}
		}
		n, ok := c.Node(id)
		if !ok {
			return Placement{}, &Error{Op: "place on", Node: id, Err: ErrUnknownNode}
		}
		free += n.Free
		largest = max(largest, n.Free)
	}
	if free < demand {
		return Placement{}, &NoFitError{Demand: demand, LargestFree: largest, FreeTotal: free,
			Reason: fmt.Sprintf("needs %d on the nodes held, %d free there", demand, free)}
	}
	var p Placement
	left := demand
	for _, id := range nodes {
		n, _ := c.Node(id)
		take := min(n.Free, left)
		if take == 0 {
			continue
		}
		s := Slot{Node: id, GPUs: make([]int, 0, take)}
		for g, h := 0, 0; g < n.GPUs && len(s.GPUs) < take; g++ {
			if h < len(n.Held) && n.Held[h] == g {
				h++
				continue
			}
			s.GPUs = append(s.GPUs, g)
		}
		p.Slots = append(p.Slots, s)
		if left -= take; left == 0 {
			break
		}
	}
	return p, nil
}
