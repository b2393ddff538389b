package simulate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/astraea-sched/astraea/internal/idhash"
	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/sched"
)

// AstraeaOptions selects a variant of the ASTRAEA policy.
type AstraeaOptions struct {
	// Name is the policy's Name() ("astraea" for the paper's configuration).
	Name string
	// Accounts is the tenant fair-share mode the policy's accounts use:
	// ledger.QuotaShare (Eq. 16, the paper's simulator) or
	// ledger.DemandAware (Eq. 8). The engine keeps its policy ledger in
	// this mode (see AccountsModer).
	Accounts ledger.Mode
	// SingleLevel drops the tenant phase: every round picks among all
	// candidates by job reward alone (a job ledger only).
	SingleLevel bool
	// NoPreCredit turns off the lease pre-credit: a grant no longer adds
	// demand × lease to its tenant's allocation for the rest of the round.
	NoPreCredit bool
	// ReserveAfter, if positive, guards large gangs against starvation,
	// which the paper's round does not: once the pick of the most
	// under-served tenant that left play (it did not fit) has been that
	// pick for ReserveAfter, the policy holds nodes for it through a
	// sched.Reserver (no new job lands there, their expiring jobs are not
	// renewed but tried elsewhere) and grants it
	// there, ahead of the round, as soon as they hold it: within a lease,
	// two checkpoints and two ticks of the reservation (a job granted
	// there by the round that made it may still start after a
	// checkpoint). One reservation at a time. Every tick then
	// runs a full round, without the shortcuts that read the engine's free
	// counts. Zero, the paper's policy, reserves nothing.
	ReserveAfter time.Duration
}

// DefaultAstraeaOptions is the paper's configuration: Eq. 16 tenant accounts,
// two levels, pre-credit, new-job priority in Phase 2, consolidated
// placement.
func DefaultAstraeaOptions() AstraeaOptions {
	return AstraeaOptions{Name: "astraea", Accounts: ledger.QuotaShare}
}

func astraeaVariants() []AstraeaOptions {
	d := DefaultAstraeaOptions()
	eq8 := d
	eq8.Name, eq8.Accounts = "astraea-eq8", ledger.DemandAware
	single := d
	single.Name, single.SingleLevel = "astraea-single", true
	nc := d
	nc.Name, nc.NoPreCredit = "astraea-nocredit", true
	rsv := d
	rsv.Name, rsv.ReserveAfter = "astraea-reserve", DefaultReserveAfter
	return []AstraeaOptions{d, eq8, single, nc, rsv}
}

// Astraea is the ASTRAEA policy, one [sched.Round] per tick: the candidates
// are the pending jobs and the running jobs whose lease has ended; Phase 1
// picks the tenant with the lowest ρ_tenant, Phase 2 the job with the highest
// reward inside it ([sched.NewJobFirst]: jobs that never ran first, then the
// lowest ρ_job); a granted job pre-credits its tenant with demand × lease; a
// tenant whose pick does not fit leaves play, and a backfill stage then
// fills what is left. A selected running job is renewed in place; an
// unselected one lets its lease lapse (checkpoint, release).
type Astraea struct {
	opt    AstraeaOptions
	cands  []sched.Candidate
	opts   sched.Options
	trim   trimmer
	grants []Grant // reused: the engine does not keep a Decision
	// preempt is reused likewise; view holds the round's accounts
	preempt []string
	view    ledger.View
	single  singleLevel
	racc    roundAccounts
	// tenantReads are the tenant accounts renewsFirst read at this tick,
	// which the round reads again (see roundAccounts)
	tenantReads []readAccount
	gains       []nodeGain
	// gains holds nodeGains(s) for this round's state when gainsOK and
	// gainsNodes is s.nodes (Schedule clears gainsOK); viewGains is
	// freeView's scratch
	gainsOK    bool
	gainsNodes *nodeFree
	viewGains  []nodeGain
	rounds     sched.Rounder
	place      inPlace   // the round's Placer
	plan       roundPlan // the last round, left on the engine's cluster
	// credits, creditOf (the credit of each expiring job) and first are
	// renewsFirst's scratch
	credits  []tenantCredit
	creditOf []int32
	first    [1]demandCount
	// exhaustive disables the fast paths and the trimming (tests compare).
	exhaustive bool
	// perRound makes the trimmer sort the waiting jobs into groups at
	// every round instead of reading the engine's lasting groups (tests
	// compare).
	perRound bool
	// reserver holds nodes for starving gangs (AstraeaOptions.ReserveAfter).
	reserver sched.Reserver
}

// NewAstraea returns the ASTRAEA policy with the given options.
func NewAstraea(o AstraeaOptions) (*Astraea, error) {
	if o.Name == "" {
		o.Name = "astraea"
	}
	a := &Astraea{opt: o}
	a.reserver.After = o.ReserveAfter
	a.opts.Reward = sched.NewJobFirst
	if o.NoPreCredit {
		// Phase 1 reads the accounts as they were when the round began.
		a.opts.TenantOrder = func(x, y *sched.TenantState) int {
			return cmp.Or(x.Start.Rho.Compare(y.Start.Rho), cmp.Compare(x.ID, y.ID))
		}
	}
	return a, nil
}

// Name returns the variant's name.
func (a *Astraea) Name() string { return a.opt.Name }

// ProgressBlind tells the engine that ASTRAEA never reads running jobs'
// attained time: its decisions depend on the ledger's accounts only.
func (a *Astraea) ProgressBlind() {}

// AccountsMode reports the tenant fair-share mode the policy reads.
func (a *Astraea) AccountsMode() ledger.Mode { return a.opt.Accounts }

// oldJob is a suspended pending job with its ρ_job at the round.
type oldJob struct {
	js  *JobState
	rho ledger.Rho
	// w is the trimmer's record of the job; for a job read this round, nil
	// if it has no account, else its memo holds the account read.
	w *waiting
}

// roundAccounts are a round's accounts that answer a job the trimmer read
// this round (and kept) from what it read, instead of reading it again:
// the view does not change during a round. A short list is scanned, with
// ids compared by idhash.Equal, which returns at once for the same string (the
// round asks with the id it was given, the state's own); a list longer than
// scanReads is indexed by id first, so that a lookup stays O(1) however
// many jobs a round reads (a few in the traces' runs, but as many as the
// free GPUs allow on a large cluster).
type roundAccounts struct {
	acc     sched.Accounts
	read    []readAccount
	tenants []readAccount // tenant accounts renewsFirst read this round
	// readIx and tenantIx index read and tenants by id when they are
	// longer than scanReads, else they are empty; kept across rounds.
	readIx, tenantIx map[string]int32
}

// scanReads is the longest list of reads that roundAccounts scans.
const scanReads = 16

// readAccount is a job's (or tenant's) account as read this round.
type readAccount struct {
	id string
	a  ledger.Account
}

// reset makes r answer from the reads of this round before acc.
func (r *roundAccounts) reset(acc sched.Accounts, read, tenants []readAccount) {
	r.acc, r.read, r.tenants = acc, read, tenants
	r.readIx = indexReads(r.readIx, read)
	r.tenantIx = indexReads(r.tenantIx, tenants)
}

// indexReads returns ix emptied and, if list is longer than scanReads,
// filled with the position of each id's first read.
func indexReads(ix map[string]int32, list []readAccount) map[string]int32 {
	clear(ix)
	if len(list) <= scanReads {
		return ix
	}
	if ix == nil {
		ix = make(map[string]int32, len(list))
	}
	for i := range list {
		if _, dup := ix[list[i].id]; !dup {
			ix[list[i].id] = int32(i)
		}
	}
	return ix
}

// lookupRead finds id's account among list, through ix if it is filled.
func lookupRead(list []readAccount, ix map[string]int32, id string) (ledger.Account, bool) {
	if len(ix) > 0 {
		i, ok := ix[id]
		if !ok {
			return ledger.Account{}, false
		}
		return list[i].a, true
	}
	for i := range list {
		if idhash.Equal(list[i].id, id) {
			return list[i].a, true
		}
	}
	return ledger.Account{}, false
}

func (r *roundAccounts) TenantAccount(id ledger.TenantID) (ledger.Account, bool) {
	if a, ok := lookupRead(r.tenants, r.tenantIx, string(id)); ok {
		return a, true
	}
	return r.acc.TenantAccount(id)
}

func (r *roundAccounts) JobAccount(id ledger.JobID) (ledger.Account, bool) {
	if a, ok := lookupRead(r.read, r.readIx, string(id)); ok {
		return a, true
	}
	return r.acc.JobAccount(id)
}

// singleTenant is the one pseudo-tenant of the single-level variant.
const singleTenant ledger.TenantID = "*"

// singleLevel answers accounts for the single-level variant: every job
// belongs to one pseudo-tenant, so Phase 1 is void and Phase 2 orders all
// candidates.
type singleLevel struct{ v ledger.View }

func (s singleLevel) TenantAccount(ledger.TenantID) (ledger.Account, bool) {
	return ledger.Account{Rho: 1}, true
}

func (s singleLevel) JobAccount(id ledger.JobID) (ledger.Account, bool) { return s.v.JobAccount(id) }

// Schedule runs one round. Cost: that of [sched.Round] over the candidates,
// plus undoing the round's placements on the cluster (O(grants + releases)),
// except where the engine calls the policy itself: the round's placements
// then stay on the cluster and the decision carries them for the engine to
// take over, which spares releasing and allocating those jobs twice.
// Three kinds of tick skip the round: one at which no lease ends and no
// pending job fits the free GPUs returns at once, in O(distinct pending
// demands); one at which no pending job would fit even if every expiring
// job let go renews the expiring jobs, in O(e log nodes) for e expiring
// jobs (see fitsReleased); and one at which the round would renew some
// expiring jobs before any pending job that could fit is tried, and no
// pending job fits what the others would free, renews them all too, in
// O(tenants × demands) plus a tenant account read per tenant involved (see
// renewsFirst).
func (a *Astraea) Schedule(s *State) (Decision, error) {
	if a.opt.ReserveAfter > 0 {
		return a.scheduleReserving(s)
	}
	wipe(a.tenantReads)
	a.tenantReads = a.tenantReads[:0]
	a.gainsOK = false // a new state
	expiring, expGPUs := len(s.Expiring), 0
	for _, r := range s.Expiring {
		expGPUs += r.Job.GPUs
	}
	if !a.exhaustive && expiring == 0 && !anyFits(s) {
		return Decision{}, nil
	}
	lease := grantedLease(s.Lease)
	if !a.exhaustive && expiring > 0 {
		fits, err := a.fitsReleased(s, expGPUs)
		if err != nil {
			return Decision{}, fmt.Errorf("astraea: %w", err)
		}
		if !fits || a.renewsFirst(s, lease) {
			return a.renewAll(s, lease), nil
		}
	}
	// No candidate can get more than the free GPUs plus those of the
	// expiring jobs during the round.
	a.trim.reset(s.Cluster.Free() + expGPUs)
	if s.nodes != nil && !a.exhaustive {
		a.trim.perNode(s.nodes, a.nodeGains(s))
	}
	cands := a.cands[:0]
	add := func(js *JobState, running bool) { cands = append(cands, a.candidate(js, running)) }
	acc := a.accounts(s)
	if a.exhaustive {
		for _, p := range s.Pending {
			add(p, false)
		}
	} else {
		// New jobs first, in submission order (their Phase 2 order),
		// then the suspended ones, in their Phase 2 order (lowest ρ_job,
		// then submission, then id); ρ_job is read only where a group is
		// larger than what the bounds keep.
		var old []*JobState
		if s.suspended {
			// Each tenant's new jobs are listed apart; the suspended
			// ones are in the lasting groups. Once every group of a
			// tenant's new jobs is full, the rest of them are left out
			// without a look (keep would refuse each).
			for ti, fresh := range s.freshByTenant {
				open := a.trim.openGroups(s.freshDemands[ti])
				for _, p := range fresh {
					if open == 0 {
						break
					}
					if kept, full := a.trim.keepNew(p); kept {
						add(p, false)
						if full {
							open--
						}
					}
				}
			}
			old = a.trim.selectSuspended(acc, s.Now)
		} else {
			for _, p := range s.Pending {
				if p.Ran {
					a.trim.addOld(p, a.opt.SingleLevel)
					continue
				}
				if a.trim.keep(p, a.opt.SingleLevel) {
					add(p, false)
				}
			}
			old = a.trim.selectOld(acc, s.Now)
		}
		for _, js := range old {
			add(js, false)
		}
	}
	for _, r := range s.Expiring {
		add(r, true)
	}
	a.cands = cands
	if len(a.trim.reads) > 0 || len(a.tenantReads) > 0 {
		a.racc.reset(acc, a.trim.reads, a.tenantReads)
		acc = &a.racc
	}
	// The round plans on the cluster itself and is undone below: cheaper
	// than a copy-on-write clone, whose first writes copy B-tree nodes on
	// both sides (a rejected round undoes itself).
	a.place.reset(s)
	if a.exhaustive {
		a.place.nodes = nil
	}
	res, err := a.rounds.Round(sched.Input{Accounts: acc, Candidates: cands, Lease: lease, Placer: &a.place}, a.opts)
	wipe(a.cands)
	if err != nil {
		return Decision{}, fmt.Errorf("astraea round: %w", err)
	}
	var plan *roundPlan
	if s.plans && !a.exhaustive {
		// The engine takes the round's placements over (see roundPlan).
		a.plan = roundPlan{c: s.Cluster, res: res}
		plan = &a.plan
	} else if err := undoRound(s.Cluster, res); err != nil {
		return Decision{}, fmt.Errorf("astraea round: %w", err)
	}
	return a.decision(res, lease, plan), nil
}

// decision is the engine's decision of a round: its grants, for a lease
// each, and the expiring jobs it released as preemptions. Its slices are
// a's, reused at the next tick (the engine does not keep a Decision).
func (a *Astraea) decision(res sched.Result, lease time.Duration, plan *roundPlan) Decision {
	gs := a.grants[:0]
	for _, g := range res.Grants {
		gs = append(gs, Grant{Job: string(g.Job), Placement: g.Placement, Lease: lease, Renew: g.Kind == sched.Renewed})
	}
	a.grants = gs
	d := Decision{Grants: gs, plan: plan, Preempt: a.preempt[:0]}
	for _, r := range res.Released {
		d.Preempt = append(d.Preempt, string(r.Job))
	}
	a.preempt = d.Preempt
	return d
}

// candidate returns js as a round's candidate: running marks an expiring
// job, which holds its placement.
func (a *Astraea) candidate(js *JobState, running bool) sched.Candidate {
	leases := 0
	if js.Ran {
		leases = max(js.Leases, 1)
	}
	c := sched.Candidate{
		Job:    ledger.JobID(js.Job.ID),
		Tenant: ledger.TenantID(js.Job.Tenant),
		Demand: ledger.GPUs(js.Job.GPUs),
		Submit: js.Job.Submit,
		Leases: leases,
	}
	if a.opt.SingleLevel {
		c.Tenant = singleTenant
	}
	if running {
		c.Running, c.Placement = true, js.Placement
	}
	return c
}

// accounts returns the accounts a round at s reads: the view's, or the
// single-level variant's. A pointer to a copy held in a: converting the
// View itself to the interface would allocate at every round.
func (a *Astraea) accounts(s *State) sched.Accounts {
	a.view = s.Accounts
	if a.opt.SingleLevel {
		a.single = singleLevel{s.Accounts}
		return &a.single
	}
	return &a.view
}

// renewsFirst reports that a round would grant nothing and renew every
// expiring job, as renewAll does, because no waiting job finds GPUs even
// where the round tries it.
//
// A waiting tenant matters only if its first pick in Phase 2 order may fit
// the optimistic view (the free GPUs plus every expiring job's): where it
// cannot, the tenant leaves the fair stage at its first turn, which changes
// nothing else (a failed try moves no ρ and frees nothing), and its jobs
// are tried again only in the backfill stage, when every expiring job of a
// tenant without waiting jobs has been renewed (such a tenant never leaves
// play before). Its first pick is its earliest job that never ran (ρ_job 0,
// or 1 for all of them when none has a fair share yet; [sched.NewJobFirst]
// puts these first, in submission order); without one, the pick is unknown
// and any of its demands may fit. Call an expiring job early when its tenant has
// no waiting job and, pre-credited for all its renewals but the last, still
// a lower ρ_tenant than every waiting tenant that matters: Phase 1 picks
// that tenant before any of them for each of its renewals (a renewal always
// succeeds, and their ρ moves only with a grant; the order of its own
// renewals is unknown here, so the one left out is the smallest), so every
// early job is renewed before the first job that matters is tried. From then on the GPUs a
// waiting job can get, the free GPUs plus those of the expiring jobs still
// undecided, are at most the free GPUs plus those of the other expiring
// jobs, and only shrink. If no waiting demand fits that view, every
// waiting job fails wherever it is tried and every expiring job is renewed
// when its turn comes. A relative margin on ρ keeps rounding (the round
// adds the pre-credits one by one) from deciding. The views are read from
// the engine's free counts (strict consolidation, as in fitsReleased). Not
// for the single-level variant (one pseudo-tenant). Cost: one tenant
// account read per tenant with expiring jobs or waiting jobs that matter,
// O(tenants × demands + e × (tenants + nodes) + slots) for e expiring
// jobs.
func (a *Astraea) renewsFirst(s *State, lease time.Duration) bool {
	if a.opt.SingleLevel || s.pendingByTenant == nil || s.nodes == nil || len(s.PendingDemands) == 0 {
		return false
	}
	credits, of := a.credits[:0], a.creditOf[:0]
	for _, r := range s.Expiring {
		i := slices.IndexFunc(credits, func(c tenantCredit) bool { return c.tenant == r.tenant })
		if i < 0 {
			i = len(credits)
			credits = append(credits, tenantCredit{tenant: r.tenant})
		}
		of = append(of, int32(i))
		if credits[i].gpus += r.Job.GPUs; credits[i].least == 0 || r.Job.GPUs < credits[i].least {
			credits[i].least = r.Job.GPUs
		}
	}
	a.credits, a.creditOf = credits, of
	// A tenant with waiting jobs is never early: if a waiting demand fits
	// with its expiring jobs let go, it fits the view of the late ones,
	// whichever the early ones are, and no account need be read.
	withWaiting := a.freeView(s, credits, func(c *tenantCredit) bool { return len(s.pendingByTenant[c.tenant]) > 0 })
	for _, ds := range s.pendingByTenant {
		if withWaiting.fitsAny(ds, s.nodes.largest) {
			return false
		}
	}
	all := a.freeView(s, credits, nil)
	lo := math.Inf(1) // the lowest ρ of a waiting tenant that matters
	for ti, ds := range s.pendingByTenant {
		if f := s.freshByTenant[ti]; len(f) > 0 {
			// Its first pick: it leaves play at its first turn if that
			// does not fit.
			a.first[0] = demandCount{d: f[0].Job.GPUs, n: 1}
			ds = a.first[:]
		}
		if !all.fitsAny(ds, s.nodes.largest) {
			continue
		}
		acct, ok := a.tenantAccount(s, ti)
		if !ok || math.IsNaN(float64(acct.Rho)) {
			return false
		}
		lo = min(lo, float64(acct.Rho))
	}
	for i := range credits {
		c := &credits[i]
		if len(s.pendingByTenant[c.tenant]) > 0 {
			continue // late: its own jobs may come before its renewals
		}
		acct, ok := a.tenantAccount(s, int(c.tenant))
		if !ok {
			return false
		}
		// Its ρ when it is picked for its last renewal: pre-credited for
		// the others, at most all but the smallest.
		rho := float64(ledger.Ratio(acct.Alloc+ledger.GPUSeconds(float64(c.gpus-c.least)*lease.Seconds()), acct.FairShare))
		c.early = rho*(1+1e-9)+1e-12 < lo
	}
	late := a.freeView(s, credits, func(c *tenantCredit) bool { return !c.early })
	for _, ds := range s.pendingByTenant {
		if late.fitsAny(ds, s.nodes.largest) {
			return false
		}
	}
	return true
}

// tenantAccount reads tenant s.tenants[ti]'s account and keeps it for the
// round (see roundAccounts).
func (a *Astraea) tenantAccount(s *State, ti int) (ledger.Account, bool) {
	acct, ok := s.Accounts.TenantAccount(ledger.TenantID(s.tenants[ti]))
	if ok {
		a.tenantReads = append(a.tenantReads, readAccount{id: s.tenants[ti], a: acct})
	}
	return acct, ok
}

// freeView is the largest free block and the free GPUs of a view of the
// cluster.
type freeView struct{ largest, total int }

// fitsAny reports whether one of the demands ds fits the view under strict
// consolidation: a demand no larger than the largest node (of size node)
// on one node, a larger one in all.
func (v freeView) fitsAny(ds []demandCount, node int) bool {
	for _, x := range ds {
		if x.d <= node && x.d <= v.largest || x.d > node && x.d <= v.total {
			return true
		}
	}
	return false
}

// freeView returns the free GPUs plus those of the expiring jobs whose
// tenant's credit is released (every one when released is nil); the
// credits are renewsFirst's, a.creditOf[k] that of s.Expiring[k].
func (a *Astraea) freeView(s *State, credits []tenantCredit, released func(*tenantCredit) bool) freeView {
	n := len(credits) // the credits released
	if released != nil {
		n = 0
		for i := range credits {
			if released(&credits[i]) {
				n++
			}
		}
	}
	var gains []nodeGain
	switch n {
	case 0: // no expiring job lets go: the free GPUs alone
	case len(credits): // every one: the gains of the round, computed once
		gains = a.nodeGains(s)
	default:
		gains = a.viewGains[:0]
		for k, r := range s.Expiring {
			if !released(&credits[a.creditOf[k]]) {
				continue
			}
			gains = addSlots(gains, s.nodes, r)
		}
		s.nodes.unmark(gains)
		a.viewGains = gains
	}
	v := freeView{largest: s.Cluster.LargestFree(), total: s.Cluster.Free()}
	for _, g := range gains {
		v.largest = max(v.largest, s.nodes.freeAt(g.ix)+g.gpus)
		v.total += g.gpus
	}
	return v
}

// tenantCredit is the GPUs a tenant's renewals pre-credit (see renewsFirst).
type tenantCredit struct {
	tenant int32
	gpus   int
	least  int  // the smallest demand among them
	early  bool // its expiring jobs are renewed before any waiting job is tried
}

// renewAll renews every expiring job in place: what a round decides when
// no waiting job can get GPUs even if every expiring job let go (the
// backfill stage renews those of tenants that left play).
func (a *Astraea) renewAll(s *State, lease time.Duration) Decision {
	gs := a.grants[:0]
	for _, r := range s.Expiring {
		gs = append(gs, Grant{Job: r.Job.ID, Placement: r.Placement, Lease: lease, Renew: true})
	}
	a.grants = gs
	return Decision{Grants: gs, renewsExpiring: s.plans}
}

// inPlace is the cluster as a round's Placer without its Clone: the round
// then looks at the optimistic view (expiring jobs released) by freeing
// the few expiring jobs' GPUs for a moment (PlaceWithout), instead of
// copying the cluster, after which every write to either copy would copy
// B-tree nodes. A tick has a handful of expiring jobs. It has no
// Allocation either: the running candidates are the engine's own running
// jobs, so the round need not check each against the cluster.
//
// On the engine's cluster (nodes set) it answers a look that cannot fit
// without asking the cluster: under strict consolidation (the engine's
// cluster, which never drains a node) a demand no larger than the largest
// node fits where some node has that many GPUs free, and a larger one
// fits where that many are free in all (see placement.StrictConsolidation).
// The round's own allocations and releases are tracked (moved) so that a
// node's free GPUs are the engine's count plus what the round changed.
type inPlace struct {
	c     *placement.Cluster
	nodes *nodeFree   // the engine's free counts at the start of the round, or nil
	exp   []*JobState // the expiring jobs, whose placements a look frees
	moved []nodeGain  // GPUs each node gained (or lost) in the round so far
	gains []nodeGain  // scratch of PlaceWithout
	// the last no-fit errors of Place and PlaceWithout, and the sentences
	// of oneNodeReason by (demand, largest free block)
	nofitNow, nofitLook placement.NoFitError
	reasons             []string
}

// reset readies p for a round on s.
func (p *inPlace) reset(s *State) {
	p.c, p.nodes, p.exp = s.Cluster, s.nodes, s.Expiring
	p.moved = p.moved[:0]
}

func (p *inPlace) Place(d int) (placement.Placement, error) {
	if p.nodes != nil {
		if err := p.noFit(d, nil, &p.nofitNow); err != nil {
			return placement.Placement{}, err
		}
	}
	return p.c.Place(d)
}

func (p *inPlace) Fits(d int) bool { return p.c.Fits(d) }

func (p *inPlace) Allocate(id string, q placement.Placement) error {
	if err := p.c.Allocate(id, q); err != nil {
		return err
	}
	p.move(q, -1)
	return nil
}

func (p *inPlace) Release(id string) (placement.Placement, error) {
	q, err := p.c.Release(id)
	if err == nil {
		p.move(q, +1)
	}
	return q, err
}

func (p *inPlace) Free() int { return p.c.Free() }

// move records that q's GPUs were released (sign +1) or allocated (−1).
func (p *inPlace) move(q placement.Placement, sign int) {
	if p.nodes == nil {
		return
	}
	for _, sl := range q.Slots {
		p.moved = addGain(p.moved, sl.Node, p.nodes.index(sl.Node), sign*len(sl.GPUs))
	}
}

// addGain adds gpus to node's entry of gains (made on first sight); ix is
// its number in the engine's free counts, or −1 where there are none (the
// node's name is then its key).
func addGain(gains []nodeGain, node string, ix int32, gpus int) []nodeGain {
	for i := range gains {
		if g := &gains[i]; g.ix == ix && (ix >= 0 || g.node == node) {
			g.gpus += gpus
			return gains
		}
	}
	return append(gains, nodeGain{node: node, ix: ix, gpus: gpus})
}

// addSlots adds the GPUs of each of js's slots to its node's entry of
// gains, by the nodes' numbers in n (nil: by their names). With n, it
// finds a numbered node's entry through n's marks in O(1) instead of
// scanning gains: a list of gains built so starts empty and ends with
// n.unmark.
func addSlots(gains []nodeGain, n *nodeFree, js *JobState) []nodeGain {
	for k, sl := range js.Placement.Slots {
		ix := int32(-1)
		if n != nil {
			ix = n.slotNode(js, k)
		}
		if ix < 0 {
			gains = addGain(gains, sl.Node, ix, len(sl.GPUs))
			continue
		}
		if at := n.mark[ix]; at > 0 {
			gains[at-1].gpus += len(sl.GPUs)
			continue
		}
		gains = append(gains, nodeGain{node: sl.Node, ix: ix, gpus: len(sl.GPUs)})
		n.mark[ix] = int32(len(gains))
	}
	return gains
}

// nodeFree returns the free GPUs now of g's node: the engine's count at
// the start of the round plus what the round moved.
func (p *inPlace) nodeFree(g nodeGain) int {
	f := p.nodes.freeAt(g.ix)
	for _, m := range p.moved {
		if m.ix == g.ix && (g.ix >= 0 || m.node == g.node) {
			f += m.gpus
		}
	}
	return f
}

// noFit returns the cluster's no-fit error for d GPUs if they would not fit
// with the given nodes' GPUs freed, or nil if they would. The error is
// into, valid until into is used again (a round reads it at once). O(log
// nodes + gains × moved).
func (p *inPlace) noFit(d int, gains []nodeGain, into *placement.NoFitError) error {
	largest, total := p.c.LargestFree(), p.c.Free()
	for _, g := range gains {
		largest = max(largest, p.nodeFree(g)+g.gpus)
		total += g.gpus
	}
	maxNodes := 1
	if d > p.nodes.largest {
		if total >= d {
			return nil
		}
		maxNodes = 0
	} else if largest >= d {
		return nil
	}
	// What placement.Cluster reports; the round reads the numbers only.
	*into = placement.NoFitError{Demand: d, MaxNodes: maxNodes, LargestFree: largest, FreeTotal: total}
	if maxNodes == 1 {
		into.Reason = p.oneNodeReason(d, largest)
	} else {
		into.Reason = "needs " + strconv.Itoa(d) + ", only " + strconv.Itoa(total) + " free in total (largest free block is " + strconv.Itoa(largest) + ")"
	}
	return into
}

// oneNodeReason is the no-fit sentence for d GPUs on one node when the
// largest free block is largest, made once for each pair (both are at most
// the largest node's GPUs).
func (p *inPlace) oneNodeReason(d, largest int) string {
	n := p.nodes.largest + 1
	if d < 0 || d >= n || largest < 0 || largest >= n {
		return oneNodeSentence(d, largest)
	}
	if len(p.reasons) != n*n {
		p.reasons = make([]string, n*n)
	}
	r := &p.reasons[d*n+largest]
	if *r == "" {
		*r = oneNodeSentence(d, largest)
	}
	return *r
}

// oneNodeSentence is placement's no-fit sentence under strict
// consolidation.
func oneNodeSentence(d, largest int) string {
	return "needs " + strconv.Itoa(d) + " on ≤ 1 node, largest free block is " + strconv.Itoa(largest)
}

// PlaceWithout takes the round's optimistic look in one call (see
// placement.Cluster.PlaceWithout): the expiring jobs' GPUs are freed for a
// moment and held again, without releasing and allocating the jobs. A look
// that cannot fit is answered from the free counts.
func (p *inPlace) PlaceWithout(d int, ids []string) (placement.Placement, error) {
	if p.nodes != nil {
		gains, known := p.gains[:0], 0
		for _, id := range ids {
			for _, r := range p.exp {
				if idhash.Equal(r.Job.ID, id) {
					gains = addSlots(gains, p.nodes, r)
					known++
					break
				}
			}
		}
		p.nodes.unmark(gains)
		p.gains = gains
		if known == len(ids) {
			if err := p.noFit(d, gains, &p.nofitLook); err != nil {
				return placement.Placement{}, err
			}
		}
	}
	return p.c.PlaceWithout(d, ids)
}

// roundPlan is a round left on the engine's cluster: its grants allocated,
// the expiring jobs it did not renew released. The decision made of it
// carries it, and the engine, instead of releasing and allocating those
// jobs again, takes the cluster as it is when the decision it applies is
// still that one (see matches); otherwise it undoes the round first. A
// plan is valid until the policy's next round.
type roundPlan struct {
	c   *placement.Cluster
	res sched.Result
}

// matches reports whether d is still the decision made of the round: the
// same grants and preemptions in the same order (a policy wrapping ASTRAEA
// may have changed it). O(grants + preemptions).
func (p *roundPlan) matches(d Decision) bool {
	if len(d.Grants) != len(p.res.Grants) || len(d.Preempt) != len(p.res.Released) {
		return false
	}
	for i, r := range p.res.Released {
		if d.Preempt[i] != string(r.Job) {
			return false
		}
	}
	for i, g := range p.res.Grants {
		dg := &d.Grants[i]
		if dg.Job != string(g.Job) || dg.Renew != (g.Kind == sched.Renewed) || !samePlacement(dg.Placement, g.Placement) {
			return false
		}
	}
	return true
}

// undo restores the cluster as it was before the round.
func (p *roundPlan) undo() error { return undoRound(p.c, p.res) }

// undoRound restores the cluster a round planned on: the new grants are
// released (a moved job's new placement included), then the running jobs
// the round released get their GPUs back. O(grants + releases) placer
// operations.
func undoRound(c *placement.Cluster, res sched.Result) error {
	for _, g := range res.Grants {
		if g.Kind != sched.Renewed {
			if _, err := c.Release(string(g.Job)); err != nil {
				return fmt.Errorf("undo grant of %s: %w", g.Job, err)
			}
		}
	}
	for _, r := range res.Released {
		if err := c.Allocate(string(r.Job), r.Placement); err != nil {
			return fmt.Errorf("undo release of %s: %w", r.Job, err)
		}
	}
	return nil
}

// anyFits reports whether some pending job could be placed on the free GPUs.
// O(distinct pending demands) placement checks.
func anyFits(s *State) bool {
	free := s.Cluster.Free()
	for _, d := range s.PendingDemands {
		if d > free {
			return false
		}
		if s.Cluster.Fits(d) {
			return true
		}
	}
	return false
}

// fitsReleased reports whether some pending job could be placed if every
// expiring job let go of its GPUs: the optimistic view at the start of a
// round, the most any pending job can hope for during it (the round's views
// only lose GPUs, and placement.Cluster's Fits is monotone in the free
// GPUs). When it is false, the round grants no pending job, preempts
// nothing and renews every expiring job.
//
// It reads that view without building it where it can: a demand fits if
// one node would have it free (the GPUs a node gains come from the expiring
// jobs' slots); a larger one fits if it may span nodes (the cluster's own
// Fits says so when enough GPUs are free now and no node has the demand
// free) and enough GPUs would be free in all. Cost: nodeGains, then
// O(log nodes) for each of the e nodes the expiring jobs use (O(1) with the
// engine's free counts), plus one Fits per distinct pending demand up to
// the GPUs that would be free. Where that does not settle it, it
// releases the expiring jobs for a moment and asks the cluster (see
// fitsReleasedSlow).
func (a *Astraea) fitsReleased(s *State, expGPUs int) (bool, error) {
	c := s.Cluster
	ds := s.PendingDemands
	if len(ds) == 0 || ds[0] > c.Free()+expGPUs {
		return false, nil
	}
	if ds[0] <= c.LargestFree() {
		return true, nil // fits on one node even now
	}
	largest, free := c.LargestFree(), c.Free()
	for _, g := range a.nodeGains(s) {
		if s.nodes != nil {
			largest = max(largest, s.nodes.freeAt(g.ix)+g.gpus)
			free += g.gpus
			continue
		}
		n, ok := c.Node(g.node)
		if !ok || n.Draining {
			return fitsReleasedSlow(s)
		}
		largest = max(largest, n.Free+g.gpus)
		free += g.gpus
	}
	if ds[0] <= largest {
		return true, nil
	}
	// Every pending demand is more than one node would have free: it fits
	// only across nodes.
	for _, d := range ds {
		if d > free {
			break
		}
		if c.Free() < d {
			return fitsReleasedSlow(s)
		}
		if c.Fits(d) {
			// No node has d free now, yet d fits: it may span nodes.
			return true, nil
		}
	}
	return false, nil
}

// nodeGains returns the GPUs each node would gain if the expiring jobs let
// go, computed once per round (fitsReleased, renewsFirst and the trimmer
// ask for them). O(slots of the expiring jobs × nodes they use) the first
// time.
func (a *Astraea) nodeGains(s *State) []nodeGain {
	if a.gainsOK && a.gainsNodes == s.nodes {
		return a.gains
	}
	gains := a.gains[:0]
	for _, r := range s.Expiring {
		gains = addSlots(gains, s.nodes, r)
	}
	s.nodes.unmark(gains)
	a.gains, a.gainsOK, a.gainsNodes = gains, true, s.nodes
	return gains
}

// nodeGain is the GPUs a node would gain if the expiring jobs let go.
type nodeGain struct {
	node string
	ix   int32 // its number in the engine's free counts, −1 without them
	gpus int
}

// fitsReleasedSlow answers fitsReleased by releasing the expiring jobs for
// a moment and restoring them: O(e log nodes) placer operations for e
// expiring jobs, plus one Fits per distinct pending demand.
func fitsReleasedSlow(s *State) (bool, error) {
	released := 0
	var err error
	for _, r := range s.Expiring {
		if _, err = s.Cluster.Release(r.Job.ID); err != nil {
			break
		}
		released++
	}
	fits := false
	if err == nil {
		fits = anyFits(s)
	}
	for _, r := range s.Expiring[:released] {
		if aerr := s.Cluster.Allocate(r.Job.ID, r.Placement); aerr != nil && err == nil {
			err = aerr
		}
	}
	if err != nil {
		return false, fmt.Errorf("optimistic look: %w", err)
	}
	return fits, nil
}

// trimmer leaves out of a round the pending jobs that cannot change its
// outcome. It relies on these facts:
//
//   - New jobs of a tenant rank in submission order under sched.NewJobFirst:
//     all have ρ_job = 0 (owed something, received nothing), except those
//     submitted at this very instant (ρ = 1, 0/0), which come last in
//     submission order anyway; ties go by submit time, then id.
//   - In a round the GPUs a new job can use only shrink (the optimistic view
//     loses every grant and renewal), and placement.Cluster's Fits is
//     monotone in the free GPUs; so once a demand d fails, every later try
//     of d fails, and at most ⌊F/d⌋ jobs of demand d are granted, F being the
//     free GPUs of the optimistic view at the start of the round.
//   - Hence for each (tenant, demand d) only the first ⌊F/d⌋ + 1 new jobs in
//     submission order can be granted or be the pick that sends the tenant
//     out of play (the first ⌊F/d⌋ + 1 if d fits the optimistic view, else the
//     first one); the others fail wherever they are tried. The trimmer keeps
//     ⌊F/d⌋ + 1 whenever d ≤ F, a superset that needs no placement.
//   - On the engine's consolidated cluster a gang of d GPUs, d no larger
//     than a node, takes d GPUs of one node, so at most Σ_n ⌊free_n/d⌋ of
//     them fit the optimistic view: the trimmer keeps that many + 1 when it
//     is fewer (see perNode).
//   - A job with d > F never fits. Only the first such job of a tenant in
//     its Phase 2 order matters: the fair stage stops serving the tenant
//     there at the latest.
//   - Suspended jobs (they ran before) come after every new job of their
//     tenant, ordered by ρ_job, then submission, then id: the trimmer reads
//     their ρ_job and applies the same bounds in that order.
//
// The round's grants and releases are therefore exactly those of a round
// over all candidates; only the list of waiting jobs is shorter.
type trimmer struct {
	free int

	// Every waiting job the trimmer has seen has a record (JobState.trim)
	// with its groups and its ρ_job memo: a job costs no lookup per round.
	// A group is a key (tenant, or "" for the single-level variant, and
	// demand; demand 0 gathers the demands above F); keys keep
	// their index from round to round, and the per-round state of group gi
	// is counts[gi] (new jobs kept), blocked[gi] (a demand-0 group: the
	// tenant's first impossible job is kept) and groups[gi] (its suspended
	// jobs). used lists the groups touched this round, oldKeys those with
	// suspended jobs.
	index   map[trimKey]int32
	keys    []trimKey
	counts  []int32
	blocked []bool
	groups  [][]*waiting
	used    []int32
	oldKeys []int32

	// epoch is the origin of the memos' times (see roundClock).
	epoch    time.Time
	epochSet bool

	kept    []*JobState
	reads   []readAccount // the accounts of jobs kept after a read this round
	ranked  []oldJob
	bounded []boundRef // jobs of a group with a lower bound on ρ_job
	// optimistic view by node (see perNode): hist[f] nodes with f free
	// GPUs, the largest node, and each demand's limit + 1 (0: not yet)
	hist    []int
	largest int
	lim     []int

	// the lasting groups of suspended jobs by (tenant, demand), where the
	// engine reports them (see suspGroup), and the scratch of
	// selectSuspended
	susp   []suspGroup
	suspIx map[trimKey]int32
	// held has bit i set when group susp[i] has members: a round visits
	// those groups only, in the order of their indices
	held    []uint64
	over    []overBest
	horizon time.Duration // how long keys serve; 0: suspHorizon (tests shorten it)
}

// waiting is the trimmer's record of a waiting job.
type waiting struct {
	owner  *trimmer // the records of one policy only
	js     *JobState
	gpus   int   // js.Job.GPUs, here beside what a round reads of the job
	gi, gz int32 // groups (tenant, demand) and (tenant, 0); -1 until needed
	// sg is its lasting group while it waits suspended (see suspGroup),
	// −1 otherwise; six its index there
	sg, six int32
	memo    rhoMemo
}

type trimKey struct {
	tenant string
	demand int
}

// wait returns js's record, made on first sight.
func (t *trimmer) wait(js *JobState) *waiting {
	w := &js.trim
	if w.owner != t || w.js != js {
		*w = waiting{owner: t, js: js, gpus: js.Job.GPUs, gi: -1, gz: -1, sg: -1, six: -1}
	}
	return w
}

// group returns the index of key (tenant or "", d), touched this round.
func (t *trimmer) group(tenant string, d int, single bool) int32 {
	if single {
		tenant = ""
	}
	k := trimKey{tenant, d}
	gi, added := keyIndex(&t.index, k, len(t.keys))
	if added {
		t.keys = append(t.keys, k)
		t.counts = append(t.counts, 0)
		t.blocked = append(t.blocked, false)
		t.groups = append(t.groups, nil)
	}
	return gi
}

// keyIndex returns k's index in *ix; a key first seen gets next (added).
func keyIndex(ix *map[trimKey]int32, k trimKey, next int) (i int32, added bool) {
	if i, ok := (*ix)[k]; ok {
		return i, false
	}
	if *ix == nil {
		*ix = make(map[trimKey]int32)
	}
	(*ix)[k] = int32(next)
	return int32(next), true
}

// groupOf returns w's group this round: (tenant, demand), or (tenant, 0)
// for a demand above F.
func (t *trimmer) groupOf(w *waiting, single bool) int32 {
	if w.gpus > t.free {
		if w.gz < 0 {
			w.gz = t.group(w.js.Job.Tenant, 0, single)
		}
		return w.gz
	}
	if w.gi < 0 {
		w.gi = t.group(w.js.Job.Tenant, w.gpus, single)
	}
	return w.gi
}

// touch marks group gi as used this round.
func (t *trimmer) touch(gi int32) {
	if t.counts[gi] == 0 && !t.blocked[gi] && len(t.groups[gi]) == 0 {
		t.used = append(t.used, gi)
	}
}

func (t *trimmer) addOld(js *JobState, single bool) {
	w := t.wait(js)
	gi := t.groupOf(w, single)
	t.touch(gi)
	if len(t.groups[gi]) == 0 {
		t.oldKeys = append(t.oldKeys, gi)
	}
	t.groups[gi] = append(t.groups[gi], w)
}

// selectOld returns the suspended jobs the round needs: for a demand d ≤ F,
// the first ⌊F/d⌋ + 1 of each (tenant, d) in Phase 2 order, less the new
// jobs already kept; for demands above F, a tenant's first one in Phase 2
// order unless a new job already plays that part. ρ_job is read only for
// groups larger than what is kept, and there only where a lower bound on it
// (see bound) does not already place the job behind the ones kept. The
// result is in no particular order (the round orders candidates itself).
func (t *trimmer) selectOld(acc sched.Accounts, now time.Time) []*JobState {
	clock := t.clock(now)
	for _, gi := range t.oldKeys {
		k, g := t.keys[gi], t.groups[gi]
		n := 1 // demands above F: the tenant's first one
		if k.demand > 0 {
			n = t.limit(k.demand) + 1 - int(t.counts[gi])
		} else if t.blocked[gi] {
			n = 0
		}
		if n <= 0 {
			continue
		}
		if len(g) <= n {
			for _, w := range g {
				t.kept = append(t.kept, w.js)
			}
			continue
		}
		for _, o := range t.firstOld(acc, clock, g, n) {
			t.kept = append(t.kept, o.js)
			if o.w != nil {
				m := &o.w.memo
				t.reads = append(t.reads, readAccount{id: o.js.Job.ID, a: ledger.Account{Alloc: ledger.GPUSeconds(m.alloc), FairShare: ledger.GPUSeconds(m.fair), Rho: o.rho}})
			}
		}
		wipe(t.ranked)
		t.ranked = t.ranked[:0]
		wipe(t.bounded)
		t.bounded = t.bounded[:0]
	}
	return t.kept
}

// firstOld returns the n first jobs of g (n < len(g)) in Phase 2 order.
// Jobs with a lower bound on their ρ_job are not read at first; the others
// are. Then the bounded jobs are read in increasing order of their bounds
// until n jobs are read and the next bound is above τ, the n-th ρ read so
// far: a job left unread has ρ ≥ bound > τ, so it ranks behind n jobs read,
// and the n first of the jobs read are the n first of g. O(len(g) + r log
// len(g)) for r jobs read.
func (t *trimmer) firstOld(acc sched.Accounts, now roundClock, g []*waiting, n int) []oldJob {
	read, bounded, first := t.split(acc, now, g, n)
	if len(read) >= n {
		// τ only falls from here, so a job whose bound is above it now
		// is never read: leave it out of the heap.
		keep := bounded[:0]
		for _, b := range bounded {
			if !(b.lo > read[0].rho) {
				keep = append(keep, b)
			}
		}
		bounded = keep
	}
	// The bounded jobs are read in increasing order of their bounds: the
	// few lowest (most rounds read no more) from a short sorted front,
	// then, if need be, the rest from a heap.
	front := lowestFirst(bounded, lowFront)
	stop := false
	for _, b := range bounded[:front] {
		if read, stop = t.readBounded(acc, now, read, n, b); stop {
			break
		}
	}
	if rest := bounded[front:]; !stop && len(rest) > 0 {
		for i := len(rest)/2 - 1; i >= 0; i-- {
			siftBound(rest, i)
		}
		for len(rest) > 0 {
			b := rest[0]
			last := len(rest) - 1
			rest[0] = rest[last]
			rest = rest[:last]
			siftBound(rest, 0)
			if read, stop = t.readBounded(acc, now, read, n, b); stop {
				break
			}
		}
	}
	t.ranked = read[:max(first, len(read))] // all written, cleared by selectOld
	return read
}

// split reads the jobs of g without a lower bound on their ρ_job and
// lists the others with theirs (in t.bounded, cleared by the caller), and
// returns the jobs read, the n first of them in read[:n] as a max-heap
// rooted at τ when there are n (read is then cut to them), and how many
// were read. O(len(g) + r log n) for r jobs read.
func (t *trimmer) split(acc sched.Accounts, now roundClock, g []*waiting, n int) (read []oldJob, bounded []boundRef, first int) {
	read, bounded = t.ranked[:0], t.bounded[:0]
	for _, w := range g {
		if lo, ok := w.bound(now); ok {
			bounded = append(bounded, boundRef{lo: lo, w: w})
			continue
		}
		read = append(read, w.read(acc, now))
	}
	t.bounded = bounded // the whole array
	first = len(read)
	if len(read) >= n {
		firstN(read, n)
		read = read[:n]
	}
	return read, bounded, first
}

// readBounded reads b, the bounded job with the lowest bound not yet read,
// into read (the n first read so far: a max-heap rooted at τ once full),
// unless every job left already ranks behind them (stop: its bound, the
// lowest left, is above τ).
func (t *trimmer) readBounded(acc sched.Accounts, now roundClock, read []oldJob, n int, b boundRef) ([]oldJob, bool) {
	if len(read) >= n && b.lo > read[0].rho {
		return read, true // every job left has ρ ≥ its bound > τ
	}
	o := b.w.read(acc, now)
	switch {
	case len(read) < n:
		if read = append(read, o); len(read) == n {
			firstN(read, n)
		}
	case oldBefore(&o, &read[0]):
		read[0] = o
		siftOld(read, 0)
	}
	return read, false
}

// lowFront is how many of a group's lowest bounds firstOld puts in order
// before it falls back to a heap: a round reads about five of them.
const lowFront = 8

// lowestFirst moves the k lowest bounds of h (all of them if fewer) to the
// front of h, in increasing order, and returns how many it moved; the rest
// follow in no particular order, none below them. O(len(h) × k) at worst,
// one comparison for most of them.
func lowestFirst(h []boundRef, k int) int {
	k = min(k, len(h))
	for i := 1; i < k; i++ { // the first k, sorted by insertion
		for j := i; j > 0 && h[j].lo < h[j-1].lo; j-- {
			h[j], h[j-1] = h[j-1], h[j]
		}
	}
	for i := k; i < len(h); i++ {
		if !(h[i].lo < h[k-1].lo) {
			continue
		}
		x := h[i]
		h[i] = h[k-1]
		j := k - 1
		for ; j > 0 && x.lo < h[j-1].lo; j-- {
			h[j] = h[j-1]
		}
		h[j] = x
	}
	return k
}

// roundClock is the time of a round as the trimmer's memos use it.
type roundClock struct {
	now   time.Time
	at    time.Duration // now, as an offset from the trimmer's epoch
	exact bool          // at did not saturate: differences of offsets are exact
	scale float64       // marginScale(now)
}

// clock returns now as a roundClock; the first call sets the epoch.
func (t *trimmer) clock(now time.Time) roundClock {
	if !t.epochSet {
		t.epoch, t.epochSet = now, true
	}
	at := now.Sub(t.epoch)
	return roundClock{now: now, at: at, exact: at > math.MinInt64 && at < math.MaxInt64, scale: marginScale(now)}
}

// rhoMemo is what the trimmer keeps of a suspended job's account from one
// round to the next, to bound its ρ_job without reading it.
type rhoMemo struct {
	alloc, fair float64       // the account read at `at`
	at          time.Duration // when the account was read (roundClock.at)
	// leases is the job's Leases then (a grant since voids the memo), in
	// 32 bits, which keeps a job's record in a smaller size class: a count
	// that does not fit never matches (see sameLeases)
	leases int32
	exact  bool // at is exact (see roundClock)
	// settled: two reads at different times found the same Alloc, so the
	// job held no GPUs in between (its checkpoint was written); it holds
	// none until its next grant, and its Alloc stays as it is.
	settled bool
	read    bool // the memo holds a read
}

// sameLeases reports whether js has had no lease since the memo's read.
func (m *rhoMemo) sameLeases(js *JobState) bool {
	return js.Leases < math.MaxInt32 && int(m.leases) == js.Leases
}

// read reads the job's ρ_job (1 without an account; the round reports the
// missing account) and remembers the account.
func (w *waiting) read(acc sched.Accounts, now roundClock) oldJob {
	js := w.js
	a, ok := acc.JobAccount(ledger.JobID(js.Job.ID))
	if !ok {
		return oldJob{js: js, rho: 1}
	}
	prev := w.memo
	w.memo = rhoMemo{
		alloc: float64(a.Alloc), fair: float64(a.FairShare), at: now.at, exact: now.exact, leases: int32(min(js.Leases, math.MaxInt32)), read: true,
		settled: prev.read && prev.exact && now.exact && prev.sameLeases(js) && prev.at < now.at && prev.alloc == float64(a.Alloc),
	}
	return oldJob{js: js, rho: a.Rho, w: w}
}

// bound returns a lower bound on the job's ρ_job now, if its account was
// read while it waited and held no GPUs. Alloc has not moved since; the
// fair share ∫min(D, …) has grown by at most D per second (lowRho adds the
// margin for rounding). The bound relies on the accounts being
// cumulative, as in the engine's ledger (unbounded history): with a
// trailing window or a half-life, Alloc would shrink as time passes.
// A settled memo and now are exact offsets (see roundClock), so their
// difference is the exact time since the read.
func (w *waiting) bound(now roundClock) (ledger.Rho, bool) {
	m, js := &w.memo, w.js
	if !m.settled || !m.sameLeases(js) || !now.exact || now.at < m.at {
		return 0, false
	}
	d := float64(w.gpus)
	return lowRho(m.alloc, m.fair+d*(now.at-m.at).Seconds(), d, now.scale), true
}

// marginScale is the size, in seconds, that lowRho's margin for rounding
// scales with at time now: the seconds since the epoch, plus 10⁹.
func marginScale(now time.Time) float64 {
	return math.Abs(float64(now.Unix())) + 1e9
}

// lowRho is a lower bound on alloc ÷ the ledger's fair share, given an
// upper bound fair on that share in exact arithmetic: the margin is far
// above the rounding of the ledger's cumulative sums, whose size is at most
// d × seconds since the epoch; scale is marginScale of the time of the
// bound.
func lowRho(alloc, fair, d, scale float64) ledger.Rho {
	if alloc <= 0 {
		return 0
	}
	margin := d * 1e-12 * scale
	return ledger.Rho(alloc / (fair + margin) * (1 - 1e-12))
}

// oldBefore is the Phase 2 order of suspended jobs: lowest ρ_job, then
// submission, then id (a strict total order: ids are unique).
func oldBefore(x, y *oldJob) bool {
	// Not cmp.Or, which would compare the jobs even when ρ differs (the
	// usual case), on the hottest path of the trimmer.
	if c := x.rho.Compare(y.rho); c != 0 {
		return c < 0
	}
	return compareJobs(x.js, y.js) < 0
}

// firstN moves the n first jobs of r in oldBefore order to r[:n] and
// returns them, in no particular order: a max-heap of the n best seen so
// far, O(len(r) log n) instead of a full sort.
func firstN(r []oldJob, n int) []oldJob {
	h := r[:n]
	for i := n/2 - 1; i >= 0; i-- {
		siftOld(h, i)
	}
	for i := n; i < len(r); i++ {
		if oldBefore(&r[i], &h[0]) {
			h[0], r[i] = r[i], h[0]
			siftOld(h, 0)
		}
	}
	return h
}

// boundRef is a suspended job with a lower bound on its ρ_job.
type boundRef struct {
	lo ledger.Rho
	w  *waiting
}

// siftBound restores a min-heap of bounds below i.
func siftBound(h []boundRef, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].lo < h[l].lo {
			m = r
		}
		if !(h[m].lo < h[i].lo) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// siftOld restores a max-heap of jobs in Phase 2 order (firstN's) below i.
func siftOld(h []oldJob, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && oldBefore(&h[l], &h[r]) {
			m = r
		}
		if !oldBefore(&h[i], &h[m]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// perNode lets the trimmer bound the grants of a demand d no larger than a
// node by Σ_n ⌊free_n ÷ d⌋ over the optimistic view (the engine's free
// counts plus what the expiring jobs would free), instead of ⌊F ÷ d⌋: such
// a gang takes d GPUs of one node on the consolidated cluster, and a
// round's views only lose GPUs. O(nodes the expiring jobs use).
func (t *trimmer) perNode(n *nodeFree, gains []nodeGain) {
	t.hist = append(t.hist[:0], n.hist...)
	t.largest = n.largest
	for _, g := range gains {
		f := n.freeAt(g.ix)
		t.hist[f]--
		t.hist[f+g.gpus]++
	}
}

// limit is the most jobs of demand d a round can grant: ⌊F ÷ d⌋, or fewer
// when perNode gave per-node counts. O(GPUs per node) once per demand and
// round.
func (t *trimmer) limit(d int) int {
	if len(t.hist) == 0 || d > t.largest {
		return t.free / d
	}
	if d >= len(t.lim) {
		t.lim = append(t.lim, make([]int, d+1-len(t.lim))...)
	}
	if t.lim[d] > 0 {
		return t.lim[d] - 1
	}
	fit := 0
	for f := d; f < len(t.hist); f++ {
		fit += t.hist[f] * (f / d)
	}
	fit = min(fit, t.free/d)
	t.lim[d] = fit + 1
	return fit
}

func (t *trimmer) reset(free int) {
	t.free = free
	t.hist = t.hist[:0]
	clear(t.lim)
	for _, gi := range t.used {
		t.counts[gi], t.blocked[gi] = 0, false
		wipe(t.groups[gi])
		t.groups[gi] = t.groups[gi][:0]
	}
	t.used = t.used[:0]
	t.oldKeys = t.oldKeys[:0]
	wipe(t.kept)
	t.kept = t.kept[:0]
	wipe(t.reads)
	t.reads = t.reads[:0]
}

// keep reports whether the next new job in submission order, js, must be a
// candidate. It keeps limit(d) + 1 per (tenant, d) for d ≤ F (a superset
// of the bound above: it does not ask whether d fits at all), and of the
// jobs with d > F, which can never fit, only the tenant's first: it is the
// one that would send the tenant out of play.
func (t *trimmer) keep(js *JobState, single bool) bool {
	w := t.wait(js)
	gi := t.groupOf(w, single)
	t.touch(gi)
	if js.Job.GPUs > t.free {
		if t.blocked[gi] {
			return false
		}
		t.blocked[gi] = true
		return true
	}
	if int(t.counts[gi]) >= t.limit(js.Job.GPUs)+1 {
		return false
	}
	t.counts[gi]++
	return true
}

// openGroups is how many groups a tenant's new jobs of the distinct
// demands ds (ascending) fall in this round: one per demand no larger
// than F, and one for all the demands above it. Each can keep at least
// one job (keep). O(len(ds)).
func (t *trimmer) openGroups(ds []demandCount) int {
	for i, x := range ds {
		if x.d > t.free {
			return i + 1
		}
	}
	return len(ds)
}

// keepNew is keep for the next of a tenant's new jobs in submission
// order, js, which also reports whether js's group is full once js is
// kept: it keeps no other job this round (keep refuses every later one).
// Each group of the tenant's new jobs fills so once at most, so a round
// that has seen as many full groups as openGroups counts can leave the
// tenant's other new jobs out unseen.
func (t *trimmer) keepNew(js *JobState) (kept, full bool) {
	if !t.keep(js, false) {
		return false, false
	}
	d := js.Job.GPUs
	if d > t.free {
		return true, true // the tenant's first impossible job: blocked
	}
	return true, int(t.counts[js.trim.gi]) >= t.limit(d)+1
}

// renewsWhenIdle reports whether the policy, called at a tick at which
// nothing waits, always renews every expiring job in place and does
// nothing else (see renewAll; Schedule reads no account then), so that the
// engine may do so without building a state or a decision: not with
// reservations (another schedule), nor without the fast paths (a full
// round).
func (a *Astraea) renewsWhenIdle() bool {
	return a.opt.ReserveAfter == 0 && !a.exhaustive
}

// keepsSuspended reports whether the policy's rounds read the suspended
// jobs from lasting groups that the engine keeps up (see suspGroup): not
// with reservations (no trimming), for the single-level variant (one
// pseudo-tenant), or without the fast paths.
func (a *Astraea) keepsSuspended() bool {
	return a.opt.ReserveAfter == 0 && !a.opt.SingleLevel && !a.exhaustive && !a.perRound
}
