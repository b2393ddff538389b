package simulate

import "github.com/astraea-sched/astraea/placement"

// nodeFree is each node's free GPUs and how many nodes have each count, kept
// by the engine as it allocates and releases. A policy reads it to bound how
// many gangs of d GPUs can be placed: on a consolidated cluster a gang no
// larger than the largest node takes d GPUs of one node, so at most
// Σ_n ⌊free_n ÷ d⌋ of them fit. That holds for the engine's cluster, which
// is built with placement's default strict consolidation and never drains a
// node (a draining node's free GPUs would be counted here yet refuse
// placements); a node's free count never exceeds its GPUs, so it always
// indexes hist. Nodes are numbered in the order of the cluster's
// configuration: a running job's state keeps the numbers of its slots'
// nodes (JobState.slotNodes), so that updates and looks at its nodes cost
// no lookup by name.
type nodeFree struct {
	ix      map[string]int32 // node -> its number
	free    []int            // by node number
	hist    []int            // hist[f]: nodes with f free GPUs
	largest int              // GPUs of the largest node
	// mark is 1 + a node's place in the list of gains addSlots builds,
	// 0 for a node not in it (every node between two lists)
	mark []int32
}

func newNodeFree(nodes []placement.Node) *nodeFree {
	n := &nodeFree{ix: make(map[string]int32, len(nodes)), free: make([]int, len(nodes)), mark: make([]int32, len(nodes))}
	for _, x := range nodes {
		n.largest = max(n.largest, x.GPUs)
	}
	n.hist = make([]int, n.largest+1)
	for i, x := range nodes {
		n.ix[x.ID] = int32(i)
		n.free[i] = x.GPUs
		n.hist[x.GPUs]++
	}
	return n
}

// index returns node's number, −1 for a node the cluster does not have.
func (n *nodeFree) index(node string) int32 {
	if i, ok := n.ix[node]; ok {
		return i
	}
	return -1
}

// unmark ends a list of gains built by addSlots with n: its nodes' marks
// are cleared. A nil n has none.
func (n *nodeFree) unmark(gains []nodeGain) {
	if n == nil {
		return
	}
	for _, g := range gains {
		if g.ix >= 0 {
			n.mark[g.ix] = 0
		}
	}
}

// freeAt returns the free GPUs of node number i (a node the cluster does not
// have, −1, has none).
func (n *nodeFree) freeAt(i int32) int {
	if i < 0 {
		return 0
	}
	return n.free[i]
}

// slotNodes returns the numbers of the nodes of p's slots, in dst.
func (n *nodeFree) slotNodes(p placement.Placement, dst []int32) []int32 {
	dst = dst[:0]
	for _, s := range p.Slots {
		dst = append(dst, n.index(s.Node))
	}
	return dst
}

// slotNode returns the number of the node of js's k-th slot: the one the
// engine keeps with the state (slotNodes), or looked up by name for a state
// that has none.
func (n *nodeFree) slotNode(js *JobState, k int) int32 {
	if len(js.slotNodes) == len(js.Placement.Slots) {
		return js.slotNodes[k]
	}
	return n.index(js.Placement.Slots[k].Node)
}

// change records that p's GPUs were released (sign +1) or allocated (−1);
// ixs are the numbers of p's slots' nodes, or nil to look them up.
func (n *nodeFree) change(p placement.Placement, ixs []int32, sign int) {
	for k, s := range p.Slots {
		var i int32
		if len(ixs) == len(p.Slots) {
			i = ixs[k]
		} else if i = n.index(s.Node); i < 0 {
			continue // not a node of the cluster: it would not allocate
		}
		f := n.free[i]
		g := f + sign*len(s.GPUs)
		n.hist[f]--
		n.hist[g]++
		n.free[i] = g
	}
}
