package ledger

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
)

// Check verifies the ledger's internal invariants and returns the first
// violation found, or nil. Tests call it after every event; it is O(jobs +
// breakpoints). The invariants:
//
//   - breakpoint times strictly increase and never exceed Now(); the last
//     rates of every series equal the current state;
//   - per tenant: Demand_j = Σ demand of the active jobs in its subtree,
//     Alloc_j likewise of the running ones, its θ-groups count exactly its
//     own active jobs, and it has no jobs of its own while it has registered
//     children;
//   - FairShare_n = min(Demand_n, Quota_n) (DemandAware) or Quota_n
//     (QuotaShare), Quota_n = FairShare_parent·W_n/ΣW over the parent's
//     registered children, FairShare_root = M, recomputed from scratch;
//     every kid group's rate is min(θ, u) of its parent, and every
//     registered node is in the kid group of its θ;
//   - Σ FairShare of a node's children ≤ its FairShare, with equality under
//     QuotaShare when a child is registered; Σ_i FairShare_ij ≤ FairShare_j
//     and FairShare_ij ≤ D_i;
//   - the cluster's allocated rate is Σ running demand;
//   - under a trailing window, the finish list holds exactly the known
//     finished jobs, in finish order.
func (l *Ledger) Check() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	const eps = 1e-9
	close := func(a, b float64) bool { return math.Abs(a-b) <= eps*max(1, math.Abs(a), math.Abs(b)) }

	if l.now < l.base {
		bad("now %d before base %d", l.now, l.base)
	}
	if err := l.hist.validate(); err != nil {
		bad("history: %v", err)
	}
	if l.capacity < 0 || l.capacity > MaxGPUs {
		bad("capacity %d outside [0, MaxGPUs]", l.capacity)
	}
	checkTimes := func(what string, i int, t, prev int64) {
		if i > 0 && t <= prev {
			bad("%s: breakpoint times not increasing at %d", what, i)
		}
		if t > l.now || t < 0 {
			bad("%s: breakpoint at %d outside [0, now]", what, t)
		}
	}
	check1 := func(what string, s *series, rate float64) {
		prev := int64(0)
		s.st.each(l.lam, func(i int, p point) {
			checkTimes(what, i, p.t, prev)
			prev = p.t
			if math.IsNaN(p.v) || math.IsNaN(p.r) || math.IsInf(p.v, 0) || math.IsInf(p.r, 0) || p.v < -eps {
				bad("%s: invalid breakpoint %+v", what, p)
			}
		})
		if s.st.len() == 0 || s.rate() != rate {
			bad("%s: rate %v, state says %v", what, s.rate(), rate)
		}
	}

	type agg struct {
		demand, alloc GPUs
		n             int
		w, fair       float64
		perGroup      map[*group]int
	}
	aggs := make(map[*tenant]*agg, len(l.tenants))
	for _, tn := range l.tenants {
		aggs[tn] = &agg{perGroup: map[*group]int{}}
	}
	var runningTotal GPUs
	for _, j := range l.jobs.all() {
		id := j.id
		if l.jobs.get(id) != j {
			bad("job %q not found under its id", id)
		}
		a := aggs[j.tn]
		if a == nil || l.tenantIx[j.tn.id] != j.tn {
			bad("job %q: tenant %q not in the ledger", id, j.tn.id)
			continue
		}
		if j.demand <= 0 || j.demand > MaxGPUs || !storedWeight(j.weight) {
			bad("job %q: demand %d weight %v", id, j.demand, j.weight)
		}
		switch j.state {
		case pending, running:
			a.demand += j.demand
			a.n++
			a.w += j.weight
			if j.grp == nil || j.grp.ix < 0 || j.grp.theta != l.jobTheta(j) {
				bad("job %q: not in the group of its θ", id)
			} else {
				a.perGroup[j.grp]++
			}
			if len(j.segs) == 0 || j.segs[len(j.segs)-1].g != j.grp || j.segs[len(j.segs)-1].w != j.weight {
				bad("job %q: last segment does not match its group", id)
			}
			want := 0.0
			if j.state == running {
				a.alloc += j.demand
				runningTotal += j.demand
				want = float64(j.demand)
			}
			if j.alloc.st.len() > 0 || j.state == running {
				check1(fmt.Sprintf("job %q alloc", id), &j.alloc, want)
			}
			r := l.jobFairRate(j)
			if r > float64(j.demand)*(1+eps) && l.jobShare == CappedJobShare || r < 0 {
				bad("job %q: fair rate %v outside [0, %d]", id, r, j.demand)
			}
			a.fair += r
		case finished:
			if j.grp != nil || !j.final.valid() || j.finish < j.submit {
				bad("job %q: inconsistent finished record", id)
			}
			if j.alloc.st.len() > 0 {
				check1(fmt.Sprintf("job %q alloc", id), &j.alloc, 0)
			}
		default:
			bad("job %q: state %d", id, j.state)
		}
		for i := 1; i < len(j.segs); i++ {
			if j.segs[i].from <= j.segs[i-1].from {
				bad("job %q: segments out of order", id)
			}
		}
	}
	nFinished := 0
	for _, j := range l.jobs.all() {
		if j.state == finished {
			nFinished++
		}
	}
	switch {
	case !l.hist.windowed() && len(l.done) > 0:
		bad("%d jobs in the finish list without a trailing window or buckets", len(l.done))
	case l.hist.windowed() && len(l.done) != nFinished:
		bad("finish list holds %d jobs, %d known jobs are finished", len(l.done), nFinished)
	}
	for k, j := range l.done {
		if l.jobs.get(j.id) != j || j.state != finished || k > 0 && j.finish < l.done[k-1].finish {
			bad("finish list entry %d (job %q) is not a known finished job in finish order", k, j.id)
		}
	}
	if runningTotal != l.running {
		bad("running total %d, jobs say %d", l.running, runningTotal)
	}
	for i, tn := range l.tenants {
		if l.tenantIx[tn.id] != tn || tn.ord != i {
			bad("tenant %d (%q) not indexed", i, tn.id)
		}
		if tn.parent == nil || !slices.Contains(tn.parent.kids, tn) {
			bad("tenant %q: not among its parent's children", tn.id)
		}
	}
	if len(l.tenantIx) != len(l.tenants) {
		bad("tenant index has %d entries for %d tenants", len(l.tenantIx), len(l.tenants))
	}
	// Subtree sums, from every tenant's own jobs up its path.
	sub := make(map[*tenant]*subtree, len(l.tenants))
	for _, tn := range l.tenants {
		sub[tn] = &subtree{}
	}
	for _, tn := range l.tenants {
		a := aggs[tn]
		for x, depth := tn, 0; x != l.root && x != nil; x, depth = x.parent, depth+1 {
			if depth > len(l.tenants) {
				bad("tenant %q: its ancestors form a cycle", tn.id)
				break
			}
			sub[x].demand += a.demand
			sub[x].alloc += a.alloc
			sub[x].n += a.n
		}
	}
	// want is the fair rate each node should have, from the definition and
	// sums made afresh, top down.
	want := map[*tenant]float64{l.root: float64(l.capacity)}
	var walk func(p *tenant, depth int)
	walk = func(p *tenant, depth int) {
		if depth > len(l.tenants) {
			return
		}
		n := 0
		exact := new(big.Float).SetPrec(sumPrec)
		members := map[*group]int{}
		for k, c := range p.kids {
			if c.parent != p || k > 0 && p.kids[k-1].ord >= c.ord {
				bad("tenant %q: children list out of order or foreign", p.id)
			}
			if c.registered {
				exact.Add(exact, big.NewFloat(c.weight))
				n++
			}
			if c.pg != nil {
				members[c.pg]++
			}
		}
		sumW, _ := exact.Float64()
		if n != p.nKids || sumW != p.kidW {
			bad("tenant %q: %d children of ΣW %v, it says %d of %v", p.id, n, sumW, p.nKids, p.kidW)
		}
		if u := l.unitOf(p); u != p.unit {
			bad("tenant %q: share per unit weight %v, rates say %v", p.id, p.unit, u)
		}
		u := 0.0
		if n > 0 && sumW > 0 {
			u = want[p] / sumW
		}
		flow := l.mode == DemandAware && p != l.root
		if flow {
			u = naiveWaterLevel(p.kids, sub, want[p])
		}
		groupW := map[*group]float64{}
		for _, c := range p.kids {
			if c.pg != nil {
				groupW[c.pg] += c.weight
			}
		}
		indexed := l.mode == QuotaShare // DemandAware's kid groups are each one child's
		if indexed && len(p.kgroups) != len(p.kgroupIx) || !indexed && len(p.kgroupIx) != 0 || len(p.kgroups) != len(members) {
			bad("tenant %q: %d kid groups, %d indexed, %d used", p.id, len(p.kgroups), len(p.kgroupIx), len(members))
		}
		for i, g := range p.kgroups {
			if g.ix != i || indexed && p.kgroupIx[g.theta] != g || !indexed && g.n != 1 || g.n != members[g] || g.n <= 0 || !close(g.w, groupW[g]) {
				bad("tenant %q: kid group θ=%v inconsistent (n=%d, children %d)", p.id, g.theta, g.n, members[g])
			}
			check1(fmt.Sprintf("tenant %q kid group θ=%v", p.id, g.theta), &g.s, min(g.theta, p.unit))
		}
		kidFair := 0.0
		for _, c := range p.kids {
			f := 0.0
			if c.registered {
				f = c.weight * u
				if l.mode == DemandAware {
					f = min(float64(sub[c].demand), f)
				}
			}
			if math.IsInf(u, 1) && c.registered {
				f = float64(sub[c].demand)
			}
			want[c] = f
			kidFair += l.fairRate(c)
			walk(c, depth+1)
		}
		if kidFair > want[p]*(1+eps)+eps {
			bad("tenant %q: Σ children's fair rates %v > its fair rate %v", p.id, kidFair, want[p])
		}
		if l.mode == QuotaShare && n > 0 && !close(kidFair, want[p]) {
			bad("QuotaShare: Σ fair rates of %q's children %v ≠ its fair rate %v", p.id, kidFair, want[p])
		}
		if flow && n > 0 && !close(kidFair, want[p]) {
			bad("DemandAware: Σ fair rates of %q's children %v ≠ its fair rate %v: unused share did not flow", p.id, kidFair, want[p])
		}
		for i, c := range p.deps {
			if c.parent != p || c.depIx != i {
				bad("tenant %q: dep list inconsistent at %d", p.id, i)
			}
		}
	}
	walk(l.root, 0)
	for _, tn := range l.tenants {
		a, sm := aggs[tn], sub[tn]
		if tn.demand != sm.demand || tn.alloc != sm.alloc || tn.nActive != sm.n || tn.own != a.n {
			bad("tenant %q: demand/alloc/active/own %d/%d/%d/%d, jobs say %d/%d/%d/%d", tn.id, tn.demand, tn.alloc, tn.nActive, tn.own, sm.demand, sm.alloc, sm.n, a.n)
		}
		if !close(tn.activeW, a.w) {
			bad("tenant %q: active weight %v, jobs say %v", tn.id, tn.activeW, a.w)
		}
		if !tn.registered && (tn.nActive > 0 || tn.nKids > 0) {
			bad("tenant %q: removed with active jobs or registered children", tn.id)
		}
		if tn.registered && tn.parent != l.root && tn.parent != nil && !tn.parent.registered {
			bad("tenant %q: registered under a removed parent", tn.id)
		}
		if tn.own > 0 && tn.nKids > 0 {
			bad("tenant %q: jobs of its own and registered children", tn.id)
		}
		if isDep := tn.registered && (tn.nKids > 0 || tn.own > 0); isDep != (tn.depIx >= 0) {
			bad("tenant %q: dep %v, state says %v", tn.id, tn.depIx >= 0, isDep)
		}
		theta, ok := l.thetaOf(tn)
		switch {
		case ok != (tn.pg != nil):
			bad("tenant %q: in a kid group %v, rate state says %v", tn.id, tn.pg != nil, ok)
		case ok && (tn.pg.theta != theta || tn.pg.ix < 0 || len(tn.segs) == 0 ||
			tn.segs[len(tn.segs)-1].g != tn.pg || tn.segs[len(tn.segs)-1].w != tn.weight):
			bad("tenant %q: not in the kid group of its θ and weight", tn.id)
		}
		for i := 1; i < len(tn.segs); i++ {
			if tn.segs[i].from <= tn.segs[i-1].from {
				bad("tenant %q: segments out of order", tn.id)
			}
		}
		fair := l.fairRate(tn)
		if !close(fair, want[tn]) {
			bad("tenant %q: fair rate %v, formula says %v", tn.id, fair, want[tn])
		}
		if q := l.quota(tn); l.mode == QuotaShare && !close(q, fair) {
			bad("tenant %q: QuotaShare fair rate %v ≠ quota %v", tn.id, fair, q)
		}
		check1(fmt.Sprintf("tenant %q alloc", tn.id), &tn.s, float64(tn.alloc))
		if len(tn.groups) != len(tn.groupIx) || len(tn.groups) != len(a.perGroup) {
			bad("tenant %q: %d groups, %d indexed, %d used", tn.id, len(tn.groups), len(tn.groupIx), len(a.perGroup))
		}
		x := 0.0
		if tn.own > 0 {
			x = fair / tn.activeW
		}
		for i, g := range tn.groups {
			if g.ix != i || tn.groupIx[g.theta] != g || g.n != a.perGroup[g] || g.n <= 0 {
				bad("tenant %q: group θ=%v inconsistent (n=%d, jobs %d)", tn.id, g.theta, g.n, a.perGroup[g])
			}
			check1(fmt.Sprintf("tenant %q group θ=%v", tn.id, g.theta), &g.s, min(g.theta, x))
		}
		if a.fair > fair*(1+eps)+eps {
			bad("tenant %q: Σ job fair rates %v > tenant fair rate %v", tn.id, a.fair, fair)
		}
		if l.jobShare == SplitJobShare && tn.own > 0 && !close(a.fair, fair) {
			bad("tenant %q: Σ split job fair rates %v ≠ tenant fair rate %v", tn.id, a.fair, fair)
		}
	}
	m := float64(l.capacity)
	check1("cluster capacity", &l.capa, m)
	check1("cluster allocated", &l.used, float64(l.running))
	check1("cluster over-allocation", &l.over, max(0, float64(l.running)-m))
	if len(errs) > 0 {
		return fmt.Errorf("ledger: check: %w", errors.Join(errs...))
	}
	return nil
}

// subtree holds the sums over a subtree's jobs that Check recomputes.
type subtree struct {
	demand, alloc GPUs
	n             int
}

// naiveWaterLevel is the water level of the children of a node with fair
// rate f, found afresh from each child's weight and subtree demand: the λ
// at which Σ W_c·min(D_c/W_c, λ) over registered children = f.
func naiveWaterLevel(kids []*tenant, sub map[*tenant]*subtree, f float64) float64 {
	type kid struct{ w, theta float64 }
	var ks []kid
	for _, c := range kids {
		d := sub[c].demand
		if c.registered && d > 0 {
			ks = append(ks, kid{c.weight, float64(d) / c.weight})
		}
	}
	if len(ks) == 0 {
		return 0
	}
	slices.SortFunc(ks, func(a, b kid) int { return cmp.Compare(a.theta, b.theta) })
	w := 0.0
	for _, k := range ks {
		w += k.w
	}
	for _, k := range ks {
		if k.theta*w >= f {
			return max(0, f/w)
		}
		f -= k.w * k.theta
		w -= k.w
	}
	return math.Inf(1)
}
