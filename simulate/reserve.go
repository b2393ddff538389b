package simulate

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/sched"
)

// DefaultReserveAfter is how long the astraea-reserve variant lets the most
// under-served tenant's blocked gang wait before it holds nodes for it. A
// shorter wait starts large gangs sooner at a growing cost to tenant
// fairness on a saturated cluster (the nodes drained for a gang of one
// tenant serve no other tenant meanwhile): on the Venus snapshot, with 30
// minutes the average JCT is 19,834 s but 52 % of the tenant-hours are
// losses; with one hour 23,088 s and 46 %; with two hours 29,445 s and
// 44 %; without reservations 34,498 s and 42 %.
const DefaultReserveAfter = time.Hour

// A reservation holds nodes for one starving gang (see
// AstraeaOptions.ReserveAfter).
//
// Why: a round skips a tenant whose pick does not fit and fills the free
// GPUs with other tenants' smaller jobs. With leases ending at staggered
// times, enough GPUs rarely come free at once for a large gang, so the
// most under-served tenant's large job can wait for days while its tenant
// stays the most under-served (on the Venus snapshot ASTRAEA's p99
// queueing is about a week). A reservation drains a few nodes for that
// job: no new job lands on them and their running jobs are not renewed, so
// within a lease (plus checkpoints and ticks; see
// AstraeaOptions.ReserveAfter) they are free and the job starts there,
// ahead of the round.
type reservation struct {
	job   string
	gpus  int
	nodes []string // sorted by id, as a placement's slots are
}

// blockWatch is the pick watchBlocked follows, and since when it has been
// that pick.
type blockWatch struct {
	job   string
	since time.Time
}

// scheduleReserving is Schedule with reservations: one full round per tick
// (no shortcut: they read the engine's free counts, which a drained node
// would mislead), under the reservation if one is active, after granting
// the reserved job if its nodes are ready.
func (a *Astraea) scheduleReserving(s *State) (_ Decision, err error) {
	lease := grantedLease(s.Lease)
	r := a.reserved
	if r != nil && !slices.ContainsFunc(s.Pending, func(js *JobState) bool { return js.Job.ID == r.job }) {
		r, a.reserved = nil, nil // it started (or left) since
	}
	var first *Grant
	var ready placement.Placement
	if r != nil {
		// Ready once the nodes' free GPUs hold the job.
		if ready, err = s.Cluster.PlaceOn(r.gpus, r.nodes); errors.Is(err, placement.ErrNoFit) {
			ready, err = placement.Placement{}, nil
		}
		if err != nil {
			return Decision{}, fmt.Errorf("astraea reservation for %s: %w", r.job, err)
		}
	}
	acc := a.accounts(s)
	cands := a.cands[:0]
	exp := a.exp[:0]
	var drained []string
	switch {
	case len(ready.Slots) > 0:
		// The nodes are ready: the job is granted there first, and its
		// tenant pre-credited for the round over the others.
		if err := s.Cluster.Allocate(r.job, ready); err != nil {
			return Decision{}, fmt.Errorf("astraea reservation for %s: %w", r.job, err)
		}
		defer func() { // after the round is undone
			if _, rerr := s.Cluster.Release(r.job); rerr != nil && err == nil {
				err = fmt.Errorf("astraea reservation for %s: %w", r.job, rerr)
			}
		}()
		first = &Grant{Job: r.job, Placement: ready, Lease: lease}
		if !a.opt.NoPreCredit && !a.opt.SingleLevel {
			js := s.Pending[slices.IndexFunc(s.Pending, func(js *JobState) bool { return js.Job.ID == r.job })]
			a.credited = creditedAccounts{acc: acc, tenant: ledger.TenantID(js.Job.Tenant), credit: ledger.GPUSeconds(float64(js.Job.GPUs) * lease.Seconds())}
			acc = &a.credited
		}
		a.reserved = nil
		exp = append(exp, s.Expiring...)
	case r != nil:
		// Not yet: nothing new lands on the nodes, and their expiring
		// jobs are not renewed (left out of the round, their leases
		// lapse).
		for _, js := range s.Expiring {
			if !onAny(js.Placement, r.nodes) {
				exp = append(exp, js)
			}
		}
		defer func() {
			for _, n := range drained {
				if uerr := s.Cluster.UndrainNode(n); uerr != nil && err == nil {
					err = fmt.Errorf("astraea reservation for %s: %w", r.job, uerr)
				}
			}
		}()
		for _, n := range r.nodes {
			if err := s.Cluster.DrainNode(n); err != nil {
				return Decision{}, fmt.Errorf("astraea reservation for %s: %w", r.job, err)
			}
			drained = append(drained, n)
		}
	default:
		exp = append(exp, s.Expiring...)
	}
	a.exp = exp
	for _, js := range s.Pending {
		if first == nil || js.Job.ID != first.Job {
			cands = append(cands, a.candidate(js, false))
		}
	}
	for _, js := range exp {
		cands = append(cands, a.candidate(js, true))
	}
	a.cands = cands
	a.place.reset(s)
	a.place.nodes, a.place.exp = nil, exp
	res, err := a.rounds.Round(sched.Input{Accounts: acc, Candidates: cands, Lease: lease, Placer: &a.place}, a.opts)
	clear(a.cands)
	clear(a.exp)
	if err != nil {
		return Decision{}, fmt.Errorf("astraea round: %w", err)
	}
	if err := undoRound(s.Cluster, res); err != nil {
		return Decision{}, fmt.Errorf("astraea round: %w", err)
	}
	if a.reserved == nil && first == nil {
		if err := a.watchBlocked(s, res); err != nil {
			return Decision{}, err
		}
	}
	gs := a.grants[:0]
	if first != nil {
		gs = append(gs, *first)
	}
	for _, g := range res.Grants {
		gs = append(gs, Grant{Job: string(g.Job), Placement: g.Placement, Lease: lease, Renew: g.Kind == sched.Renewed})
	}
	a.grants = gs
	d := Decision{Grants: gs, Preempt: a.preempt[:0]}
	for _, rel := range res.Released {
		d.Preempt = append(d.Preempt, string(rel.Job))
	}
	a.preempt = d.Preempt
	return d, nil
}

// watchBlocked follows the pick of the most under-served tenant that left
// play because it did not fit (lowest ρ_tenant at the start of the round,
// then tenant id), and reserves nodes for it once it has been that pick,
// waiting, for ReserveAfter.
//
// The trigger is the paper's own notion of who should be served next, held
// over time: the tenant the round would serve first, blocked on the same
// job round after round. A trigger on any job's waiting time alone would
// reserve for gangs of tenants that are not the most under-served, which
// on a saturated cluster hands large blocks to a few tenants at the others'
// expense.
func (a *Astraea) watchBlocked(s *State, res sched.Result) error {
	var worst *sched.TenantResult
	for i := range res.Tenants {
		t := &res.Tenants[i]
		if t.OutOfPlay && t.Reason.Code == sched.NoFit && (worst == nil ||
			cmp.Or(t.Start.Rho.Compare(worst.Start.Rho), cmp.Compare(t.ID, worst.ID)) < 0) {
			worst = t
		}
	}
	// The pick may be an expiring job that lost its GPUs to a higher pick:
	// only a pending job gets a reservation.
	k := -1
	if worst != nil {
		k = slices.IndexFunc(s.Pending, func(js *JobState) bool { return js.Job.ID == string(worst.Blocked) })
	}
	if k < 0 {
		a.watch = blockWatch{}
		return nil
	}
	js := s.Pending[k]
	if a.watch.job != js.Job.ID {
		a.watch = blockWatch{job: js.Job.ID, since: s.Now}
	}
	if s.Now.Sub(a.watch.since) < a.opt.ReserveAfter {
		return nil
	}
	nodes, err := s.Cluster.HoldFor(js.Job.GPUs)
	if err != nil {
		return fmt.Errorf("astraea reservation for %s: %w", js.Job.ID, err)
	}
	a.reserved = &reservation{job: js.Job.ID, gpus: js.Job.GPUs, nodes: nodes}
	a.watch = blockWatch{}
	return nil
}

// onAny reports whether p has a slot on one of nodes.
func onAny(p placement.Placement, nodes []string) bool {
	for _, s := range p.Slots {
		if slices.Contains(nodes, s.Node) {
			return true
		}
	}
	return false
}

// creditedAccounts pre-credits one tenant with a grant made before the
// round (the reserved job's): its Alloc is higher by credit.
type creditedAccounts struct {
	acc    sched.Accounts
	tenant ledger.TenantID
	credit ledger.GPUSeconds
}

func (c *creditedAccounts) TenantAccount(id ledger.TenantID) (ledger.Account, bool) {
	a, ok := c.acc.TenantAccount(id)
	if ok && id == c.tenant {
		a.Alloc += c.credit
		a.Rho = ledger.Ratio(a.Alloc, a.FairShare)
	}
	return a, ok
}

func (c *creditedAccounts) JobAccount(id ledger.JobID) (ledger.Account, bool) {
	return c.acc.JobAccount(id)
}
