package placement

import "testing"

func TestPlacementOverlaps(t *testing.T) {
	pl := func(slots ...Slot) Placement { return Placement{Slots: slots} }
	a := pl(Slot{"n1", []int{0, 1}}, Slot{"n3", []int{4}})
	for _, tc := range []struct {
		name string
		q    Placement
		want bool
	}{
		{"the same GPUs", a, true},
		{"one GPU of the second node", pl(Slot{"n3", []int{4, 5}}), true},
		{"other GPUs of the same nodes", pl(Slot{"n1", []int{2}}, Slot{"n3", []int{0}}), false},
		{"other nodes", pl(Slot{"n0", []int{0}}, Slot{"n2", []int{0, 1}}, Slot{"n4", []int{4}}), false},
		{"a node between", pl(Slot{"n2", []int{0}}, Slot{"n3", []int{4}}), true},
		{"nothing", Placement{}, false},
	} {
		if got := a.Overlaps(tc.q); got != tc.want {
			t.Errorf("%s: %v.Overlaps(%v) = %v, want %v", tc.name, a, tc.q, got, tc.want)
		}
		if got := tc.q.Overlaps(a); got != tc.want {
			t.Errorf("%s: not symmetric", tc.name)
		}
	}
}
