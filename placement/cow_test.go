package placement

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

// The tie-break between equal counts compares 16-byte id prefixes before
// the ids: the order must be exactly the order of the ids, also for ids
// that share their first 16 bytes, are shorter than 16 bytes or end in
// zero bytes (which the prefix pads with).
func TestPropertyKeyOrderIsIDOrder(t *testing.T) {
	id := rapid.Custom(func(t *rapid.T) string {
		stem := rapid.SampledFrom([]string{"", "0123456789abcde", "0123456789abcdef", "gpu-cluster/rack-0/"}).Draw(t, "stem")
		tail := rapid.SliceOfN(rapid.SampledFrom([]byte{0, 1, 'a', 0xff}), 0, 18).Draw(t, "tail")
		return stem + string(tail)
	})
	rapid.Check(t, func(t *rapid.T) {
		a, b := id.Draw(t, "a"), id.Draw(t, "b")
		n := rapid.IntRange(0, 1).Draw(t, "count")
		ka := key{n: n, pre: idPrefix16(a), id: a}
		kb := key{n: n, pre: idPrefix16(b), id: b}
		if lessKey(ka, kb) != (a < b) || lessKey(kb, ka) != (b < a) {
			t.Fatalf("lessKey(%q, %q) = %t, lessKey(%q, %q) = %t", a, b, lessKey(ka, kb), b, a, lessKey(kb, ka))
		}
	})
}

// idPrefix reads an id of eight bytes or more in one load: the same
// integer as the byte-by-byte reading it does for a shorter id, for ids of
// every length up to 20 and any bytes.
func TestPropertyIDPrefixReadsBytesInOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := string(rapid.SliceOfN(rapid.Byte(), 0, 20).Draw(t, "id"))
		var want uint64
		for i := range 8 {
			want <<= 8
			if i < len(s) {
				want |= uint64(s[i])
			}
		}
		if got := idPrefix(s); got != want {
			t.Fatalf("idPrefix(%q) = %#x, want %#x", s, got, want)
		}
	})
}

// The allocation index tells ids apart by the ids themselves: entries
// whose hashes are equal (a collision, forced here) are each found exactly
// when stored, and the table holds one entry per distinct id.
func TestPropertyAllocTableBreaksHashTiesByID(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ids := rapid.SliceOfNDistinct(rapid.StringN(0, 20, -1), 1, 30, rapid.ID[string]).Draw(t, "ids")
		var tab allocTable
		tok := new(cowToken)
		entry := func(id string) *allocRec { return &allocRec{id: id, h: uint64(len(id) % 2)} }
		for _, id := range ids[1:] {
			if !tab.insert(tok, entry(id)) {
				t.Fatalf("insert(%q) found a duplicate", id)
			}
		}
		if tab.Len() != len(ids)-1 {
			t.Fatalf("%d entries for %d distinct ids", tab.Len(), len(ids)-1)
		}
		for i, id := range ids {
			e := entry(id)
			if r, ok := tab.get(e.h, id); ok != (i > 0) || ok && r.id != id {
				t.Fatalf("get(%q) = %v, %t, stored %t", id, r, ok, i > 0)
			}
		}
		if err := tab.check(); err != nil {
			t.Fatal(err)
		}
	})
}

// clusterOp is one mutation, applied alike to a cluster and to its twin.
// It returns the placements the call gave back (which the caller then
// owns) and the error, formatted.
type clusterOp func(c *Cluster) ([]Placement, string)

// scribble overwrites every GPU index and node of p, as a careless caller
// might: the cluster, and every clone of it, must not notice.
func scribble(p Placement) {
	for i := range p.Slots {
		p.Slots[i].Node = "scribbled"
		for j := range p.Slots[i].GPUs {
			p.Slots[i].GPUs[j] = -7
		}
	}
}

// applyBoth applies op to c and to its twin, requires the same answers,
// then overwrites the placements c gave back (see scribble).
func applyBoth(t *rapid.T, step int, op clusterOp, c, twin *Cluster) {
	got, gotErr := op(c)
	want, wantErr := op(twin)
	if gotErr != wantErr || len(got) != len(want) {
		t.Fatalf("step %d: error %s, the twin's %s", step, gotErr, wantErr)
	}
	for i := range got {
		if got[i].String() != want[i].String() {
			t.Fatalf("step %d: placement %v, the twin's %v", step, got[i], want[i])
		}
		scribble(got[i])
	}
}

// checkTwin requires cluster i to keep its invariants and to be what its
// twin is.
func checkTwin(t *rapid.T, step, i int, c, twin *Cluster) {
	if err := c.Check(); err != nil {
		t.Fatalf("step %d: cluster %d: %v", step, i, err)
	}
	if got, want := dump(c), dump(twin); got != want {
		t.Fatalf("step %d: cluster %d differs from its twin:\n%s\nwant\n%s", step, i, got, want)
	}
}

// Clones, clones of clones and the original, driven by random operations
// in any interleaving, each stay exactly what a cluster never cloned would
// be after the same history (its twin): no write through one is seen by
// another, also when the nodes span several chunks of the records' arrays,
// and a caller that overwrites a placement it was given (by Assign,
// Release, Allocation, Allocations, Place or PlaceWithout, or that it gave
// to Allocate) changes no cluster.
func TestPropertyClonesStayIndependent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := []Option{genMode(t)}
		// Up to 150 nodes: the records' arrays then span three chunks.
		nNodes := rapid.IntRange(1, 150).Draw(t, "nodes")
		nodes := make([]Node, nNodes)
		for i := range nodes {
			nodes[i] = Node{ID: fmt.Sprintf("gpu-cluster/rack-0/n%03d", i),
				GPUs:     rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "gpus"),
				Topology: []string{fmt.Sprintf("r%d", i%3)}}
		}
		type member struct {
			c, twin *Cluster
			log     []clusterOp // the twin's history, to build a clone's twin
		}
		fresh := func(log []clusterOp) *Cluster {
			c, err := NewCluster(nodes, opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range log {
				op(c)
			}
			return c
		}
		ms := []*member{{c: fresh(nil), twin: fresh(nil)}}
		next := 0
		newID := func(p string) string {
			next++
			return fmt.Sprintf("%s%d", p, next)
		}
		allocIDs := func(c *Cluster) []string {
			var ids []string
			for id := range c.Allocations() {
				ids = append(ids, id)
			}
			return ids
		}
		nodeIDs := func(c *Cluster) []string {
			var ids []string
			for n := range c.Nodes() {
				ids = append(ids, n.ID)
			}
			return ids
		}
		for step := range rapid.IntRange(1, 40).Draw(t, "steps") {
			m := ms[rapid.IntRange(0, len(ms)-1).Draw(t, "cluster")]
			kind := rapid.IntRange(0, 9).Draw(t, "op")
			if (kind == 3 || kind == 7) && m.c.Len() == 0 {
				kind = 8 // no node to pick: add one, or try to remove one
			}
			var op clusterOp
			switch kind {
			case 0, 1:
				id, d := newID("a"), rapid.IntRange(1, 12).Draw(t, "demand")
				op = func(c *Cluster) ([]Placement, string) {
					p, err := c.Assign(id, d)
					return []Placement{p}, fmt.Sprint(err)
				}
			case 2:
				id, d := newID("p"), rapid.IntRange(1, 12).Draw(t, "demand")
				op = func(c *Cluster) ([]Placement, string) {
					p, err := c.Place(d)
					if err == nil {
						err = c.Allocate(id, p)
					}
					return []Placement{p}, fmt.Sprint(err)
				}
			case 3:
				// By hand: the lowest free GPUs of a node, more than 4 at times.
				id := newID("h")
				node := rapid.SampledFrom(nodeIDs(m.c)).Draw(t, "node")
				k := rapid.IntRange(1, 8).Draw(t, "gpus")
				op = func(c *Cluster) ([]Placement, string) {
					n, _ := c.Node(node)
					var gpus []int
					for g := 0; g < n.GPUs && len(gpus) < k; g++ {
						if !slices.Contains(n.Held, g) {
							gpus = append(gpus, g)
						}
					}
					p := Placement{Slots: []Slot{{Node: node, GPUs: gpus}}}
					return []Placement{p}, fmt.Sprint(c.Allocate(id, p))
				}
			case 4, 5:
				ids := allocIDs(m.c)
				if len(ids) == 0 {
					continue
				}
				id := rapid.SampledFrom(ids).Draw(t, "release")
				op = func(c *Cluster) ([]Placement, string) {
					p, err := c.Release(id)
					return []Placement{p}, fmt.Sprint(err)
				}
			case 6:
				ids := allocIDs(m.c)
				var without []string
				for _, id := range ids {
					if rapid.Bool().Draw(t, "without") {
						without = append(without, id)
					}
				}
				d := rapid.IntRange(1, 20).Draw(t, "demand")
				op = func(c *Cluster) ([]Placement, string) {
					p, err := c.PlaceWithout(d, without)
					out := []Placement{p}
					for _, id := range ids {
						q, _ := c.Allocation(id)
						out = append(out, q)
					}
					for _, q := range c.Allocations() {
						out = append(out, q)
					}
					return out, fmt.Sprint(err)
				}
			case 7:
				node := rapid.SampledFrom(nodeIDs(m.c)).Draw(t, "node")
				undrain := rapid.Bool().Draw(t, "undrain")
				op = func(c *Cluster) ([]Placement, string) {
					if undrain {
						return nil, fmt.Sprint(c.UndrainNode(node))
					}
					return nil, fmt.Sprint(c.DrainNode(node))
				}
			case 8:
				if m.c.Len() > 0 && rapid.Bool().Draw(t, "remove") {
					node := rapid.SampledFrom(nodeIDs(m.c)).Draw(t, "node")
					op = func(c *Cluster) ([]Placement, string) { return nil, fmt.Sprint(c.RemoveNode(node)) }
					break
				}
				n := Node{ID: newID("gpu-cluster/rack-0/m"), GPUs: rapid.SampledFrom([]int{1, 4, 8}).Draw(t, "gpus"),
					Topology: []string{fmt.Sprintf("r%d", rapid.IntRange(0, 3).Draw(t, "rack"))}}
				op = func(c *Cluster) ([]Placement, string) { return nil, fmt.Sprint(c.AddNode(n)) }
			case 9:
				if len(ms) >= 5 {
					continue
				}
				ms = append(ms, &member{c: m.c.Clone(), twin: fresh(m.log), log: slices.Clone(m.log)})
			}
			if op != nil {
				applyBoth(t, step, op, m.c, m.twin)
				m.log = append(m.log, op)
			}
			for i, x := range ms {
				checkTwin(t, step, i, x.c, x.twin)
			}
			// Decisions too, which read the lazily refreshed sums.
			for _, d := range []int{1, 3, 9, 17} {
				x := ms[rapid.IntRange(0, len(ms)-1).Draw(t, "probe cluster")]
				p, err := x.c.Place(d)
				q, errTwin := x.twin.Place(d)
				if p.String() != q.String() || fmt.Sprint(err) != fmt.Sprint(errTwin) {
					t.Fatalf("step %d: Place(%d) = %v, %v; the twin's %v, %v", step, d, p, err, q, errTwin)
				}
			}
		}
	})
}

// The records' doc comments state their sizes, which decide the size class
// each allocation takes: a change of layout must update them.
func TestRecordSizes(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("the sizes pinned here are those of 64-bit platforms")
	}
	for _, tc := range []struct {
		name      string
		got, want uintptr
	}{
		{"slotRec", unsafe.Sizeof(slotRec{}), 136},
		{"assignRec", unsafe.Sizeof(assignRec{}), 144},
		{"gpuRec", unsafe.Sizeof(gpuRec{}), 208},
		{"spanRec2", unsafe.Sizeof(spanRec2{}), 224},
		{"spanRec4", unsafe.Sizeof(spanRec4{}), 384},
		{"nodeState", unsafe.Sizeof(nodeState{}), 96},
		{"allocLeaf", unsafe.Sizeof(allocLeaf{}), 128},
		{"bitChunk", unsafe.Sizeof(bitChunk{}), 528},
		{"a full array of Assign's records", unsafe.Sizeof([recBatch]assignRec{}), 32688},
		{"a full array of Assign's GPU indices", unsafe.Sizeof([maxIntBatch]int{}), 32 << 10},
	} {
		if tc.got != tc.want {
			t.Errorf("%s is %d bytes, its doc says %d", tc.name, tc.got, tc.want)
		}
	}
}
