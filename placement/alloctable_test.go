package placement

import (
	"fmt"
	"maps"
	"testing"

	"github.com/astraea-sched/astraea/internal/idhash"
	"pgregory.net/rapid"
)

// allocTwin is an allocation table with its token and the ids it must hold.
type allocTwin struct {
	tab  allocTable
	tok  *cowToken
	want map[string]bool
}

// verify requires table i of step to keep its invariants and its entries:
// the count, and a lookup of each id of format with 0 ≤ k < ids.
func (x *allocTwin) verify(t *rapid.T, step, i int, hash func(string) uint64, format string, ids int) {
	if err := x.tab.check(); err != nil {
		t.Fatalf("step %d: table %d: %v", step, i, err)
	}
	if x.tab.Len() != len(x.want) {
		t.Fatalf("step %d: table %d holds %d entries, want %d", step, i, x.tab.Len(), len(x.want))
	}
	for k := range ids {
		s := fmt.Sprintf(format, k)
		if r, ok := x.tab.get(hash(s), s); ok != x.want[s] || ok && r.id != s {
			t.Fatalf("step %d: table %d: get(%q) = %v, %t, held %t", step, i, s, r, ok, x.want[s])
		}
	}
}

// clone returns a copy of x, as Cluster.Clone copies its table: both sides
// take new tokens, so that neither writes to what the other still reads.
func (x *allocTwin) clone() *allocTwin {
	y := &allocTwin{tab: x.tab.clone(), tok: new(cowToken), want: maps.Clone(x.want)}
	x.tok = new(cowToken)
	return y
}

// insert inserts id s (hash h) and requires the table to agree with the
// map on whether s was new.
func (x *allocTwin) insert(t *rapid.T, step int, h uint64, s string) {
	if ok := x.tab.insert(x.tok, &allocRec{id: s, h: h}); ok == x.want[s] {
		t.Fatalf("step %d: insert(%q) = %t, held %t", step, s, ok, x.want[s])
	}
	x.want[s] = true
}

// delete deletes id s (hash h) and requires the table to agree with the
// map on whether it held s, and to hand back s's own entry.
func (x *allocTwin) delete(t *rapid.T, step int, h uint64, s string) {
	r, ok := x.tab.delete(x.tok, h, s)
	if ok != x.want[s] || ok && r.id != s {
		t.Fatalf("step %d: delete(%q) = %v, %t, held %t", step, s, r, ok, x.want[s])
	}
	delete(x.want, s)
}

// The allocation table against a map: inserts, duplicate inserts, deletes
// and lookups on tables and their clones (which share pages and leaves
// until one of them writes), with hashes that are spread, that collide in
// a few home slots, or that sit at the end of the table so that probe runs
// wrap around; every table keeps its own entries and its invariants
// (allocTable.check) after every step. Bulk inserts grow tables past one
// page of slots (with spread hashes) or make long probe runs; after a
// reserve(n), n inserts do not grow the table.
func TestPropertyAllocTable(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mode := rapid.IntRange(0, 2).Draw(t, "hash mode")
		hash := func(id string) uint64 {
			h := idhash.String(id)
			switch mode {
			case 1:
				return h & 3
			case 2:
				return ^uint64(0) - h&3
			}
			return h
		}
		id := rapid.Custom(func(t *rapid.T) string { return fmt.Sprintf("job-%d", rapid.IntRange(0, 40).Draw(t, "id")) })
		ts := []*allocTwin{{tok: new(cowToken), want: map[string]bool{}}}
		for step := range rapid.IntRange(1, 60).Draw(t, "steps") {
			x := ts[rapid.IntRange(0, len(ts)-1).Draw(t, "table")]
			switch op := rapid.IntRange(0, 10).Draw(t, "op"); {
			case op == 10:
				// Room for n more: n new ids go in without a growth.
				n := rapid.IntRange(0, 300).Draw(t, "reserve")
				x.tab.reserve(x.tok, n)
				mask := x.tab.mask
				for i := range n {
					if s := fmt.Sprintf("res-%d-%d", step, i); !x.want[s] {
						x.insert(t, step, hash(s), s)
					}
				}
				if n > 0 && x.tab.mask != mask {
					t.Fatalf("step %d: %d inserts after reserve(%d) grew the table from %d to %d slots", step, n, n, mask+1, x.tab.mask+1)
				}
			case op < 4:
				s := id.Draw(t, "insert")
				x.insert(t, step, hash(s), s)
			case op < 7:
				s := id.Draw(t, "delete")
				x.delete(t, step, hash(s), s)
			case op < 9 && len(ts) < 4:
				ts = append(ts, x.clone())
			default:
				// Past one page of slots (more than 1<<(leafBits+pageBits)/2
				// entries) with spread hashes; a few hundred in one long
				// probe run otherwise.
				sizes := []int{10, 100, 2100}
				if mode != 0 {
					sizes[2] = 300
				}
				for i := range rapid.SampledFrom(sizes).Draw(t, "bulk") {
					if s := fmt.Sprintf("bulk-%d", i); !x.want[s] {
						x.insert(t, step, hash(s), s)
					}
				}
			}
			for i, y := range ts {
				y.verify(t, step, i, hash, "job-%d", 41)
				n := 0
				for r := range y.tab.all {
					if !y.want[r.id] {
						t.Fatalf("step %d: table %d yields %q, not held", step, i, r.id)
					}
					n++
				}
				if n != len(y.want) {
					t.Fatalf("step %d: table %d yields %d entries, want %d", step, i, n, len(y.want))
				}
			}
		}
	})
}

// Probe runs across the table's seams: ids whose hashes collide just before
// a leaf boundary (slot 1<<leafBits − 1), a page boundary (slot
// 1<<(leafBits+pageBits) − 1) and the end of a table of 8,192 slots (so that runs wrap around to slot 0), in a table
// that spread entries have grown past one page, on tables, their clones
// and clones of clones, while bulk inserts grow either side again. A
// delete shifts entries back across the seams: every table keeps exactly
// its own entries, each reachable, against a map.
func TestPropertyAllocTableSeams(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		homes := []uint64{1<<leafBits - 2, 1<<(leafBits+pageBits) - 2, 8190}
		hash := func(id string) uint64 {
			var k int
			if _, err := fmt.Sscanf(id, "seam-%d", &k); err != nil {
				return idhash.String(id)
			}
			// Some share a home, some differ above the 8,192 slots'
			// mask (a grown table tells them apart).
			return homes[k%3] + uint64(k/3%2) + uint64(k/6%2)<<13
		}
		first := &allocTwin{tok: new(cowToken), want: map[string]bool{}}
		fill := func(x *allocTwin, step, from, to int) {
			for i := from; i < to; i++ {
				s := fmt.Sprintf("bulk-%d", i)
				x.insert(t, step, hash(s), s)
			}
		}
		fill(first, -1, 0, 2100) // 8,192 slots, before the first step
		ts := []*allocTwin{first}
		id := rapid.Custom(func(t *rapid.T) string { return fmt.Sprintf("seam-%d", rapid.IntRange(0, 35).Draw(t, "id")) })
		for step := range rapid.IntRange(1, 60).Draw(t, "steps") {
			x := ts[rapid.IntRange(0, len(ts)-1).Draw(t, "table")]
			switch op := rapid.IntRange(0, 19).Draw(t, "op"); {
			case op < 9:
				s := id.Draw(t, "insert")
				x.insert(t, step, hash(s), s)
			case op < 17:
				s := id.Draw(t, "delete")
				x.delete(t, step, hash(s), s)
			case op < 19 && len(ts) < 4:
				ts = append(ts, x.clone())
			case op == 19:
				fill(x, step, 2100, 4200) // grows to 16,384 slots
			}
			for i, y := range ts {
				y.verify(t, step, i, hash, "seam-%d", 36)
			}
		}
	})
}
