package placement

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// Assign (or AssignHashed) is Place followed by Allocate: on two identical
// clusters, one driven by Assign and the other by Place and Allocate, every
// step returns the same placement or the same error, and the states stay
// equal and valid. The placement Assign returns is the caller's own:
// writing to it, or appending to it or its GPU lists, changes nothing the
// cluster holds.
func TestPropertyAssignIsPlaceThenAllocate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := []Option{genMode(t)}
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
				// Its slots and GPU lists too, grown in place if they
				// had room: the states compared below must not see it.
				for k := range pa.Slots {
					pa.Slots[k].GPUs = append(pa.Slots[k].GPUs, -8)
				}
				pa.Slots = append(pa.Slots, Slot{Node: "grown", GPUs: []int{-9}})
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

// twin is a pair of clusters driven alike, x reserving allocations and y
// not, with the ids they hold and what the Assigns of x returned (and the
// strings of those placements as returned).
type twin struct {
	x, y *Cluster
	live []string
	held []Placement
	was  []string
}

// release releases a drawn live allocation on both clusters.
func (p *twin) release(t *rapid.T, name string) {
	k := rapid.IntRange(0, len(p.live)-1).Draw(t, name+" victim")
	id := p.live[k]
	p.live = append(p.live[:k], p.live[k+1:]...)
	for _, c := range []*Cluster{p.x, p.y} {
		if _, err := c.Release(id); err != nil {
			t.Fatal(err)
		}
	}
}

// assign makes the same Assign on both clusters, which must return the
// same placement or both fail with ErrNoFit.
func (p *twin) assign(t *rapid.T, i int, name string, demand int) {
	id := fmt.Sprintf("%s%d", name, i)
	px, ex := p.x.Assign(id, demand)
	py, ey := p.y.Assign(id, demand)
	if (ex == nil) != (ey == nil) || px.String() != py.String() {
		t.Fatalf("%s step %d: Assign(%s, %d) = %v, %v with a reservation; %v, %v without", name, i, id, demand, px, ex, py, ey)
	}
	if ex != nil && !errors.Is(ex, ErrNoFit) {
		t.Fatal(ex)
	}
	if ex == nil {
		p.live = append(p.live, id)
		p.held = append(p.held, px)
		p.was = append(p.was, px.String())
	}
}

// verify checks both clusters, that they are equal and that every
// placement Assign returned is as it was returned.
func (p *twin) verify(t *rapid.T, what string) {
	for _, c := range []*Cluster{p.x, p.y} {
		if err := c.Check(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	if dump(p.x) != dump(p.y) {
		t.Fatalf("%s: the clusters differ:\n%s\n%s", what, dump(p.x), dump(p.y))
	}
	for k, q := range p.held {
		if q.String() != p.was[k] {
			t.Fatalf("%s: a placement Assign returned changed: %v, was %s", what, q, p.was[k])
		}
	}
}

// Assign during a burst announced by ReserveAllocations (whose records come
// in batches) does what Assign does without one: a cluster that reserves
// at random moments and one that never does return the same placements and
// stay equal and valid. A clone of each, taken mid-burst, goes on with
// steps of its own (other ids and demands): the two clones stay equal to
// each other (a clone carves no record of the original's batch), and the
// placements returned stay the callers' own.
func TestPropertyReservedAssignIsAssign(t *testing.T) {
	step := func(t *rapid.T, p *twin, i int, name string) {
		if rapid.IntRange(0, 5).Draw(t, name+" reserve?") == 0 {
			p.x.ReserveAllocations(rapid.IntRange(0, 40).Draw(t, name+" burst"))
		}
		if len(p.live) > 0 && rapid.IntRange(0, 3).Draw(t, name+" release?") == 0 {
			p.release(t, name)
			return
		}
		p.assign(t, i, name, rapid.IntRange(1, 12).Draw(t, name+" demand"))
		p.verify(t, fmt.Sprintf("%s step %d", name, i))
	}
	rapid.Check(t, func(t *rapid.T) {
		a, err := NewCluster(genNodes(t, 8))
		if err != nil {
			t.Fatal(err)
		}
		orig := &twin{x: a, y: a.Clone()}
		var clone *twin
		for i := range rapid.IntRange(1, 60).Draw(t, "steps") {
			if clone == nil && rapid.IntRange(0, 9).Draw(t, "clone?") == 0 {
				clone = &twin{x: orig.x.Clone(), y: orig.y.Clone(), live: slices.Clone(orig.live)}
			}
			step(t, orig, i, "a")
			if clone != nil {
				step(t, clone, i, "c")
			}
		}
	})
}

// A burst larger than an array of records (recBatch) or of GPU
// indices (maxIntBatch) holds carves several arrays, each bounded, and
// Assign returns what it returns without a reservation: on a cluster of
// hundreds of GPUs, one cluster reserves a large burst and a twin does not,
// both assign and release the same jobs, and a clone of each taken
// mid-burst goes on with jobs of its own. The twins' placements and states
// stay equal and valid, the placements returned stay the callers' own (a
// clone carves no record of the original's arrays), and no array is
// longer than its bound.
func TestPropertyLargeBurstIsAssign(t *testing.T) {
	step := func(t *rapid.T, p *twin, i int, name string) {
		if len(p.live) > 0 && rapid.IntRange(0, 7).Draw(t, name+" release?") == 0 {
			p.release(t, name)
			return
		}
		p.assign(t, i, name, rapid.SampledFrom([]int{1, 1, 1, 2, 4, 8, 12}).Draw(t, name+" demand"))
		if cap(p.x.recs1) >= recBatch || cap(p.x.ints) > maxIntBatch {
			t.Fatalf("%s step %d: arrays of %d records and %d ints left, want under %d and at most %d", name, i, cap(p.x.recs1), cap(p.x.ints), recBatch, maxIntBatch)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		nodes := make([]Node, rapid.IntRange(40, 160).Draw(t, "nodes"))
		for i := range nodes {
			nodes[i] = Node{ID: fmt.Sprintf("n%03d", i), GPUs: 8, Topology: []string{fmt.Sprint("r", i/8)}}
		}
		a, err := NewCluster(nodes)
		if err != nil {
			t.Fatal(err)
		}
		orig := &twin{x: a, y: a.Clone()}
		orig.x.ReserveAllocations(rapid.IntRange(recBatch/2, 4*recBatch).Draw(t, "burst"))
		steps := rapid.IntRange(1, 3*recBatch).Draw(t, "steps")
		cloneAt := rapid.IntRange(0, steps).Draw(t, "clone at")
		var clone *twin
		for i := range steps {
			if i == cloneAt {
				clone = &twin{x: orig.x.Clone(), y: orig.y.Clone(), live: slices.Clone(orig.live)}
			}
			step(t, orig, i, "a")
			if clone != nil {
				step(t, clone, i, "c")
			}
		}
		orig.verify(t, "original")
		if clone != nil {
			clone.verify(t, "clone")
		}
	})
}
