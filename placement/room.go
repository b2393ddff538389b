package placement

import (
	"cmp"
	"slices"
)

// Room bounds what a cluster can still place: how many gangs of a demand
// it could take one after another. A scheduler uses it to see how deep
// into a queue a round can reach (sched's Queue); it is a bound, not a
// plan, so it may count gangs that the placement rules would not fit
// together. Fill one with [Cluster.RoomWithout]; a Room may be reused.
type Room struct {
	strict  bool // a gang no larger than the largest node goes on one node
	largest int  // GPUs of the largest node that accepts placements
	free    int
	counts  []int // by free count: nodes accepting placements with that many free GPUs
	// scratch
	freed []nodeFreed
	ids   []string
}

// nodeFreed is a node's GPUs that the allocations let go of.
type nodeFreed struct{ ord, gpus int }

// RoomWithout fills r with the room of the cluster as if the allocations
// named in ids were released (not the GPUs of a draining node, which take
// nothing). It fails, leaving r as it was, with an error matching
// [ErrUnknownAllocation] if an id is not allocated or is listed twice.
// The cluster is not changed. O(distinct free counts + s log s) for the
// s slots of the allocations under [Strict], O(s) otherwise (where Gangs
// reads only the free count), plus an expected O(1) lookup per id and the
// sort of the ids.
func (c *Cluster) RoomWithout(r *Room, ids []string) error {
	r.ids = append(r.ids[:0], ids...)
	slices.Sort(r.ids)
	defer clear(r.ids) // hold no caller's id
	for i := 1; i < len(r.ids); i++ {
		if r.ids[i] == r.ids[i-1] {
			return &Error{Op: "room", Allocation: r.ids[i], Err: ErrUnknownAllocation, Detail: "listed twice"}
		}
	}
	strict := !c.spread && !c.first
	free := c.freeGPUs
	freed := r.freed[:0]
	for _, id := range ids {
		a, ok := c.getAlloc(id)
		if !ok {
			return &Error{Op: "room", Allocation: id, Err: ErrUnknownAllocation, Detail: "not allocated"}
		}
		for k, s := range a.p.Slots {
			ord := c.slotOrd(a, k)
			if strict {
				freed = append(freed, nodeFreed{ord, len(s.GPUs)})
			} else if c.recs.at(ord).accepting() {
				free += len(s.GPUs)
			}
		}
	}
	r.strict, r.largest, r.free = strict, c.largestNode(), free
	r.counts = r.counts[:0]
	if !strict {
		// Gangs reads the free count alone.
		return nil
	}
	slices.SortFunc(freed, func(a, b nodeFreed) int { return cmp.Compare(a.ord, b.ord) })
	fx := c.freeIdx()
	for v := fx.nextCount(1); v >= 0; v = fx.nextCount(v + 1) {
		r.grow(v)
		r.counts[v] = fx.set(v).n
	}
	for i := 0; i < len(freed); {
		ord, gpus := freed[i].ord, 0
		for ; i < len(freed) && freed[i].ord == ord; i++ {
			gpus += freed[i].gpus
		}
		n := c.recs.at(ord)
		if !n.accepting() {
			continue
		}
		if n.free > 0 {
			r.counts[n.free]--
		}
		r.grow(n.free + gpus)
		r.counts[n.free+gpus]++
		r.free += gpus
	}
	r.freed = freed[:0]
	return nil
}

// grow makes counts[v] valid.
func (r *Room) grow(v int) {
	for len(r.counts) <= v {
		r.counts = append(r.counts, 0)
	}
}

// Free returns the free GPUs of the room.
func (r *Room) Free() int { return r.free }

// Gangs returns the most gangs of demand GPUs the room could take one
// after another: under [Strict], where a gang no larger than the largest
// node goes on one node, the sum over nodes of ⌊free GPUs / demand⌋;
// otherwise, or for a larger gang, ⌊free GPUs / demand⌋. 0 for a demand
// that is not positive. It is at least 1 exactly when one gang of demand
// GPUs fits the cluster with the allocations let go: a scheduler can tell
// whether anything fits without placing it. O(largest free count).
func (r *Room) Gangs(demand int) int {
	if demand <= 0 {
		return 0
	}
	if !r.strict || demand > r.largest {
		return r.free / demand
	}
	n := 0
	for v := demand; v < len(r.counts); v++ {
		n += r.counts[v] * (v / demand)
	}
	return n
}
