package simulate

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate/trace"
	"pgregory.net/rapid"
)

// allocations lists a cluster's allocations, to compare before and after.
func allocations(c *placement.Cluster) map[string]placement.Placement {
	m := map[string]placement.Placement{}
	for id, p := range c.Allocations() {
		m[id] = p
	}
	return m
}

// TestPropertyFitsReleasedMatchesRelease: the optimistic look that reads
// node counts answers exactly as releasing the expiring jobs and asking the
// cluster, on clusters of mixed node sizes, consolidated or not, and leaves
// the cluster as it was.
func TestPropertyFitsReleasedMatchesRelease(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var nodes []placement.Node
		for i := range rapid.IntRange(1, 5).Draw(t, "nodes") {
			nodes = append(nodes, placement.Node{ID: fmt.Sprintf("n%d", i), GPUs: rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "gpus")})
		}
		var opts []placement.Option
		if rapid.Bool().Draw(t, "spread") {
			opts = append(opts, placement.AllowSpread())
		}
		c, err := placement.NewCluster(nodes, opts...)
		if err != nil {
			t.Fatal(err)
		}
		s := &State{Cluster: c}
		for i := range rapid.IntRange(0, 12).Draw(t, "jobs") {
			d := rapid.IntRange(1, c.Capacity()).Draw(t, "demand")
			p, err := c.Place(d)
			if err != nil {
				continue
			}
			id := fmt.Sprintf("j%02d", i)
			if err := c.Allocate(id, p); err != nil {
				t.Fatal(err)
			}
			if rapid.Bool().Draw(t, "expiring") {
				s.Expiring = append(s.Expiring, &JobState{Job: trace.Job{ID: id, GPUs: d}, Status: Running, Placement: p})
			}
		}
		if len(s.Expiring) == 0 {
			t.Skip("no expiring job")
		}
		ds := map[int]bool{}
		for range rapid.IntRange(0, 4).Draw(t, "pending") {
			ds[rapid.IntRange(1, c.Capacity()).Draw(t, "pendingDemand")] = true
		}
		s.PendingDemands = slices.Sorted(maps.Keys(ds))
		expGPUs := 0
		for _, r := range s.Expiring {
			expGPUs += r.Job.GPUs
		}
		before := allocations(c)
		var a Astraea
		got, err := a.fitsReleased(s, expGPUs)
		if err != nil {
			t.Fatal(err)
		}
		want, err := fitsReleasedSlow(s)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("fitsReleased = %v, releasing and asking the cluster says %v (demands %v)", got, want, s.PendingDemands)
		}
		if after := allocations(c); !maps.EqualFunc(before, after, placement.Placement.Equal) {
			t.Fatalf("allocations changed:\n%v\n%v", before, after)
		}
		if err := c.Check(); err != nil {
			t.Fatal(err)
		}
	})
}
