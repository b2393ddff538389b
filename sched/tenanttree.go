package sched

import (
	"math"

	"github.com/astraea-sched/astraea/ledger"
)

// tenantTree is Phase 1's queue: a winner (tournament) tree over the
// tenants in play, the first in order at the root. Leaf ti holds tenant ti
// while it is in the tree, and none (the index len(tenants)) otherwise;
// every inner node holds the first of its two children's tenants. The
// order is the tenant order, then the tenant id; the default order ([ByRho],
// written out) compares integer keys of the tenants' ρ (rhoKey) in one
// small array, none having the largest key.
//
// After a grant the root tenant's ρ only grows, and the tree replays its
// path to the root: exactly log2(T) comparisons, where a binary heap sifts
// the tenant down with two a level, as far as it sinks. Leaving play
// empties the leaf and replays the same path. Building the tree is O(T).
type tenantTree struct {
	tenants []tenantRec
	order   TenantOrder
	key     []uint64 // rhoKey of tenant ti's pre-credited ρ as of its last fix; key[len(tenants)] (none) is the largest
	leaves  int      // a power of two, at least len(tenants)
	win     []int32  // win[k] for 1 ≤ k < 2·leaves; leaf ti is win[leaves+ti]
}

// rhoKey maps ρ to an integer that orders as [ledger.Rho.Compare] does: a
// NaN first, −0 and +0 alike, then by value. No ρ maps to the largest
// key, which stands for no tenant.
func rhoKey(r ledger.Rho) uint64 {
	f := float64(r)
	switch {
	case f != f:
		return 0
	case f == 0:
		f = 0 // −0 as +0
	}
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// reset fills the tree with the tenants ti of tenants for which in(ti)
// holds, ordered by order. O(T).
func (t *tenantTree) reset(tenants []tenantRec, order TenantOrder, in func(ti int) bool) {
	t.tenants, t.order = tenants, order
	t.leaves = 1
	for t.leaves < len(tenants) {
		t.leaves <<= 1
	}
	none := int32(len(tenants))
	t.win = resize(t.win, 2*t.leaves)
	t.key = resize(t.key, len(tenants)+1)
	t.key[none] = math.MaxUint64
	for ti := range t.leaves {
		w := none
		if ti < len(tenants) && in(ti) {
			w = int32(ti)
			t.key[ti] = rhoKey(tenants[ti].st.Account.Rho)
		}
		t.win[t.leaves+ti] = w
	}
	for k := t.leaves - 1; k >= 1; k-- {
		t.win[k] = t.first(t.win[2*k], t.win[2*k+1])
	}
}

// top returns the first tenant in the tree, or -1 if it is empty.
func (t *tenantTree) top() int32 {
	if w := t.win[1]; int(w) < len(t.tenants) {
		return w
	}
	return -1
}

// fix brings tenant ti, whose account changed, to its place. O(log T).
func (t *tenantTree) fix(ti int32) {
	t.key[ti] = rhoKey(t.tenants[ti].st.Account.Rho)
	t.replay(ti)
}

// remove takes tenant ti out of the tree. O(log T).
func (t *tenantTree) remove(ti int32) {
	t.win[t.leaves+int(ti)] = int32(len(t.tenants))
	t.replay(ti)
}

// replay recomputes the winners on the path from tenant ti's leaf to the
// root: first, with its key comparison written out, as the loop that runs
// for every decision of a round. Under the default order a level costs
// two loads of the children, two of their keys and a store, with the
// bounds checks proven away where the compiler can (the children's pair
// is one slice) and the order read once.
func (t *tenantTree) replay(ti int32) {
	win, key := t.win, t.key
	k := (t.leaves + int(ti)) / 2
	if t.order != nil {
		for ; k >= 1; k /= 2 {
			win[k] = t.firstTie(win[2*k], win[2*k+1])
		}
		return
	}
	for ; k >= 1; k /= 2 {
		pair := win[2*k : 2*k+2]
		a, b := pair[0], pair[1]
		if ka, kb := key[a], key[b]; kb < ka {
			a = b
		} else if ka == kb {
			a = t.firstTie(a, b)
		}
		win[k] = a
	}
}

// first returns whichever of tenants a and b comes first (none comes
// last). Unequal keys under the default order decide most comparisons.
func (t *tenantTree) first(a, b int32) int32 {
	if ka, kb := t.key[a], t.key[b]; t.order != nil || ka == kb {
		return t.firstTie(a, b)
	} else if kb < ka {
		return b
	}
	return a
}

// firstTie is first for tenants of equal keys, or under a tenant order:
// the order, then the id.
func (t *tenantTree) firstTie(a, b int32) int32 {
	none := int32(len(t.tenants))
	switch {
	case a == none:
		return b
	case b == none:
		return a
	}
	x, y := &t.tenants[a].st, &t.tenants[b].st
	if t.order != nil {
		if c := t.order(x, y); c != 0 {
			if c > 0 {
				return b
			}
			return a
		}
	}
	if y.ID < x.ID {
		return b
	}
	return a
}
