package placement

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// genNodes draws a small cluster with mixed node sizes and an optional,
// possibly uneven, two-level topology.
func genNodes(t *rapid.T, maxNodes int) []Node {
	n := rapid.IntRange(1, maxNodes).Draw(t, "nodes")
	out := make([]Node, n)
	for i := range out {
		out[i] = genNode(t, fmt.Sprintf("n%d", i))
	}
	return out
}

// idStems start the ids of genNode: long ones shared by several nodes,
// which the 16-byte prefixes of the free-capacity keys cannot tell apart,
// and ones of 15 bytes or ending in a zero byte, which the prefixes pad.
var idStems = []string{"", "", "0123456789abcdef", "0123456789abcde", "0123456789abcde\x00", "gpu-cluster/rack-0/"}

// genNode draws a node whose id is stem, drawn from idStems, then id.
func genNode(t *rapid.T, id string) Node {
	id = rapid.SampledFrom(idStems).Draw(t, id+" id stem") + id
	nd := Node{ID: id, GPUs: rapid.SampledFrom([]int{1, 2, 3, 4, 6, 8, 8, 8, 16}).Draw(t, id+" GPUs")}
	depth := rapid.IntRange(0, 2).Draw(t, id+" depth")
	for l := range depth {
		nd.Topology = append(nd.Topology, fmt.Sprintf("%c%d", "rs"[l], rapid.IntRange(0, 1).Draw(t, id+" label")))
	}
	return nd
}

// view is what the brute-force oracle knows about a node.
type view struct {
	id        string
	gpus      int
	free      int
	draining  bool
	topology  []string
	freeGPUs  []int
	domainKey func(l int) (string, bool)
}

func views(c *Cluster) []view {
	var out []view
	for n := range c.Nodes() {
		v := view{id: n.ID, gpus: n.GPUs, free: n.Free, draining: n.Draining, topology: n.Topology}
		for i := range n.GPUs {
			if !slices.Contains(n.Held, i) {
				v.freeGPUs = append(v.freeGPUs, i)
			}
		}
		topo := n.Topology
		v.domainKey = func(l int) (string, bool) {
			if l >= len(topo) {
				return "", false
			}
			return strings.Join(topo[:l+1], "/"), true
		}
		out = append(out, v)
	}
	return out
}

// oracle computes, by brute force over every subset of nodes, the fewest
// nodes a demand can use (0 if it cannot be placed under the policy), the
// innermost topology level that can hold it on that many nodes (-1 for
// none), and the best top-k sum of a domain at that level.
func oracle(vs []view, demand int, spread bool) (k, level int) {
	var cand []view
	largestNode := 0
	for _, v := range vs {
		if !v.draining {
			largestNode = max(largestNode, v.gpus)
			if v.free > 0 {
				cand = append(cand, v)
			}
		}
	}
	best := 0
	for mask := 1; mask < 1<<len(cand); mask++ {
		sum := 0
		for i, v := range cand {
			if mask&(1<<i) != 0 {
				sum += v.free
			}
		}
		if sum >= demand && (best == 0 || bits.OnesCount(uint(mask)) < best) {
			best = bits.OnesCount(uint(mask))
		}
	}
	if best > 1 && !spread && demand <= largestNode {
		return 0, -1
	}
	if best <= 1 {
		return best, -1
	}
	for l := 1; l >= 0; l-- {
		for mask := 1; mask < 1<<len(cand); mask++ {
			if bits.OnesCount(uint(mask)) != best {
				continue
			}
			sum, dom, same := 0, "", true
			for i, v := range cand {
				if mask&(1<<i) == 0 {
					continue
				}
				sum += v.free
				d, ok := v.domainKey(l)
				if !ok || (dom != "" && d != dom) {
					same = false
				}
				dom = d
			}
			if same && sum >= demand {
				return best, l
			}
		}
	}
	return best, -1
}

// checkWhySpread verifies WhySpread(demand) against Place's result p, err
// and the free blocks of the nodes that accept placements (vs): it
// explains exactly the placements beyond MinNodes, with their span and
// the most that one node fewer could hold.
func checkWhySpread(t *rapid.T, c *Cluster, vs []view, demand int, p Placement, err error) {
	why, ok := c.WhySpread(demand)
	if want := err == nil && c.Beyond(p) > 0; ok != want {
		t.Fatalf("WhySpread(%d) = %+v, %t; Place gives %v (%v), beyond %d", demand, why, ok, p, err, c.Beyond(p))
	}
	if !ok {
		return
	}
	var free []int
	for _, v := range vs {
		if !v.draining {
			free = append(free, v.free)
		}
	}
	slices.Sort(free)
	slices.Reverse(free)
	fewer := 0
	for _, f := range free[:why.Nodes-1] {
		fewer += f
	}
	if why.Demand != demand || why.Nodes != p.Nodes() || why.MinNodes != c.MinNodes(demand) || why.Fewer != fewer || why.Fewer >= demand || why.Reason == "" {
		t.Fatalf("WhySpread(%d) = %+v for %v; want %d nodes, minimum %d, %d on one node fewer", demand, why, p, p.Nodes(), c.MinNodes(demand), fewer)
	}
}

// checkPlacement verifies p against the rules, given the state before.
func checkPlacement(t *rapid.T, vs []view, p Placement, demand int, spread bool) {
	byID := map[string]view{}
	for _, v := range vs {
		byID[v.id] = v
	}
	if p.GPUs() != demand {
		t.Fatalf("placement %v has %d GPUs, want %d", p, p.GPUs(), demand)
	}
	for i, s := range p.Slots {
		if i > 0 && s.Node <= p.Slots[i-1].Node {
			t.Fatalf("placement %v not ordered by node", p)
		}
		v, ok := byID[s.Node]
		if !ok || v.draining {
			t.Fatalf("placement %v on unknown or draining node %q", p, s.Node)
		}
		// The lowest free GPU indices of the node, ascending.
		if len(s.GPUs) > len(v.freeGPUs) || !slices.Equal(s.GPUs, v.freeGPUs[:len(s.GPUs)]) {
			t.Fatalf("placement %v on node %q uses %v, free %v", p, s.Node, s.GPUs, v.freeGPUs)
		}
	}
	k, level := oracle(vs, demand, spread)
	if p.Nodes() != k {
		t.Fatalf("placement %v spans %d nodes, the optimum is %d", p, p.Nodes(), k)
	}
	if k == 1 {
		// Best fit: no accepting node with fewer free GPUs (or as few and a
		// lower id) holds the demand.
		got := byID[p.Slots[0].Node]
		for _, v := range vs {
			if !v.draining && v.free >= demand && (v.free < got.free || (v.free == got.free && v.id < got.id)) {
				t.Fatalf("placement %v on %q (free %d), but %q (free %d) fits better", p, got.id, got.free, v.id, v.free)
			}
		}
		return
	}
	if level < 0 {
		return
	}
	dom := ""
	for _, s := range p.Slots {
		d, ok := byID[s.Node].domainKey(level)
		if !ok || (dom != "" && d != dom) {
			t.Fatalf("placement %v leaves topology level %d, which can hold it", p, level)
		}
		dom = d
	}
}

func TestPropertyPlacement(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spread := rapid.Bool().Draw(t, "spread")
		var opts []Option
		if spread {
			opts = append(opts, AllowSpread())
		}
		initial := genNodes(t, 6)
		c, err := NewCluster(initial, opts...)
		if err != nil {
			t.Fatal(err)
		}
		// Domain order of appearance, as the rules break ties by it.
		order := map[string]int{}
		ordSeq := 0
		appear := func(n Node) {
			for l := range n.Topology {
				if p := strings.Join(n.Topology[:l+1], "/"); order[p] == 0 {
					ordSeq++
					order[p] = ordSeq
				}
			}
		}
		forget := func() {
			live := map[string]bool{}
			for n := range c.Nodes() {
				for l := range n.Topology {
					live[strings.Join(n.Topology[:l+1], "/")] = true
				}
			}
			for p := range order {
				if !live[p] {
					delete(order, p)
				}
			}
		}
		for _, n := range initial {
			appear(n)
		}
		model := map[string]Placement{}
		next := 0
		check := func() {
			if err := c.Check(); err != nil {
				t.Fatal(err)
			}
			for n := range c.Nodes() {
				if len(n.Held) > n.GPUs || n.Free != n.GPUs-len(n.Held) {
					t.Fatalf("node %s: %d GPUs, held %v, free %d", n.ID, n.GPUs, n.Held, n.Free)
				}
			}
		}
		ids := func() []string {
			var out []string
			for id := range c.Allocations() {
				out = append(out, id)
			}
			return out
		}
		nodeIDs := func() []string {
			var out []string
			for n := range c.Nodes() {
				out = append(out, n.ID)
			}
			return out
		}
		t.Repeat(map[string]func(*rapid.T){
			"place": func(t *rapid.T) {
				demand := rapid.IntRange(1, 24).Draw(t, "demand")
				vs := views(c)
				before := dump(c)
				p, err := c.Place(demand)
				if fits := c.Fits(demand); fits != (err == nil) {
					t.Fatalf("Fits(%d) = %t, Place error %v", demand, fits, err)
				}
				checkWhySpread(t, c, vs, demand, p, err)
				if dump(c) != before {
					t.Fatal("Place, Fits or WhySpread changed the state")
				}
				if err != nil {
					if !errors.Is(err, ErrNoFit) {
						t.Fatalf("Place(%d): %v", demand, err)
					}
					if k, _ := oracle(vs, demand, spread); k != 0 {
						t.Fatalf("Place(%d) fails, the oracle places it on %d nodes", demand, k)
					}
					return
				}
				checkPlacement(t, vs, p, demand, spread)
				if want := expected(vs, demand, order); p.String() != want {
					t.Fatalf("Place(%d) = %s, the rules give %s", demand, p, want)
				}
				// Deterministic: again, and on a clone.
				if q, _ := c.Place(demand); q.String() != p.String() {
					t.Fatalf("Place(%d) = %v then %v", demand, p, q)
				}
				if q, _ := c.Clone().Place(demand); q.String() != p.String() {
					t.Fatalf("Place(%d) = %v, on a clone %v", demand, p, q)
				}
				id := fmt.Sprintf("j%d", next)
				next++
				if err := c.Allocate(id, p); err != nil {
					t.Fatalf("Allocate(%v): %v", p, err)
				}
				check()
				if rapid.Bool().Draw(t, "release at once") {
					got, err := c.Release(id)
					if err != nil || got.String() != p.String() {
						t.Fatalf("Release = %v, %v; want %v", got, err, p)
					}
					check()
					if after := dump(c); after != before {
						t.Fatalf("Release did not restore:\nbefore:\n%s\nafter:\n%s", before, after)
					}
					return
				}
				model[id] = p
			},
			"release": func(t *rapid.T) {
				all := ids()
				if len(all) == 0 {
					t.Skip("nothing allocated")
				}
				id := rapid.SampledFrom(all).Draw(t, "id")
				got, err := c.Release(id)
				if err != nil || got.String() != model[id].String() {
					t.Fatalf("Release(%s) = %v, %v; want %v", id, got, err, model[id])
				}
				delete(model, id)
				check()
				if _, err := c.Release(id); !errors.Is(err, ErrUnknownAllocation) {
					t.Fatalf("double Release(%s) = %v", id, err)
				}
			},
			"conflict": func(t *rapid.T) {
				all := ids()
				if len(all) == 0 {
					t.Skip("nothing allocated")
				}
				p := model[rapid.SampledFrom(all).Draw(t, "victim")]
				s := p.Slots[rapid.IntRange(0, len(p.Slots)-1).Draw(t, "slot")]
				before := dump(c)
				err := c.Allocate("intruder", Placement{Slots: []Slot{{Node: s.Node, GPUs: s.GPUs[:1]}}})
				if !errors.Is(err, ErrConflict) {
					t.Fatalf("Allocate over %v = %v", s, err)
				}
				if dump(c) != before {
					t.Fatal("a rejected Allocate changed the state")
				}
			},
			"drain": func(t *rapid.T) {
				id := rapid.SampledFrom(nodeIDs()).Draw(t, "node")
				if rapid.Bool().Draw(t, "undrain") {
					_ = c.UndrainNode(id)
				} else {
					_ = c.DrainNode(id)
				}
				check()
			},
			"add node": func(t *rapid.T) {
				if c.Len() >= 6 {
					t.Skip("cluster is full")
				}
				nd := genNode(t, fmt.Sprintf("m%d", next))
				next++
				if err := c.AddNode(nd); err != nil {
					t.Fatal(err)
				}
				appear(nd)
				check()
			},
			"remove node": func(t *rapid.T) {
				all := nodeIDs()
				if len(all) <= 1 {
					t.Skip("last node")
				}
				id := rapid.SampledFrom(all).Draw(t, "node")
				before := dump(c)
				n, _ := c.Node(id)
				err := c.RemoveNode(id)
				if len(n.Held) > 0 {
					if !errors.Is(err, ErrNodeBusy) || dump(c) != before {
						t.Fatalf("RemoveNode(busy %s) = %v", id, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				forget()
				check()
			},
			"clone": func(t *rapid.T) {
				before := dump(c)
				c2 := c.Clone()
				for i := range rapid.IntRange(0, 4).Draw(t, "clone steps") {
					if d := rapid.IntRange(1, 12).Draw(t, "clone demand"); c2.Fits(d) {
						p, _ := c2.Place(d)
						if err := c2.Allocate(fmt.Sprintf("c%d", i), p); err != nil {
							t.Fatal(err)
						}
					}
					for id := range c2.Allocations() {
						if rapid.Bool().Draw(t, "clone release") {
							_, _ = c2.Release(id)
						}
						break
					}
					if err := c2.Check(); err != nil {
						t.Fatal(err)
					}
				}
				if dump(c) != before {
					t.Fatal("mutating a clone changed the original")
				}
				check()
				cloneState := dump(c2)
				if d := rapid.IntRange(1, 8).Draw(t, "demand after clone"); c.Fits(d) {
					p, _ := c.Place(d)
					id := fmt.Sprintf("j%d", next)
					next++
					if err := c.Allocate(id, p); err != nil {
						t.Fatal(err)
					}
					model[id] = p
				}
				for id := range model {
					_, _ = c.Release(id)
					delete(model, id)
					break
				}
				check()
				if dump(c2) != cloneState {
					t.Fatal("mutating the original changed a clone")
				}
				if err := c2.Check(); err != nil {
					t.Fatal(err)
				}
			},
			"": func(t *rapid.T) { check() },
		})
	})
}

// TestPropertyDeterministic replays one random history on two clusters
// built the same way and requires identical decisions.
func TestPropertyDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := genNodes(t, 8)
		a, _ := NewCluster(nodes, AllowSpread())
		b, _ := NewCluster(slices.Clone(nodes), AllowSpread())
		demands := rapid.SliceOfN(rapid.IntRange(1, 20), 1, 30).Draw(t, "demands")
		for i, d := range demands {
			pa, ea := a.Place(d)
			pb, eb := b.Place(d)
			if pa.String() != pb.String() || (ea == nil) != (eb == nil) {
				t.Fatalf("step %d: %v, %v versus %v, %v", i, pa, ea, pb, eb)
			}
			if ea == nil {
				id := fmt.Sprint(i)
				_ = a.Allocate(id, pa)
				_ = b.Allocate(id, pb)
			}
		}
		if dump(a) != dump(b) {
			t.Fatal("states differ")
		}
	})
}

// expected applies the documented rules literally, by sorting, to a demand
// that the oracle says can be placed; order gives each domain path's rank of
// appearance.
func expected(vs []view, demand int, order map[string]int) string {
	var cand []view
	depth := 0
	for _, v := range vs {
		if !v.draining && v.free > 0 {
			cand = append(cand, v)
		}
	}
	for p := range order {
		depth = max(depth, strings.Count(p, "/")+1)
	}
	byFreeDesc := func(a, b view) int {
		if a.free != b.free {
			return b.free - a.free
		}
		return strings.Compare(a.id, b.id)
	}
	slices.SortFunc(cand, byFreeDesc)
	place := func(pool []view, k int) string {
		var p Placement
		sum := 0
		for _, v := range pool[:k-1] {
			p.Slots = append(p.Slots, Slot{Node: v.id, GPUs: v.freeGPUs})
			sum += v.free
		}
		rest := demand - sum
		var rem *view
		for i := k - 1; i < len(pool); i++ {
			v := pool[i]
			if v.free >= rest && (rem == nil || v.free < rem.free || (v.free == rem.free && v.id < rem.id)) {
				rem = &pool[i]
			}
		}
		p.Slots = append(p.Slots, Slot{Node: rem.id, GPUs: rem.freeGPUs[:rest]})
		slices.SortFunc(p.Slots, func(a, b Slot) int { return strings.Compare(a.Node, b.Node) })
		return p.String()
	}
	// Single node: best fit.
	var best *view
	for i, v := range cand {
		if v.free >= demand && (best == nil || v.free < best.free || (v.free == best.free && v.id < best.id)) {
			best = &cand[i]
		}
	}
	if best != nil {
		return best.id + ":" + strings.Trim(strings.Join(strings.Fields(fmt.Sprint(best.freeGPUs[:demand])), ","), "[]")
	}
	k, sum := 0, 0
	for _, v := range cand {
		k++
		sum += v.free
		if sum >= demand {
			break
		}
	}
	for l := depth - 1; l >= 0; l-- {
		bestPath, bestSum := "", 0
		for path := range order {
			if strings.Count(path, "/") != l {
				continue
			}
			s, n := 0, 0
			for _, v := range cand {
				if d, ok := v.domainKey(l); ok && d == path && n < k {
					s += v.free
					n++
				}
			}
			if s >= demand && (bestPath == "" || s < bestSum || (s == bestSum && order[path] < order[bestPath])) {
				bestPath, bestSum = path, s
			}
		}
		if bestPath != "" {
			var pool []view
			for _, v := range cand {
				if d, ok := v.domainKey(l); ok && d == bestPath {
					pool = append(pool, v)
				}
			}
			return place(pool, k)
		}
	}
	return place(cand, k)
}

// rackedNodes returns n nodes n00, n01, ... of gpus(i) GPUs, dealt
// round-robin to racks and, inside a rack, alternately to two switches,
// and the order in which their topology domains appear.
func rackedNodes(n, racks int, gpus func(i int) int) ([]Node, map[string]int) {
	nodes := make([]Node, n)
	order := map[string]int{}
	for i := range nodes {
		r, s := i%racks, (i/racks)%2
		nodes[i] = Node{ID: fmt.Sprintf("n%02d", i), GPUs: gpus(i),
			Topology: []string{fmt.Sprintf("r%d", r), fmt.Sprintf("s%d", s)}}
		for l := range 2 {
			if p := strings.Join(nodes[i].Topology[:l+1], "/"); order[p] == 0 {
				order[p] = len(order) + 1
			}
		}
	}
	return nodes, order
}

// TestPropertyLargeSpans covers gangs spanning more than 16 nodes, whose
// domain is found by a scan rather than an index, against the literal
// rules. Nodes have one GPU each, so that a demand of d spans d nodes, and
// are dealt round-robin to racks, so that several racks can hold a gang.
func TestPropertyLargeSpans(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(36, 90).Draw(t, "nodes")
		racks := rapid.IntRange(1, 3).Draw(t, "racks")
		nodes, order := rackedNodes(n, racks, func(int) int { return 1 })
		c, err := NewCluster(nodes, AllowSpread())
		if err != nil {
			t.Fatal(err)
		}
		for i := range rapid.IntRange(0, 10).Draw(t, "busy") {
			if p, err := c.Place(1); err == nil {
				if err := c.Allocate(fmt.Sprint("b", i), p); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := c.Check(); err != nil {
			t.Fatal(err)
		}
		demand := rapid.IntRange(17, max(17, n/racks)).Draw(t, "demand")
		vs := views(c)
		p, err := c.Place(demand)
		if fits := c.Fits(demand); fits != (err == nil) {
			t.Fatalf("Fits(%d) = %t, Place error %v", demand, fits, err)
		}
		if err != nil {
			if c.Free() >= demand {
				t.Fatalf("Place(%d) = %v with %d free", demand, err, c.Free())
			}
			return
		}
		if want := expected(vs, demand, order); p.String() != want {
			t.Fatalf("Place(%d) = %s, the rules give %s", demand, p, want)
		}
	})
}

// TestPropertyNoFitStays: in every mode, a demand that does not fit still
// does not fit once more GPUs are taken. sched's round relies on it: it
// does not try a failed demand again in the round.
func TestPropertyNoFitStays(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c, err := NewCluster(genNodes(t, 6), genMode(t))
		if err != nil {
			t.Fatal(err)
		}
		maxDemand := c.Capacity() + 1
		failed := map[int]bool{}
		for step := range rapid.IntRange(1, 8).Draw(t, "steps") {
			for d := 1; d <= maxDemand; d++ {
				fits := c.Fits(d)
				if _, err := c.Place(d); (err == nil) != fits {
					t.Fatalf("demand %d: Fits %v, Place error %v", d, fits, err)
				}
				if fits && failed[d] {
					t.Fatalf("step %d: demand %d fits after it did not, with fewer GPUs free", step, d)
				}
				if !fits {
					failed[d] = true
				}
			}
			d := rapid.IntRange(1, maxDemand).Draw(t, "allocate")
			if p, err := c.Place(d); err == nil {
				if err := c.Allocate(fmt.Sprintf("a%d", step), p); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
