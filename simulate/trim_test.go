package simulate

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/simulate/trace"
	"pgregory.net/rapid"
)

// firstN selects exactly the n first suspended jobs of a full sort in Phase
// 2 order (ρ_job, submission, id), whatever the ties.
func TestPropertyFirstNMatchesSort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(1, 40).Draw(t, "jobs")
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var r []oldJob
		for i := range k {
			js := &JobState{Job: trace.Job{ID: fmt.Sprintf("j%02d", i), Submit: t0.Add(time.Duration(rapid.IntRange(0, 3).Draw(t, "submit")) * time.Second)}}
			rho := ledger.Rho(rapid.SampledFrom([]float64{0, 0.5, 1, 2}).Draw(t, "rho"))
			r = append(r, oldJob{js: js, rho: rho})
		}
		n := rapid.IntRange(1, k).Draw(t, "n")
		want := slices.Clone(r)
		slices.SortFunc(want, func(x, y oldJob) int { return cmp.Or(x.rho.Compare(y.rho), compareJobs(x.js, y.js)) })
		ids := func(os []oldJob) []string {
			var s []string
			for _, o := range os {
				s = append(s, o.js.Job.ID)
			}
			slices.Sort(s)
			return s
		}
		if got, w := ids(firstN(r, n)), ids(want[:n]); !slices.Equal(got, w) {
			t.Fatalf("firstN(%d) = %v, want %v", n, got, w)
		}
	})
}
