package sched

import (
	"cmp"
	"reflect"
	"slices"
	"testing"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"pgregory.net/rapid"
)

// tenantOrders are tenant orders other than the default, whose keys change
// with every grant in other ways than ρ does (the round's heap entries
// cache ρ only for the default order).
var tenantOrders = []TenantOrder{
	nil,
	// Fewest GPUs granted this round first, then the highest ρ.
	func(a, b *TenantState) int {
		return cmp.Or(cmp.Compare(a.GPUs, b.GPUs), b.Account.Rho.Compare(a.Account.Rho))
	},
	// Most grants first: a tenant that is granted stays on top.
	func(a, b *TenantState) int { return cmp.Compare(b.Grants, a.Grants) },
	// All tenants equal: the id alone decides.
	func(a, b *TenantState) int { return 0 },
}

// tieBreaks are tie-breaks other than the default.
var tieBreaks = []TieBreak{
	nil,
	func(a, b *Candidate) int { return cmp.Compare(b.Demand, a.Demand) }, // the largest demand first
	func(a, b *Candidate) int { return 0 },                               // the job id alone
}

// threeTies is a reward of three components whose first two tie for most
// candidates, so that the third, kept apart from the heap entries, decides.
func threeTies(c *Candidate, job ledger.Account) Score {
	return ScoreOf(0, float64(c.Demand%2), -float64(job.Rho))
}

// A Rounder reused across rounds of other sizes, some of them failing
// midway, with tenant orders that read what each grant changes besides ρ
// (grants, GPUs) or nothing at all, tie-breaks other than the submission
// time, and rewards of one, two, three and mixed lengths, decides exactly
// as the brute-force reference does and leaves the same cluster.
func TestPropertyRoundOrdersMatchReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var x Rounder
		for i := range rapid.IntRange(1, 3).Draw(t, "rounds") {
			s := genScenario(t)
			s.opts.TenantOrder = tenantOrders[rapid.IntRange(0, len(tenantOrders)-1).Draw(t, "tenant order")]
			s.opts.TieBreak = tieBreaks[rapid.IntRange(0, len(tieBreaks)-1).Draw(t, "tie-break")]
			if rapid.Bool().Draw(t, "three components") {
				s.opts.Reward = threeTies
			}
			if rapid.Bool().Draw(t, "a round failing midway first") {
				// A job without an account fails the round when its
				// tenant is first reached, after other tenants' grants.
				in := s.in
				in.Placer = s.cl.Clone()
				in.Candidates = append(slices.Clone(in.Candidates), Candidate{Job: "ghost", Tenant: "T0", Demand: 1})
				_, _ = x.Round(in, s.opts)
			}
			got, cl := s.reuse(t, &x, i)
			in := s.in
			ref := s.cl.Clone()
			in.Placer = ref
			if want := reference(t, in, s.opts); !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d differs from the reference\n got  %+v\n want %+v", i, got, want)
			}
			if !reflect.DeepEqual(allocations(cl), allocations(ref)) {
				t.Fatalf("round %d: cluster differs from the reference", i)
			}
		}
	})
}

// reuse runs round i of the scenario on x, on a clone of its cluster.
func (s scenario) reuse(t *rapid.T, x *Rounder, i int) (Result, *placement.Cluster) {
	in := s.in
	cl := s.cl.Clone()
	in.Placer = cl
	res, err := x.Round(in, s.opts)
	if err != nil {
		t.Fatalf("round %d: %v", i, err)
	}
	return res, cl
}
