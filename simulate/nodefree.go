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
// indexes hist. Updates cost one map lookup per slot.
type nodeFree struct {
	free    map[string]int
	hist    []int // hist[f]: nodes with f free GPUs
	largest int   // GPUs of the largest node
}

func newNodeFree(nodes []placement.Node) *nodeFree {
	n := &nodeFree{free: make(map[string]int, len(nodes))}
	for _, x := range nodes {
		n.largest = max(n.largest, x.GPUs)
	}
	n.hist = make([]int, n.largest+1)
	for _, x := range nodes {
		n.free[x.ID] = x.GPUs
		n.hist[x.GPUs]++
	}
	return n
}

// change records that p's GPUs were released (sign +1) or allocated (−1).
func (n *nodeFree) change(p placement.Placement, sign int) {
	for _, s := range p.Slots {
		f := n.free[s.Node]
		g := f + sign*len(s.GPUs)
		n.hist[f]--
		n.hist[g]++
		n.free[s.Node] = g
	}
}
