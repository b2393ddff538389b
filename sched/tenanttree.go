package sched

import (
	"math"

	"github.com/astraea-sched/astraea/ledger"
)

// tenantTree is Phase 1's queue: a loser tree (a tournament tree that
// keeps, at every inner node, the tenant that lost the match played there)
// over the tenants in play, the first in order, the winner of the whole
// tournament, kept apart. Leaf ti stands for tenant ti while it is in the
// tree and for none (the index len(tenants)) otherwise. The order is the
// tenant order, then the tenant id; the default order ([ByRho], written
// out) compares integer keys of the tenants' ρ (rhoKey) in one small
// array, none having the largest key.
//
// Only the winner ever changes: after a grant its ρ only grows, and it
// leaves play only when it is picked. The tree then replays the winner's
// path to the root, where every match is against the loser kept at the
// node: exactly log2(T) comparisons, each reading one tenant and its key
// (a winner tree reads both children), where a binary heap sifts the
// tenant down with two a level, as far as it sinks. Leaving play replays
// the same path with none. Since the order is total (a strict weak order,
// then the id), the tree picks the same tenant as any tournament or scan
// would. Building the tree is O(T).
type tenantTree struct {
	tenants []tenantRec
	order   TenantOrder
	key     []uint64 // rhoKey of tenant ti's pre-credited ρ as of its last fix; key[len(tenants)] (none) is the largest
	leaves  int      // a power of two, at least len(tenants)
	// lose[k], for 1 ≤ k < leaves, is the loser of the match at inner node
	// k (none where both sides are none); lose[0] is the winner. The
	// children of node k are 2k and 2k+1; leaf ti is node leaves+ti.
	lose []int32
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
	// The winners of every match first, in a winner tree over 2·leaves
	// nodes, then each inner node takes its loser, top down (a node's
	// children still hold their winners when it is visited).
	win := resize(t.lose, 2*t.leaves)
	t.key = resize(t.key, len(tenants)+1)
	t.key[none] = math.MaxUint64
	for ti := range t.leaves {
		w := none
		if ti < len(tenants) && in(ti) {
			w = int32(ti)
			t.key[ti] = rhoKey(tenants[ti].st.Account.Rho)
		}
		win[t.leaves+ti] = w
	}
	for k := t.leaves - 1; k >= 1; k-- {
		win[k] = t.first(win[2*k], win[2*k+1])
	}
	champion := win[1]
	for k := 1; k < t.leaves; k++ {
		if a, b := win[2*k], win[2*k+1]; win[k] == a {
			win[k] = b
		} else {
			win[k] = a
		}
	}
	win[0] = champion
	t.lose = win
}

// top returns the first tenant in the tree, or -1 if it is empty.
func (t *tenantTree) top() int32 {
	if w := t.lose[0]; int(w) < len(t.tenants) {
		return w
	}
	return -1
}

// fix brings tenant ti, the first in the tree, whose account changed, to
// its place. O(log T).
func (t *tenantTree) fix(ti int32) {
	t.key[ti] = rhoKey(t.tenants[ti].st.Account.Rho)
	t.replay(ti, ti)
}

// remove takes tenant ti, the first in the tree, out of it. O(log T).
func (t *tenantTree) remove(ti int32) {
	t.replay(ti, int32(len(t.tenants)))
}

// replay plays the matches on the path from leaf ti, the winner's, to the
// root again, with w (ti itself, or none) coming up from the leaf: at each
// node the loser kept there plays w, keeps the loss and passes the winner
// up. Under the default order a level reads one tenant and its key and
// compares two integers.
func (t *tenantTree) replay(ti, w int32) {
	lose, key := t.lose, t.key
	k := (t.leaves + int(ti)) / 2
	if t.order != nil {
		for ; k >= 1; k /= 2 {
			if l := lose[k]; t.firstTie(l, w) == l && l != w {
				lose[k], w = w, l
			}
		}
		lose[0] = w
		return
	}
	kw := key[w]
	for u := uint(k); u != 0; u >>= 1 { // unsigned: a shift, not a signed division
		l := lose[u]
		kl := key[uint32(l)]
		if kl > kw || kl == kw && (l == w || t.firstTie(l, w) == w) {
			continue // w wins, and l keeps its loss
		}
		lose[u], w, kw = w, l, kl
	}
	lose[0] = w
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
