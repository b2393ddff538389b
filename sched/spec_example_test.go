package sched_test

// This file is the specification of a round: [reference] restates
// sched.Round by brute force, in the order the paper's algorithm reads
// (Phase 1 by linear scan over the tenants in play, Phase 2 by linear scan
// over the chosen tenant's candidates, a fresh copy of the cluster for
// every optimistic look), with none of Round's heaps, tournament trees,
// batched lookups or cached views. The property tests of package sched
// hold Round to it, result for result, on random rounds; the example
// below shows the two agreeing.

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/sched"
)

func init() { sched.ReferenceRound = reference }

// reference is a brute-force restatement of [sched.Round] for small inputs
// on a [placement.Cluster]: it returns the same Result and leaves the
// cluster with the same allocations. The one memory it keeps is the rule
// itself: a demand that did not fit is not tried again in the round, and
// its candidates tried later wait for the reason it first failed.
func reference(in sched.Input, opts sched.Options) (sched.Result, error) {
	cl, ok := in.Placer.(*placement.Cluster)
	if !ok {
		return sched.Result{}, errors.New("the reference places on a *placement.Cluster")
	}
	// The first error of the Placer, which the reference does not expect:
	// the rounds it checks are valid.
	var failure error
	fail := func(err error) {
		if failure == nil {
			failure = err
		}
	}
	reward, order, tie := opts.Reward, opts.TenantOrder, opts.TieBreak
	if reward == nil {
		reward = sched.NegJobRho
	}
	if order == nil {
		order = sched.ByRho
	}
	if tie == nil {
		tie = sched.BySubmit
	}
	L := in.Lease.Seconds()

	type rc struct {
		c             *sched.Candidate
		score         sched.Score
		done, moved   bool // granted or renewed; preempted
		by            ledger.JobID
		reason        *sched.Reason
		triedBackfill bool
	}
	type rt struct {
		st      sched.TenantState
		out     bool
		blocked int
		reason  sched.Reason
	}
	var cs []*rc
	var ts []*rt
	tix := map[ledger.TenantID]int{}
	for i := range in.Candidates {
		c := &in.Candidates[i]
		if _, ok := tix[c.Tenant]; !ok {
			a, _ := in.Accounts.TenantAccount(c.Tenant)
			if opts.AdvanceFairShare {
				rate, _ := in.Accounts.(sched.FairRater).TenantFairRate(c.Tenant)
				a.FairShare += ledger.GPUSeconds(rate * L)
				a.Rho = ledger.Ratio(a.Alloc, a.FairShare)
			}
			tix[c.Tenant] = len(ts)
			ts = append(ts, &rt{st: sched.TenantState{ID: c.Tenant, Start: a, Account: a}, blocked: -1})
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
					fail(err)
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
	var res sched.Result
	grant := func(x *rc, tn *rt, stage sched.Stage, kind sched.GrantKind, p placement.Placement, pre []ledger.JobID) {
		before := tn.st.Account.Rho
		credit := sched.LeaseCredit
		if opts.PreCredit != nil {
			credit = opts.PreCredit
		}
		tn.st.Account.Alloc += credit(x.c.Demand, in.Lease)
		tn.st.Account.Rho = ledger.Ratio(tn.st.Account.Alloc, tn.st.Account.FairShare)
		tn.st.Grants++
		tn.st.GPUs += x.c.Demand
		x.done = true
		res.Grants = append(res.Grants, sched.Grant{Job: x.c.Job, Tenant: x.c.Tenant, Demand: x.c.Demand, Kind: kind, Placement: p,
			Stage: stage, Reward: x.score, TenantRhoBefore: before, TenantRhoAfter: tn.st.Account.Rho, Preempts: pre})
	}
	failedFor := map[int]sched.Reason{}
	try := func(x *rc, tn *rt, stage sched.Stage) bool {
		if holds(x) {
			grant(x, tn, stage, sched.Renewed, x.c.Placement, nil)
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
				fail(err)
				return false
			}
			grant(x, tn, stage, sched.New, q, nil)
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
							fail(err)
						}
						v.moved, v.by = true, x.c.Job
						pre = append(pre, v.c.Job)
					}
				}
				if err := cl.Allocate(string(x.c.Job), q); err != nil {
					fail(err)
					return false
				}
				slices.Sort(pre)
				grant(x, tn, stage, sched.New, q, pre)
				return true
			}
		}
		rs := sched.Reason{Code: sched.NoFit, Need: d, LargestFree: -1, FreeTotal: -1}
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
		if !try(x, tn, sched.Fair) {
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
			try(x, tn, sched.Backfill)
		}
	}
	for _, x := range cs {
		if holds(x) {
			if _, err := cl.Release(string(x.c.Job)); err != nil {
				fail(err)
			}
		}
	}
	waiting := map[ledger.TenantID]int{}
	for _, x := range cs {
		c := x.c
		if c.Running && x.moved {
			res.Released = append(res.Released, sched.Release{Job: c.Job, Tenant: c.Tenant, Placement: c.Placement, By: x.by,
				Reason: sched.Reason{Code: sched.Preempted, Need: int(c.Demand), LargestFree: -1, FreeTotal: -1, By: x.by}})
		}
		if x.done {
			continue
		}
		var rs sched.Reason
		switch {
		case x.reason != nil:
			rs = *x.reason
		case x.moved:
			rs = sched.Reason{Code: sched.Preempted, Need: int(c.Demand), LargestFree: -1, FreeTotal: -1, By: x.by}
		case isFull:
			rs = sched.Reason{Code: sched.ClusterFull, Need: int(c.Demand), LargestFree: -1, FreeTotal: -1}
		default:
			tn := ts[tix[c.Tenant]]
			rs = tn.reason
			rs.Code = sched.OutOfPlay
			rs.By = cs[tn.blocked].c.Job
		}
		waiting[c.Tenant]++
		res.Waiting = append(res.Waiting, sched.Wait{Job: c.Job, Tenant: c.Tenant, Demand: c.Demand, Running: c.Running, PreemptedBy: x.by, Reason: rs})
		if c.Running && !x.moved {
			res.Released = append(res.Released, sched.Release{Job: c.Job, Tenant: c.Tenant, Placement: c.Placement, Reason: rs})
		}
	}
	for _, tn := range ts {
		tr := sched.TenantResult{ID: tn.st.ID, Start: tn.st.Start, End: tn.st.Account, Grants: tn.st.Grants, GPUs: tn.st.GPUs, OutOfPlay: tn.out}
		if tn.out {
			tr.Blocked = cs[tn.blocked].c.Job
			tr.Reason = tn.reason
		} else if isFull && waiting[tn.st.ID] > 0 {
			tr.Reason = sched.Reason{Code: sched.ClusterFull, LargestFree: -1, FreeTotal: -1}
		}
		tr.Waiting = waiting[tn.st.ID]
		res.Tenants = append(res.Tenants, tr)
	}
	return res, failure
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

// The specification and Round agree: here on the paper's worked example
// (section 11) with an expiring job of B's that A's second job preempts;
// tried again as a new placement, it no longer fits.
func Example_specification() {
	cluster, _ := placement.NewCluster([]placement.Node{{ID: "node-1", GPUs: 8}, {ID: "node-2", GPUs: 8}})
	held := placement.Placement{Slots: []placement.Slot{{Node: "node-2", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}}}
	_ = cluster.Allocate("B0", held)
	in := sched.Input{
		Accounts: table{
			tenants: map[ledger.TenantID]ledger.Account{"A": acct(54000, 72000), "B": acct(72000, 72000)},
			jobs:    map[ledger.JobID]ledger.Account{"A1": acct(500, 1000), "A2": acct(800, 1000), "B0": acct(900, 1000), "B1": acct(400, 1000)},
		},
		Lease: 900 * time.Second,
		Candidates: []sched.Candidate{
			{Job: "A1", Tenant: "A", Demand: 8},
			{Job: "A2", Tenant: "A", Demand: 4},
			{Job: "B0", Tenant: "B", Demand: 8, Running: true, Placement: held, Leases: 1},
			{Job: "B1", Tenant: "B", Demand: 8},
		},
	}
	in.Placer = cluster.Clone()
	got, err := sched.Round(in, sched.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	spec := cluster.Clone()
	in.Placer = spec
	want, err := reference(in, sched.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("Round follows the specification:", reflect.DeepEqual(got, want))
	for _, g := range want.Grants {
		fmt.Printf("%s %s on %v, preempting %v\n", g.Job, g.Kind, g.Placement.Slots, g.Preempts)
	}
	for _, w := range want.Waiting {
		fmt.Printf("%s waits: %v\n", w.Job, w.Reason)
	}
	// Output:
	// Round follows the specification: true
	// A1 new on [{node-1 [0 1 2 3 4 5 6 7]}], preempting []
	// A2 new on [{node-2 [0 1 2 3]}], preempting [B0]
	// B0 waits: does not fit: needs 8 GPUs, largest free block 4 (4 free in total)
	// B1 waits: does not fit: needs 8 GPUs, largest free block 4 (4 free in total)
}
