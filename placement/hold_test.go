package placement

import (
	"errors"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// holdCluster is two racks of two 8-GPU nodes and a fifth node with no rack,
// partly held: free GPUs n0 7, n1 3, n2 6, n3 6, n4 0.
func holdCluster(t *testing.T) *Cluster {
	t.Helper()
	nodes := []Node{
		{ID: "n0", GPUs: 8, Topology: []string{"r0"}},
		{ID: "n1", GPUs: 8, Topology: []string{"r0"}},
		{ID: "n2", GPUs: 8, Topology: []string{"r1"}},
		{ID: "n3", GPUs: 8, Topology: []string{"r1"}},
		{ID: "n4", GPUs: 8},
	}
	c, err := NewCluster(nodes)
	if err != nil {
		t.Fatal(err)
	}
	hold := map[string][]int{"n0": {0}, "n1": {0, 1, 2, 3, 4}, "n2": {0, 1}, "n3": {0, 1}, "n4": {0, 1, 2, 3, 4, 5, 6, 7}}
	for _, n := range nodes {
		if err := c.Allocate("busy-"+n.ID, Placement{Slots: []Slot{{Node: n.ID, GPUs: hold[n.ID]}}}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestHoldForKeepsAGangInOneDomain(t *testing.T) {
	c := holdCluster(t)
	for _, tc := range []struct {
		name   string
		demand int
		want   []string
	}{
		{"a gang a node holds: the freest node", 4, []string{"n0"}},
		// The freest nodes are n0 (r0) and n2 (r1); r1's two have 12
		// free GPUs to r0's 10.
		{"a gang a rack holds: the freer rack", 16, []string{"n2", "n3"}},
		{"a gang no rack holds: the freest nodes", 24, []string{"n0", "n2", "n3"}},
		{"the whole cluster", 40, []string{"n0", "n1", "n2", "n3", "n4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.HoldFor(tc.demand)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("HoldFor(%d) = %v, %v; want %v", tc.demand, got, err, tc.want)
			}
		})
	}
	t.Run("draining nodes are not held", func(t *testing.T) {
		d := c.Clone()
		if err := d.DrainNode("n2"); err != nil {
			t.Fatal(err)
		}
		if got, err := d.HoldFor(16); err != nil || !slices.Equal(got, []string{"n0", "n1"}) {
			t.Errorf("HoldFor(16) with n2 draining = %v, %v; want [n0 n1]", got, err)
		}
	})
}

func TestHoldForAndPlaceOnReject(t *testing.T) {
	c := holdCluster(t)
	for _, tc := range []struct {
		name string
		err  error
		call func() error
	}{
		{"HoldFor of no GPUs", ErrInvalidDemand, func() error { _, err := c.HoldFor(0); return err }},
		{"HoldFor of more than the cluster", ErrNoFit, func() error { _, err := c.HoldFor(41); return err }},
		{"PlaceOn of no GPUs", ErrInvalidDemand, func() error { _, err := c.PlaceOn(-1, []string{"n0"}); return err }},
		{"PlaceOn an unknown node", ErrUnknownNode, func() error { _, err := c.PlaceOn(1, []string{"n0", "n9"}); return err }},
		{"PlaceOn nodes out of order", ErrInvalidPlacement, func() error { _, err := c.PlaceOn(1, []string{"n2", "n0"}); return err }},
		{"PlaceOn more than the nodes have free", ErrNoFit, func() error { _, err := c.PlaceOn(14, []string{"n0", "n2"}); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); !errors.Is(err, tc.err) {
				t.Errorf("error %v, want %v", err, tc.err)
			}
		})
	}
	var nf *NoFitError
	if _, err := c.PlaceOn(14, []string{"n0", "n2"}); !errors.As(err, &nf) || nf.FreeTotal != 13 || nf.LargestFree != 7 {
		t.Errorf("PlaceOn(14) on n0, n2: %v, want a NoFitError with 13 free, 7 on one node", err)
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestPlaceOnTakesTheLowestFreeGPUsInNodeOrder(t *testing.T) {
	c := holdCluster(t)
	p, err := c.PlaceOn(10, []string{"n0", "n2", "n3"})
	if err != nil {
		t.Fatal(err)
	}
	want := Placement{Slots: []Slot{{Node: "n0", GPUs: []int{1, 2, 3, 4, 5, 6, 7}}, {Node: "n2", GPUs: []int{2, 3, 4}}}}
	if !p.Equal(want) {
		t.Fatalf("PlaceOn(10) = %v, want %v", p, want)
	}
	if err := c.Allocate("gang", p); err != nil {
		t.Fatal(err)
	}
}

// TestPropertyHoldThenPlaceOn checks, on random clusters with random
// allocations and draining nodes, what HoldFor promises: nodes that accept
// placements, sorted, whose GPUs hold the gang (one node when a node can);
// and that once their allocations are released the gang is placed there by
// PlaceOn, and allocated. PlaceOn itself succeeds exactly when the nodes'
// free GPUs hold the gang, using only their free GPUs.
func TestPropertyHoldThenPlaceOn(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := genNodes(t, 8)
		c, err := NewCluster(nodes, genMode(t))
		if err != nil {
			t.Fatal(err)
		}
		for i := range rapid.IntRange(0, 12).Draw(t, "allocations") {
			if p, err := c.Place(rapid.IntRange(1, 8).Draw(t, "demand")); err == nil {
				if err := c.Allocate(string(rune('a'+i)), p); err != nil {
					t.Fatal(err)
				}
			}
		}
		accepting, largest := 0, 0
		for n := range c.Nodes() {
			if rapid.IntRange(0, 4).Draw(t, "drain") == 0 {
				if err := c.DrainNode(n.ID); err != nil {
					t.Fatal(err)
				}
				continue
			}
			accepting += n.GPUs
			largest = max(largest, n.GPUs)
		}
		demand := rapid.IntRange(1, accepting+2).Draw(t, "gang")
		held, err := c.HoldFor(demand)
		if demand > accepting {
			if !errors.Is(err, ErrNoFit) {
				t.Fatalf("HoldFor(%d) with %d GPUs accepting placements: %v, %v; want ErrNoFit", demand, accepting, held, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("HoldFor(%d): %v", demand, err)
		}
		if !slices.IsSorted(held) || len(slices.Compact(slices.Clone(held))) != len(held) {
			t.Fatalf("HoldFor(%d) = %v: not sorted or repeated", demand, held)
		}
		gpus := 0
		for _, id := range held {
			n, _ := c.Node(id)
			if n.Draining {
				t.Fatalf("HoldFor(%d) holds draining node %s", demand, id)
			}
			gpus += n.GPUs
		}
		if gpus < demand || (demand <= largest && len(held) != 1) {
			t.Fatalf("HoldFor(%d) = %v: %d GPUs in all, largest node %d", demand, held, gpus, largest)
		}
		// PlaceOn now: exactly when the free GPUs there hold the gang.
		free := 0
		for _, id := range held {
			n, _ := c.Node(id)
			free += n.Free
		}
		if p, err := c.PlaceOn(demand, held); (err == nil) != (free >= demand) {
			t.Fatalf("PlaceOn(%d, %v) with %d free there: %v, %v", demand, held, free, p, err)
		}
		// Once the held nodes are empty, the gang goes there.
		empty := c.Clone()
		for id, p := range c.Allocations() {
			if slices.ContainsFunc(p.Slots, func(s Slot) bool { return slices.Contains(held, s.Node) }) {
				if _, err := empty.Release(id); err != nil {
					t.Fatal(err)
				}
			}
		}
		p, err := empty.PlaceOn(demand, held)
		if err != nil {
			t.Fatalf("PlaceOn(%d, %v) on the emptied nodes: %v", demand, held, err)
		}
		if p.GPUs() != demand || slices.ContainsFunc(p.Slots, func(s Slot) bool { return !slices.Contains(held, s.Node) }) {
			t.Fatalf("PlaceOn(%d, %v) = %v", demand, held, p)
		}
		if err := empty.Allocate("gang", p); err != nil {
			t.Fatalf("allocating PlaceOn's placement %v: %v", p, err)
		}
		if err := empty.Check(); err != nil {
			t.Fatal(err)
		}
	})
}
