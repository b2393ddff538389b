package sched

import (
	"cmp"
	"fmt"

	"github.com/astraea-sched/astraea/ledger"
)

// hierTree is Phase 1's queue when [Options.Parent] gives the tenants a
// tree: the candidates' tenants are its leaves, their ancestors its inner
// nodes, the cluster its root. top walks down from the root, taking at
// each level the child first in the tenant order among those with a
// tenant still in play, to a leaf; a grant's pre-credit is added to every
// node on the leaf's path, so the walk sees each level's ρ as it stands;
// a subtree leaves play when its last tenant does. Each decision costs
// the children compared along the path: O(Σ fan-out) for a tree, where
// the flat tournament costs O(log T).
type hierTree struct {
	nodes   []hierNode // nodes[0] is the cluster
	leafOf  []int32    // tenant index → its node
	tenants []tenantRec
	order   TenantOrder
	ix      map[ledger.TenantID]int32
}

type hierNode struct {
	st     TenantState // an inner node's; a leaf's lives in its tenantRec
	parent int32       // −1 for the cluster
	depth  int32
	kids   []int32
	leaf   int32 // tenant index, −1 for an inner node
	inPlay int32 // tenants in play in the subtree
	// A leaf's Alloc, grants and GPUs as last added to its ancestors.
	seenAlloc ledger.GPUSeconds
	seenGrant int
	seenGPUs  ledger.GPUs
	// An inner node left the fair stage (every tenant under it left, last
	// the last whose pick did not fit).
	out  bool
	last int32
}

// build makes the tree of the round's tenants: their ancestors' accounts
// are read from the round's Accounts (advanced one lease with rater, if
// set). A tenant whose ancestor is unknown to parent or to the accounts
// fails with ErrUnknownTenant; a tenant with candidates of its own and
// another candidate's tenant below it, or a cycle, with ErrInvalidInput.
func (h *hierTree) build(r *round, parent func(ledger.TenantID) (ledger.TenantID, bool), rater FairRater) error {
	h.tenants, h.order = r.tenants, r.opts.TenantOrder
	h.nodes = append(h.nodes[:0], hierNode{parent: -1, leaf: -1, last: -1})
	h.leafOf = resize(h.leafOf, len(r.tenants))
	if h.ix == nil {
		h.ix = make(map[ledger.TenantID]int32)
	}
	clear(h.ix)
	fail := func(sentinel error, id ledger.TenantID, format string, args ...any) error {
		return &Error{Index: -1, Tenant: id, Err: sentinel, Msg: fmt.Sprintf(format, args...)}
	}
	for ti := range r.tenants {
		id := r.tenants[ti].st.ID
		if _, ok := h.ix[id]; ok {
			return fail(ErrInvalidInput, id, "tenant has candidates and tenants with candidates under it")
		}
		n := h.add(id, int32(ti))
		h.nodes[n].seenAlloc = r.tenants[ti].st.Account.Alloc
		h.leafOf[ti] = n
		for steps := 0; ; steps++ {
			p, ok := parent(h.id(n))
			if !ok {
				return fail(ErrUnknownTenant, h.id(n), "parent unknown")
			}
			if p == "" {
				h.attach(0, n)
				break
			}
			if steps > len(h.nodes) {
				return fail(ErrInvalidInput, id, "the tenants' parents form a cycle")
			}
			if a, ok := h.ix[p]; ok {
				if h.nodes[a].leaf >= 0 {
					return fail(ErrInvalidInput, p, "tenant has candidates and tenants with candidates under it")
				}
				h.attach(a, n)
				break
			}
			acct, ok := r.accounts.TenantAccount(p)
			if !ok {
				return fail(ErrUnknownTenant, p, "ancestor of %s has no account", id)
			}
			if rater != nil {
				rate, ok := rater.TenantFairRate(p)
				if !ok {
					return fail(ErrUnknownTenant, p, "ancestor of %s has no fair rate", id)
				}
				acct = advanced(acct, rate, r.lease)
			}
			a := h.add(p, -1)
			h.nodes[a].st.Start, h.nodes[a].st.Account = acct, acct
			h.attach(a, n)
			n = a
		}
	}
	// An ancestor met again on another tenant's climb may close a cycle
	// that never reaches the cluster.
	for ti, n := range h.leafOf {
		for steps := 0; n != 0; steps++ {
			if n < 0 || steps > len(h.nodes) {
				return fail(ErrInvalidInput, r.tenants[ti].st.ID, "the tenants' parents form a cycle")
			}
			n = h.nodes[n].parent
		}
	}
	h.setDepth(0, 0)
	return nil
}

func (h *hierTree) add(id ledger.TenantID, leaf int32) int32 {
	n := int32(len(h.nodes))
	h.nodes = append(h.nodes, hierNode{st: TenantState{ID: id}, leaf: leaf, last: -1})
	h.ix[id] = n
	return n
}

func (h *hierTree) attach(parent, n int32) {
	h.nodes[n].parent = parent
	h.nodes[parent].kids = append(h.nodes[parent].kids, n)
}

func (h *hierTree) setDepth(n, d int32) {
	h.nodes[n].depth = d
	for _, k := range h.nodes[n].kids {
		h.setDepth(k, d+1)
	}
}

func (h *hierTree) id(n int32) ledger.TenantID { return h.state(n).ID }

func (h *hierTree) state(n int32) *TenantState {
	if l := h.nodes[n].leaf; l >= 0 {
		return &h.tenants[l].st
	}
	return &h.nodes[n].st
}

// reset puts in play the tenants for which in holds, after adding to the
// inner nodes whatever their leaves were credited since the last look.
func (h *hierTree) reset(in func(ti int) bool) {
	for n := range h.nodes {
		h.nodes[n].inPlay = 0
	}
	for ti := range h.tenants {
		h.fix(int32(ti))
		if in(ti) {
			for n := h.leafOf[ti]; n >= 0; n = h.nodes[n].parent {
				h.nodes[n].inPlay++
			}
		}
	}
}

// top returns the tenant the walk from the root reaches, or −1 if none is
// in play.
func (h *hierTree) top() int32 {
	if h.nodes[0].inPlay == 0 {
		return -1
	}
	n := int32(0)
	for h.nodes[n].leaf < 0 {
		best := int32(-1)
		for _, k := range h.nodes[n].kids {
			if h.nodes[k].inPlay > 0 && (best < 0 || h.first(k, best)) {
				best = k
			}
		}
		n = best
	}
	return h.nodes[n].leaf
}

// first reports whether node a goes before node b: the tenant order, then
// the id.
func (h *hierTree) first(a, b int32) bool {
	sa, sb := h.state(a), h.state(b)
	order := h.order
	if order == nil {
		order = ByRho
	}
	return cmp.Or(order(sa, sb), cmp.Compare(sa.ID, sb.ID)) < 0
}

// fix adds to tenant ti's ancestors what it was credited since the last
// look: the pre-credit applies on the whole path.
func (h *hierTree) fix(ti int32) {
	n := h.leafOf[ti]
	nd, st := &h.nodes[n], &h.tenants[ti].st
	da, dg, dp := st.Account.Alloc-nd.seenAlloc, st.Grants-nd.seenGrant, st.GPUs-nd.seenGPUs
	if da == 0 && dg == 0 && dp == 0 {
		return
	}
	nd.seenAlloc, nd.seenGrant, nd.seenGPUs = st.Account.Alloc, st.Grants, st.GPUs
	for a := nd.parent; a > 0; a = h.nodes[a].parent {
		s := &h.nodes[a].st
		s.Account = withAlloc(s.Account, da)
		s.Grants += dg
		s.GPUs += dp
	}
}

// remove takes tenant ti out of play; a subtree whose last tenant leaves
// leaves too, out of the fair stage if a pick under it did not fit.
func (h *hierTree) remove(ti int32) {
	out := h.tenants[ti].out
	for n := h.leafOf[ti]; n >= 0; n = h.nodes[n].parent {
		nd := &h.nodes[n]
		nd.inPlay--
		if out && nd.leaf < 0 {
			nd.last = ti
			nd.out = nd.out || nd.inPlay == 0
		}
	}
}

// subtrees returns the inner nodes' results, in the order the walk met
// them first.
func (h *hierTree) subtrees() []SubtreeResult {
	var res []SubtreeResult
	for n := 1; n < len(h.nodes); n++ {
		nd := &h.nodes[n]
		if nd.leaf >= 0 {
			continue
		}
		s := SubtreeResult{ID: nd.st.ID, Parent: h.id(nd.parent), Depth: int(nd.depth),
			Start: nd.st.Start, End: nd.st.Account, Grants: nd.st.Grants, GPUs: nd.st.GPUs, OutOfPlay: nd.out}
		if nd.parent == 0 {
			s.Parent = ""
		}
		if nd.out {
			t := &h.tenants[nd.last]
			s.Last, s.Reason = t.st.ID, t.reason
		}
		res = append(res, s)
	}
	return res
}

// SubtreeResult is an inner node of the tenant tree ([Options.Parent]) after
// a round: an ancestor of candidates' tenants, with no candidates of its
// own.
type SubtreeResult struct {
	ID     ledger.TenantID
	Parent ledger.TenantID // "" for a child of the cluster
	Depth  int             // its level: 1 for a child of the cluster
	// Start and End are its account before the round and after the
	// pre-credits of the grants under it; Grants and GPUs count those.
	Start, End ledger.Account
	Grants     int
	GPUs       ledger.GPUs
	// OutOfPlay reports that the subtree left the fair stage: every tenant
	// under it left play, at least one because its pick did not fit; Last
	// is the last of those and Reason its reason.
	OutOfPlay bool
	Last      ledger.TenantID
	Reason    Reason
}

// String says at which level the subtree stands and why it left play,
// e.g. "ai (level 1) out of play: nothing under it fits; last vision: does
// not fit: needs 8 GPUs, largest free block 4 (4 free in total)".
func (s SubtreeResult) String() string {
	if !s.OutOfPlay {
		return fmt.Sprintf("%s (level %d) in play", s.ID, s.Depth)
	}
	return fmt.Sprintf("%s (level %d) out of play: nothing under it fits; last %s: %s", s.ID, s.Depth, s.Last, s.Reason)
}
