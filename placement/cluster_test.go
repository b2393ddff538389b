package placement

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// uniform returns n nodes of g GPUs named n00, n01, ... without topology.
func uniform(n, g int) []Node {
	out := make([]Node, n)
	for i := range out {
		out[i] = Node{ID: fmt.Sprintf("n%02d", i), GPUs: g}
	}
	return out
}

func mustCluster(t testing.TB, nodes []Node, opts ...Option) *Cluster {
	t.Helper()
	c, err := NewCluster(nodes, opts...)
	if err != nil {
		t.Fatal(err)
	}
	verify(t, c)
	return c
}

func verify(t testing.TB, c *Cluster) {
	t.Helper()
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
}

func mustPlace(t testing.TB, c *Cluster, id string, demand int) Placement {
	t.Helper()
	p, err := c.Place(demand)
	if err != nil {
		t.Fatalf("Place(%d): %v", demand, err)
	}
	if err := c.Allocate(id, p); err != nil {
		t.Fatalf("Allocate(%q, %v): %v", id, p, err)
	}
	verify(t, c)
	return p
}

func TestPlaceRules(t *testing.T) {
	type step struct {
		demand int
		want   string // placement, or "nofit"
	}
	tests := []struct {
		name  string
		nodes []Node
		opts  []Option
		steps []step
	}{
		{
			name:  "a single-node job goes to the fullest node that still holds it",
			nodes: uniform(3, 8),
			steps: []step{{5, "n00:0,1,2,3,4"}, {2, "n00:5,6"}, {2, "n01:0,1"}, {1, "n00:7"}},
		},
		{
			name:  "the paper's example: A1 takes node 1 whole, A2 node 2, B1 does not fit",
			nodes: uniform(2, 8),
			steps: []step{{8, "n00:0,1,2,3,4,5,6,7"}, {4, "n01:0,1,2,3"}, {8, "nofit"}},
		},
		{
			name:  "strict consolidation refuses to split a job that is at most a node",
			nodes: uniform(2, 8),
			steps: []step{{6, "n00:0,1,2,3,4,5"}, {6, "n01:0,1,2,3,4,5"}, {4, "nofit"}},
		},
		{
			name:  "spread is allowed when asked for, over the fewest nodes",
			nodes: uniform(3, 8),
			opts:  []Option{AllowSpread()},
			steps: []step{{6, "n00:0,1,2,3,4,5"}, {5, "n01:0,1,2,3,4"}, {7, "n02:0,1,2,3,4,5,6"}, {4, "n01:5,6,7 n02:7"}},
		},
		{
			name:  "a multi-node job takes whole nodes, the remainder best fit",
			nodes: uniform(4, 8),
			steps: []step{{5, "n00:0,1,2,3,4"}, {19, "n00:5,6,7 n01:0,1,2,3,4,5,6,7 n02:0,1,2,3,4,5,6,7"}},
		},
		{
			name:  "a job larger than every node spans the fewest nodes",
			nodes: uniform(4, 8),
			steps: []step{{16, "n00:0,1,2,3,4,5,6,7 n01:0,1,2,3,4,5,6,7"}, {24, "nofit"}, {16, "n02:0,1,2,3,4,5,6,7 n03:0,1,2,3,4,5,6,7"}},
		},
		{
			name:  "mixed sizes: a small job best-fits the small node",
			nodes: []Node{{ID: "big", GPUs: 16}, {ID: "small", GPUs: 4}},
			steps: []step{{4, "small:0,1,2,3"}, {12, "big:0,1,2,3,4,5,6,7,8,9,10,11"}, {5, "nofit"}, {4, "big:12,13,14,15"}},
		},
		{
			name: "a multi-node job stays inside one switch when one can hold it",
			nodes: []Node{
				{ID: "a1", GPUs: 8, Topology: []string{"r1", "s1"}},
				{ID: "a2", GPUs: 8, Topology: []string{"r1", "s2"}},
				{ID: "b1", GPUs: 8, Topology: []string{"r1", "s2"}},
				{ID: "b2", GPUs: 8, Topology: []string{"r2", "s3"}},
			},
			steps: []step{{16, "a2:0,1,2,3,4,5,6,7 b1:0,1,2,3,4,5,6,7"}},
		},
		{
			name: "then inside one rack, then anywhere",
			nodes: []Node{
				{ID: "a1", GPUs: 8, Topology: []string{"r1", "s1"}},
				{ID: "a2", GPUs: 8, Topology: []string{"r2", "s2"}},
				{ID: "b1", GPUs: 8, Topology: []string{"r2", "s3"}},
				{ID: "c1", GPUs: 8, Topology: []string{"r3", "s4"}},
			},
			steps: []step{
				{16, "a2:0,1,2,3,4,5,6,7 b1:0,1,2,3,4,5,6,7"},
				{16, "a1:0,1,2,3,4,5,6,7 c1:0,1,2,3,4,5,6,7"},
			},
		},
		{
			name: "among domains that can hold it, the one with the least to spare",
			nodes: []Node{
				{ID: "a1", GPUs: 8, Topology: []string{"s1"}},
				{ID: "a2", GPUs: 8, Topology: []string{"s1"}},
				{ID: "b1", GPUs: 6, Topology: []string{"s2"}},
				{ID: "b2", GPUs: 6, Topology: []string{"s2"}},
			},
			steps: []step{{10, "b1:0,1,2,3,4,5 b2:0,1,2,3"}, {10, "a1:0,1,2,3,4,5,6,7 a2:0,1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustCluster(t, tt.nodes, tt.opts...)
			for i, s := range tt.steps {
				p, err := c.Place(s.demand)
				if s.want == "nofit" {
					if !errors.Is(err, ErrNoFit) {
						t.Fatalf("step %d: Place(%d) = %v, %v; want ErrNoFit", i, s.demand, p, err)
					}
					if c.Fits(s.demand) {
						t.Fatalf("step %d: Fits(%d) = true, Place fails", i, s.demand)
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d: Place(%d): %v", i, s.demand, err)
				}
				if got := p.String(); got != s.want {
					t.Fatalf("step %d: Place(%d) = %s, want %s", i, s.demand, got, s.want)
				}
				if !c.Fits(s.demand) {
					t.Fatalf("step %d: Fits(%d) = false, Place succeeds", i, s.demand)
				}
				if err := c.Allocate(fmt.Sprintf("j%d", i), p); err != nil {
					t.Fatal(err)
				}
				verify(t, c)
			}
		})
	}
}

func TestNoFitReason(t *testing.T) {
	c := mustCluster(t, uniform(2, 8))
	mustPlace(t, c, "a", 5)
	mustPlace(t, c, "b", 5)
	_, err := c.Place(8)
	var nf *NoFitError
	if !errors.As(err, &nf) || !errors.Is(err, ErrNoFit) {
		t.Fatalf("Place(8) = %v, want *NoFitError", err)
	}
	if nf.Demand != 8 || nf.MaxNodes != 1 || nf.LargestFree != 3 || nf.FreeTotal != 6 {
		t.Fatalf("NoFitError = %+v", nf)
	}
	if want := "placement: needs 8 on ≤ 1 node, largest free block is 3"; err.Error() != want {
		t.Fatalf("error = %q, want %q", err, want)
	}
	_, err = c.Place(12)
	if want := "placement: needs 12, only 6 free in total (largest free block is 3)"; err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

// TestRejectedAllocateTakesNoRecord checks that an Allocate rejected as a
// duplicate or for a bad placement carves no record from the current batch
// of one-node records (see slotBatch), which would keep the rejected id in
// memory as long as the batch.
func TestRejectedAllocateTakesNoRecord(t *testing.T) {
	c := mustCluster(t, uniform(2, 8))
	p := mustPlace(t, c, "a", 2)
	left := len(c.slotRecs)
	for _, tc := range []struct {
		name string
		id   string
		p    Placement
		want error
	}{
		{"a duplicate id", "a", Placement{Slots: []Slot{{Node: "n01", GPUs: []int{5}}}}, ErrDuplicateAllocation},
		{"a GPU already held", "b", p, ErrConflict},
		{"an unknown node", "b", Placement{Slots: []Slot{{Node: "zz", GPUs: []int{0}}}}, ErrUnknownNode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := c.Allocate(tc.id, tc.p); !errors.Is(err, tc.want) {
				t.Fatalf("Allocate(%q, %v) = %v, want %v", tc.id, tc.p, err, tc.want)
			}
			if got := len(c.slotRecs); got != left {
				t.Fatalf("%d records left in the batch, want %d", got, left)
			}
			verify(t, c)
		})
	}
}

// A node reports the topology it was added with, as given: nil stays nil,
// an empty list stays empty, and the labels come back in order (they are
// kept as the path of the node's innermost domain). The list is the
// caller's own copy.
func TestNodeReportsItsTopology(t *testing.T) {
	for _, tt := range []struct {
		name     string
		topology []string
	}{
		{"a nil topology", nil},
		{"an empty topology", []string{}},
		{"one label", []string{"rack-1"}},
		{"two labels", []string{"rack-1", "switch-2"}},
		{"a label repeated at two levels", []string{"x", "x"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := mustCluster(t, []Node{{ID: "n", GPUs: 8, Topology: tt.topology}, {ID: "m", GPUs: 8, Topology: []string{"rack-1", "switch-3"}}})
			info, ok := c.Node("n")
			if !ok || !reflect.DeepEqual(info.Topology, tt.topology) {
				t.Fatalf("Node(n).Topology = %#v, want %#v", info.Topology, tt.topology)
			}
			for got := range c.Nodes() {
				if got.ID == "n" && !reflect.DeepEqual(got.Topology, tt.topology) {
					t.Fatalf("Nodes() yields n with topology %#v, want %#v", got.Topology, tt.topology)
				}
			}
			if len(info.Topology) > 0 {
				info.Topology[0] = "changed"
				if again, _ := c.Node("n"); !reflect.DeepEqual(again.Topology, tt.topology) {
					t.Fatalf("a change to the returned topology reached the cluster: %#v", again.Topology)
				}
			}
			if err := c.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
