package sched

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
)

// Holder is what a [Reserver] needs of a round's Placer besides
// [placement.Placer]: choosing the nodes to hold for a gang, placing a gang
// on given nodes, and draining nodes so that nothing new lands there.
// [placement.Cluster] implements it.
type Holder interface {
	placement.Placer
	HoldFor(demand int) ([]string, error)
	PlaceOn(demand int, nodes []string) (placement.Placement, error)
	DrainNode(id string) error
	UndrainNode(id string) error
}

// ErrCannotHold: a [Reserver] was given a Placer that does not implement
// [Holder].
var ErrCannotHold = errors.New("sched: the placer cannot hold nodes")

// Hold is the reservation a [Reserver] keeps: Nodes held for Job since
// Since.
type Hold struct {
	Job    ledger.JobID
	Tenant ledger.TenantID
	Demand ledger.GPUs
	Nodes  []string // sorted by id
	Since  time.Time
}

// Reserver runs rounds that keep large gangs from starving, which the
// paper's round does not: the round skips a tenant whose pick does not fit
// and gives the free GPUs to other tenants' smaller jobs, and with leases
// ending at staggered times enough GPUs rarely come free at once for a
// large gang, so the most under-served tenant's gang can wait for days
// while its tenant stays the most under-served.
//
// A Reserver watches the pick of the most under-served tenant that left
// play because it did not fit (lowest ρ_tenant at the start of the round,
// then tenant id). Once the same pending job has been that pick for After,
// it holds nodes for it ([Holder.HoldFor]). While the job waits, every
// round drains those nodes (nothing new lands there) and does not renew the
// expiring jobs on them: they are released (Release reason [Held]) and
// tried again as new placements elsewhere. As soon as the held nodes' free
// GPUs hold the job, it is granted there first (Stage [Reserved]) and its
// tenant pre-credited for the rest of the round. Every job on the held
// nodes leaves within a lease, so the job starts within a lease (plus the
// time its jobs take to release) of the hold. One hold at a time; it ends
// when the job is granted, wherever, or is no longer a candidate.
//
// The trigger is ASTRAEA's own notion of who should be served next, held
// over time. On a saturated cluster the nodes a hold drains serve no one
// while they drain, so a shorter After lowers the waits of large gangs at
// a cost in tenant fairness (and utilization where gangs are a large share
// of the cluster).
//
// The zero value with After set is ready to use. A Reserver keeps state
// from round to round: use one per cluster, calling Round at every
// scheduling round with the time of the round. Not safe for concurrent
// use.
type Reserver struct {
	// After is how long the blocked pick must stay the same before nodes
	// are held for it; it must be positive.
	After time.Duration

	hold  *Hold
	watch struct {
		job   ledger.JobID
		since time.Time
	}
	cands []Candidate
	held  []int // input indices of the candidates released from the held nodes
}

// Held returns the hold in force, if any.
func (rv *Reserver) Held() (Hold, bool) {
	if rv.hold == nil {
		return Hold{}, false
	}
	h := *rv.hold
	h.Nodes = slices.Clone(h.Nodes)
	return h, true
}

// Round runs one round at now, by x (a fresh [Rounder] if nil), under the
// hold in force, and updates the hold. in.Placer must implement [Holder].
// On entry the Placer holds no node drained by the Reserver (Round
// undrains what it drains before it returns). The Result is that of the
// round over the other candidates, plus the held job's grant first when
// it is made, and the releases from the held nodes in Released (in input
// order with the others); the held jobs released and not granted again
// are in Waiting with Running set. Options.Trace sees the round's own
// decisions, not the held job's grant. On error nothing has changed, in
// the Placer or in the Reserver. Cost: that of the round, plus O(candidates)
// and, when a hold is made, O(n × (levels + log n)) for n nodes.
func (rv *Reserver) Round(x *Rounder, now time.Time, in Input, opts Options) (res Result, err error) {
	if !(rv.After > 0) {
		return Result{}, &Error{Index: -1, Err: ErrInvalidInput, Msg: fmt.Sprintf("Reserver.After is %v; it must be positive", rv.After)}
	}
	h, ok := in.Placer.(Holder)
	if !ok {
		return Result{}, &Error{Index: -1, Err: ErrCannotHold, Msg: fmt.Sprintf("%T does not implement sched.Holder", in.Placer)}
	}
	if x == nil {
		x = new(Rounder)
	}
	hold, ji := rv.hold, -1
	if hold != nil {
		ji = slices.IndexFunc(in.Candidates, func(c Candidate) bool { return c.Job == hold.Job && !c.Running })
		if ji < 0 {
			hold = nil // granted or gone since
		}
	}
	var ready placement.Placement
	if hold != nil {
		p, err := h.PlaceOn(int(hold.Demand), hold.Nodes)
		switch {
		case err == nil:
			ready = p
		case !errors.Is(err, placement.ErrNoFit):
			return Result{}, &Error{Index: ji, Job: hold.Job, Tenant: hold.Tenant, Err: ErrPlacer, Msg: "placing the held job on its nodes", Cause: err}
		}
	}
	var undo []func() error // in reverse order on failure
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				_ = undo[i]() // restores what succeeded a moment ago
			}
		}
	}()
	cands, held := rv.cands[:0], rv.held[:0]
	defer func() {
		clear(cands)
		rv.cands, rv.held = cands[:0], held[:0]
	}()
	accounts := in.Accounts
	var first *Grant
	var firstAcct ledger.Account
	switch {
	case len(ready.Slots) > 0:
		c := in.Candidates[ji]
		if err := h.Allocate(string(c.Job), ready); err != nil {
			return Result{}, &Error{Index: ji, Job: c.Job, Tenant: c.Tenant, Err: ErrPlacer, Msg: "allocating the held job", Cause: err}
		}
		undo = append(undo, func() error { _, err := h.Release(string(c.Job)); return err })
		acct, ok := in.Accounts.TenantAccount(c.Tenant)
		if !ok {
			return Result{}, &Error{Index: ji, Job: c.Job, Tenant: c.Tenant, Err: ErrUnknownTenant, Msg: "tenant has no account"}
		}
		accounts = credited(in.Accounts, c.Tenant, preCredit(&opts, c.Demand, in.Lease))
		firstAcct = acct
		first = &Grant{Job: c.Job, Tenant: c.Tenant, Demand: c.Demand, Kind: New, Placement: ready, Stage: Reserved}
		for i, c := range in.Candidates {
			if i != ji {
				cands = append(cands, c)
			}
		}
	case hold != nil:
		for i, c := range in.Candidates {
			if c.Running && onNodes(c.Placement, hold.Nodes) {
				if _, err := h.Release(string(c.Job)); err != nil {
					return Result{}, &Error{Index: i, Job: c.Job, Tenant: c.Tenant, Err: ErrPlacer, Msg: "releasing a job from the held nodes", Cause: err}
				}
				id, p := string(c.Job), c.Placement // captured alone: c stays on the stack
				undo = append(undo, func() error { return h.Allocate(id, p) })
				held = append(held, i)
				c.Running, c.Placement = false, placement.Placement{}
			}
			cands = append(cands, c)
		}
		for _, n := range hold.Nodes {
			if err := h.DrainNode(n); err != nil {
				return Result{}, &Error{Index: -1, Job: hold.Job, Tenant: hold.Tenant, Err: ErrPlacer, Msg: "draining node " + n, Cause: err}
			}
			undo = append(undo, func() error { return h.UndrainNode(n) })
		}
	default:
		cands = append(cands, in.Candidates...)
	}
	round := in
	round.Candidates, round.Accounts = cands, accounts
	res, err = x.Round(round, opts)
	if err != nil {
		return Result{}, err
	}
	undo = nil // the round stands
	if hold != nil && first == nil {
		for _, n := range hold.Nodes {
			if err := h.UndrainNode(n); err != nil {
				return Result{}, &Error{Index: -1, Job: hold.Job, Tenant: hold.Tenant, Err: ErrPlacer, Msg: "undraining node " + n, Cause: err}
			}
		}
	}
	switch {
	case first != nil:
		res = withFirst(res, *first, firstAcct, in, opts)
		rv.hold = nil
	case hold != nil:
		res = withHeld(res, in.Candidates, held, hold.Job)
		if slices.ContainsFunc(res.Grants, func(g Grant) bool { return g.Job == hold.Job }) {
			rv.hold = nil // placed elsewhere after all
		}
	default:
		rv.hold = nil
		rv.watchBlocked(now, in.Candidates, res, h)
	}
	return res, nil
}

// watchBlocked follows the pick of the most under-served tenant that left
// play because it did not fit, and holds nodes for it once it has been
// that pick, pending, for After. A gang for which the Holder finds no nodes
// (larger than every node accepting placements together) is not held: the
// round that found it blocked stands.
func (rv *Reserver) watchBlocked(now time.Time, cands []Candidate, res Result, h Holder) {
	var worst *TenantResult
	for i := range res.Tenants {
		t := &res.Tenants[i]
		if t.OutOfPlay && t.Reason.Code == NoFit && (worst == nil ||
			cmp.Or(t.Start.Rho.Compare(worst.Start.Rho), cmp.Compare(t.ID, worst.ID)) < 0) {
			worst = t
		}
	}
	// The pick may be an expiring job that lost its GPUs to a higher pick:
	// only a pending job is held for.
	k := -1
	if worst != nil {
		k = slices.IndexFunc(cands, func(c Candidate) bool { return c.Job == worst.Blocked && !c.Running })
	}
	if k < 0 {
		rv.watch.job = ""
		return
	}
	c := cands[k]
	if rv.watch.job != c.Job {
		rv.watch.job, rv.watch.since = c.Job, now
	}
	if now.Sub(rv.watch.since) < rv.After {
		return
	}
	if nodes, err := h.HoldFor(int(c.Demand)); err == nil {
		rv.hold = &Hold{Job: c.Job, Tenant: c.Tenant, Demand: c.Demand, Nodes: nodes, Since: now}
	}
	rv.watch.job = ""
}

// withFirst puts the held job's grant g first in res and counts it in its
// tenant's result. acct is the tenant's account as read before the round;
// the round read it pre-credited with g (and, with AdvanceFairShare, with
// its fair share advanced), so where the round has the tenant its Start
// loses the pre-credit, else a result is made from acct.
func withFirst(res Result, g Grant, acct ledger.Account, in Input, opts Options) Result {
	credit := preCredit(&opts, g.Demand, in.Lease)
	i := slices.IndexFunc(res.Tenants, func(t TenantResult) bool { return t.ID == g.Tenant })
	if i < 0 {
		if fr, ok := in.Accounts.(FairRater); ok && opts.AdvanceFairShare {
			if rate, ok := fr.TenantFairRate(g.Tenant); ok {
				acct = advanced(acct, rate, in.Lease.Seconds())
			}
		}
		res.Tenants = append(res.Tenants, TenantResult{ID: g.Tenant, Start: acct, End: withAlloc(acct, credit)})
		i = len(res.Tenants) - 1
	} else {
		res.Tenants[i].Start = withAlloc(res.Tenants[i].Start, -credit)
	}
	t := &res.Tenants[i]
	t.Grants++
	t.GPUs += g.Demand
	g.TenantRhoBefore = t.Start.Rho
	g.TenantRhoAfter = withAlloc(t.Start, credit).Rho
	res.Grants = slices.Insert(res.Grants, 0, g)
	return res
}

// withHeld adds to res the releases of the candidates held (their indices
// in cands), merged in input order with the round's, and marks as running
// the Waiting entries of those not granted again.
func withHeld(res Result, cands []Candidate, held []int, by ledger.JobID) Result {
	if len(held) == 0 {
		return res
	}
	merged := make([]Release, 0, len(res.Released)+len(held))
	k, hi := 0, 0
	for i, c := range cands {
		switch {
		case hi < len(held) && held[hi] == i:
			merged = append(merged, Release{Job: c.Job, Tenant: c.Tenant, Placement: c.Placement, Reason: Reason{Code: Held, By: by, LargestFree: -1, FreeTotal: -1}})
			hi++
		case k < len(res.Released) && res.Released[k].Job == c.Job:
			merged = append(merged, res.Released[k])
			k++
		}
	}
	res.Released = merged
	for i := range res.Waiting {
		w := &res.Waiting[i]
		if slices.ContainsFunc(held, func(j int) bool { return cands[j].Job == w.Job }) {
			w.Running = true
		}
	}
	return res
}

// onNodes reports whether p has a slot on one of nodes.
func onNodes(p placement.Placement, nodes []string) bool {
	for _, s := range p.Slots {
		if slices.Contains(nodes, s.Node) {
			return true
		}
	}
	return false
}

// credited returns acc with tenant's Alloc higher by credit: the
// pre-credit of a grant made before the round. It keeps acc's FairRater.
func credited(acc Accounts, tenant ledger.TenantID, credit ledger.GPUSeconds) Accounts {
	c := creditAccounts{acc: acc, tenant: tenant, credit: credit}
	if fr, ok := acc.(FairRater); ok {
		return creditRater{c, fr}
	}
	return c
}

type creditAccounts struct {
	acc    Accounts
	tenant ledger.TenantID
	credit ledger.GPUSeconds
}

func (c creditAccounts) TenantAccount(id ledger.TenantID) (ledger.Account, bool) {
	a, ok := c.acc.TenantAccount(id)
	if ok && id == c.tenant {
		a = withAlloc(a, c.credit)
	}
	return a, ok
}

func (c creditAccounts) JobAccount(id ledger.JobID) (ledger.Account, bool) {
	return c.acc.JobAccount(id)
}

type creditRater struct {
	creditAccounts
	fr FairRater
}

func (c creditRater) TenantFairRate(id ledger.TenantID) (float64, bool) {
	return c.fr.TenantFairRate(id)
}
