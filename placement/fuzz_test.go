package placement

import (
	"errors"
	"fmt"
	"testing"
)

// FuzzAllocate throws arbitrary placements and demands at a small busy
// cluster: every call either succeeds with a consistent state or fails with
// a typed error and leaves the state exactly as it was; nothing panics.
func FuzzAllocate(f *testing.F) {
	f.Add([]byte{0, 1, 2}, 3)
	f.Add([]byte{1, 0, 1, 2, 3, 4, 5, 6, 7}, 8)
	f.Add([]byte{2, 200, 9, 3}, -1)
	f.Add([]byte{0, 3, 1, 1, 2, 2, 0}, 40)
	f.Fuzz(func(t *testing.T, data []byte, demand int) {
		c, err := NewCluster([]Node{
			{ID: "a", GPUs: 8, Topology: []string{"r1", "s1"}},
			{ID: "b", GPUs: 4, Topology: []string{"r1", "s2"}},
			{ID: "c", GPUs: 70},
			{ID: "d", GPUs: 8, Topology: []string{"r2"}},
		}, AllowSpread())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Allocate("base", Placement{Slots: []Slot{{Node: "a", GPUs: []int{1, 2}}, {Node: "c", GPUs: []int{65}}}}); err != nil {
			t.Fatal(err)
		}
		if err := c.DrainNode("d"); err != nil {
			t.Fatal(err)
		}
		// Decode data as slots: a node selector byte, a count byte, then GPU indices.
		ids := []string{"a", "b", "c", "d", "zz", ""}
		var p Placement
		for i := 0; i+1 < len(data); {
			node := ids[int(data[i])%len(ids)]
			n := int(data[i+1]) % 6
			i += 2
			var gpus []int
			for ; n > 0 && i < len(data); n, i = n-1, i+1 {
				gpus = append(gpus, int(int8(data[i])))
			}
			p.Slots = append(p.Slots, Slot{Node: node, GPUs: gpus})
		}
		before := dump(c)
		if err := c.Allocate("x", p); err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Err == nil {
				t.Fatalf("Allocate(%v) = %v, not a typed error", p, err)
			}
			if dump(c) != before {
				t.Fatalf("rejected Allocate(%v) changed the state", p)
			}
		} else if got, _ := c.Allocation("x"); got.String() != p.String() {
			t.Fatalf("Allocation = %v, want %v", got, p)
		}
		if err := c.Check(); err != nil {
			t.Fatal(err)
		}
		q, err := c.Place(demand)
		if fits := c.Fits(demand); fits != (err == nil) {
			t.Fatalf("Fits(%d) = %t, Place error %v", demand, fits, err)
		}
		if err == nil {
			if q.GPUs() != demand {
				t.Fatalf("Place(%d) = %v", demand, q)
			}
			if err := c.Allocate("y", q); err != nil {
				t.Fatalf("Allocate(Place(%d) = %v): %v", demand, q, err)
			}
		} else if !errors.Is(err, ErrNoFit) && !errors.Is(err, ErrInvalidDemand) {
			t.Fatalf("Place(%d) = %v", demand, err)
		}
		if err := c.Check(); err != nil {
			t.Fatal(fmt.Errorf("after Place(%d): %w", demand, err))
		}
	})
}
