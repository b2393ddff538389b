package simulate

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/simulate/trace"
	"pgregory.net/rapid"
)

// TestPropertySuspendedGroupsAreExact runs crowded random workloads, with a
// few large gangs above what a round may free, under the ASTRAEA variants
// that read the suspended jobs from the lasting groups the engine keeps up
// (their keys serving a drawn horizon), and again with the trimmer sorting
// every waiting job into its group at each round: results and counts must
// be identical, the engine's checks at every tick (the groups hold exactly
// the suspended jobs) must pass, and a second run of the same policy
// value must repeat the first.
func TestPropertySuspendedGroupsAreExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg, jobs := genCrowdedWorkload(t)
		cfg.CheckEvery = 1
		for i := range rapid.IntRange(0, 4).Draw(t, "large") {
			last := jobs[len(jobs)-1]
			jobs = append(jobs, trace.Job{
				ID:       fmt.Sprintf("g%02d", i),
				Tenant:   rapid.SampledFrom([]string{"a", "b"}).Draw(t, "largeTenant"),
				GPUs:     rapid.IntRange(2, 8).Draw(t, "largeGPUs"),
				Submit:   last.Submit.Add(time.Duration(rapid.IntRange(0, 20).Draw(t, "largeGap")) * time.Second),
				Duration: time.Duration(rapid.IntRange(30, 600).Draw(t, "largeDur")) * time.Second,
			})
		}
		o := rapid.SampledFrom(slices.DeleteFunc(astraeaVariants(), func(o AstraeaOptions) bool {
			return o.SingleLevel || o.ReserveAfter > 0
		})).Draw(t, "variant")
		fast, _ := NewAstraea(o)
		fast.trim.horizon = time.Duration(rapid.IntRange(1, 600).Draw(t, "horizon")) * time.Second
		if !fast.keepsSuspended() {
			t.Fatalf("variant %s does not read lasting groups", o.Name)
		}
		ref, _ := NewAstraea(o)
		ref.perRound = true
		var res [3]*Result
		for i, p := range []*Astraea{fast, ref, fast} {
			r, err := Run(cfg, src(jobs...), p)
			if err != nil {
				t.Fatal(err)
			}
			res[i] = r
		}
		for _, r := range res[1:] {
			if !reflect.DeepEqual(res[0].Run, r.Run) || res[0].Stats != r.Stats {
				t.Fatalf("runs with lasting groups and with groups made at every round differ:\n%+v\n%+v", res[0].Stats, r.Stats)
			}
		}
	})
}
