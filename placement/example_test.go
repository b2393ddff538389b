package placement_test

import (
	"errors"
	"fmt"

	"github.com/astraea-sched/astraea/placement"
)

// The common path: plan, commit, and learn why a job waits. This is the
// worked example of the ASTRAEA paper: two 8-GPU servers, A1 (8 GPUs) and
// A2 (4 GPUs) are placed, B1 (8 GPUs) cannot be split over the 4 GPUs left.
func Example() {
	c, err := placement.NewCluster([]placement.Node{
		{ID: "node-1", GPUs: 8},
		{ID: "node-2", GPUs: 8},
	})
	if err != nil {
		panic(err)
	}
	for _, job := range []struct {
		id     string
		demand int
	}{{"A1", 8}, {"A2", 4}, {"B1", 8}} {
		p, err := c.Place(job.demand)
		var nf *placement.NoFitError
		if errors.As(err, &nf) {
			fmt.Printf("%s waits: %s\n", job.id, nf.Reason)
			continue
		}
		if err := c.Allocate(job.id, p); err != nil {
			panic(err)
		}
		fmt.Printf("%s on %s\n", job.id, p)
	}
	// A2 completes; B1 now fits on the node it freed.
	if _, err := c.Release("A2"); err != nil {
		panic(err)
	}
	p, _ := c.Place(8)
	fmt.Printf("B1 on %s; %d of %d GPUs free\n", p, c.Free(), c.Capacity())
	// Output:
	// A1 on node-1:0,1,2,3,4,5,6,7
	// A2 on node-2:0,1,2,3
	// B1 waits: needs 8 on ≤ 1 node, largest free block is 4
	// B1 on node-2:0,1,2,3,4,5,6,7; 8 of 16 GPUs free
}

// A job larger than a node takes whole nodes inside one switch when a
// switch can hold it.
func Example_topology() {
	var nodes []placement.Node
	for i, sw := range []string{"sw-1", "sw-1", "sw-2", "sw-2", "sw-2"} {
		nodes = append(nodes, placement.Node{
			ID: fmt.Sprintf("n%d", i), GPUs: 8, Topology: []string{"rack-1", sw}})
	}
	c, _ := placement.NewCluster(nodes)
	small, _ := c.Place(2)
	_ = c.Allocate("small", small)
	big, _ := c.Place(16)
	fmt.Println("small:", small)
	fmt.Println("big:  ", big)
	// Output:
	// small: n0:0,1
	// big:   n2:0,1,2,3,4,5,6,7 n3:0,1,2,3,4,5,6,7
}

// Plan a round on a clone; the cluster itself is untouched until the plan
// is committed.
func ExampleCluster_Clone() {
	c, _ := placement.NewCluster([]placement.Node{{ID: "a", GPUs: 8}, {ID: "b", GPUs: 8}})
	plan := c.Clone()
	for i, d := range []int{4, 4, 8} {
		p, err := plan.Place(d)
		if err != nil {
			fmt.Println(err)
			continue
		}
		_ = plan.Allocate(fmt.Sprint("job-", i), p)
	}
	fmt.Println("plan free:", plan.Free(), "cluster free:", c.Free())
	// Output:
	// plan free: 0 cluster free: 16
}

// Draining a node stops new placements there; its running allocations stay
// until released, after which the node can be removed.
func ExampleCluster_DrainNode() {
	c, _ := placement.NewCluster([]placement.Node{{ID: "a", GPUs: 8}, {ID: "b", GPUs: 8}})
	p, _ := c.Place(8)
	_ = c.Allocate("long", p)
	_ = c.DrainNode("a")
	_ = c.DrainNode("b")
	fmt.Println(c.Fits(1), c.RemoveNode("a"))
	_, _ = c.Release("long")
	fmt.Println(c.RemoveNode("a"), c.Capacity())
	// Output:
	// false placement: remove node "a": 8 GPUs still held
	// <nil> 8
}

// A scheduler granting new jobs places and allocates each in one step; a
// job that does not fit changes nothing, and neither does an id in use.
func ExampleCluster_Assign() {
	c, _ := placement.NewCluster([]placement.Node{{ID: "a", GPUs: 8}, {ID: "b", GPUs: 8}})
	for _, job := range []struct {
		id     string
		demand int
	}{{"j1", 6}, {"j2", 4}, {"j1", 2}, {"j3", 8}} {
		p, err := c.Assign(job.id, job.demand)
		switch {
		case errors.Is(err, placement.ErrNoFit), errors.Is(err, placement.ErrDuplicateAllocation):
			fmt.Printf("%s waits: %v\n", job.id, err)
		case err != nil:
			panic(err)
		default:
			fmt.Printf("%s on %s\n", job.id, p)
		}
	}
	fmt.Println("free:", c.Free())
	// Output:
	// j1 on a:0,1,2,3,4,5
	// j2 on b:0,1,2,3
	// j1 waits: placement: allocate "j1": duplicate allocation
	// j3 waits: placement: needs 8 on ≤ 1 node, largest free block is 4
	// free: 6
}

// A 16-GPU gang waits on two racks of two 8-GPU nodes where other jobs hold
// a few GPUs on every node. The scheduler holds nodes for it: HoldFor picks
// the rack whose nodes have the most free GPUs, the scheduler drains them
// so that nothing new lands there, and once the jobs there have gone
// (their leases ended and were not renewed) PlaceOn puts the gang there.
func ExampleCluster_HoldFor() {
	c, err := placement.NewCluster([]placement.Node{
		{ID: "a1", GPUs: 8, Topology: []string{"rack-a"}},
		{ID: "a2", GPUs: 8, Topology: []string{"rack-a"}},
		{ID: "b1", GPUs: 8, Topology: []string{"rack-b"}},
		{ID: "b2", GPUs: 8, Topology: []string{"rack-b"}},
	})
	if err != nil {
		panic(err)
	}
	held := map[string][]int{"a1": {0, 1, 2, 3, 4}, "a2": {0, 1, 2, 3, 4}, "b1": {0, 1, 2}, "b2": {0, 1, 2, 3}}
	for _, n := range []string{"a1", "a2", "b1", "b2"} {
		q := placement.Placement{Slots: []placement.Slot{{Node: n, GPUs: held[n]}}}
		if err := c.Allocate("job-on-"+n, q); err != nil {
			panic(err)
		}
	}
	fmt.Println("fits now:", c.Fits(16))
	hold, err := c.HoldFor(16)
	if err != nil {
		panic(err)
	}
	fmt.Println("hold:", hold)
	for _, n := range hold {
		if err := c.DrainNode(n); err != nil {
			panic(err)
		}
	}
	if _, err := c.PlaceOn(16, hold); errors.Is(err, placement.ErrNoFit) {
		fmt.Println("not yet:", err)
	}
	for _, id := range []string{"job-on-b1", "job-on-b2"} { // their leases end
		if _, err := c.Release(id); err != nil {
			panic(err)
		}
	}
	p, err := c.PlaceOn(16, hold)
	if err != nil {
		panic(err)
	}
	if err := c.Allocate("gang", p); err != nil {
		panic(err)
	}
	for _, n := range hold {
		if err := c.UndrainNode(n); err != nil {
			panic(err)
		}
	}
	fmt.Println("gang:", p)
	// Output:
	// fits now: false
	// hold: [b1 b2]
	// not yet: placement: needs 16 on the nodes held, 9 free there
	// gang: b1:0,1,2,3,4,5,6,7 b2:0,1,2,3,4,5,6,7
}

// Under FewestNodes a gang that no node holds now is spread, and
// WhySpread says why, as NoFitError does for a gang that waits.
func ExampleCluster_WhySpread() {
	c, err := placement.NewCluster([]placement.Node{
		{ID: "node-1", GPUs: 8},
		{ID: "node-2", GPUs: 8},
	}, placement.WithMode(placement.FewestNodes))
	if err != nil {
		panic(err)
	}
	for _, id := range []string{"a", "b"} {
		if _, err := c.Assign(id, 6); err != nil { // one on each node
			panic(err)
		}
	}
	p, _ := c.Place(4)
	why, _ := c.WhySpread(4)
	fmt.Println(p, "beyond its minimum:", c.Beyond(p))
	fmt.Println(why.Reason)
	// Output:
	// node-1:6,7 node-2:6,7 beyond its minimum: 1
	// spread over 2 nodes: no node has 4 free (largest free block is 2)
}

// Under FirstFit a gang takes the first node, in the order the cluster
// received them, that holds it, not the best fit; a gang no node holds is
// spread over the nodes in that order.
func ExampleWithMode() {
	c, err := placement.NewCluster([]placement.Node{
		{ID: "node-9", GPUs: 8},
		{ID: "node-1", GPUs: 8},
		{ID: "node-5", GPUs: 4},
	}, placement.WithMode(placement.FirstFit))
	if err != nil {
		panic(err)
	}
	if _, err := c.Assign("a", 2); err != nil { // on node-9, the first
		panic(err)
	}
	p, _ := c.Place(4) // node-9 again, where node-5 would fit best
	fmt.Println(p)
	if _, err := c.Assign("b", 8); err != nil { // node-1, the first with 8 free
		panic(err)
	}
	p, _ = c.Place(8)
	why, _ := c.WhySpread(8)
	fmt.Println(p)
	fmt.Println(why.Reason)
	// Output:
	// node-9:2,3,4,5
	// node-5:0,1 node-9:2,3,4,5,6,7
	// spread over 2 nodes in node order: no node has 8 free (largest free block is 6)
}
