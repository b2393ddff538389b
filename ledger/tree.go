package ledger

import (
	"cmp"
	"iter"
	"math"
	"math/big"
	"slices"
	"sort"
)

// The account tree. Every tenant has a parent, the cluster (the root) or
// another tenant; jobs hang under leaves. A node's fair rate is
//
//	F_root = M,  F_n = W_n · min(θ_n, u_p),  u_p = F_p / Σ registered W of p's children,
//
// with θ_n = +Inf under QuotaShare (F_n is its quota W_n·u_p) and
// θ_n = D_n/W_n under DemandAware (F_n = min(D_n, quota)); an unregistered
// node, or under DemandAware one without demand, has rate 0. So the
// children of one parent that share θ share one integral ∫min(θ, u_p(t))dt
// (a kid group), as the jobs of one tenant share theirs, and a node's fair
// account is a list of segments, each its weight times the growth of its
// group's integral since the segment began: a change of u_p writes one
// breakpoint per kid group of p, not one per child. Below a child, only
// what follows its fair rate needs a breakpoint: the groups of its own
// jobs, and its own children's groups if it has any. Such children are p's
// deps; a change of u_p visits them and nothing else.

func newRoot() *tenant {
	return &tenant{groupIx: map[float64]*group{}, depIx: -1}
}

// thetaOf is the kid-group key of a node, and false while its rate is 0.
func (l *Ledger) thetaOf(tn *tenant) (float64, bool) {
	switch {
	case !tn.registered:
		return 0, false
	case l.mode == QuotaShare:
		return math.Inf(1), true
	case tn.demand <= 0:
		return 0, false
	}
	return float64(tn.demand) / tn.weight, true
}

// fairRate is a node's current fair rate F_n: M for the root.
func (l *Ledger) fairRate(tn *tenant) float64 {
	if tn == l.root {
		return float64(l.capacity)
	}
	if tn.pg == nil {
		return 0
	}
	return tn.weight * tn.pg.s.rate()
}

// quota is a node's current quota: its parent's fair rate split by weight
// among the parent's registered children. 0 once removed.
func (l *Ledger) quota(tn *tenant) float64 {
	p := tn.parent
	if !tn.registered || p.kidW <= 0 {
		return 0
	}
	return l.fairRate(p) * (tn.weight / p.kidW)
}

// sumPrec is a precision at which a sum of float64s is exact: their bits
// span 2^1023 down to 2^−1074, with room for the carries of 2^64 terms.
const sumPrec = 1024 + 1074 + 64

// kidSumWith returns the exact sum of p's registered children's weights
// with add added and sub taken away, and that sum rounded to float64 (+Inf
// if too large). Kept exact, the sum never drifts: removing a huge weight
// leaves the small ones as they were, and it does not depend on the order
// of the events that built it.
func (p *tenant) kidSumWith(add, sub float64) (*big.Float, float64) {
	s := new(big.Float).SetPrec(sumPrec)
	if p.kidSum != nil {
		s.Set(p.kidSum)
	}
	if add != 0 {
		s.Add(s, big.NewFloat(add))
	}
	if sub != 0 {
		s.Sub(s, big.NewFloat(sub))
	}
	f, _ := s.Float64()
	return s, f
}

// unitOf computes the x of p's kid groups, so that a child's fair rate is
// W·min(θ, x): u_p = F_p / ΣW of p's registered children for the root and
// under QuotaShare; under DemandAware below the root, the water level λ_p
// at which Σ W_c·min(θ_c, λ_p) = F_p, so that what a child cannot use
// flows to its siblings (F_p ≤ D_p, so the children can use all of it).
// O(G_p log G_p).
func (l *Ledger) unitOf(p *tenant) float64 {
	if p.nKids == 0 || p.kidW <= 0 {
		return 0
	}
	f := l.fairRate(p)
	if l.mode == QuotaShare || p == l.root {
		return f / p.kidW
	}
	return waterLevel(p.kgroups, f)
}

// waterLevel is the λ at which Σ_g g.w·min(g.θ, λ) = f, +Inf if every
// group's demand fits in f, 0 without groups.
func waterLevel(groups []*group, f float64) float64 {
	if len(groups) == 0 {
		return 0
	}
	gs := slices.SortedFunc(slices.Values(groups), func(a, b *group) int { return cmp.Compare(a.theta, b.theta) })
	w := 0.0
	for _, g := range gs {
		w += g.w
	}
	for _, g := range gs {
		if w <= 0 {
			break
		}
		if g.theta*w >= f {
			return max(0, f/w)
		}
		f -= g.w * g.theta
		w -= g.w
	}
	return math.Inf(1)
}

// cascade records at t the share per unit weight of p's children, after
// p's fair rate or its children's weights changed: one breakpoint per kid
// group of p, then the same below every dep of p. O(G_p + the deps below).
func (l *Ledger) cascade(p *tenant, t int64) {
	tb := l.trimBefore()
	p.unit = l.unitOf(p)
	for _, g := range p.kgroups {
		g.s.set(t, min(g.theta, p.unit), l.lam, tb)
	}
	for _, c := range p.deps {
		l.refreshBelow(c, t)
	}
}

// refreshBelow records at t what follows tn's fair rate: its children's
// share per unit weight and its jobs' fair rates.
func (l *Ledger) refreshBelow(tn *tenant, t int64) {
	if len(tn.kids) > 0 {
		l.cascade(tn, t)
	}
	if tn.own > 0 {
		l.refreshJobs(tn, t)
	}
}

// refreshJobs records the rates of tn's job θ-groups at t: O(G_j), the
// number of distinct demand/weight ratios among its active jobs.
func (l *Ledger) refreshJobs(tn *tenant, t int64) {
	tb := l.trimBefore()
	x := 0.0
	if tn.own > 0 && tn.activeW > 0 {
		x = l.fairRate(tn) / tn.activeW
	}
	for _, g := range tn.groups {
		g.s.set(t, min(g.theta, x), l.lam, tb)
	}
}

// demandChanged records at t the effect of a change of leaf tn's active
// jobs: under DemandAware every ancestor's θ moved with its demand.
func (l *Ledger) demandChanged(tn *tenant, t int64) {
	top := tn
	if l.mode == DemandAware {
		for a := tn; a != l.root; a = a.parent {
			l.rejoin(a, t)
			top = a
		}
	}
	l.refreshBelow(top, t)
}

// setDep keeps tn in its parent's deps exactly while something below it
// follows its fair rate.
func (l *Ledger) setDep(tn *tenant) {
	p := tn.parent
	if p == nil {
		return
	}
	want := tn.registered && (tn.nKids > 0 || tn.own > 0)
	switch {
	case want && tn.depIx < 0:
		tn.depIx = len(p.deps)
		p.deps = append(p.deps, tn)
	case !want && tn.depIx >= 0:
		last := len(p.deps) - 1
		p.deps[tn.depIx] = p.deps[last]
		p.deps[tn.depIx].depIx = tn.depIx
		p.deps[last] = nil
		p.deps = p.deps[:last]
		tn.depIx = -1
	}
}

// adopt makes tn a child of p (tn is unregistered, and so not a dep).
func (l *Ledger) adopt(p, tn *tenant) {
	if old := tn.parent; old != nil {
		old.kids = slices.DeleteFunc(old.kids, func(x *tenant) bool { return x == tn })
	}
	tn.parent = p
	k, _ := slices.BinarySearchFunc(p.kids, tn.ord, func(x *tenant, ord int) int { return x.ord - ord })
	p.kids = slices.Insert(p.kids, k, tn)
}

// rejoin moves tn at t into the kid group of its current θ and weight,
// keeping its accumulated fair value; nothing changes if they are the same.
// Under DemandAware a child's group is its own and its θ moves in place:
// θ = D/W rarely repeats among siblings, and a new group at every change
// of demand would retain a group and a segment per Submit and Finish
// where a moved θ retains one breakpoint.
func (l *Ledger) rejoin(tn *tenant, t int64) {
	theta, ok := l.thetaOf(tn)
	if n := len(tn.segs); n > 0 || !ok {
		if !ok && tn.pg == nil {
			return
		}
		if ok && tn.pg != nil && tn.pg.theta == theta && tn.segs[n-1].w == tn.weight {
			return
		}
	}
	if ok && tn.pg != nil && l.mode == DemandAware {
		g := tn.pg
		g.theta, g.w = theta, tn.weight
		g.s.set(t, min(theta, tn.parent.unit), l.lam, l.trimBefore())
		if tn.segs[len(tn.segs)-1].w != tn.weight {
			l.appendSeg(tn, segment{from: t, g: g, w: tn.weight, base: l.tenantFairAt(tn, t), gFrom: g.s.at(t, l.lam)})
		}
		return
	}
	v := l.tenantFairAt(tn, t)
	if tn.pg != nil {
		l.leaveKid(tn, tn.segs[len(tn.segs)-1].w)
	}
	seg := segment{from: t, base: v}
	if ok {
		g := l.joinKid(tn.parent, theta, tn.weight, t)
		tn.pg = g
		seg.g, seg.w, seg.gFrom = g, tn.weight, g.s.at(t, l.lam)
	}
	l.appendSeg(tn, seg)
}

// appendSeg starts tn's next segment.
func (l *Ledger) appendSeg(tn *tenant, seg segment) {
	if n := len(tn.segs); n > 0 && tn.segs[n-1].from == seg.from {
		tn.segs[n-1] = seg // the previous one held for no time at all
		return
	}
	if l.hist.windowed() {
		tn.segs = trimSegs(tn.segs, l.trimBefore())
	}
	tn.segs = append(tn.segs, seg)
}

// joinKid returns p's kid group of θ, made at t if there is none (always
// under DemandAware, where every child has its own), with one more member,
// of weight w.
func (l *Ledger) joinKid(p *tenant, theta, w float64, t int64) *group {
	var g *group
	if l.mode == QuotaShare {
		g = p.kgroupIx[theta]
	}
	if g == nil {
		g = &group{theta: theta, ix: len(p.kgroups), kid: true}
		g.s.set(t, min(theta, p.unit), l.lam, l.trimBefore())
		p.kgroups = append(p.kgroups, g)
		if l.mode == QuotaShare {
			if p.kgroupIx == nil {
				p.kgroupIx = make(map[float64]*group)
			}
			p.kgroupIx[theta] = g
		}
	}
	g.n++
	g.w += w
	return g
}

// leaveKid takes tn, a member of weight w, out of its kid group, dropped
// from the parent when it empties (segments keep their reference to it).
func (l *Ledger) leaveKid(tn *tenant, w float64) {
	g, p := tn.pg, tn.parent
	tn.pg = nil
	g.n--
	g.w -= w
	if g.n > 0 {
		return
	}
	g.w = 0
	var ix map[float64]*group // DemandAware's groups are not indexed
	if l.mode == QuotaShare {
		ix = p.kgroupIx
	}
	p.kgroups = dropGroup(p.kgroups, ix, g)
}

// tenantFairAt is tn's (decayed) cumulative fair value at time t.
// O(log s + log n): s segments, n breakpoints of the group.
func (l *Ledger) tenantFairAt(tn *tenant, t int64) float64 {
	segs := tn.segs
	if len(segs) == 0 || t < segs[0].from {
		return max(0, tn.fs.at(t, l.lam))
	}
	k := len(segs) - 1
	if t < segs[k].from {
		k = sort.Search(len(segs), func(i int) bool { return segs[i].from > t }) - 1
	}
	return segs[k].at(t, l.lam)
}

// at is the fair value at t of an account in this segment:
// base·e^(−λ(t−from)) + w·(G(t) − gFrom·e^(−λ(t−from))), and base decayed
// alone without a group.
func (s *segment) at(t int64, lam decay) float64 {
	f := lam.factor(t - s.from)
	if s.g == nil {
		return s.base * f
	}
	v := s.base*f + s.w*(s.g.s.at(t, lam)-s.gFrom*f)
	if v < 0 {
		return 0
	}
	return v
}

// trimSegs drops the segments that end at or before t.
func trimSegs(segs []segment, t int64) []segment {
	k := 0
	for k+1 < len(segs) && segs[k+1].from <= t {
		k++
	}
	return segs[k:]
}

// Children yields the registered children of tenant parent ("" is the
// cluster: the top-level tenants) in the order they were first added; an
// unknown parent has none. The ledger must not change during the
// iteration. O(children ever added under it).
func (l *Ledger) Children(parent TenantID) iter.Seq[TenantID] {
	p := l.root
	if parent != "" {
		p = l.tenantIx[parent]
	}
	return func(yield func(TenantID) bool) {
		if p == nil {
			return
		}
		for _, c := range p.kids {
			if c.registered && !yield(c.id) {
				return
			}
		}
	}
}
