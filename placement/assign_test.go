package placement

import (
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// Assign (or AssignHashed) is Place followed by Allocate: on two identical
// clusters, one driven by Assign and the other by Place and Allocate, every
// step returns the same placement or the same error, and the states stay
// equal and valid.
func TestPropertyAssignIsPlaceThenAllocate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var opts []Option
		if rapid.Bool().Draw(t, "spread") {
			opts = append(opts, AllowSpread())
		}
		nodes := genNodes(t, 8)
		a, err := NewCluster(nodes, opts...)
		if err != nil {
			t.Fatal(err)
		}
		b := a.Clone()
		var live []string
		for i := range rapid.IntRange(1, 40).Draw(t, "steps") {
			if len(live) > 0 && rapid.IntRange(0, 3).Draw(t, "release?") == 0 {
				k := rapid.IntRange(0, len(live)-1).Draw(t, "victim")
				id := live[k]
				live = append(live[:k], live[k+1:]...)
				if _, err := a.Release(id); err != nil {
					t.Fatal(err)
				}
				if _, err := b.Release(id); err != nil {
					t.Fatal(err)
				}
				continue
			}
			demand := rapid.IntRange(-1, 24).Draw(t, "demand")
			id := fmt.Sprintf("j%d", i)
			if len(live) > 0 && rapid.IntRange(0, 9).Draw(t, "reuse id?") == 0 {
				id = live[0] // a duplicate
			}
			before := dump(a)
			var pa Placement
			var ea error
			if rapid.Bool().Draw(t, "hashed") {
				pa, ea = a.AssignHashed(id, IDHash(id), demand)
			} else {
				pa, ea = a.Assign(id, demand)
			}
			pb, eb := b.Place(demand)
			if eb == nil {
				eb = b.Allocate(id, pb)
			}
			if (ea == nil) != (eb == nil) || (ea != nil && ea.Error() != eb.Error()) {
				t.Fatalf("Assign(%s, %d): %v; Place and Allocate: %v", id, demand, ea, eb)
			}
			if ea != nil {
				if after := dump(a); after != before {
					t.Fatalf("a failed Assign changed the state:\n%s\n%s", before, after)
				}
				if errors.Is(ea, ErrDuplicateAllocation) && id != live[0] {
					t.Fatalf("duplicate reported for a new id: %v", ea)
				}
			} else {
				if pa.String() != pb.String() {
					t.Fatalf("Assign(%s, %d) = %v, Place = %v", id, demand, pa, pb)
				}
				live = append(live, id)
				if len(pa.Slots) > 0 {
					pa.Slots[0].GPUs[0] = -7 // the caller's copy is its own
				}
			}
			if err := a.Check(); err != nil {
				t.Fatal(err)
			}
			if dump(a) != dump(b) {
				t.Fatalf("states differ after step %d:\n%s\n%s", i, dump(a), dump(b))
			}
		}
	})
}

func TestAssignRejectsAnEmptyID(t *testing.T) {
	c := mustCluster(t, []Node{{ID: "n1", GPUs: 8}})
	if _, err := c.Assign("", 1); !errors.Is(err, ErrInvalidPlacement) {
		t.Fatalf("err = %v, want ErrInvalidPlacement", err)
	}
	if c.Free() != 8 {
		t.Fatalf("free = %d, want 8", c.Free())
	}
}
