// Package placement decides where a gang of GPUs goes on a cluster of
// nodes: consolidated (fewest nodes, least fragmentation), topology-aware
// and all-or-nothing, in O(1) to O(log nodes) per decision (see Cost).
//
// A scheduler plans with [Cluster.Place] or [Cluster.Fits], which never
// change anything, and commits with [Cluster.Allocate] and
// [Cluster.Release]. [Cluster.Clone] gives a cheap independent copy to plan
// a whole round on. The [Placer] interface is the part a scheduler needs.
//
// # API
//
//   - Build: [NewCluster] from [Node] values, with an [Option]
//     ([StrictConsolidation], the default, [AllowSpread], or [WithMode] of
//     a [Mode], [FirstFit] among them).
//   - Plan: [Cluster.Place], [Cluster.Fits], [Cluster.Clone].
//   - Commit: [Cluster.Allocate], [Cluster.Release]; [Cluster.Assign]
//     places and allocates in one step.
//   - Nodes: [Cluster.AddNode], [Cluster.DrainNode], [Cluster.UndrainNode],
//     [Cluster.RemoveNode].
//   - Reserve: [Cluster.HoldFor] chooses the nodes to drain for a gang
//     that waits too long, [Cluster.PlaceOn] places it there once they hold
//     it.
//   - Inspect: [Cluster.Allocation], [Cluster.Allocations], [Cluster.Node],
//     [Cluster.Nodes], [Cluster.Free], [Cluster.Used], [Cluster.Capacity],
//     [Cluster.LargestFree], [Cluster.Len], [Cluster.Check].
//   - Errors: [ErrNoFit] with *[NoFitError]; *[Error] wrapping the other
//     sentinels.
//
// # Rules
//
// A demand of d GPUs is placed as follows, deterministically:
//
//  1. Fewest nodes. If a single node has d free GPUs the job goes on one
//     node. Otherwise the job needs k ≥ 2 nodes, where k is the smallest
//     count whose k largest free blocks add up to at least d — no placement can use
//     fewer. Under strict consolidation (the default, [StrictConsolidation])
//     a job with d at most the GPUs of the largest node that accepts
//     placements must land on one node and waits otherwise; with
//     [AllowSpread] it spreads over k nodes.
//  2. Innermost topology domain. A multi-node job is kept inside the
//     deepest topology level (e.g. switch, then rack, then anywhere) that
//     has a domain able to hold it on k nodes; among such domains it takes
//     the one whose k largest free blocks add up to the least (best fit
//     among domains: it keeps roomier domains for larger jobs), then the
//     domain that appeared first (in the order nodes were given to
//     [NewCluster], then added).
//  3. Best fit. Fragmentation is measured as the free GPUs a placement
//     leaves behind on the nodes it touches: GPUs that only a small job can
//     use later, because their node is now shared. A single-node job takes
//     the node with the fewest free GPUs that still holds it (lowest id
//     among equals); this is the exact minimum, it leaves nothing behind
//     when an exact fit exists, and it keeps large free blocks whole for
//     large jobs. A job on k nodes takes the k−1 largest free blocks whole
//     (lowest ids among equals) — whole free nodes before partial ones in a
//     cluster of equal nodes, so the gang gets as many dedicated nodes as
//     possible and the piece still to fit is as small as it can be — and the
//     remainder from the other node with the fewest free GPUs that holds it,
//     which leaves the least behind given those k−1 blocks. The exact
//     minimum over every k-node placement is a subset-sum problem, not
//     solvable in O(log n), and is not attempted.
//  4. GPUs. On every node the job gets the lowest free GPU indices;
//     [Slot.GPUs] are ascending and [Placement.Slots] are ordered by node
//     id.
//
// Under [FirstFit] rules 1 to 3 give way to first fit over the nodes in
// the order the cluster received them, as the mode's documentation says:
// a gang takes the first node that holds it (or, larger than a node,
// the first wholly free nodes and the first other node for the rest),
// and is spread over the nodes in that order when it cannot be
// consolidated so; rule 4 holds as in the other modes.
//
// A job that cannot be placed gets nothing and an error matching [ErrNoFit]
// whose *[NoFitError] says why, e.g. "needs 8 on ≤ 1 node, largest free
// block is 4". A job placed on more nodes than it needs on an empty
// cluster ([Cluster.Beyond] > 0) is explained by [Cluster.WhySpread], e.g.
// "spread over 2 nodes: no node has 8 free (largest free block is 4)".
//
// # Nodes
//
// Nodes may have any GPU count up to [MaxNodeGPUs], mixed in one cluster, and an optional
// topology path, outermost first. [Cluster.AddNode] adds one;
// [Cluster.DrainNode] stops new placements on it while its allocations run
// to their release; [Cluster.RemoveNode] removes it once it holds nothing.
//
// # Errors
//
// Every rejected call returns an error matchable with [errors.Is] against
// the sentinels (ErrUnknownNode, ErrConflict, ...) whose concrete type
// *[Error] names the allocation, node and GPU at fault, and leaves the
// cluster exactly as it was.
//
// # Cost
//
// Free capacity is indexed by (free GPUs, node id): for the whole cluster
// in a bitset per free count over the nodes' positions in id order, so
// that moving a node between counts is O(1) and the best fit is found
// through one bit per count and one bit per 64 nodes (O(1) up to 4,096
// nodes, O(n/4,096) beyond); for every topology domain the same way, over
// its members' positions in id order. Every
// topology level also indexes its domains by free GPUs and by the sum of
// their k largest free blocks for k ≤ 16. With n nodes, a single-node
// decision is thus O(1) at most scales; a decision for k ≤ 16 nodes is
// O(k log n + levels·log domains); both plus the size of the result.
// Adding or removing a node drops the cluster-wide index and the
// domains', which the next decision rebuilds in O(n·levels). Jobs spanning more than 16 nodes scan the
// domains of each level that have enough free GPUs. Allocate and Release
// cost O(s·levels + GPUs) on s nodes (plus O(log n) to find each node by id),
// and a node they change moves its keys in its domains' indexes, at
// O(levels), once before the next multi-node decision,
// clone or removal however often it changed in between; the top-k
// sum of a domain they touch is recomputed only when a decision for k
// nodes next needs it, at O(counts + log domains), so a domain changed
// many times in between pays once, and only for the spans asked for (a
// Clone brings all of them up to date, once). Allocations are found by id
// in a hash table, O(1) expected per lookup, insert or delete. Clone is
// O(levels + (nodes + domains)/64 + allocation slots/256), counting every
// node and domain ever added; the first changes after a Clone also copy
// the B-tree nodes on their paths, the chunks of the bitsets, the 64-entry
// chunks of records and the
// leaves and pages of the allocation table they touch (tens of kilobytes),
// later ones do not. A placement handed back by Release is the caller's: it is
// a copy when a clone may still hold the allocation.
//
// A FirstFit cluster also keeps the free GPUs of its nodes in node order
// in a tree of fan-out 64 (copy-on-write like the records' arrays, one
// pointer per 64 entries for a clone): its decision for a gang on k nodes
// is O(k · 64 · log₆₄ n), and Allocate and Release add O(log₆₄ n) per
// node they change (O(64) more on a level where a block's largest count
// goes down).
//
// # Concurrency
//
// A Cluster is not safe for concurrent use. Clones share no mutable state:
// a cluster and its clones may be used from different goroutines.
package placement
