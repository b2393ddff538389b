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

// TestClonesOfClonesAcrossGoroutines runs a cluster and its clones at once,
// each in its own goroutine and each also cloning itself while its
// domains' keys lag: grants by Assign (one node and gangs), releases,
// drains, nodes added under ids between the existing ones (a rebuild of
// the free-capacity index) and removed. Every cluster ends as a cluster
// never cloned does after the same history (run with -race to see that no
// shared record, bitset chunk or table leaf is written).
func TestClonesOfClonesAcrossGoroutines(t *testing.T) {
	var nodes []Node
	for i := range 150 {
		nodes = append(nodes, Node{ID: fmt.Sprintf("n%03d", 2*i), GPUs: []int{8, 4, 65}[i%3],
			Topology: []string{fmt.Sprintf("r%d", i/16)}})
	}
	history := func(c *Cluster, w int) {
		for i := range 120 {
			_, _ = c.Assign(fmt.Sprintf("w%d-%d", w, i), 1+(i*7+w)%40)
			if i%3 == 0 {
				p, _ := c.Release(fmt.Sprintf("w%d-%d", w, i-3))
				scribble(p)
			}
			switch i % 40 {
			case 10:
				_ = c.AddNode(Node{ID: fmt.Sprintf("n%03d", 2*(i+w)+1), GPUs: 8, Topology: []string{"r1"}})
			case 20:
				_ = c.DrainNode(fmt.Sprintf("n%03d", 2*(i+w)))
			case 30:
				_ = c.RemoveNode(fmt.Sprintf("n%03d", 2*(10+w)+1)) // added at 10, if free
				_ = c.RemoveNode(fmt.Sprintf("n%03d", 2*(i+w)+2*w))
			}
		}
	}
	c := mustCluster(t, nodes)
	history(c, 9) // every clone starts from the same state
	parties := []*Cluster{c, c.Clone(), c.Clone()}
	parties = append(parties, parties[1].Clone())
	got := make([]string, len(parties))
	var wg sync.WaitGroup
	for w, p := range parties {
		wg.Add(1)
		go func() {
			defer wg.Done()
			history(p, w)
			q := p.Clone() // with the keys of the last changes lagging
			history(q, w+10)
			history(p, w+20)
			for _, x := range []*Cluster{p, q} {
				if err := x.Check(); err != nil {
					t.Error(err)
				}
			}
			got[w] = dump(p) + dump(q)
		}()
	}
	wg.Wait()
	// The twins: never cloned, each replays its own history alone.
	replay := func(ws ...int) string {
		twin := mustCluster(t, nodes)
		for _, w := range ws {
			history(twin, w)
		}
		return dump(twin)
	}
	for w := range parties {
		if want := replay(9, w, w+20) + replay(9, w, w+10); got[w] != want {
			t.Errorf("cluster %d and its clone differ from their never-cloned twins", w)
		}
	}
}
