package sched

import (
	"errors"
	"slices"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"pgregory.net/rapid"
)

// referenceRound is a brute-force restatement of Round for small inputs:
// linear scans instead of heaps, a fresh copy of the cluster for every
// optimistic look, no shortcuts. Round must agree with it exactly. The one
// memory it keeps is the rule itself: a demand that did not fit is not
// tried again in the round, and its candidates tried later wait for the
// reason it first failed.
func referenceRound(t *rapid.T, in Input, opts Options) Result {
	cl := in.Placer.(*placement.Cluster)
	reward, order, tie := opts.Reward, opts.TenantOrder, opts.TieBreak
	if reward == nil {
		reward = NegJobRho
	}
	if order == nil {
		order = ByRho
	}
	if tie == nil {
		tie = BySubmit
	}
	L := in.Lease.Seconds()

	type rc struct {
		c             *Candidate
		score         Score
		done, moved   bool // granted or renewed; preempted
		by            ledger.JobID
		reason        *Reason
		triedBackfill bool
	}
	type rt struct {
		st      TenantState
		out     bool
		blocked int
		reason  Reason
	}
	var cs []*rc
	var ts []*rt
	tix := map[ledger.TenantID]int{}
	for i := range in.Candidates {
		c := &in.Candidates[i]
		if _, ok := tix[c.Tenant]; !ok {
			a, _ := in.Accounts.TenantAccount(c.Tenant)
			if opts.AdvanceFairShare {
				rate, _ := in.Accounts.(FairRater).TenantFairRate(c.Tenant)
				a.FairShare += ledger.GPUSeconds(rate * L)
				a.Rho = ledger.Ratio(a.Alloc, a.FairShare)
			}
			tix[c.Tenant] = len(ts)
			ts = append(ts, &rt{st: TenantState{ID: c.Tenant, Start: a, Account: a}, blocked: -1})
		}
		ja, _ := in.Accounts.JobAccount(c.Job)
		cs = append(cs, &rc{c: c, score: reward(c, ja)})
	}
	better := func(a, b *rc) bool {
		if x := a.score.Compare(b.score); x != 0 {
			return x > 0
		}
		if x := tie(a.c, b.c); x != 0 {
			return x < 0
		}
		return a.c.Job < b.c.Job
	}
	tenantFirst := func(a, b *rt) bool {
		if x := order(&a.st, &b.st); x != 0 {
			return x < 0
		}
		return a.st.ID < b.st.ID
	}
	holds := func(x *rc) bool { return x.c.Running && !x.done && !x.moved }
	optimistic := func() *placement.Cluster {
		o := cl.Clone()
		for _, x := range cs {
			if holds(x) {
				if _, err := o.Release(string(x.c.Job)); err != nil {
					t.Fatal(err)
				}
			}
		}
		return o
	}
	full := func() bool {
		f := cl.Free()
		for _, x := range cs {
			if holds(x) {
				f += int(x.c.Demand)
			}
		}
		return f == 0
	}
	var res Result
	grant := func(x *rc, tn *rt, stage Stage, kind GrantKind, p placement.Placement, pre []ledger.JobID) {
		before := tn.st.Account.Rho
		credit := LeaseCredit
		if opts.PreCredit != nil {
			credit = opts.PreCredit
		}
		tn.st.Account.Alloc += credit(x.c.Demand, in.Lease)
		tn.st.Account.Rho = ledger.Ratio(tn.st.Account.Alloc, tn.st.Account.FairShare)
		tn.st.Grants++
		tn.st.GPUs += x.c.Demand
		x.done = true
		res.Grants = append(res.Grants, Grant{Job: x.c.Job, Tenant: x.c.Tenant, Demand: x.c.Demand, Kind: kind, Placement: p,
			Stage: stage, Reward: x.score, TenantRhoBefore: before, TenantRhoAfter: tn.st.Account.Rho, Preempts: pre})
	}
	failedFor := map[int]Reason{}
	try := func(x *rc, tn *rt, stage Stage) bool {
		if holds(x) {
			grant(x, tn, stage, Renewed, x.c.Placement, nil)
			return true
		}
		d := int(x.c.Demand)
		if rs, ok := failedFor[d]; ok {
			x.reason = &rs
			return false
		}
		q, err := cl.Place(d)
		if err == nil {
			if err := cl.Allocate(string(x.c.Job), q); err != nil {
				t.Fatal(err)
			}
			grant(x, tn, stage, New, q, nil)
			return true
		}
		anyHeld := slices.ContainsFunc(cs, holds)
		if anyHeld {
			q, err = optimistic().Place(d)
			if err == nil {
				var pre []ledger.JobID
				for _, v := range cs {
					if holds(v) && overlaps(v.c.Placement, q) {
						if _, err := cl.Release(string(v.c.Job)); err != nil {
							t.Fatal(err)
						}
						v.moved, v.by = true, x.c.Job
						pre = append(pre, v.c.Job)
					}
				}
				if err := cl.Allocate(string(x.c.Job), q); err != nil {
					t.Fatal(err)
				}
				slices.Sort(pre)
				grant(x, tn, stage, New, q, pre)
				return true
			}
		}
		rs := Reason{Code: NoFit, Need: d, LargestFree: -1, FreeTotal: -1}
		var nf *placement.NoFitError
		if errors.As(err, &nf) {
			rs.LargestFree, rs.FreeTotal = nf.LargestFree, nf.FreeTotal
		}
		failedFor[d] = rs
		x.reason = &rs
		return false
	}
	best := func(tn *rt, ok func(*rc) bool) *rc {
		var b *rc
		for _, x := range cs {
			if x.c.Tenant == tn.st.ID && !x.done && ok(x) && (b == nil || better(x, b)) {
				b = x
			}
		}
		return b
	}
	isFull := false
	inPlay := slices.Clone(ts)
	for len(inPlay) > 0 {
		if full() {
			isFull = true
			break
		}
		k := 0
		for i := range inPlay {
			if tenantFirst(inPlay[i], inPlay[k]) {
				k = i
			}
		}
		tn := inPlay[k]
		x := best(tn, func(*rc) bool { return true })
		if x == nil {
			inPlay = slices.Delete(inPlay, k, k+1)
			continue
		}
		if !try(x, tn, Fair) {
			tn.out = true
			tn.blocked = slices.Index(cs, x)
			tn.reason = *x.reason
			inPlay = slices.Delete(inPlay, k, k+1)
		}
	}
	if !isFull && !opts.NoBackfill {
		for {
			if full() {
				isFull = true
				break
			}
			var tn *rt
			var x *rc
			for _, cand := range ts {
				if y := best(cand, func(z *rc) bool { return !z.triedBackfill }); y != nil && (tn == nil || tenantFirst(cand, tn)) {
					tn, x = cand, y
				}
			}
			if x == nil {
				break
			}
			x.triedBackfill = true
			try(x, tn, Backfill)
		}
	}
	for _, x := range cs {
		if holds(x) {
			if _, err := cl.Release(string(x.c.Job)); err != nil {
				t.Fatal(err)
			}
		}
	}
	waiting := map[ledger.TenantID]int{}
	for _, x := range cs {
		c := x.c
		if c.Running && x.moved {
			res.Released = append(res.Released, Release{Job: c.Job, Tenant: c.Tenant, Placement: c.Placement, By: x.by,
				Reason: Reason{Code: Preempted, Need: int(c.Demand), LargestFree: -1, FreeTotal: -1, By: x.by}})
		}
		if x.done {
			continue
		}
		var rs Reason
		switch {
		case x.reason != nil:
			rs = *x.reason
		case x.moved:
			rs = Reason{Code: Preempted, Need: int(c.Demand), LargestFree: -1, FreeTotal: -1, By: x.by}
		case isFull:
			rs = Reason{Code: ClusterFull, Need: int(c.Demand), LargestFree: -1, FreeTotal: -1}
		default:
			tn := ts[tix[c.Tenant]]
			rs = tn.reason
			rs.Code = OutOfPlay
			rs.By = cs[tn.blocked].c.Job
		}
		waiting[c.Tenant]++
		res.Waiting = append(res.Waiting, Wait{Job: c.Job, Tenant: c.Tenant, Demand: c.Demand, Running: c.Running, PreemptedBy: x.by, Reason: rs})
		if c.Running && !x.moved {
			res.Released = append(res.Released, Release{Job: c.Job, Tenant: c.Tenant, Placement: c.Placement, Reason: rs})
		}
	}
	for _, tn := range ts {
		tr := TenantResult{ID: tn.st.ID, Start: tn.st.Start, End: tn.st.Account, Grants: tn.st.Grants, GPUs: tn.st.GPUs, OutOfPlay: tn.out}
		if tn.out {
			tr.Blocked = cs[tn.blocked].c.Job
			tr.Reason = tn.reason
		} else if isFull && waiting[tn.st.ID] > 0 {
			tr.Reason = Reason{Code: ClusterFull, LargestFree: -1, FreeTotal: -1}
		}
		tr.Waiting = waiting[tn.st.ID]
		res.Tenants = append(res.Tenants, tr)
	}
	return res
}

func overlaps(a, b placement.Placement) bool {
	for _, x := range a.Slots {
		for _, y := range b.Slots {
			if x.Node != y.Node {
				continue
			}
			for _, g := range x.GPUs {
				if slices.Contains(y.GPUs, g) {
					return true
				}
			}
		}
	}
	return false
}
