package placement

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// bruteBestFits gives, for every demand of 1 to most GPUs, the single-node
// rule by brute force: the accepting node with the fewest free GPUs that
// still hold the demand, the lowest id among equals, and its lowest free
// GPUs; "none" where no node holds it.
func bruteBestFits(c *Cluster, most int) []string {
	best := make([]*NodeInfo, most+1)
	for n := range c.Nodes() {
		for d := 1; d <= min(n.Free, most); d++ {
			if !n.Draining && (best[d] == nil || n.Free < best[d].Free) {
				best[d] = &n
			}
		}
	}
	out := make([]string, most+1)
	for d := 1; d <= most; d++ {
		if best[d] == nil {
			out[d] = "none"
			continue
		}
		var gpus []int
		for g := 0; len(gpus) < d; g++ {
			if !slices.Contains(best[d].Held, g) {
				gpus = append(gpus, g)
			}
		}
		out[d] = Placement{Slots: []Slot{{Node: best[d].ID, GPUs: gpus}}}.String()
	}
	return out
}

// A cluster of more than 4,096 nodes keeps the ranks of its free-capacity
// index in two chunks: nodes added under ids that sort between the
// existing ones (every rank after them moves up, some across the chunk
// boundary), removed, drained, granted and released, on a clone of one
// cluster and on a clone of that, find the single-node best fit the rule
// gives by brute force, and the clone leaves the original as it was.
func TestPropertyFreeIndexAcrossChunks(t *testing.T) {
	const n = 4100
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{ID: fmt.Sprintf("n%05d", 2*i), GPUs: 1 << (i % 4)}
	}
	base := mustCluster(t, nodes)
	rapid.Check(t, func(t *rapid.T) {
		c := base.Clone() // every run starts afresh
		var orig *Cluster
		var origState string
		next := 0
		for step := range rapid.IntRange(1, 12).Draw(t, "steps") {
			node := fmt.Sprintf("n%05d", rapid.IntRange(0, 2*n).Draw(t, "node"))
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0, 1:
				// Fill the nodes of the chosen size near the boundary.
				d := rapid.IntRange(1, 8).Draw(t, "demand")
				for range rapid.IntRange(1, 40).Draw(t, "grants") {
					next++
					if _, err := c.Assign(fmt.Sprint("a", next), d); err != nil {
						break
					}
				}
			case 2:
				var ids []string
				for id := range c.Allocations() {
					ids = append(ids, id)
				}
				for _, id := range ids[:min(len(ids), rapid.IntRange(0, 30).Draw(t, "releases"))] {
					if _, err := c.Release(id); err != nil {
						t.Fatal(err)
					}
				}
			case 3:
				// Odd numbers sort between the initial nodes.
				_ = c.AddNode(Node{ID: node, GPUs: rapid.SampledFrom([]int{1, 3, 8}).Draw(t, "gpus")})
			case 4:
				if rapid.Bool().Draw(t, "remove") {
					_ = c.RemoveNode(node)
				} else {
					_ = c.DrainNode(node)
				}
			case 5:
				if orig == nil {
					orig, origState = c, dump(c)
					c = c.Clone()
				}
			}
			want := bruteBestFits(c, 8)
			for d := 1; d <= 8; d++ {
				p, err := c.Place(d)
				got := p.String()
				if err != nil {
					got = "none"
				}
				if got != want[d] {
					t.Fatalf("step %d: Place(%d) = %s, the rule gives %s", step, d, got, want[d])
				}
			}
		}
		if err := c.Check(); err != nil {
			t.Fatal(err)
		}
		if orig != nil {
			if err := orig.Check(); err != nil {
				t.Fatal(err)
			}
			if dump(orig) != origState {
				t.Fatal("changing a clone changed the original")
			}
		}
	})
}
