package simulate

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
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

// lowestFirst puts exactly the k lowest bounds first, in increasing order,
// and leaves none lower behind them.
func TestPropertyLowestFirstMatchesSort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var h []boundRef
		for range rapid.IntRange(0, 40).Draw(t, "jobs") {
			h = append(h, boundRef{lo: ledger.Rho(rapid.SampledFrom([]float64{0, 0.25, 0.5, 1, 2, 3}).Draw(t, "bound"))})
		}
		k := rapid.IntRange(1, 10).Draw(t, "k")
		want := slices.Clone(h)
		slices.SortFunc(want, func(x, y boundRef) int { return x.lo.Compare(y.lo) })
		got := lowestFirst(h, k)
		if got != min(k, len(h)) {
			t.Fatalf("lowestFirst moved %d, want %d", got, min(k, len(h)))
		}
		for i := range got {
			if h[i].lo != want[i].lo {
				t.Fatalf("front %v, want %v", h[:got], want[:got])
			}
		}
		for _, x := range h[got:] {
			if got > 0 && x.lo < h[got-1].lo {
				t.Fatalf("%v behind the front %v", x.lo, h[:got])
			}
		}
	})
}

// A memo matches a job's lease count only while it fits in 32 bits: a
// count that does not fit never matches, so the bound is not used.
func TestMemoSameLeases(t *testing.T) {
	for _, c := range []struct {
		name   string
		memo   int
		leases int
		want   bool
	}{
		{"the same count matches", 3, 3, true},
		{"a grant since the read voids the memo", 3, 4, false},
		{"a count beyond 32 bits never matches", math.MaxInt32, math.MaxInt32 + 1, false},
		{"the largest count is kept as beyond 32 bits", math.MaxInt32, math.MaxInt32, false},
	} {
		m := rhoMemo{leases: int32(min(c.memo, math.MaxInt32))}
		if got := m.sameLeases(&JobState{Leases: c.leases}); got != c.want {
			t.Errorf("%s: sameLeases = %v, want %v", c.name, got, c.want)
		}
	}
}

// sortBounds orders any bounds as slices.SortFunc with ledger.Rho's
// Compare does (a permutation, ascending, NaN first): short and long
// lists, many equal bounds, sorted and reversed input, and parts left to
// slices.SortFunc when the recursion is cut short.
func TestPropertySortBoundsIsASort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		vals := rapid.SampledFrom([]float64{math.NaN(), 0, 0.25, 0.5, 1, 2, 3, math.Inf(1)})
		var h []boundRef
		for range rapid.IntRange(0, 300).Draw(t, "bounds") {
			lo := rapid.Float64Range(0, 4).Draw(t, "bound")
			if rapid.Bool().Draw(t, "listed") {
				lo = vals.Draw(t, "value")
			}
			h = append(h, boundRef{lo: ledger.Rho(lo), w: &waiting{gpus: len(h)}})
		}
		switch rapid.IntRange(0, 2).Draw(t, "order") {
		case 1:
			slices.SortFunc(h, func(x, y boundRef) int { return x.lo.Compare(y.lo) })
		case 2:
			slices.SortFunc(h, func(x, y boundRef) int { return y.lo.Compare(x.lo) })
		}
		want := slices.Clone(h)
		slices.SortFunc(want, func(x, y boundRef) int { return x.lo.Compare(y.lo) })
		// A small depth sends parts to slices.SortFunc.
		sortBoundsDepth(h, rapid.SampledFrom([]int{0, 1, 2, 2 * bits.Len(uint(len(h)))}).Draw(t, "depth"))
		seen := make([]bool, len(h))
		for i := range h {
			if h[i].lo.Compare(want[i].lo) != 0 {
				t.Fatalf("at %d: %v, want %v", i, h[i].lo, want[i].lo)
			}
			if seen[h[i].w.gpus] {
				t.Fatalf("bound %d twice", h[i].w.gpus)
			}
			seen[h[i].w.gpus] = true
		}
	})
}
