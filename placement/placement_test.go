package placement

import "testing"

func TestPlacementEqual(t *testing.T) {
	p := Placement{Slots: []Slot{{Node: "n1", GPUs: []int{0, 1}}, {Node: "n2", GPUs: []int{3}}}}
	tests := map[string]struct {
		q    Placement
		want bool
	}{
		"the same GPUs":           {Placement{Slots: []Slot{{Node: "n1", GPUs: []int{0, 1}}, {Node: "n2", GPUs: []int{3}}}}, true},
		"another GPU on a node":   {Placement{Slots: []Slot{{Node: "n1", GPUs: []int{0, 2}}, {Node: "n2", GPUs: []int{3}}}}, false},
		"another node":            {Placement{Slots: []Slot{{Node: "n1", GPUs: []int{0, 1}}, {Node: "n3", GPUs: []int{3}}}}, false},
		"one slot fewer":          {Placement{Slots: []Slot{{Node: "n1", GPUs: []int{0, 1}}}}, false},
		"one GPU fewer on a node": {Placement{Slots: []Slot{{Node: "n1", GPUs: []int{0}}, {Node: "n2", GPUs: []int{3}}}}, false},
		"the zero placement":      {Placement{}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := p.Equal(tc.q); got != tc.want {
				t.Fatalf("%v.Equal(%v) = %v, want %v", p, tc.q, got, tc.want)
			}
			if got := tc.q.Equal(p); got != tc.want {
				t.Fatalf("%v.Equal(%v) = %v, want %v", tc.q, p, got, tc.want)
			}
		})
	}
	if !(Placement{}).Equal(Placement{Slots: []Slot{}}) {
		t.Fatal("the zero placement differs from an empty one")
	}
}
