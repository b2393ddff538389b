package placement

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// dump renders the whole observable state of c, so that two states can be
// compared exactly.
func dump(c *Cluster) string {
	var b strings.Builder
	fmt.Fprintf(&b, "capacity=%d free=%d used=%d largest=%d\n", c.Capacity(), c.Free(), c.Used(), c.LargestFree())
	for n := range c.Nodes() {
		fmt.Fprintf(&b, "node %s gpus=%d topo=%q free=%d held=%v draining=%t\n", n.ID, n.GPUs, n.Topology, n.Free, n.Held, n.Draining)
	}
	for id, p := range c.Allocations() {
		fmt.Fprintf(&b, "alloc %s %s\n", id, p)
	}
	return b.String()
}

func TestErrors(t *testing.T) {
	base := func(t *testing.T) *Cluster {
		c := mustCluster(t, []Node{
			{ID: "n1", GPUs: 8, Topology: []string{"r1"}},
			{ID: "n2", GPUs: 8, Topology: []string{"r1"}},
			{ID: "n3", GPUs: 4},
		})
		if err := c.Allocate("held", Placement{Slots: []Slot{{Node: "n1", GPUs: []int{0, 1}}}}); err != nil {
			t.Fatal(err)
		}
		if err := c.DrainNode("n3"); err != nil {
			t.Fatal(err)
		}
		verify(t, c)
		return c
	}
	one := func(node string, gpus ...int) Placement { return Placement{Slots: []Slot{{Node: node, GPUs: gpus}}} }
	tests := []struct {
		name string
		call func(c *Cluster) error
		want error
	}{
		{"a zero demand is invalid", func(c *Cluster) error { _, err := c.Place(0); return err }, ErrInvalidDemand},
		{"a negative demand is invalid", func(c *Cluster) error { _, err := c.Place(-3); return err }, ErrInvalidDemand},
		{"a demand beyond the free GPUs does not fit", func(c *Cluster) error { _, err := c.Place(15); return err }, ErrNoFit},
		{"releasing an unknown allocation fails", func(c *Cluster) error { _, err := c.Release("nope"); return err }, ErrUnknownAllocation},
		{"a double release fails", func(c *Cluster) error {
			if _, err := c.Release("held"); err != nil {
				return err
			}
			verify(t, c)
			_, err := c.Release("held")
			return err
		}, ErrUnknownAllocation},
		{"allocating under an existing id fails", func(c *Cluster) error { return c.Allocate("held", one("n2", 0)) }, ErrDuplicateAllocation},
		{"allocating GPUs already held is a conflict", func(c *Cluster) error { return c.Allocate("x", one("n1", 1, 2)) }, ErrConflict},
		{"allocating on an unknown node fails", func(c *Cluster) error { return c.Allocate("x", one("n9", 0)) }, ErrUnknownNode},
		{"allocating a GPU beyond the node fails", func(c *Cluster) error { return c.Allocate("x", one("n2", 8)) }, ErrInvalidPlacement},
		{"allocating a negative GPU index fails", func(c *Cluster) error { return c.Allocate("x", one("n2", -1)) }, ErrInvalidPlacement},
		{"allocating unsorted GPUs fails", func(c *Cluster) error { return c.Allocate("x", one("n2", 3, 2)) }, ErrInvalidPlacement},
		{"allocating a GPU twice in one slot fails", func(c *Cluster) error { return c.Allocate("x", one("n2", 2, 2)) }, ErrInvalidPlacement},
		{"allocating an empty placement fails", func(c *Cluster) error { return c.Allocate("x", Placement{}) }, ErrInvalidPlacement},
		{"allocating an empty slot fails", func(c *Cluster) error { return c.Allocate("x", one("n2")) }, ErrInvalidPlacement},
		{"allocating under an empty id fails", func(c *Cluster) error { return c.Allocate("", one("n2", 0)) }, ErrInvalidPlacement},
		{"slots out of node order fail", func(c *Cluster) error {
			return c.Allocate("x", Placement{Slots: []Slot{{Node: "n2", GPUs: []int{0}}, {Node: "n1", GPUs: []int{5}}}})
		}, ErrInvalidPlacement},
		{"a node repeated in a placement fails", func(c *Cluster) error {
			return c.Allocate("x", Placement{Slots: []Slot{{Node: "n1", GPUs: []int{5}}, {Node: "n2", GPUs: []int{0}}, {Node: "n2", GPUs: []int{1}}}})
		}, ErrInvalidPlacement},
		{"adding a duplicate node fails", func(c *Cluster) error { return c.AddNode(Node{ID: "n2", GPUs: 8}) }, ErrDuplicateNode},
		{"adding a node without GPUs fails", func(c *Cluster) error { return c.AddNode(Node{ID: "n9", GPUs: 0}) }, ErrInvalidNode},
		{"adding a node with too many GPUs fails", func(c *Cluster) error { return c.AddNode(Node{ID: "n9", GPUs: MaxNodeGPUs + 1}) }, ErrInvalidNode},
		{"adding a node without id fails", func(c *Cluster) error { return c.AddNode(Node{GPUs: 8}) }, ErrInvalidNode},
		{"adding a node with an empty label fails", func(c *Cluster) error {
			return c.AddNode(Node{ID: "n9", GPUs: 8, Topology: []string{"r1", ""}})
		}, ErrInvalidNode},
		{"draining an unknown node fails", func(c *Cluster) error { return c.DrainNode("n9") }, ErrUnknownNode},
		{"undraining an unknown node fails", func(c *Cluster) error { return c.UndrainNode("n9") }, ErrUnknownNode},
		{"removing an unknown node fails", func(c *Cluster) error { return c.RemoveNode("n9") }, ErrUnknownNode},
		{"removing a node that holds GPUs fails", func(c *Cluster) error { return c.RemoveNode("n1") }, ErrNodeBusy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base(t)
			before := dump(c)
			err := tt.call(c)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
			verify(t, c)
			if tt.name == "a double release fails" {
				return // the first release succeeded
			}
			if after := dump(c); after != before {
				t.Fatalf("state changed on error:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

func TestConflictOnALaterSlotChangesNothing(t *testing.T) {
	c := mustCluster(t, uniform(3, 8))
	if err := c.Allocate("y", Placement{Slots: []Slot{{Node: "n02", GPUs: []int{3}}}}); err != nil {
		t.Fatal(err)
	}
	before := dump(c)
	err := c.Allocate("x", Placement{Slots: []Slot{{Node: "n00", GPUs: []int{0, 1}}, {Node: "n01", GPUs: []int{0}}, {Node: "n02", GPUs: []int{2, 3}}}})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("error = %v, want ErrConflict", err)
	}
	verify(t, c)
	if after := dump(c); after != before {
		t.Fatalf("state changed on error:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func TestErrorMessagesNameTheFault(t *testing.T) {
	c := mustCluster(t, uniform(2, 8))
	mustPlace(t, c, "j1", 2)
	err := c.Allocate("j2", Placement{Slots: []Slot{{Node: "n00", GPUs: []int{1, 2}}}})
	if want := `placement: allocate "j2" on node "n00": GPU 1 is already held`; err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
	err = c.RemoveNode("n00")
	if want := `placement: remove node "n00": 2 GPUs still held`; err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
	_, err = c.Release("j9")
	if want := `placement: release "j9": unknown allocation`; err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

func TestNodeLifecycle(t *testing.T) {
	c := mustCluster(t, uniform(2, 8))
	mustPlace(t, c, "j1", 6) // n00
	if err := c.DrainNode("n00"); err != nil {
		t.Fatal(err)
	}
	verify(t, c)
	if got, want := c.Free(), 8; got != want {
		t.Fatalf("Free() = %d with n00 draining, want %d", got, want)
	}
	if got, want := c.Capacity(), 16; got != want {
		t.Fatalf("Capacity() = %d, want %d", got, want)
	}
	// No new placement on a draining node, even the best fit.
	if p := mustPlace(t, c, "j2", 2); p.String() != "n01:0,1" {
		t.Fatalf("placed on %s, want n01", p)
	}
	// The allocation on the draining node stays until released.
	if p, ok := c.Allocation("j1"); !ok || p.String() != "n00:0,1,2,3,4,5" {
		t.Fatalf("Allocation(j1) = %v, %t", p, ok)
	}
	// An explicit allocation on a draining node is accepted (to put back
	// what was released), and counts as used, not free.
	if err := c.Allocate("pinned", Placement{Slots: []Slot{{Node: "n00", GPUs: []int{7}}}}); err != nil {
		t.Fatal(err)
	}
	verify(t, c)
	if c.Free() != 6 || c.Used() != 9 {
		t.Fatalf("Free, Used = %d, %d; want 6, 9", c.Free(), c.Used())
	}
	if _, err := c.Release("pinned"); err != nil {
		t.Fatal(err)
	}
	verify(t, c)
	if err := c.RemoveNode("n00"); !errors.Is(err, ErrNodeBusy) {
		t.Fatalf("RemoveNode(busy) = %v", err)
	}
	if _, err := c.Release("j1"); err != nil {
		t.Fatal(err)
	}
	verify(t, c)
	if err := c.RemoveNode("n00"); err != nil {
		t.Fatal(err)
	}
	verify(t, c)
	if c.Len() != 1 || c.Capacity() != 8 {
		t.Fatalf("Len, Capacity = %d, %d", c.Len(), c.Capacity())
	}
	if err := c.AddNode(Node{ID: "n00", GPUs: 4, Topology: []string{"r2"}}); err != nil {
		t.Fatal(err)
	}
	verify(t, c)
	if p := mustPlace(t, c, "j3", 4); p.String() != "n00:0,1,2,3" {
		t.Fatalf("placed on %s, want the re-added n00", p)
	}
	if err := c.DrainNode("n01"); err != nil {
		t.Fatal(err)
	}
	if err := c.DrainNode("n01"); err != nil {
		t.Fatalf("draining twice: %v", err)
	}
	verify(t, c)
	if c.Fits(1) {
		t.Fatal("Fits(1) with every free GPU draining")
	}
	if err := c.UndrainNode("n01"); err != nil {
		t.Fatal(err)
	}
	verify(t, c)
	if !c.Fits(6) {
		t.Fatal("Fits(6) false after undrain")
	}
}

func TestBigNodes(t *testing.T) {
	c := mustCluster(t, []Node{{ID: "fat", GPUs: 200}, {ID: "thin", GPUs: 3}})
	p := mustPlace(t, c, "a", 130)
	if p.Nodes() != 1 || p.GPUs() != 130 || p.Slots[0].GPUs[129] != 129 {
		t.Fatalf("placement %v", p)
	}
	q := mustPlace(t, c, "b", 70)
	if q.String() != "fat:"+strings.Trim(strings.Join(strings.Fields(fmt.Sprint(seq(130, 200))), ","), "[]") {
		t.Fatalf("placement %v", q)
	}
	if _, err := c.Release("a"); err != nil {
		t.Fatal(err)
	}
	verify(t, c)
	if err := c.Allocate("c", Placement{Slots: []Slot{{Node: "fat", GPUs: []int{64, 199}}}}); !errors.Is(err, ErrConflict) {
		t.Fatalf("Allocate over held high GPU = %v", err)
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// noFitReason is the reason newNoFit builds, as fmt formats it: the
// reference its concatenation must match.
func noFitReason(demand, maxNodes, largest, total int) string {
	if maxNodes == 1 {
		return fmt.Sprintf("needs %d on ≤ 1 node, largest free block is %d", demand, largest)
	}
	return fmt.Sprintf("needs %d, only %d free in total (largest free block is %d)", demand, total, largest)
}

func TestPropertyNoFitReasonAsFormatted(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := func(label string) int {
			return rapid.OneOf(rapid.IntRange(-3, 300), rapid.Int()).Draw(t, label)
		}
		demand, maxNodes, largest, total := n("demand"), rapid.IntRange(0, 1).Draw(t, "maxNodes"), n("largest"), n("total")
		e := newNoFit(demand, maxNodes, largest, total)
		if want := noFitReason(demand, maxNodes, largest, total); e.Reason != want {
			t.Fatalf("reason %q, want %q", e.Reason, want)
		}
		if e.Demand != demand || e.MaxNodes != maxNodes || e.LargestFree != largest || e.FreeTotal != total {
			t.Fatalf("NoFitError = %+v", e)
		}
	})
}

// NewCluster fails as its doc says, naming the node, instead of building a
// cluster without the bad node.
func TestNewClusterRejectsBadNodes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []Node
		want  error
	}{
		{"a duplicate node", []Node{{ID: "n1", GPUs: 8}, {ID: "n2", GPUs: 8}, {ID: "n1", GPUs: 4}}, ErrDuplicateNode},
		{"a node without GPUs", []Node{{ID: "n1", GPUs: 8}, {ID: "n2", GPUs: 0}}, ErrInvalidNode},
		{"a node with negative GPUs", []Node{{ID: "n1", GPUs: -1}}, ErrInvalidNode},
		{"a node without id", []Node{{ID: "n1", GPUs: 8}, {GPUs: 8}}, ErrInvalidNode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCluster(tc.nodes)
			if !errors.Is(err, tc.want) || c != nil {
				t.Fatalf("NewCluster = %v, %v; want nil, %v", c, err, tc.want)
			}
		})
	}
	c, err := NewCluster([]Node{{ID: "n1", GPUs: 8}, {ID: "n2", GPUs: 4}})
	if err != nil || c.Free() != 12 {
		t.Fatalf("valid nodes: %v, %v", c, err)
	}
}
