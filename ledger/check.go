package ledger

import (
	"errors"
	"fmt"
	"math"
)

// Check verifies the ledger's internal invariants and returns the first
// violation found, or nil. Tests call it after every event; it is O(jobs +
// breakpoints). The invariants:
//
//   - breakpoint times strictly increase and never exceed Now(); the last
//     rates of every series equal the current state;
//   - per tenant: Demand_j = Σ demand of its active jobs, Alloc_j = Σ demand
//     of its running jobs, its θ-groups count exactly its active jobs;
//   - FairShare_j = min(Demand_j, Quota_j) (DemandAware) or Quota_j
//     (QuotaShare), Quota_j = M·W_j/ΣW over registered tenants;
//   - Σ_j FairShare_j ≤ M, with equality under QuotaShare when a tenant is
//     registered; Σ_i FairShare_ij ≤ FairShare_j and FairShare_ij ≤ D_i;
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
			if j.grp == nil || j.grp.ix < 0 || j.grp.theta != float64(j.demand)/j.weight {
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
			if r > float64(j.demand)*(1+eps) || r < 0 {
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
	case l.hist.kind != histTrailing && len(l.done) > 0:
		bad("%d jobs in the finish list without a trailing window", len(l.done))
	case l.hist.kind == histTrailing && len(l.done) != nFinished:
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
	sumW, sumFair := 0.0, 0.0
	anyRegistered := false
	for i, tn := range l.tenants {
		if l.tenantIx[tn.id] != tn {
			bad("tenant %d (%q) not indexed", i, tn.id)
		}
		if tn.registered {
			sumW += tn.weight
			anyRegistered = true
		}
	}
	if len(l.tenantIx) != len(l.tenants) {
		bad("tenant index has %d entries for %d tenants", len(l.tenantIx), len(l.tenants))
	}
	if sumW != l.sumW {
		bad("ΣW %v, tenants say %v", l.sumW, sumW)
	}
	for _, tn := range l.tenants {
		a := aggs[tn]
		if tn.demand != a.demand || tn.alloc != a.alloc || tn.nActive != a.n {
			bad("tenant %q: demand/alloc/active %d/%d/%d, jobs say %d/%d/%d", tn.id, tn.demand, tn.alloc, tn.nActive, a.demand, a.alloc, a.n)
		}
		if !close(tn.activeW, a.w) {
			bad("tenant %q: active weight %v, jobs say %v", tn.id, tn.activeW, a.w)
		}
		if !tn.registered && tn.nActive > 0 {
			bad("tenant %q: removed with active jobs", tn.id)
		}
		if f := l.fairOf(tn); f != tn.fair {
			bad("tenant %q: fair rate %v, formula says %v", tn.id, tn.fair, f)
		}
		sumFair += tn.fair
		check1(fmt.Sprintf("tenant %q alloc", tn.id), &tn.s, float64(tn.alloc))
		check1(fmt.Sprintf("tenant %q fair share", tn.id), &tn.fs, tn.fair)
		if len(tn.groups) != len(tn.groupIx) || len(tn.groups) != len(a.perGroup) {
			bad("tenant %q: %d groups, %d indexed, %d used", tn.id, len(tn.groups), len(tn.groupIx), len(a.perGroup))
		}
		x := 0.0
		if tn.nActive > 0 {
			x = tn.fair / tn.activeW
		}
		jobFair := 0.0
		for i, g := range tn.groups {
			if g.ix != i || tn.groupIx[g.theta] != g || g.n != a.perGroup[g] || g.n <= 0 {
				bad("tenant %q: group θ=%v inconsistent (n=%d, jobs %d)", tn.id, g.theta, g.n, a.perGroup[g])
			}
			check1(fmt.Sprintf("tenant %q group θ=%v", tn.id, g.theta), &g.s, min(g.theta, x))
		}
		jobFair = a.fair
		if jobFair > tn.fair*(1+eps)+eps {
			bad("tenant %q: Σ job fair rates %v > tenant fair rate %v", tn.id, jobFair, tn.fair)
		}
	}
	m := float64(l.capacity)
	if sumFair > m*(1+eps)+eps {
		bad("Σ tenant fair rates %v > M = %v", sumFair, m)
	}
	if l.mode == QuotaShare && anyRegistered && !close(sumFair, m) {
		bad("QuotaShare: Σ tenant fair rates %v ≠ M = %v", sumFair, m)
	}
	check1("cluster capacity", &l.capa, m)
	check1("cluster allocated", &l.used, float64(l.running))
	check1("cluster over-allocation", &l.over, max(0, float64(l.running)-m))
	if len(errs) > 0 {
		return fmt.Errorf("ledger: check: %w", errors.Join(errs...))
	}
	return nil
}
