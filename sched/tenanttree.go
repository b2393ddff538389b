package sched

import "github.com/astraea-sched/astraea/ledger"

// tenantTree is Phase 1's queue: a winner (tournament) tree over the
// tenants in play, the first in order at the root. Leaf ti holds tenant ti
// while it is in the tree, -1 otherwise; every inner node holds the first
// of its two children's tenants. The order is the tenant order (nil:
// [ByRho], written out over a copy of the tenants' ρ, so that it reads one
// small array), then the tenant id.
//
// After a grant the root tenant's ρ only grows, and the tree replays its
// path to the root: exactly log2(T) comparisons, where a binary heap sifts
// the tenant down with two a level, as far as it sinks. Leaving play
// empties the leaf and replays the same path. Building the tree is O(T).
type tenantTree struct {
	tenants []tenantRec
	order   TenantOrder
	rho     []ledger.Rho // tenant ti's pre-credited ρ, as of its last fix
	leaves  int          // a power of two, at least len(tenants)
	win     []int32      // win[k] for 1 ≤ k < 2·leaves; leaf ti is win[leaves+ti]
}

// reset fills the tree with the tenants ti of tenants for which in(ti)
// holds, ordered by order. O(T).
func (t *tenantTree) reset(tenants []tenantRec, order TenantOrder, in func(ti int) bool) {
	t.tenants, t.order = tenants, order
	t.leaves = 1
	for t.leaves < len(tenants) {
		t.leaves <<= 1
	}
	t.win = resize(t.win, 2*t.leaves)
	t.rho = resize(t.rho, len(tenants))
	for ti := range t.leaves {
		w := int32(-1)
		if ti < len(tenants) && in(ti) {
			w = int32(ti)
			t.rho[ti] = tenants[ti].st.Account.Rho
		}
		t.win[t.leaves+ti] = w
	}
	for k := t.leaves - 1; k >= 1; k-- {
		t.win[k] = t.first(t.win[2*k], t.win[2*k+1])
	}
}

// top returns the first tenant in the tree, or -1 if it is empty.
func (t *tenantTree) top() int32 { return t.win[1] }

// fix brings tenant ti, whose account changed, to its place. O(log T).
func (t *tenantTree) fix(ti int32) {
	t.rho[ti] = t.tenants[ti].st.Account.Rho
	t.replay(ti)
}

// remove takes tenant ti out of the tree. O(log T).
func (t *tenantTree) remove(ti int32) {
	t.win[t.leaves+int(ti)] = -1
	t.replay(ti)
}

// replay recomputes the winners on the path from tenant ti's leaf to the
// root.
func (t *tenantTree) replay(ti int32) {
	for k := (t.leaves + int(ti)) / 2; k >= 1; k /= 2 {
		t.win[k] = t.first(t.win[2*k], t.win[2*k+1])
	}
}

// first returns whichever of tenants a and b comes first; -1 stands for
// no tenant and comes last. Unequal ρ under the default order decide most
// comparisons here; a NaN compares false both ways and goes on to less.
func (t *tenantTree) first(a, b int32) int32 {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	case t.order == nil:
		if x, y := t.rho[a], t.rho[b]; x < y {
			return a
		} else if y < x {
			return b
		}
	}
	if t.less(b, a) {
		return b
	}
	return a
}

// less reports that tenant a comes before tenant b.
func (t *tenantTree) less(a, b int32) bool {
	if t.order == nil {
		// ByRho, the default, which decides every tie by the id itself.
		if c := t.rho[a].Compare(t.rho[b]); c != 0 {
			return c < 0
		}
		return t.tenants[a].st.ID < t.tenants[b].st.ID
	}
	x, y := &t.tenants[a].st, &t.tenants[b].st
	c := t.order(x, y)
	return c < 0 || c == 0 && x.ID < y.ID
}
