package placement

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/btree"
	"pgregory.net/rapid"
)

// freeTwin is a free-capacity index with its token, and the same keys in a
// B-tree ordered by lessKey, the order the index stands for.
type freeTwin struct {
	x   freeIndex
	tok *cowToken
	ref *btree.BTreeG[key]
	at  map[int]int // node ordinal → its count in the index (absent: not in it)
}

// The free-capacity index against a B-tree of the same keys: nodes move
// between counts, leave and enter, on indexes and their clones (which share
// sets and chunks until one of them writes); every read — best fit,
// largest count, fewest nodes for a demand, the sums of the k largest
// counts, the greatest key, ascending and descending walks from pivots with
// and without ids — answers as the tree does, and the index keeps its
// invariants. Clusters of more than 4,096 nodes put ranks in several
// chunks.
func TestPropertyFreeIndex(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := rapid.SampledFrom([]int{1, 7, 70, 4200}).Draw(t, "nodes")
		// Distinct ids, not in ordinal order, some sharing long prefixes.
		perm := rapid.Permutation(func() []int {
			s := make([]int, nodes)
			for i := range s {
				s[i] = i
			}
			return s
		}()).Draw(t, "order")
		c := &Cluster{tok: new(cowToken), nodes: btree.NewG(treeDegree, func(a, b nodeEntry) bool { return a.id < b.id })}
		for ord, p := range perm {
			id := fmt.Sprintf("gpu-cluster-node-%05d", p)
			if p%3 == 0 {
				id = fmt.Sprintf("n%d", p)
			}
			c.recs.set(c.tok, ord, &nodeState{ord: ord, id: id})
			c.nodes.ReplaceOrInsert(nodeEntry{id: id, ord: ord})
		}
		c.nextNod = nodes
		first := &freeTwin{tok: c.tok, ref: btree.NewG(4, lessKey), at: map[int]int{}}
		first.x.build(c) // no node is indexed: every count is empty
		ts := []*freeTwin{first}
		ord := rapid.IntRange(0, nodes-1)
		count := rapid.IntRange(1, 70)
		for step := range rapid.IntRange(1, 40).Draw(t, "steps") {
			tw := ts[rapid.IntRange(0, len(ts)-1).Draw(t, "index")]
			switch op := rapid.IntRange(0, 9).Draw(t, "op"); {
			case op < 7:
				// A node moves to another count, or out of the index.
				// A batch of nodes in a row reaches across chunks.
				o := ord.Draw(t, "node")
				v := rapid.IntRange(0, 70).Draw(t, "count")
				end := min(o+rapid.SampledFrom([]int{1, 100}).Draw(t, "batch"), nodes)
				for o2 := o; o2 < end; o2++ {
					n := c.recs.at(o2)
					r := int(tw.x.rank[o2])
					if old, ok := tw.at[o2]; ok && v > 0 && v != old {
						// A move between counts, in one step.
						tw.x.move(tw.tok, old, v, r)
						tw.ref.Delete(nodeKey(old, n))
						tw.ref.ReplaceOrInsert(nodeKey(v, n))
						tw.at[o2] = v
						continue
					}
					if old, ok := tw.at[o2]; ok {
						tw.x.remove(tw.tok, old, r)
						tw.ref.Delete(nodeKey(old, n))
						delete(tw.at, o2)
					}
					if v > 0 {
						tw.x.add(tw.tok, v, r)
						tw.ref.ReplaceOrInsert(nodeKey(v, n))
						tw.at[o2] = v
					}
				}
			case len(ts) < 4:
				// As Cluster.Clone does: both sides take new tokens.
				y := &freeTwin{x: tw.x.clone(), tok: new(cowToken), ref: tw.ref.Clone(), at: map[int]int{}}
				for k, v := range tw.at {
					y.at[k] = v
				}
				tw.tok = new(cowToken)
				ts = append(ts, y)
			}
			for i, y := range ts {
				if err := y.x.check(c); err != nil {
					t.Fatalf("step %d: index %d: %v", step, i, err)
				}
				want := collect(y.ref.Ascend)
				if got := collect(y.x.Ascend); !slices.Equal(got, want) || y.x.Len() != len(want) {
					t.Fatalf("step %d: index %d holds %v (%d), want %v", step, i, got, y.x.Len(), want)
				}
				d := count.Draw(t, "demand")
				var fit key
				found := false
				y.ref.AscendGreaterOrEqual(key{n: d}, func(k key) bool { fit, found = k, true; return false })
				if got, ok := y.x.bestFit(d); got != fit || ok != found {
					t.Fatalf("step %d: index %d: bestFit(%d) = %v, %t, want %v, %t", step, i, d, got, ok, fit, found)
				}
				if v := y.x.nextCount(d); v >= 0 {
					if got, want := y.x.firstRank(v), y.x.nextRank(v, 0); got != want {
						t.Fatalf("step %d: index %d: firstRank(%d) = %d, nextRank from 0 %d", step, i, v, got, want)
					}
				}
				// The ranks next to a rank in a count's set, against the
				// tree's keys of that count.
				v, r := rapid.IntRange(0, 71).Draw(t, "rank count"), rapid.IntRange(-1, nodes).Draw(t, "rank")
				next, prev := -1, -1
				for _, k := range want {
					kr := int(y.x.rank[k.ord])
					if k.n == v && kr >= r && next < 0 {
						next = kr
					}
					if k.n == v && kr <= r {
						prev = kr
					}
				}
				if got := y.x.nextRank(v, r); got != next {
					t.Fatalf("step %d: index %d: nextRank(%d, %d) = %d, want %d", step, i, v, r, got, next)
				}
				if got := y.x.prevRank(v, r); got != prev {
					t.Fatalf("step %d: index %d: prevRank(%d, %d) = %d, want %d", step, i, v, r, got, prev)
				}
				top, _ := y.ref.Max()
				if got, _ := y.x.Max(); got != top || y.x.largest() != top.n {
					t.Fatalf("step %d: index %d: Max = %v, largest %d, want %v", step, i, got, y.x.largest(), top)
				}
				if total := sumCounts(want); total >= d {
					k, sum := 0, 0
					y.ref.Descend(func(x key) bool { k++; sum += x.n; return sum < d })
					if got := y.x.minNodes(d); got != k {
						t.Fatalf("step %d: index %d: minNodes(%d) = %d, want %d", step, i, d, got, k)
					}
				}
				// The sums of the k largest blocks, as a domain's index
				// gives them to a multi-node decision.
				sums := topSums(&y.x)
				for k := 1; k <= maxIndexedSpan+2; k++ {
					j, sum := 0, 0
					y.ref.Descend(func(x key) bool { j++; sum += x.n; return j < k })
					if got := y.x.topSum(k); got != sum || k <= maxIndexedSpan && sums[k] != sum {
						t.Fatalf("step %d: index %d: topSum(%d) = %d, topSums %d, want %d", step, i, k, got, sums[min(k, maxIndexedSpan)], sum)
					}
				}
				pivot := key{n: rapid.IntRange(0, 72).Draw(t, "pivot count")}
				if rapid.Bool().Draw(t, "pivot with id") {
					pivot = nodeKey(pivot.n, c.recs.at(ord.Draw(t, "pivot node")))
					if rapid.Bool().Draw(t, "pivot between ids") {
						pivot.id += "\x00"
						pivot.pre = idPrefix16(pivot.id)
					}
				}
				limit := rapid.IntRange(1, 6).Draw(t, "walk")
				if rapid.Bool().Draw(t, "walk to the end") {
					limit = y.ref.Len() + 1 // every key, across every count
				}
				walk := func(f func(key, btree.ItemIteratorG[key])) []key {
					var out []key
					f(pivot, func(k key) bool { out = append(out, k); return len(out) < limit })
					return out
				}
				if got, want := walk(y.x.AscendGreaterOrEqual), walk(y.ref.AscendGreaterOrEqual); !slices.Equal(got, want) {
					t.Fatalf("step %d: index %d: AscendGreaterOrEqual(%v) = %v, want %v", step, i, pivot, got, want)
				}
				if got, want := walk(y.x.DescendLessOrEqual), walk(y.ref.DescendLessOrEqual); !slices.Equal(got, want) {
					t.Fatalf("step %d: index %d: DescendLessOrEqual(%v) = %v, want %v", step, i, pivot, got, want)
				}
			}
		}
	})
}

// collect returns the keys an ascending walk yields.
func collect(ascend func(btree.ItemIteratorG[key])) []key {
	var out []key
	ascend(func(k key) bool { out = append(out, k); return true })
	return out
}

func sumCounts(ks []key) int {
	s := 0
	for _, k := range ks {
		s += k.n
	}
	return s
}
