package placement

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// firstFit is the reference the consolidated placement is compared with
// (and the spread step of firstFitMode):
// walk the nodes in id order and take free GPUs wherever they are until the
// demand is met. It returns the node ids used and how many GPUs on each.
func firstFit(nodes []NodeInfo, demand int) (used map[string]int, ok bool) {
	used = map[string]int{}
	for _, n := range nodes {
		if n.Draining || n.Free == 0 {
			continue
		}
		take := min(n.Free, demand)
		used[n.ID] = take
		demand -= take
		if demand == 0 {
			return used, true
		}
	}
	return nil, false
}

func mixedNodes(rng *rand.Rand, n int) []Node {
	out := make([]Node, n)
	for i := range out {
		out[i] = Node{ID: fmt.Sprintf("n%03d", i), GPUs: []int{4, 8, 8, 8, 16}[rng.IntN(5)],
			Topology: []string{fmt.Sprintf("r%d", i/8)}}
	}
	return out
}

// TestConsolidatedNeverSpansMoreNodesThanFirstFit places a random mixed
// workload and compares, on the very same state before every job, the
// nodes the consolidated placement uses with the nodes first-fit would use.
func TestConsolidatedNeverSpansMoreNodesThanFirstFit(t *testing.T) {
	for seed := range uint64(5) {
		rng := rand.New(rand.NewPCG(seed, 7))
		c := mustCluster(t, mixedNodes(rng, 48), AllowSpread())
		var live []string
		for i, d := range traceDemands(rng, 600) {
			d = min(d, 64)
			nodes := slices.Collect(c.Nodes())
			ff, ffOK := firstFit(nodes, d)
			p, err := c.Place(d)
			if (err == nil) != ffOK {
				t.Fatalf("seed %d job %d: demand %d: consolidated error %v, first-fit ok %t", seed, i, d, err, ffOK)
			}
			if err == nil {
				if p.Nodes() > len(ff) {
					t.Fatalf("seed %d job %d: demand %d: consolidated uses %d nodes (%v), first-fit %d",
						seed, i, d, p.Nodes(), p, len(ff))
				}
				id := fmt.Sprint(i)
				if err := c.Allocate(id, p); err != nil {
					t.Fatal(err)
				}
				live = append(live, id)
			}
			for len(live) > 0 && rng.IntN(3) == 0 {
				j := rng.IntN(len(live))
				if _, err := c.Release(live[j]); err != nil {
					t.Fatal(err)
				}
				live = slices.Delete(live, j, j+1)
			}
			verify(t, c)
		}
	}
}

// TestFragmentationAgainstFirstFit runs the same random workload through a
// consolidated cluster and through an independent first-fit cluster and
// compares the average number of nodes per job and the number of jobs that
// could not be placed on one node although they fit on one node's size.
func TestFragmentationAgainstFirstFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 13))
	nodes := mixedNodes(rng, 64)
	c := mustCluster(t, nodes, AllowSpread())
	ffFree := map[string]int{}
	for _, n := range nodes {
		ffFree[n.ID] = n.GPUs
	}
	ffHeld := map[int]map[string]int{}
	type stats struct{ jobs, nodes, splitSmall int }
	var cs, fs stats
	var live []int
	for i, d := range traceDemands(rng, 3000) {
		d = min(d, 32)
		if p, err := c.Place(d); err == nil {
			cs.jobs++
			cs.nodes += p.Nodes()
			if d <= 8 && p.Nodes() > 1 {
				cs.splitSmall++
			}
			if err := c.Allocate(fmt.Sprint(i), p); err != nil {
				t.Fatal(err)
			}
		}
		var infos []NodeInfo
		for _, n := range nodes {
			infos = append(infos, NodeInfo{Node: n, Free: ffFree[n.ID]})
		}
		if used, ok := firstFit(infos, d); ok {
			fs.jobs++
			fs.nodes += len(used)
			if d <= 8 && len(used) > 1 {
				fs.splitSmall++
			}
			for id, g := range used {
				ffFree[id] -= g
			}
			ffHeld[i] = used
		}
		live = append(live, i)
		for len(live) > 0 && rng.IntN(2) == 0 {
			j := rng.IntN(len(live))
			id := live[j]
			live = slices.Delete(live, j, j+1)
			_, _ = c.Release(fmt.Sprint(id))
			for n, g := range ffHeld[id] {
				ffFree[n] += g
			}
			delete(ffHeld, id)
		}
		verify(t, c)
	}
	cAvg := float64(cs.nodes) / float64(cs.jobs)
	fAvg := float64(fs.nodes) / float64(fs.jobs)
	t.Logf("consolidated: %d jobs, %.3f nodes/job, %d small jobs split; first-fit: %d jobs, %.3f nodes/job, %d small jobs split",
		cs.jobs, cAvg, cs.splitSmall, fs.jobs, fAvg, fs.splitSmall)
	if cAvg > fAvg {
		t.Fatalf("consolidated averages %.3f nodes per job, first-fit %.3f", cAvg, fAvg)
	}
	if cs.splitSmall > fs.splitSmall {
		t.Fatalf("consolidated split %d small jobs, first-fit %d", cs.splitSmall, fs.splitSmall)
	}
}

// modes lists every Mode, for the tests whose property holds in each.
var modes = []Mode{Strict, FewestNodes, FirstFit}

// genMode draws the mode of a cluster for a property that holds in every
// mode.
func genMode(t *rapid.T) Option { return WithMode(rapid.SampledFrom(modes).Draw(t, "mode")) }

// firstFitMode is the reference of FirstFit, by brute force over nodes
// given in the order the cluster received them: firstFit's spread, after
// the consolidated step it tries first (one node for a gang of at most G,
// the size of the largest accepting node; else whole free nodes of G and
// one for the remainder, each the first in order). It returns the
// placement, the lowest free GPUs of each node, or false when the free
// GPUs fall short.
func firstFitMode(nodes []NodeInfo, demand int) (Placement, bool) {
	g, free := 0, 0
	for _, n := range nodes {
		if !n.Draining {
			g, free = max(g, n.GPUs), free+n.Free
		}
	}
	if demand <= 0 || free < demand {
		return Placement{}, false
	}
	used := map[string]int{}
	if demand <= g {
		for _, n := range nodes {
			if !n.Draining && n.Free >= demand {
				used[n.ID] = demand
				break
			}
		}
	} else {
		for _, n := range nodes {
			if len(used) < demand/g && !n.Draining && n.GPUs == g && n.Free == g {
				used[n.ID] = g
			}
		}
		if r := demand % g; len(used) == demand/g && r > 0 {
			for _, n := range nodes {
				if _, whole := used[n.ID]; !whole && !n.Draining && n.Free >= r {
					used[n.ID] = r
					break
				}
			}
		}
		sum := 0
		for _, k := range used {
			sum += k
		}
		if sum < demand { // too few whole nodes, or none for the rest
			used = map[string]int{}
		}
	}
	if len(used) == 0 {
		used, _ = firstFit(nodes, demand)
	}
	var p Placement
	for _, n := range nodes {
		k, ok := used[n.ID]
		if !ok {
			continue
		}
		s := Slot{Node: n.ID}
		for i := 0; len(s.GPUs) < k; i++ {
			if !slices.Contains(n.Held, i) {
				s.GPUs = append(s.GPUs, i)
			}
		}
		p.Slots = append(p.Slots, s)
	}
	slices.SortFunc(p.Slots, func(a, b Slot) int { return strings.Compare(a.Node, b.Node) })
	return p, true
}

// inOrder returns the state of the nodes ids, in that order.
func inOrder(c *Cluster, ids []string) []NodeInfo {
	out := make([]NodeInfo, 0, len(ids))
	for _, id := range ids {
		if n, ok := c.Node(id); ok {
			out = append(out, n)
		}
	}
	return out
}

// TestFirstFit places by hand-computed cases under FirstFit, on nodes given
// in an order that is not their id order.
func TestFirstFit(t *testing.T) {
	type hold struct {
		node string
		gpus []int
	}
	tests := []struct {
		name    string
		nodes   []Node
		held    []hold
		drain   []string
		add     []Node // after the holds and drains
		demand  int
		want    string // "": no fit
		wantWhy string // WhySpread's reason, "" when it does not spread
	}{
		{name: "the first node in order that holds the gang, not the best fit",
			nodes:  []Node{{ID: "z", GPUs: 8}, {ID: "a", GPUs: 8}, {ID: "m", GPUs: 4}},
			held:   []hold{{"z", []int{0, 1}}},
			demand: 4, want: "z:2,3,4,5"},
		{name: "a node that cannot hold it is passed over",
			nodes:  []Node{{ID: "z", GPUs: 8}, {ID: "a", GPUs: 8}, {ID: "m", GPUs: 4}},
			held:   []hold{{"z", []int{0, 1}}},
			demand: 7, want: "a:0,1,2,3,4,5,6"},
		{name: "no node holds it: all the free GPUs of each node in order",
			nodes:  []Node{{ID: "z", GPUs: 8}, {ID: "a", GPUs: 8}, {ID: "m", GPUs: 8}},
			held:   []hold{{"z", seq(0, 6)}, {"a", seq(0, 5)}, {"m", seq(0, 2)}},
			demand: 8, want: "a:5,6,7 m:2,3,4 z:6,7",
			wantWhy: "spread over 3 nodes in node order: no node has 8 free (largest free block is 6)"},
		{name: "a gang larger than a node takes whole nodes in order and the remainder from the first other",
			nodes:  []Node{{ID: "d", GPUs: 8}, {ID: "c", GPUs: 8}, {ID: "b", GPUs: 8}, {ID: "a", GPUs: 8}},
			held:   []hold{{"d", []int{0}}},
			demand: 12, want: "c:0,1,2,3,4,5,6,7 d:1,2,3,4"},
		{name: "a multiple of the node size takes whole nodes only",
			nodes:  []Node{{ID: "d", GPUs: 8}, {ID: "c", GPUs: 8}, {ID: "b", GPUs: 8}, {ID: "a", GPUs: 8}},
			held:   []hold{{"d", []int{0}}},
			demand: 16, want: "b:0,1,2,3,4,5,6,7 c:0,1,2,3,4,5,6,7"},
		{name: "draining nodes are skipped",
			nodes:  []Node{{ID: "d", GPUs: 8}, {ID: "c", GPUs: 8}, {ID: "b", GPUs: 8}, {ID: "a", GPUs: 8}},
			held:   []hold{{"d", []int{0}}},
			drain:  []string{"c", "d"},
			demand: 12, want: "a:0,1,2,3 b:0,1,2,3,4,5,6,7"},
		{name: "too few wholly free nodes: spread in order",
			nodes:  []Node{{ID: "d", GPUs: 8}, {ID: "c", GPUs: 8}, {ID: "b", GPUs: 8}},
			held:   []hold{{"d", []int{0}}, {"c", []int{7}}},
			demand: 16, want: "b:0,1 c:0,1,2,3,4,5,6 d:1,2,3,4,5,6,7",
			wantWhy: "spread over 3 nodes in node order: fewer than 2 nodes of 8 GPUs are wholly free"},
		{name: "no node besides the whole ones holds the remainder: spread in order",
			nodes:  []Node{{ID: "d", GPUs: 8}, {ID: "c", GPUs: 8}, {ID: "b", GPUs: 8}},
			held:   []hold{{"d", seq(0, 6)}, {"c", seq(0, 6)}},
			demand: 12, want: "b:0,1,2,3,4,5,6,7 c:6,7 d:6,7",
			wantWhy: "spread over 3 nodes in node order: no node besides the first 1 wholly free ones has 4 free"},
		{name: "all or nothing: fewer free GPUs than the demand",
			nodes:  []Node{{ID: "b", GPUs: 8}, {ID: "a", GPUs: 8}},
			held:   []hold{{"b", seq(0, 5)}},
			demand: 12},
		{name: "the GPUs of a draining node do not count",
			nodes:  []Node{{ID: "b", GPUs: 8}, {ID: "a", GPUs: 8}},
			drain:  []string{"a"},
			demand: 9},
		{name: "a node added later comes last in the order, whatever its id",
			nodes:  []Node{{ID: "m", GPUs: 8}},
			held:   []hold{{"m", seq(0, 4)}},
			add:    []Node{{ID: "a", GPUs: 8}},
			demand: 4, want: "m:4,5,6,7"},
		{name: "mixed sizes: a gang of at most the largest node takes the first node that holds it",
			nodes:  []Node{{ID: "a", GPUs: 4}, {ID: "b", GPUs: 8}},
			demand: 6, want: "b:0,1,2,3,4,5"},
		{name: "mixed sizes: whole nodes are of the largest accepting size",
			nodes:  []Node{{ID: "a", GPUs: 4}, {ID: "b", GPUs: 8}, {ID: "c", GPUs: 4}},
			drain:  []string{"b"},
			demand: 6, want: "a:0,1,2,3 c:0,1"},
		{name: "mixed sizes: smaller nodes are not taken whole for a gang larger than the largest, though the spread may span no more",
			nodes:  []Node{{ID: "a", GPUs: 4}, {ID: "b", GPUs: 4}, {ID: "c", GPUs: 8}, {ID: "d", GPUs: 4}},
			demand: 16, want: "a:0,1,2,3 b:0,1,2,3 c:0,1,2,3,4,5,6,7"},
		{name: "mixed sizes: the remainder goes on the first other node that holds it, of any size",
			nodes:  []Node{{ID: "a", GPUs: 2}, {ID: "b", GPUs: 4}, {ID: "c", GPUs: 8}, {ID: "d", GPUs: 4}},
			demand: 12, want: "b:0,1,2,3 c:0,1,2,3,4,5,6,7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustCluster(t, tt.nodes, WithMode(FirstFit))
			for i, h := range tt.held {
				if err := c.Allocate(fmt.Sprint("h", i), Placement{Slots: []Slot{{Node: h.node, GPUs: h.gpus}}}); err != nil {
					t.Fatal(err)
				}
			}
			for _, id := range tt.drain {
				if err := c.DrainNode(id); err != nil {
					t.Fatal(err)
				}
			}
			for _, n := range tt.add {
				if err := c.AddNode(n); err != nil {
					t.Fatal(err)
				}
			}
			verify(t, c)
			before := dump(c)
			why, spreads := c.WhySpread(tt.demand)
			if spreads != (tt.wantWhy != "") || why.Reason != tt.wantWhy {
				t.Errorf("WhySpread(%d) = %+v, %t; want reason %q", tt.demand, why, spreads, tt.wantWhy)
			}
			p, err := c.Place(tt.demand)
			if fits := c.Fits(tt.demand); fits != (err == nil) {
				t.Errorf("Fits(%d) = %t, Place error %v", tt.demand, fits, err)
			}
			if tt.want == "" {
				var nf *NoFitError
				if !errors.As(err, &nf) || nf.Demand != tt.demand || nf.FreeTotal != c.Free() || nf.LargestFree != c.LargestFree() {
					t.Fatalf("Place(%d) = %v, %v; want a NoFitError", tt.demand, p, err)
				}
				if _, err := c.Assign("x", tt.demand); !errors.Is(err, ErrNoFit) || dump(c) != before {
					t.Fatalf("Assign(%d): %v, or the state changed", tt.demand, err)
				}
				return
			}
			if err != nil || p.String() != tt.want {
				t.Fatalf("Place(%d) = %v, %v; want %s", tt.demand, p, err, tt.want)
			}
			if spreads && c.Beyond(p) != why.Nodes-why.MinNodes {
				t.Errorf("Beyond(%v) = %d, WhySpread %+v", p, c.Beyond(p), why)
			}
			if q, err := c.Assign("x", tt.demand); err != nil || q.String() != tt.want {
				t.Fatalf("Assign(%d) = %v, %v; want %s", tt.demand, q, err, tt.want)
			}
			verify(t, c)
		})
	}
}

// TestModesDiffer: on one state the three modes place a gang of 4 apart —
// the first node in order, the best fit, or nowhere for a gang of 8 that
// the other two spread.
func TestModesDiffer(t *testing.T) {
	for _, tt := range []struct {
		mode   Mode
		demand int
		want   string
	}{
		{FirstFit, 4, "z:2,3,4,5"}, {FewestNodes, 4, "m:0,1,2,3"}, {Strict, 4, "m:0,1,2,3"},
		{FirstFit, 10, "a:0,1,2,3,4,5,6,7 z:2,3"}, {FewestNodes, 10, "a:0,1,2,3,4,5,6,7 m:0,1"},
	} {
		c := mustCluster(t, []Node{{ID: "z", GPUs: 8}, {ID: "a", GPUs: 8}, {ID: "m", GPUs: 4}}, WithMode(tt.mode))
		if err := c.Allocate("h", Placement{Slots: []Slot{{Node: "z", GPUs: []int{0, 1}}}}); err != nil {
			t.Fatal(err)
		}
		if p, err := c.Place(tt.demand); err != nil || p.String() != tt.want {
			t.Errorf("%v: Place(%d) = %v, %v; want %s", tt.mode, tt.demand, p, err, tt.want)
		}
	}
}

// TestPropertyFirstFitIsTheReference drives a FirstFit cluster through
// random placements, releases, drains, node additions and removals and
// clones, and requires every decision — Place, Assign, Fits, PlaceWithout,
// WhySpread — to be firstFitMode's over the nodes in the order the cluster
// received them, and every invariant to hold.
func TestPropertyFirstFitIsTheReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		initial := genNodes(t, 10)
		c, err := NewCluster(initial, WithMode(FirstFit))
		if err != nil {
			t.Fatal(err)
		}
		var order, live []string
		for _, n := range initial {
			order = append(order, n.ID)
		}
		for step := range rapid.IntRange(1, 50).Draw(t, "steps") {
			pick := func(what string, from []string) string {
				return from[rapid.IntRange(0, len(from)-1).Draw(t, what)]
			}
			switch op := rapid.IntRange(0, 9).Draw(t, "op"); {
			case op == 0:
				n := genNode(t, fmt.Sprint("n", len(initial)+step))
				if err := c.AddNode(n); err != nil {
					t.Fatal(err)
				}
				order = append(order, n.ID)
			case op == 1 && len(order) > 0:
				id := pick("drained", order)
				if n, _ := c.Node(id); n.Draining {
					err = c.UndrainNode(id)
				} else {
					err = c.DrainNode(id)
				}
				if err != nil {
					t.Fatal(err)
				}
			case op == 2 && len(order) > 0:
				id := pick("removed", order)
				n, _ := c.Node(id)
				if err := c.RemoveNode(id); (err == nil) != (n.Free == n.GPUs) {
					t.Fatalf("RemoveNode(%s) of a node with %d of %d free: %v", id, n.Free, n.GPUs, err)
				} else if err == nil {
					order = slices.DeleteFunc(order, func(s string) bool { return s == id })
				}
			case op == 3 && len(live) > 0:
				id := pick("released", live)
				if _, err := c.Release(id); err != nil {
					t.Fatal(err)
				}
				live = slices.DeleteFunc(live, func(s string) bool { return s == id })
			case op == 4:
				c = c.Clone()
			default:
				d := rapid.IntRange(1, 40).Draw(t, "demand")
				want, ok := firstFitMode(inOrder(c, order), d)
				p, err := c.Place(d)
				if ok != (err == nil) || ok && p.String() != want.String() {
					t.Fatalf("step %d: Place(%d) = %v, %v; the reference %v, %t", step, d, p, err, want, ok)
				}
				if !ok && !errors.Is(err, ErrNoFit) {
					t.Fatalf("step %d: Place(%d): %v, want ErrNoFit", step, d, err)
				}
				if c.Fits(d) != ok {
					t.Fatalf("step %d: Fits(%d) = %t, the reference %t", step, d, !ok, ok)
				}
				why, spreads := c.WhySpread(d)
				if spreads != (ok && p.Nodes() > c.MinNodes(d)) || spreads && why.Nodes != p.Nodes() {
					t.Fatalf("step %d: WhySpread(%d) = %+v, %t for %v", step, d, why, spreads, p)
				}
				if len(live) > 0 {
					// A look past some allocations is the reference on
					// the state without them.
					out := pick("look past", live)
					q, qerr := c.PlaceWithout(d, []string{out})
					held, _ := c.Allocation(out)
					v := inOrder(c, order)
					for i := range v {
						for _, s := range held.Slots {
							if s.Node == v[i].ID {
								v[i].Held = slices.DeleteFunc(slices.Clone(v[i].Held), func(g int) bool { return slices.Contains(s.GPUs, g) })
								v[i].Free += len(s.GPUs)
							}
						}
					}
					wq, wok := firstFitMode(v, d)
					if wok != (qerr == nil) || wok && q.String() != wq.String() {
						t.Fatalf("step %d: PlaceWithout(%d, %s) = %v, %v; the reference %v, %t", step, d, out, q, qerr, wq, wok)
					}
				}
				if !ok {
					break
				}
				id := fmt.Sprint("j", step)
				if rapid.Bool().Draw(t, "assign") {
					if p, err = c.Assign(id, d); err != nil || p.String() != want.String() {
						t.Fatalf("step %d: Assign(%d) = %v, %v; the reference %v", step, d, p, err, want)
					}
				} else if err := c.Allocate(id, p); err != nil {
					t.Fatal(err)
				}
				live = append(live, id)
			}
			if err := c.Check(); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
		}
	})
}

// TestPropertyOrderIndex drives the order index by itself, over ordinals
// far enough apart to need three levels, against a plain array: every
// search is the linear scan's, a clone's entries stay its own, and the
// index stays consistent.
func TestPropertyOrderIndex(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		span := rapid.SampledFrom([]int{10, 100, 5000, 300000}).Draw(t, "span")
		type member struct {
			x     orderIndex
			tok   *cowToken
			model map[int]orderVal
		}
		ms := []*member{{tok: new(cowToken), model: map[int]orderVal{}}}
		hot := []int{0}
		for step := range rapid.IntRange(1, 200).Draw(t, "steps") {
			m := ms[rapid.IntRange(0, len(ms)-1).Draw(t, "member")]
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0:
				cp := &member{x: m.x.clone(), tok: new(cowToken), model: maps.Clone(m.model)}
				m.tok = new(cowToken) // as Clone does: the shared chunks belong to neither
				ms = append(ms, cp)
			case 1, 2:
				ord := rapid.IntRange(0, span-1).Draw(t, "ordinal")
				if rapid.Bool().Draw(t, "near") {
					ord = min(span-1, hot[rapid.IntRange(0, len(hot)-1).Draw(t, "hot")]+rapid.IntRange(0, 3).Draw(t, "off"))
				}
				hot = append(hot, ord)
				free := int32(rapid.IntRange(0, 8).Draw(t, "free"))
				v := orderVal{free: free}
				if rapid.Bool().Draw(t, "whole") {
					v.whole = free
				}
				m.x.set(m.tok, ord, v)
				m.model[ord] = v
			default:
				from := rapid.IntRange(0, span).Draw(t, "from")
				need := rapid.IntRange(1, 9).Draw(t, "need")
				whole := rapid.Bool().Draw(t, "whole search")
				want := -1
				for o := range m.model {
					v := m.model[o]
					if got := v.free; whole && v.whole >= int32(need) || !whole && got >= int32(need) {
						if o >= from && (want < 0 || o < want) {
							want = o
						}
					}
				}
				if got := m.x.next(from, need, whole); got != want {
					t.Fatalf("step %d: next(%d, %d, %t) = %d, want %d", step, from, need, whole, got, want)
				}
			}
			for i, m := range ms {
				for o, v := range m.model {
					if got := m.x.lv[0].at(o); got != v {
						t.Fatalf("step %d: member %d entry %d is %+v, want %+v", step, i, o, got, v)
					}
				}
				for l := 1; l < len(m.x.lv); l++ {
					for j := range len(m.x.lv[l].chunks) << orderBits {
						if got, want := m.x.lv[l].at(j), m.x.blockMax(l-1, j); got != want {
							t.Fatalf("step %d: member %d level %d entry %d is %+v, want %+v", step, i, l, j, got, want)
						}
					}
				}
			}
		}
	})
}
