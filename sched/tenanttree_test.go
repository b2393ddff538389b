package sched

import (
	"cmp"
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

// sameTail, the quick test init makes before comparing a candidate's tenant
// with the one before it, holds for every pair of equal ids (so that the
// lookup it skips is never needed) and is exactly equal length and last
// byte.
func TestPropertySameTailHoldsForEqualIDs(t *testing.T) {
	id := rapid.Custom(func(t *rapid.T) ledger.TenantID {
		return ledger.TenantID(rapid.StringMatching(`(tenant-)?[0-9a-c]{0,3}`).Draw(t, "id"))
	})
	rapid.Check(t, func(t *rapid.T) {
		a, b := id.Draw(t, "a"), id.Draw(t, "b")
		if a == b && !sameTail(a, b) {
			t.Fatalf("sameTail(%q, %q) is false for equal ids", a, b)
		}
		want := len(a) == len(b) && (len(a) == 0 || a[len(a)-1] == b[len(b)-1])
		if got := sameTail(a, b); got != want {
			t.Fatalf("sameTail(%q, %q) = %v, want %v", a, b, got, want)
		}
		if c := ledger.TenantID(string(a)); !sameTail(a, c) {
			t.Fatalf("sameTail(%q, its copy) is false", a)
		}
	})
}
