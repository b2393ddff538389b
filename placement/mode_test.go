package placement

import (
	"errors"
	"testing"
)

func TestModeStringsParseBack(t *testing.T) {
	for _, m := range modes {
		got, err := ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", m.String(), got, err, m)
		}
	}
	if _, err := ParseMode("fewest"); !errors.Is(err, ErrInvalidMode) {
		t.Errorf("ParseMode(fewest): %v, want ErrInvalidMode", err)
	}
	if _, err := NewCluster([]Node{{ID: "n", GPUs: 8}}, WithMode(Mode(7))); !errors.Is(err, ErrInvalidMode) {
		t.Errorf("NewCluster with Mode(7): %v, want ErrInvalidMode", err)
	}
}

// TestModes places by hand-computed cases under each mode: two nodes of 8
// with 4 free each (a 4-GPU job on each), and a third node of 4 free.
func TestModes(t *testing.T) {
	tests := []struct {
		name       string
		mode       Mode
		demand     int
		wantNodes  int // 0: does not fit
		wantBeyond int
		wantWhy    string // WhySpread's reason, "" when it does not spread
	}{
		{"strict puts a gang of 8 on one node or nowhere", Strict, 8, 0, 0, ""},
		{"spread puts a gang of 8 on two nodes when no node has 8 free", FewestNodes, 8, 2, 1,
			"spread over 2 nodes: no node has 8 free (largest free block is 4)"},
		{"spread takes one node when one holds the gang", FewestNodes, 4, 1, 0, ""},
		{"strict and spread agree on a gang one node holds", Strict, 4, 1, 0, ""},
		{"spread puts 12 on the three nodes' free blocks", FewestNodes, 12, 3, 1,
			"spread over 3 nodes: no 2 nodes have 12 free (the 2 largest free blocks hold 8)"},
		{"strict spreads a gang larger than any node over the free blocks too", Strict, 12, 3, 1,
			"spread over 3 nodes: no 2 nodes have 12 free (the 2 largest free blocks hold 8)"},
		{"a gang on as many nodes as it needs on an empty cluster is not spread", FewestNodes, 16, 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewCluster([]Node{{ID: "a", GPUs: 8}, {ID: "b", GPUs: 8}, {ID: "c", GPUs: 4}}, WithMode(tt.mode))
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"a", "b"} {
				if err := c.Allocate("x"+id, Placement{Slots: []Slot{{Node: id, GPUs: []int{0, 1, 2, 3}}}}); err != nil {
					t.Fatal(err)
				}
			}
			why, spreads := c.WhySpread(tt.demand)
			if spreads != (tt.wantWhy != "") || why.Reason != tt.wantWhy {
				t.Errorf("WhySpread(%d) = %+v, %t; want reason %q", tt.demand, why, spreads, tt.wantWhy)
			}
			p, err := c.Place(tt.demand)
			if tt.wantNodes == 0 {
				if !errors.Is(err, ErrNoFit) {
					t.Fatalf("Place(%d) = %v, %v; want ErrNoFit", tt.demand, p, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Nodes() != tt.wantNodes || p.GPUs() != tt.demand {
				t.Errorf("Place(%d) = %v: %d nodes, want %d", tt.demand, p, p.Nodes(), tt.wantNodes)
			}
			if got := c.Beyond(p); got != tt.wantBeyond {
				t.Errorf("Beyond(%v) = %d, want %d", p, got, tt.wantBeyond)
			}
		})
	}
}

func TestMinNodes(t *testing.T) {
	c, err := NewCluster([]Node{{ID: "a", GPUs: 8}, {ID: "b", GPUs: 4}, {ID: "c", GPUs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ demand, want int }{{0, 0}, {1, 1}, {8, 1}, {9, 2}, {12, 2}, {13, 3}, {14, 3}, {15, 0}} {
		if got := c.MinNodes(tt.demand); got != tt.want {
			t.Errorf("MinNodes(%d) = %d, want %d", tt.demand, got, tt.want)
		}
	}
	if err := c.DrainNode("a"); err != nil {
		t.Fatal(err)
	}
	if got := c.MinNodes(5); got != 2 {
		t.Errorf("with the largest node drained MinNodes(5) = %d, want 2", got)
	}
}
