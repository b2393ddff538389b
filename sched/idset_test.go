package sched

import (
	"fmt"
	"testing"

	"github.com/astraea-sched/astraea/ledger"
	"pgregory.net/rapid"
)

// firstDuplicate agrees with a map kept in input order, also across many
// groups.
func TestPropertyFirstDuplicate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 5000).Draw(t, "n")
		distinct := rapid.IntRange(1, 2*n+1).Draw(t, "distinct ids")
		seed := rapid.Uint64().Draw(t, "seed")
		cands := make([]Candidate, n)
		for i := range cands {
			// a cheap deterministic spread of ids, most of them distinct
			k := (uint64(i)*0x9e3779b97f4a7c15 ^ seed) % uint64(distinct)
			cands[i].Job = ledger.JobID(fmt.Sprintf("j-%d", k))
		}
		wantI, wantJ := -1, -1
		first := map[ledger.JobID]int{}
		for i, c := range cands {
			if j, ok := first[c.Job]; ok {
				wantI, wantJ = i, j
				break
			}
			first[c.Job] = i
		}
		var s idSet
		for range 2 { // and again, reusing the buffers
			if i, j := s.firstDuplicate(cands); i != wantI || j != wantJ {
				t.Fatalf("firstDuplicate = %d, %d; want %d, %d", i, j, wantI, wantJ)
			}
		}
	})
}

// In a large list the first duplicate in input order is found whatever
// groups its ids fall into.
func TestFirstDuplicateInALargeList(t *testing.T) {
	cands := make([]Candidate, 100_000)
	for i := range cands {
		cands[i].Job = ledger.JobID(fmt.Sprintf("job-%06d", i))
	}
	var s idSet
	if i, j := s.firstDuplicate(cands); i != -1 || j != -1 {
		t.Fatalf("no duplicate, yet %d, %d", i, j)
	}
	cands[90_000].Job = cands[10].Job
	cands[70_000].Job = cands[50_000].Job
	cands[99_999].Job = cands[1].Job
	if i, j := s.firstDuplicate(cands); i != 70_000 || j != 50_000 {
		t.Fatalf("firstDuplicate = %d, %d; want 70000, 50000", i, j)
	}
}
