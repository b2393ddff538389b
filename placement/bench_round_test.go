package placement

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"
)

// BenchmarkIdleRound measures the placement work of one scheduling round
// on an idle cluster of 10,000 nodes × 8 GPUs (racks of 40): a clone of the
// idle cluster reserves room for the round's allocations, then assigns
// jobs of a production-like mix of demands (mostly 1 GPU, some 2-8, a few
// 16-32) until the cluster is full, skipping a demand once it has not fit,
// as a scheduler that remembers no-fits does (about 27,800 grants). The
// clone and a collection before each round are excluded, and collections
// during the round are made rare, as in a scheduler's large heap. O(grants) per
// round, each grant as Assign.
func BenchmarkIdleRound(b *testing.B) {
	const nodes, jobs = 10_000, 40_000
	ns := make([]Node, nodes)
	for i := range ns {
		ns[i] = Node{ID: fmt.Sprintf("node-%05d", i), GPUs: 8, Topology: []string{fmt.Sprintf("rack-%03d", i/40)}}
	}
	base, err := NewCluster(ns)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([]string, jobs)
	hs := make([]uint64, jobs)
	demands := make([]int, jobs)
	for i := range ids {
		ids[i] = fmt.Sprintf("job-%06d", rng.IntN(1_000_000))
		hs[i] = IDHash(ids[i])
		switch x := rng.IntN(100); {
		case x < 60:
			demands[i] = 1
		case x < 75:
			demands[i] = 2
		case x < 85:
			demands[i] = 4
		case x < 97:
			demands[i] = 8
		case x < 99:
			demands[i] = 16
		default:
			demands[i] = 32
		}
	}
	// A scheduler's heap is large, so that a collection seldom starts
	// during a round: so here.
	defer debug.SetGCPercent(debug.SetGCPercent(800))
	b.ReportAllocs()
	var cpu int64
	grants := 0
	for b.Loop() {
		b.StopTimer()
		c := base.Clone()
		runtime.GC()
		t0, _ := processCPU()
		b.StartTimer()
		grants = idleRound(b, c, ids, hs, demands)
		b.StopTimer()
		t1, _ := processCPU()
		cpu += int64(t1 - t0)
		b.StartTimer()
	}
	b.ReportMetric(float64(grants), "grants")
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}

// idleRound makes the grants of BenchmarkIdleRound on c and returns their
// number.
func idleRound(b *testing.B, c *Cluster, ids []string, hs []uint64, demands []int) int {
	grants := 0
	failed := 1 << 30 // the least demand that did not fit
	c.ReserveAllocations(24_000)
	for i, id := range ids {
		d := demands[i]
		if d >= failed {
			continue
		}
		_, err := c.AssignHashed(id, hs[i], d)
		if err == nil {
			grants++
			continue
		}
		if errors.Is(err, ErrNoFit) {
			failed = d
		} else if !errors.Is(err, ErrDuplicateAllocation) {
			b.Fatal(err)
		}
	}
	return grants
}
