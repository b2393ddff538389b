package placement

import (
	"fmt"
	"sync"
	"testing"
)

// TestClonesAreIndependentAcrossGoroutines mutates a cluster and its clones
// concurrently, on nodes whose records span several chunks, and overwrites
// the placements they release; run with -race to see that no shared record
// is written.
func TestClonesAreIndependentAcrossGoroutines(t *testing.T) {
	var nodes []Node
	for i := range 160 {
		nodes = append(nodes, Node{ID: fmt.Sprintf("n%03d", i), GPUs: 8,
			Topology: []string{fmt.Sprintf("r%d", i/16), fmt.Sprintf("s%d", i/4)}})
	}
	c := mustCluster(t, nodes)
	for i := range 20 {
		mustPlace(t, c, fmt.Sprintf("base%d", i), 1+i%9)
	}
	before := dump(c)
	clones := []*Cluster{c.Clone(), c.Clone(), c.Clone()}
	var wg sync.WaitGroup
	for w, cl := range clones {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				d := 1 + (i*7+w)%24
				if p, err := cl.Place(d); err == nil {
					if err := cl.Allocate(fmt.Sprintf("w%d-%d", w, i), p); err != nil {
						t.Error(err)
						return
					}
				}
				if i%3 == 0 {
					p, _ := cl.Release(fmt.Sprintf("w%d-%d", w, i-3))
					scribble(p)
				}
				if i%50 == 0 {
					p, _ := cl.Release(fmt.Sprintf("base%d", (i/50+w)%20))
					scribble(p)
				}
			}
		}()
	}
	wg.Wait()
	if got := dump(c); got != before {
		t.Fatal("mutating clones changed the original")
	}
	verify(t, c)
	for _, cl := range clones {
		verify(t, cl)
	}
	// The original still works on its own.
	mustPlace(t, c, "after", 16)
	for _, cl := range clones {
		verify(t, cl)
	}
}

func TestHolds(t *testing.T) {
	c, err := NewCluster([]Node{{ID: "a", GPUs: 4}, {ID: "b", GPUs: 4}})
	if err != nil {
		t.Fatal(err)
	}
	p := Placement{Slots: []Slot{{Node: "a", GPUs: []int{1, 2}}}}
	if err := c.Allocate("j", p); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		id   string
		p    Placement
		want bool
	}{
		{"exactly what it holds", "j", p, true},
		{"other GPUs on the same node", "j", Placement{Slots: []Slot{{Node: "a", GPUs: []int{1, 3}}}}, false},
		{"same GPUs on another node", "j", Placement{Slots: []Slot{{Node: "b", GPUs: []int{1, 2}}}}, false},
		{"fewer GPUs", "j", Placement{Slots: []Slot{{Node: "a", GPUs: []int{1}}}}, false},
		{"unknown allocation", "k", p, false},
	} {
		if got := c.Holds(tc.id, tc.p); got != tc.want {
			t.Errorf("%s: Holds = %v, want %v", tc.name, got, tc.want)
		}
	}
}
