package placement

import (
	"fmt"
	"sync"
	"testing"
)

// TestClonesAreIndependentAcrossGoroutines mutates a cluster and its clones
// concurrently; run with -race to see that no shared record is written.
func TestClonesAreIndependentAcrossGoroutines(t *testing.T) {
	var nodes []Node
	for i := range 64 {
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
					_, _ = cl.Release(fmt.Sprintf("w%d-%d", w, i-3))
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
