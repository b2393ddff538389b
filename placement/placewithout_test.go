package placement

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestPropertyPlaceWithout checks PlaceWithout against its definition:
// release the listed allocations, Place, allocate them again. A twin
// cluster takes that long way; both must answer alike and stay alike.
func TestPropertyPlaceWithout(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { checkPlaceWithout(t, false) })
}

// TestPropertyPlaceWithoutBigNode checks PlaceWithout likewise on clusters
// that also hold a node of more than 64 GPUs, whose GPUs the one-node fast
// path does not track (a look over it takes the long way), with gangs
// that reach past the 64th GPU.
func TestPropertyPlaceWithoutBigNode(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { checkPlaceWithout(t, true) })
}

// checkPlaceWithout is TestPropertyPlaceWithout's check, with a node of 65
// to 130 GPUs added if big is set.
func checkPlaceWithout(t *rapid.T, big bool) {
	nodes := genNodes(t, 8)
	most := 20 // the largest demand of a look
	if big {
		nodes = append(nodes, Node{ID: "big", GPUs: rapid.IntRange(65, 130).Draw(t, "big GPUs"), Topology: slices.Clone(nodes[0].Topology)})
		most = 140
	}
	opts := []Option{genMode(t)}
	a, err := NewCluster(nodes, opts...)
	if err != nil {
		t.Skip(err)
	}
	b, _ := NewCluster(slices.Clone(nodes), opts...)
	var ids []string
	for i := range rapid.IntRange(1, 12).Draw(t, "allocations") {
		id := fmt.Sprintf("j%d", i)
		d := rapid.IntRange(1, 12).Draw(t, "demand")
		if big && rapid.Bool().Draw(t, "large") {
			d = rapid.IntRange(13, 100).Draw(t, "large demand")
		}
		if p, err := a.Place(d); err == nil {
			_ = a.Allocate(id, p)
			_ = b.Allocate(id, p)
			ids = append(ids, id)
		}
	}
	if rapid.Bool().Draw(t, "drain") {
		n := nodes[rapid.IntRange(0, len(nodes)-1).Draw(t, "drained")].ID
		_ = a.DrainNode(n)
		_ = b.DrainNode(n)
	}
	for step := range rapid.IntRange(1, 6).Draw(t, "looks") {
		var list []string
		for _, id := range ids {
			if rapid.Bool().Draw(t, "listed") {
				list = append(list, id)
			}
		}
		if len(list) > 0 && rapid.IntRange(0, 5).Draw(t, "twice") == 0 {
			list = append(list, list[0])
		}
		if rapid.IntRange(0, 5).Draw(t, "unknown") == 0 {
			list = append(list, "nobody")
		}
		d := rapid.IntRange(0, most).Draw(t, "look demand")
		before := dump(a)
		got, gerr := a.PlaceWithout(d, list)

		// The long way on the twin.
		var want Placement
		var werr error
		var freed []string
		for _, id := range list {
			if _, werr = b.Release(id); werr != nil {
				break
			}
			freed = append(freed, id)
		}
		var held []Placement
		for _, id := range freed {
			p, _ := a.Allocation(id)
			held = append(held, p)
		}
		if werr == nil {
			want, werr = b.Place(d)
		}
		for i, id := range freed {
			if err := b.Allocate(id, held[i]); err != nil {
				t.Fatalf("look %d: restore %s: %v", step, id, err)
			}
		}
		if (gerr == nil) != (werr == nil) || got.String() != want.String() {
			t.Fatalf("look %d of %d with %v released: got %v, %v; want %v, %v", step, d, list, got, gerr, want, werr)
		}
		if werr != nil && errors.Is(werr, ErrUnknownAllocation) != errors.Is(gerr, ErrUnknownAllocation) {
			t.Fatalf("look %d: error %v, want one like %v", step, gerr, werr)
		}
		var nf, wnf *NoFitError
		if errors.As(werr, &wnf) && (!errors.As(gerr, &nf) || *nf != *wnf) {
			t.Fatalf("look %d: error %v, want %v", step, gerr, werr)
		}
		if after := dump(a); after != before || after != dump(b) {
			t.Fatalf("look %d changed the cluster:\n%s\nversus\n%s", step, before, after)
		}
		if err := a.Check(); err != nil {
			t.Fatal(err)
		}
		// Later decisions agree too.
		if pa, pb := fmt.Sprint(a.Place(d)), fmt.Sprint(b.Place(d)); pa != pb {
			t.Fatalf("look %d: next place %s versus %s", step, pa, pb)
		}
	}
}
