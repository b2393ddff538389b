package placement

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// firstFit is the reference the consolidated placement is compared with:
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
