package placement

import "testing"

// Check finds every kind of corruption of the structures it verifies: the
// allocation table, the free-capacity index's bitsets and ranks, the list
// of nodes whose domain keys lag, and the occupancy bits.
func TestCheckFindsCorruption(t *testing.T) {
	build := func(t *testing.T) *Cluster {
		c := mustCluster(t, []Node{
			{ID: "n1", GPUs: 8, Topology: []string{"r1"}},
			{ID: "n2", GPUs: 8, Topology: []string{"r1"}},
			{ID: "n3", GPUs: 130, Topology: []string{"r2"}},
		})
		for _, id := range []string{"a", "b", "c"} {
			if _, err := c.Assign(id, 2); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Assign("d", 100); err != nil {
			t.Fatal(err)
		}
		c.freeIdx()
		verify(t, c)
		return c
	}
	ord := func(c *Cluster, id string) int {
		e, _ := c.nodes.Get(nodeEntry{id: id})
		return e.ord
	}
	anyEntry := func(c *Cluster) uint64 {
		for i := range c.allocs.mask + 1 {
			if c.allocs.at(i) != nil {
				return i
			}
		}
		t.Fatal("no allocation")
		return 0
	}
	tests := []struct {
		name    string
		corrupt func(c *Cluster)
	}{
		{"an allocation moved away from its home slot is cut off", func(c *Cluster) {
			i := anyEntry(c)
			e := c.allocs.at(i)
			j := (i + 7) & c.allocs.mask
			for c.allocs.at(j) != nil || c.allocs.at((j-1)&c.allocs.mask) != nil {
				j = (j + 1) & c.allocs.mask
			}
			c.allocs.set(c.tok, i, nil)
			c.allocs.set(c.tok, j, e)
		}},
		{"the allocation table miscounts its entries", func(c *Cluster) { c.allocs.n++ }},
		{"an allocation is indexed under another hash", func(c *Cluster) {
			i := anyEntry(c)
			e := *c.allocs.at(i)
			e.h ^= 1 << 40 // the same home slot in a small table
			c.allocs.set(c.tok, i, &e)
		}},
		{"a node sits in the wrong count of the free index", func(c *Cluster) {
			n := c.recs.at(ord(c, "n2"))
			r := int(c.fx.rank[n.ord])
			c.fx.remove(c.tok, n.free, r)
			c.fx.add(c.tok, n.free+1, r)
		}},
		{"a word of a free-index chunk is not in its summary", func(c *Cluster) {
			n := c.recs.at(ord(c, "n1"))
			c.fx.mutSet(c.tok, n.free).mutChunk(c.tok, 0).any = 0
		}},
		{"a non-empty count is marked empty", func(c *Cluster) {
			v := c.recs.at(ord(c, "n1")).free
			c.fx.nonEmpty[v>>6] &^= 1 << uint(v&63)
		}},
		{"two nodes swap ranks", func(c *Cluster) {
			a, b := ord(c, "n1"), ord(c, "n2")
			rank := append([]int32(nil), c.fx.rank...)
			rank[a], rank[b] = rank[b], rank[a]
			c.fx.rank = rank
		}},
		{"a node is marked dirty but not listed", func(c *Cluster) {
			c.flushDomains()
			c.mutNode(ord(c, "n1")).dirty = true
		}},
		{"a node is listed twice", func(c *Cluster) {
			c.flushDomains()
			o := ord(c, "n1")
			c.mutNode(o).dirty = true
			c.dirty = append(c.dirty, o, o)
		}},
		{"a node not listed lags in its domains' trees", func(c *Cluster) {
			c.flushDomains()
			c.mutNode(ord(c, "n1")).tfree++
		}},
		{"a node not listed is missing from its domains' trees", func(c *Cluster) {
			c.flushDomains()
			c.mutNode(ord(c, "n2")).tin = false
		}},
		{"a domain's key in the largest top-k index is stale", func(c *Cluster) {
			c.flushDomains()
			tr := c.levels[0].byTop[maxIndexedSpan]
			k, ok := tr.Min()
			if !ok {
				t.Fatal("no domain in the top-k index")
			}
			tr.Delete(k)
			tr.ReplaceOrInsert(dkey{n: k.n + 1, ord: k.ord})
		}},
		{"the domains' rank table lacks its last level", func(c *Cluster) {
			c.flushDomains()
			c.dpos = c.dpos[:len(c.dpos)-1]
		}},
		{"a GPU beyond a large node's count is held", func(c *Cluster) {
			n := c.mutNode(ord(c, "n3"))
			n.mark(130, true)
			n.mark(99, false) // held by "d": the count stays
		}},
		{"the occupancy bits disagree with the free count", func(c *Cluster) {
			c.mutNode(ord(c, "n2")).lo |= 1 << 7
		}},
		{"a held GPU belongs to no allocation", func(c *Cluster) {
			n := c.mutNode(ord(c, "n1"))
			g := n.appendLowestFree(nil, 1)[0]
			n.mark(g, true)
			n.free--
			c.used++
			c.reindex(n, nodeSnapshot{indexed: true, accepting: true, free: n.free + 1})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := build(t)
			tc.corrupt(c)
			if err := c.Check(); err == nil {
				t.Fatal("Check found nothing")
			} else {
				t.Log(err)
			}
		})
	}
}

// Check finds corruption of a FirstFit cluster's order index: a node's
// entry, a block's largest count, or a level missing, and an order index
// in a cluster of another mode.
func TestCheckFindsOrderCorruption(t *testing.T) {
	build := func(t *testing.T, mode Mode) *Cluster {
		c := mustCluster(t, uniform(70, 8), WithMode(mode)) // two blocks of nodes
		if _, err := c.Assign("a", 3); err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		name    string
		mode    Mode
		corrupt func(c *Cluster)
	}{
		{"a node's free count is stale", FirstFit, func(c *Cluster) { c.order.lv[0].set(c.tok, 0, orderVal{free: 8, whole: 8}) }},
		{"a node's whole count is stale", FirstFit, func(c *Cluster) { c.order.lv[0].set(c.tok, 1, orderVal{free: 8}) }},
		{"a block's largest count is stale", FirstFit, func(c *Cluster) { c.order.lv[1].set(c.tok, 1, orderVal{free: 7, whole: 8}) }},
		{"a level is missing", FirstFit, func(c *Cluster) { c.order.lv = c.order.lv[:1] }},
		{"a cluster of another mode keeps one", FewestNodes, func(c *Cluster) { c.order.set(c.tok, 0, orderVal{free: 1}) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := build(t, tc.mode)
			tc.corrupt(c)
			if err := c.Check(); err == nil {
				t.Fatal("Check found nothing")
			} else {
				t.Log(err)
			}
		})
	}
}
