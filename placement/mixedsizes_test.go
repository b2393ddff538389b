package placement

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// mixedMember is a cluster of TestPropertyMixedSizesFollowTheRules, the
// twin that replays its history without ever being cloned, and the order
// in which its topology domains appeared.
type mixedMember struct {
	c, twin *Cluster
	log     []clusterOp
	order   map[string]int
}

// Clusters of nodes of mixed sizes around the 64 GPUs a node's occupancy
// word holds (1, 8, 63, 64, 65, 128 and 130 GPUs), held at scattered GPUs
// by hand as well as by Assign, with nodes added under ids that sort
// between the existing ones (new ranks in the free-capacity index),
// drained and removed, and clones, clones of clones and the original
// changed in any interleaving (the domains' keys lagging when a clone is
// taken): every decision is the one the documented rules give by brute
// force (expected, oracle), every cluster stays what a cluster never
// cloned would be after the same history, and every invariant holds.
func TestPropertyMixedSizesFollowTheRules(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spread := rapid.Bool().Draw(t, "spread")
		var opts []Option
		if spread {
			opts = append(opts, AllowSpread())
		}
		sizes := []int{1, 8, 63, 64, 65, 128, 130}
		seq := 0
		appear := func(order map[string]int, n Node) {
			for l := range n.Topology {
				if p := strings.Join(n.Topology[:l+1], "/"); order[p] == 0 {
					seq++
					order[p] = seq
				}
			}
		}
		genMixed := func(num int) Node {
			nd := Node{ID: fmt.Sprintf("n%03d", num), GPUs: rapid.SampledFrom(sizes).Draw(t, "gpus")}
			for l := range rapid.IntRange(0, 2).Draw(t, "depth") {
				nd.Topology = append(nd.Topology, fmt.Sprintf("%c%d", "rs"[l], rapid.IntRange(0, 1).Draw(t, "label")))
			}
			return nd
		}
		var initial []Node
		order := map[string]int{}
		for i := range rapid.IntRange(1, 5).Draw(t, "nodes") {
			n := genMixed(100 * (i + 1)) // room between the ids
			initial = append(initial, n)
			appear(order, n)
		}
		fresh := func(log []clusterOp) *Cluster {
			c, err := NewCluster(initial, opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range log {
				op(c)
			}
			return c
		}
		ms := []*mixedMember{{c: fresh(nil), twin: fresh(nil), order: order}}
		next := 0
		for step := range rapid.IntRange(1, 30).Draw(t, "steps") {
			m := ms[rapid.IntRange(0, len(ms)-1).Draw(t, "cluster")]
			var nodeIDs, allocIDs []string
			for n := range m.c.Nodes() {
				nodeIDs = append(nodeIDs, n.ID)
			}
			for id := range m.c.Allocations() {
				allocIDs = append(allocIDs, id)
			}
			var op clusterOp
			switch kind := rapid.IntRange(0, 8).Draw(t, "op"); {
			case kind <= 1:
				next++
				id, d := fmt.Sprint("a", next), rapid.IntRange(1, 140).Draw(t, "demand")
				op = func(c *Cluster) ([]Placement, string) {
					p, err := c.Place(d)
					q, err2 := c.Assign(id, d)
					if p.String() != q.String() || fmt.Sprint(err) != fmt.Sprint(err2) {
						return nil, fmt.Sprintf("Place %v, %v; Assign %v, %v", p, err, q, err2)
					}
					return []Placement{q}, fmt.Sprint(err2)
				}
			case kind == 2 && len(nodeIDs) > 0:
				// Scattered GPUs by hand: a random subset of a node's
				// free ones.
				next++
				id := fmt.Sprint("h", next)
				node := rapid.SampledFrom(nodeIDs).Draw(t, "node")
				seed := rapid.Uint64().Draw(t, "subset")
				op = func(c *Cluster) ([]Placement, string) {
					n, _ := c.Node(node)
					var gpus []int
					for g := range n.GPUs {
						if !slices.Contains(n.Held, g) && (seed>>uint(g%64))&1 != 0 {
							gpus = append(gpus, g)
						}
					}
					if len(gpus) == 0 {
						return nil, "none free"
					}
					p := Placement{Slots: []Slot{{Node: node, GPUs: gpus}}}
					return []Placement{p}, fmt.Sprint(c.Allocate(id, p))
				}
			case kind <= 4 && len(allocIDs) > 0:
				id := rapid.SampledFrom(allocIDs).Draw(t, "release")
				op = func(c *Cluster) ([]Placement, string) {
					p, err := c.Release(id)
					return []Placement{p}, fmt.Sprint(err)
				}
			case kind == 5 && len(nodeIDs) > 0:
				node := rapid.SampledFrom(nodeIDs).Draw(t, "node")
				undrain := rapid.Bool().Draw(t, "undrain")
				op = func(c *Cluster) ([]Placement, string) {
					if undrain {
						return nil, fmt.Sprint(c.UndrainNode(node))
					}
					return nil, fmt.Sprint(c.DrainNode(node))
				}
			case kind == 6 && len(nodeIDs) > 1:
				node := rapid.SampledFrom(nodeIDs).Draw(t, "node")
				op = func(c *Cluster) ([]Placement, string) { return nil, fmt.Sprint(c.RemoveNode(node)) }
			case kind == 6 || kind == 7:
				if len(nodeIDs) >= 8 {
					continue
				}
				n := genMixed(rapid.IntRange(0, 999).Draw(t, "id")) // anywhere among the ids
				if slices.Contains(nodeIDs, n.ID) {
					continue
				}
				appear(m.order, n)
				op = func(c *Cluster) ([]Placement, string) { return nil, fmt.Sprint(c.AddNode(n)) }
			case kind == 8 && len(ms) < 4:
				ms = append(ms, &mixedMember{c: m.c.Clone(), twin: fresh(m.log), log: slices.Clone(m.log), order: maps.Clone(m.order)})
			}
			if op != nil {
				applyBoth(t, step, op, m.c, m.twin)
				m.log = append(m.log, op)
			}
			for i, x := range ms {
				checkTwin(t, step, i, x.c, x.twin)
				// Domains that no node holds any more are forgotten.
				live := map[string]bool{}
				for n := range x.c.Nodes() {
					for l := range n.Topology {
						live[strings.Join(n.Topology[:l+1], "/")] = true
					}
				}
				for p := range x.order {
					if !live[p] {
						delete(x.order, p)
					}
				}
			}
			x := ms[rapid.IntRange(0, len(ms)-1).Draw(t, "probe cluster")]
			vs := views(x.c)
			for _, d := range []int{1, 2, 63, 64, 65, 66, 129, rapid.IntRange(1, 300).Draw(t, "probe demand")} {
				p, err := x.c.Place(d)
				if k, _ := oracle(vs, d, spread); k == 0 {
					if !errors.Is(err, ErrNoFit) {
						t.Fatalf("step %d: Place(%d) = %v, %v; the oracle cannot place it", step, d, p, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d: Place(%d): %v; the oracle places it", step, d, err)
				}
				if want := expected(vs, d, x.order); p.String() != want {
					t.Fatalf("step %d: Place(%d) = %s, the rules give %s", step, d, p, want)
				}
			}
		}
	})
}
