package placement

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// Gangs of every span, up to more than 16 nodes, granted and released over
// time on a cluster of one- and two-GPU nodes in a two-level topology, with
// drains and clones in between: the domains' keys lag behind the nodes
// between two multi-node decisions, and the decisions for small spans
// (indexed top-k sums) and large ones (a scan) read them after a flush.
// Every grant is the one the literal rules give, and a clone leaves the
// cluster it was taken from as it was.
func TestPropertySpansOverTime(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(20, 60).Draw(t, "nodes")
		racks := rapid.IntRange(1, 3).Draw(t, "racks")
		nodes, order := rackedNodes(n, racks, func(i int) int { return 1 + i%2 })
		c, err := NewCluster(nodes, AllowSpread())
		if err != nil {
			t.Fatal(err)
		}
		var orig *Cluster
		var origState string
		var ids []string
		for step := range rapid.IntRange(1, 25).Draw(t, "steps") {
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0, 1, 2:
				d := rapid.IntRange(1, 40).Draw(t, "demand")
				vs, free := views(c), c.Free()
				id := fmt.Sprint("g", step)
				p, err := c.Assign(id, d)
				if (err == nil) != (free >= d) {
					t.Fatalf("step %d: Assign(%d) = %v with %d free", step, d, err, free)
				}
				if err != nil {
					continue
				}
				if want := expected(vs, d, order); p.String() != want {
					t.Fatalf("step %d: Assign(%d) = %s, the rules give %s", step, d, p, want)
				}
				ids = append(ids, id)
			case 3:
				for range rapid.IntRange(1, 3).Draw(t, "releases") {
					if len(ids) == 0 {
						break
					}
					i := rapid.IntRange(0, len(ids)-1).Draw(t, "release")
					if _, err := c.Release(ids[i]); err != nil {
						t.Fatal(err)
					}
					ids = append(ids[:i], ids[i+1:]...)
				}
			case 4:
				id := fmt.Sprintf("n%02d", rapid.IntRange(0, n-1).Draw(t, "node"))
				if rapid.Bool().Draw(t, "undrain") {
					_ = c.UndrainNode(id)
				} else {
					_ = c.DrainNode(id)
				}
			case 5:
				if orig == nil {
					orig, origState = c, dump(c)
					c = c.Clone()
				}
			}
			if err := c.Check(); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
		if orig != nil && dump(orig) != origState {
			t.Fatal("changing a clone changed the original")
		}
	})
}
