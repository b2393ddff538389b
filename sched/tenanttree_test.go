package sched

import (
	"cmp"
	"fmt"
	"math"
	"testing"

	"github.com/astraea-sched/astraea/ledger"
	"pgregory.net/rapid"
)

// rhoKey orders as Rho.Compare does, for every pair of ρ: NaN, ±0, ±Inf,
// subnormals and ordinary values alike (every pair of the special values,
// then random pairs); and no ρ takes the key of none.
func TestPropertyRhoKeyOrdersAsCompare(t *testing.T) {
	special := []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1),
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64, 1, -1}
	check := func(t interface{ Fatalf(string, ...any) }, a, b ledger.Rho) {
		ka, kb := rhoKey(a), rhoKey(b)
		if got, want := cmp.Compare(ka, kb), a.Compare(b); got != want {
			t.Fatalf("keys of %v and %v compare %d, Compare says %d", a, b, got, want)
		}
		if ka == math.MaxUint64 {
			t.Fatalf("ρ %v takes the key of no tenant", a)
		}
	}
	for _, a := range special {
		for _, b := range special {
			check(t, ledger.Rho(a), ledger.Rho(b))
		}
	}
	rho := rapid.Custom(func(t *rapid.T) ledger.Rho {
		if rapid.Bool().Draw(t, "special") {
			return ledger.Rho(rapid.SampledFrom(special).Draw(t, "which"))
		}
		return ledger.Rho(rapid.Float64().Draw(t, "value"))
	})
	rapid.Check(t, func(t *rapid.T) {
		check(t, rho.Draw(t, "a"), rho.Draw(t, "b"))
	})
}

// The tenant tree's first tenant is always the one a scan of the tenants in
// play finds first (the order, then the id), under the default order and
// under a tenant order of the caller, while the first tenant's ρ grows (by
// a grant), stays or turns NaN, and tenants leave play, ties included.
func TestPropertyTenantTreeIsAScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 40).Draw(t, "tenants")
		var order TenantOrder
		if rapid.Bool().Draw(t, "custom order") {
			// Fewest grants first, then the lower GPU count: ties are
			// common and go to the id.
			order = func(a, b *TenantState) int {
				return cmp.Or(cmp.Compare(a.Grants, b.Grants), cmp.Compare(b.GPUs, a.GPUs))
			}
		}
		rhos := []float64{0, 0.5, 0.5, 1, 2, math.NaN(), math.Copysign(0, -1)}
		tenants := make([]tenantRec, n)
		inPlay := make([]bool, n)
		for i := range tenants {
			tenants[i].st.ID = ledger.TenantID(fmt.Sprintf("t%02d", rapid.IntRange(0, 99).Draw(t, "id")))
			tenants[i].st.Account.Rho = ledger.Rho(rapid.SampledFrom(rhos).Draw(t, "rho"))
			tenants[i].st.GPUs = ledger.GPUs(rapid.IntRange(0, 2).Draw(t, "gpus"))
			inPlay[i] = rapid.IntRange(0, 4).Draw(t, "in play") > 0
		}
		for i := range tenants { // ids are unique in a round
			tenants[i].st.ID += ledger.TenantID(fmt.Sprintf("-%d", i))
		}
		before := func(a, b int) bool {
			x, y := &tenants[a].st, &tenants[b].st
			c := x.Account.Rho.Compare(y.Account.Rho)
			if order != nil {
				c = order(x, y)
			}
			if c != 0 {
				return c < 0
			}
			return x.ID < y.ID
		}
		scan := func() int32 {
			best := -1
			for i := range tenants {
				if inPlay[i] && (best < 0 || before(i, best)) {
					best = i
				}
			}
			return int32(best)
		}
		var tt tenantTree
		tt.reset(tenants, order, func(ti int) bool { return inPlay[ti] })
		for step := 0; ; step++ {
			want := scan()
			if got := tt.top(); got != want {
				t.Fatalf("step %d: top = %d, a scan finds %d", step, got, want)
			}
			if want < 0 {
				return
			}
			if rapid.IntRange(0, 3).Draw(t, "leave?") == 0 {
				inPlay[want] = false
				tt.remove(want)
				continue
			}
			st := &tenants[want].st
			st.Grants++
			st.GPUs += ledger.GPUs(rapid.IntRange(0, 2).Draw(t, "granted"))
			if rho := rapid.IntRange(0, 5).Draw(t, "new rho"); rho == 5 {
				st.Account.Rho = ledger.Rho(math.NaN())
			} else if !math.IsNaN(float64(st.Account.Rho)) {
				st.Account.Rho += ledger.Rho(float64(rho) / 4)
			}
			tt.fix(want)
		}
	})
}
