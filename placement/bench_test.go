package placement

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// traceDemands draws GPU demands shaped like production traces: mostly
// single GPUs and single nodes, a tail of multi-node gangs up to 128.
func traceDemands(rng *rand.Rand, n int) []int {
	sizes := []int{1, 2, 4, 8, 16, 32, 64, 128}
	weights := []int{45, 15, 12, 15, 6, 4, 2, 1}
	total := 0
	for _, w := range weights {
		total += w
	}
	out := make([]int, n)
	for i := range out {
		r := rng.IntN(total)
		for j, w := range weights {
			if r < w {
				out[i] = sizes[j]
				break
			}
			r -= w
		}
	}
	return out
}

// benchCluster returns n 8-GPU nodes, 16 per switch and 4 switches per
// rack, filled to about 75% by a trace-shaped workload and then thinned by
// random departures, so that free capacity is fragmented as in a busy
// cluster.
func benchCluster(b *testing.B, n int, opts ...Option) *Cluster {
	b.Helper()
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{ID: fmt.Sprintf("node-%06d", i), GPUs: 8,
			Topology: []string{fmt.Sprintf("rack-%04d", i/64), fmt.Sprintf("switch-%05d", i/16)}}
	}
	c, err := NewCluster(nodes, opts...)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	var ids []string
	for i, d := range traceDemands(rng, 4*n) {
		if c.Used()*100 >= c.Capacity()*85 {
			break
		}
		p, err := c.Place(d)
		if err != nil {
			continue
		}
		id := fmt.Sprintf("fill-%d", i)
		if err := c.Allocate(id, p); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		if c.Used()*100 < c.Capacity()*75 {
			break
		}
		if rng.IntN(2) == 0 {
			if _, err := c.Release(id); err != nil {
				b.Fatal(err)
			}
		}
	}
	return c
}

var benchSizes = []int{1_000, 10_000, 100_000}

// cpuMeter reports the process CPU time per operation as "cpu-ns/op".
type cpuMeter struct {
	start time.Duration
	ok    bool
}

func startCPU(b *testing.B) cpuMeter {
	b.ResetTimer()
	t, ok := processCPU()
	return cpuMeter{start: t, ok: ok}
}

func (m cpuMeter) stop(b *testing.B) {
	b.StopTimer()
	if t, ok := processCPU(); ok && m.ok && b.N > 0 {
		b.ReportMetric(float64(t-m.start)/float64(b.N), "cpu-ns/op")
	}
}

// benchTraceDemands runs body as a sub-benchmark per size in benchSizes on a
// busy cluster (benchCluster) with 1024 trace-shaped demands, reporting
// allocations and CPU time. body holds the b.Loop itself, so the measured
// loop makes no extra call.
func benchTraceDemands(b *testing.B, body func(b *testing.B, c *Cluster, demands []int)) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			c := benchCluster(b, n)
			demands := traceDemands(rand.New(rand.NewPCG(2, 2)), 1024)
			b.ReportAllocs()
			m := startCPU(b)
			defer m.stop(b)
			body(b, c, demands)
		})
	}
}

// BenchmarkPlaceAllocateRelease measures one scheduling decision committed
// and undone: Place, Allocate, Release of a trace-shaped demand on a busy
// cluster.
func BenchmarkPlaceAllocateRelease(b *testing.B) {
	benchTraceDemands(b, func(b *testing.B, c *Cluster, demands []int) {
		for i := 0; b.Loop(); i++ {
			d := demands[i&1023]
			p, err := c.Place(d)
			if err != nil {
				continue
			}
			if err := c.Allocate("bench", p); err != nil {
				b.Fatal(err)
			}
			if _, err := c.Release("bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAssignRelease measures the same decision taken the way a
// scheduler grants a new job: Assign (place and allocate in one step), then
// Release. Compare with BenchmarkPlaceAllocateRelease.
func BenchmarkAssignRelease(b *testing.B) {
	benchTraceDemands(b, assignReleaseLoop)
}

// BenchmarkPlace measures a planning decision alone.
func BenchmarkPlace(b *testing.B) {
	benchTraceDemands(b, placeLoop)
}

// BenchmarkPlaceModes measures a planning decision under each Mode on the
// busy clusters of BenchmarkPlace (built under that mode): FewestNodes and
// FirstFit must scale as Strict does.
func BenchmarkPlaceModes(b *testing.B) {
	benchModes(b, placeLoop)
}

// BenchmarkAssignReleaseModes measures BenchmarkAssignRelease under each
// Mode: the decision and the upkeep of the mode's indexes by Assign and
// Release (FirstFit's order index among them).
func BenchmarkAssignReleaseModes(b *testing.B) {
	benchModes(b, assignReleaseLoop)
}

// benchModes runs body as a sub-benchmark per Mode and size in benchSizes
// on a busy cluster built under that mode, as benchTraceDemands does.
func benchModes(b *testing.B, body func(b *testing.B, c *Cluster, demands []int)) {
	for _, m := range modes {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%v/nodes=%d", m, n), func(b *testing.B) {
				c := benchCluster(b, n, WithMode(m))
				demands := traceDemands(rand.New(rand.NewPCG(2, 2)), 1024)
				b.ReportAllocs()
				cpu := startCPU(b)
				defer cpu.stop(b)
				body(b, c, demands)
			})
		}
	}
}

// BenchmarkFits measures the cheap feasibility check.
func BenchmarkFits(b *testing.B) {
	benchTraceDemands(b, func(b *testing.B, c *Cluster, demands []int) {
		for i := 0; b.Loop(); i++ {
			_ = c.Fits(demands[i&1023])
		}
	})
}

// BenchmarkCloneAllocate measures planning on a clone: Clone, then one
// Place and Allocate on the clone (which copies the records it touches).
func BenchmarkCloneAllocate(b *testing.B) {
	benchTraceDemands(b, func(b *testing.B, c *Cluster, demands []int) {
		for i := 0; b.Loop(); i++ {
			c2 := c.Clone()
			if p, err := c2.Place(demands[i&1023]); err == nil {
				if err := c2.Allocate("bench", p); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkNewCluster measures building an empty cluster with a two-level
// topology. O(n log n).
func BenchmarkNewCluster(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			nodes := make([]Node, n)
			for i := range nodes {
				nodes[i] = Node{ID: fmt.Sprintf("node-%06d", i), GPUs: 8,
					Topology: []string{fmt.Sprintf("rack-%04d", i/64), fmt.Sprintf("switch-%05d", i/16)}}
			}
			b.ReportAllocs()
			m := startCPU(b)
			defer m.stop(b)
			for b.Loop() {
				if _, err := NewCluster(nodes); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPlaceLargeSpan measures decisions for gangs spanning more than
// the 16 nodes the level indexes cover, which scan the domains of each level
// that have enough free GPUs.
func BenchmarkPlaceLargeSpan(b *testing.B) {
	for _, n := range benchSizes {
		for _, d := range []int{256, 1024} {
			b.Run(fmt.Sprintf("nodes=%d/demand=%d", n, d), func(b *testing.B) {
				c := benchCluster(b, n)
				b.ReportAllocs()
				m := startCPU(b)
				defer m.stop(b)
				for b.Loop() {
					_, _ = c.Place(d)
				}
			})
		}
	}
}

// BenchmarkChurn measures a scheduler's steady state on a busy cluster:
// every operation places and allocates a new trace-shaped job and releases
// the oldest running one, so the state keeps moving (unlike
// BenchmarkPlaceAllocateRelease, which undoes each step).
func BenchmarkChurn(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			c := benchCluster(b, n)
			var live []string
			for id := range c.Allocations() {
				live = append(live, id)
			}
			rng := rand.New(rand.NewPCG(3, 3))
			rng.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
			demands := traceDemands(rand.New(rand.NewPCG(2, 2)), 1024)
			var spare []string // ids free for reuse, so that naming costs nothing
			for i := range 4096 {
				spare = append(spare, fmt.Sprintf("churn-%d", i))
			}
			b.ReportAllocs()
			m := startCPU(b)
			defer m.stop(b)
			for i := 0; b.Loop(); i++ {
				if len(live) > 0 {
					if _, err := c.Release(live[0]); err != nil {
						b.Fatal(err)
					}
					spare = append(spare, live[0])
					live = live[1:]
				}
				p, err := c.Place(demands[i&1023])
				if err != nil {
					continue
				}
				id := spare[len(spare)-1]
				spare = spare[:len(spare)-1]
				if err := c.Allocate(id, p); err != nil {
					b.Fatal(err)
				}
				live = append(live, id)
			}
		})
	}
}

// placeLoop is the body of the Place benchmarks: a planning decision alone.
func placeLoop(b *testing.B, c *Cluster, demands []int) {
	for i := 0; b.Loop(); i++ {
		_, _ = c.Place(demands[i&1023])
	}
}

// assignReleaseLoop is the body of the Assign benchmarks: a grant by
// Assign, then its Release.
func assignReleaseLoop(b *testing.B, c *Cluster, demands []int) {
	for i := 0; b.Loop(); i++ {
		if _, err := c.Assign("bench", demands[i&1023]); err != nil {
			if errors.Is(err, ErrNoFit) {
				continue
			}
			b.Fatal(err)
		}
		if _, err := c.Release("bench"); err != nil {
			b.Fatal(err)
		}
	}
}
