package sched

import (
	"errors"
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
		var s idSet
		// All the ids, then again, reusing the buffers, only the first m of
		// them, as a round that stops at a bad candidate adds: the groups
		// are then sized for more ids than were added.
		for _, m := range []int{n, rapid.IntRange(0, n).Draw(t, "added")} {
			wantI, wantJ := -1, -1
			first := map[ledger.JobID]int{}
			for i, c := range cands[:m] {
				if j, ok := first[c.Job]; ok {
					wantI, wantJ = i, j
					break
				}
				first[c.Job] = i
			}
			s.begin(cands)
			for range m {
				s.add()
			}
			if i, j := s.firstDuplicate(); i != wantI || j != wantJ {
				t.Fatalf("firstDuplicate of %d ids = %d, %d; want %d, %d", m, i, j, wantI, wantJ)
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
	if i, j := firstDuplicateOf(&s, cands); i != -1 || j != -1 {
		t.Fatalf("no duplicate, yet %d, %d", i, j)
	}
	cands[90_000].Job = cands[10].Job
	cands[70_000].Job = cands[50_000].Job
	cands[99_999].Job = cands[1].Job
	if i, j := firstDuplicateOf(&s, cands); i != 70_000 || j != 50_000 {
		t.Fatalf("firstDuplicate = %d, %d; want 70000, 50000", i, j)
	}
}

// Whichever id a later candidate repeats, firstDuplicate names that pair:
// every id of lists of several sizes is repeated in turn by the last
// candidate, so that the repeats fall in every group and bucket, the first
// and last ones included.
func TestFirstDuplicateOfEveryID(t *testing.T) {
	var s idSet
	for _, n := range []int{17, 100, 1024, 1025, 3000} {
		cands := make([]Candidate, n)
		for i := range cands {
			cands[i].Job = ledger.JobID(fmt.Sprintf("job-%d-%d", n, i))
		}
		last := cands[n-1].Job
		for i := range n - 1 {
			cands[n-1].Job = cands[i].Job
			if got, j := firstDuplicateOf(&s, cands); got != n-1 || j != i {
				t.Fatalf("%d ids, the last repeating id %d: firstDuplicate = %d, %d; want %d, %d", n, i, got, j, n-1, i)
			}
		}
		cands[n-1].Job = last
		if got, j := firstDuplicateOf(&s, cands); got != -1 || j != -1 {
			t.Fatalf("%d distinct ids: firstDuplicate = %d, %d", n, got, j)
		}
	}
}

// firstDuplicateOf adds every id of cands to s and returns its first
// duplicate.
func firstDuplicateOf(s *idSet, cands []Candidate) (int, int) {
	s.begin(cands)
	for range cands {
		s.add()
	}
	return s.firstDuplicate()
}

// A round reports the first bad candidate in input order, a duplicate id
// included, whichever check finds it.
func TestTheFirstBadCandidateIsReported(t *testing.T) {
	for name, tc := range map[string]struct {
		edit  func(cs []Candidate)
		index int
		want  error
	}{
		"a duplicate before an empty tenant": {func(cs []Candidate) {
			cs[3].Job = cs[1].Job
			cs[5].Tenant = ""
		}, 3, ErrDuplicateJob},
		"an empty tenant before a duplicate": {func(cs []Candidate) {
			cs[2].Tenant = ""
			cs[3].Job = cs[1].Job
		}, 2, ErrInvalidCandidate},
		"a duplicate that is also of an unknown tenant": {func(cs []Candidate) {
			cs[4].Job = cs[0].Job
			cs[4].Tenant = "nobody"
		}, 4, ErrDuplicateJob},
		"an unknown tenant before a duplicate": {func(cs []Candidate) {
			cs[3].Tenant = "nobody"
			cs[4].Job = cs[0].Job
		}, 3, ErrUnknownTenant},
		"a duplicate at the end": {func(cs []Candidate) {
			cs[len(cs)-1].Job = cs[0].Job
		}, 2999, ErrDuplicateJob},
	} {
		t.Run(name, func(t *testing.T) {
			acc := newAccounts()
			acc.tenant("A", 0, 100, 1)
			cs := make([]Candidate, 3000)
			for i := range cs {
				cs[i] = Candidate{Job: ledger.JobID(fmt.Sprintf("j%d", i)), Tenant: "A", Demand: 1}
				acc.job(cs[i].Job, 0)
			}
			tc.edit(cs)
			cl := cluster(t, 2, 8)
			_, err := Round(Input{Accounts: acc, Candidates: cs, Lease: lease, Placer: cl}, Options{})
			var e *Error
			if !errors.Is(err, tc.want) || !errors.As(err, &e) || e.Index != tc.index {
				t.Fatalf("err = %v, want %v at candidate %d", err, tc.want, tc.index)
			}
			if cl.Free() != 16 {
				t.Fatalf("free = %d after a rejected round", cl.Free())
			}
		})
	}
}

// The tenant table grows past its first size and keeps every index: a
// round with many tenants finds each at the index it was added with.
func TestTenantSetGrows(t *testing.T) {
	var s tenantSet
	for range 2 { // and again, after a reset
		s.reset()
		const n = 1000
		for i := range n {
			id := ledger.TenantID(fmt.Sprintf("tenant-%d", i))
			if j := s.index(id); j != -1 {
				t.Fatalf("%s found at %d before it was added", id, j)
			}
			s.add(id)
		}
		for i := range n {
			id := ledger.TenantID(fmt.Sprintf("tenant-%d", i))
			if j := s.index(id); j != int32(i) {
				t.Fatalf("%s at %d, want %d", id, j, i)
			}
		}
		if j := s.index("nobody"); j != -1 {
			t.Fatalf("an absent tenant at %d", j)
		}
	}
}

// A tenant set answers every lookup as a map does, over ids of a few
// letters whose tails collide in its seen slots often, through resets, with
// lookups of ids it holds, ids it does not and ids added since.
func TestPropertyTenantSetIsAMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s tenantSet
		for range rapid.IntRange(1, 3).Draw(t, "resets") {
			s.reset()
			want := map[ledger.TenantID]int32{}
			for range rapid.IntRange(0, 200).Draw(t, "ops") {
				id := ledger.TenantID(rapid.StringMatching(`[ab]{0,3}|x[ab]{0,12}`).Draw(t, "id"))
				j, ok := want[id]
				if !ok {
					j = -1
				}
				if got := s.index(id); got != j {
					t.Fatalf("index(%q) = %d, want %d", id, got, j)
				}
				if !ok && rapid.Bool().Draw(t, "add") {
					want[id] = int32(len(want))
					s.add(id)
				}
			}
		}
	})
}
