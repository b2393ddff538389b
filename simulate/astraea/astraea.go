// Package astraea is the ASTRAEA policy for the simulator: one [sched.Round]
// per scheduling tick over the pending jobs and the running jobs whose
// lease has ended, on a copy of the engine's cluster.
//
// The policy is a composition of sched's hooks and the cluster the engine
// gives it: Phase 1 picks the tenant with the lowest ρ_tenant, Phase 2 the
// job with the highest reward inside it (new-job priority, then −ρ_job),
// a grant pre-credits its tenant with demand × lease, a tenant whose pick
// does not fit leaves play, and a backfill stage fills what is left. It
// reads nothing of the engine but the exported [simulate.State], and knows
// neither Phase 2's order nor where a gang fits: sched and placement decide
// both, so a new reward, tenant order or placement mode needs no change
// here. Between ticks it keeps the waiting jobs in a [sched.Queue], which
// hands each round only those it can reach; the reward, the ledger and
// placement declare what makes that exact.
//
// Its variants are [Options]: Eq. 8 accounts, a single level (no tenant
// phase), no pre-credit, reservations for starving gangs, and the order of
// a tenant's new jobs (first in, first out, or smallest demand first).
// [Policies] lists the named variants the astraea command runs.
package astraea

import (
	"fmt"
	"math"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/sched"
	"github.com/astraea-sched/astraea/simulate"
)

// Options selects a variant of the ASTRAEA policy.
type Options struct {
	// Name is the policy's Name() ("astraea" for the paper's configuration).
	Name string
	// Accounts is the tenant fair-share mode the policy's accounts use:
	// ledger.QuotaShare (Eq. 16, the paper's simulator) or
	// ledger.DemandAware (Eq. 8). The engine keeps its policy ledger in
	// this mode (see simulate.AccountsModer).
	Accounts ledger.Mode
	// SingleLevel drops the tenant phase: every round picks among all
	// candidates by job reward alone (a job ledger only).
	SingleLevel bool
	// NoPreCredit turns off the lease pre-credit: Phase 1 reads every
	// tenant's account as it was when the round began (sched's
	// Options.PreCredit, sched.NoCredit).
	NoPreCredit bool
	// NewJobs orders a tenant's jobs that never ran, which all rank above
	// its other jobs: FIFO (the zero value, the first release's order) or
	// Smallest demand first.
	NewJobs NewJobOrder
	// ReserveAfter, if positive, guards large gangs against starvation,
	// which the paper's round does not: once the pick of the most
	// under-served tenant that left play (it did not fit) has been that
	// pick for ReserveAfter, the policy holds nodes for it through a
	// sched.Reserver (no new job lands there, their expiring jobs are not
	// renewed but tried elsewhere) and grants it there, ahead of the
	// round, as soon as they hold it. One reservation at a time. Zero, the
	// paper's policy, reserves nothing.
	ReserveAfter time.Duration

	// The rules below are not the paper's: they are the authors' public
	// simulator's, which the command's authors profile turns on.

	// NoBackfill ends the round when every tenant has left play
	// (sched.Options.NoBackfill): a tenant stops at its first job that
	// does not fit.
	NoBackfill bool
	// StarvedBelow, if positive, serves first, before the ρ order, every
	// tenant that holds fewer GPUs than StarvedBelow × its quota (rounded
	// down to whole GPUs), counting its running jobs whose lease goes on
	// and this round's grants (sched.TenantsFirst). The authors'
	// simulator uses 0.2.
	StarvedBelow float64
	// WaitFirstAfter, if positive, ranks first in its tenant every job
	// that has waited at least this long since it last ran (or since its
	// submission), the earliest submission first (sched.LongWaitFirst).
	// The authors' simulator uses six hours.
	WaitFirstAfter time.Duration
	// DisplaceYoung, if positive, lets a new job at which its tenant left
	// play in the fair stage (it did not fit) take the GPUs of its own
	// tenant's running jobs whose lease began less than DisplaceYoung ago:
	// after the round, if letting them go makes the job fit, those whose
	// GPUs it takes are aborted (simulate.Decision.Abort: no checkpoint,
	// the lease's work lost) and it is granted. The authors' simulator
	// uses 300 s; there the displacing job's tenant then goes on in the
	// round, here it does not.
	DisplaceYoung time.Duration
}

// NewJobOrder is the order among a tenant's jobs that never ran.
type NewJobOrder uint8

const (
	// FIFO serves new jobs in submission order, then by id
	// ([sched.NewJobFirst] with the default tie-break).
	FIFO NewJobOrder = iota
	// Smallest serves the new job of the smallest demand first, then
	// by submission, then by id ([sched.SmallestNewFirst]): a tenant whose
	// oldest new job is a gang that does not fit still gets its small
	// jobs started in the fair stage.
	Smallest
)

// String returns "fifo" or "smallest", the command's -new-jobs values.
func (o NewJobOrder) String() string {
	switch o {
	case FIFO:
		return "fifo"
	case Smallest:
		return "smallest"
	}
	return fmt.Sprintf("NewJobOrder(%d)", uint8(o))
}

// ParseNewJobOrder is the inverse of String. Any other text is an error
// matching simulate.ErrConfig.
func ParseNewJobOrder(s string) (NewJobOrder, error) {
	for _, o := range []NewJobOrder{FIFO, Smallest} {
		if s == o.String() {
			return o, nil
		}
	}
	return 0, fmt.Errorf("%w: new-job order %q: want fifo or smallest", simulate.ErrConfig, s)
}

// DefaultOptions is the paper's configuration: Eq. 16 tenant accounts, two
// levels, pre-credit, new-job priority in Phase 2 (first in, first out).
func DefaultOptions() Options {
	return Options{Name: "astraea", Accounts: ledger.QuotaShare}
}

// DefaultReserveAfter is how long the astraea-reserve variant lets the most
// under-served tenant's blocked gang wait before it holds nodes for it. A
// shorter wait starts large gangs sooner at a growing cost to tenant
// fairness on a saturated cluster (the nodes drained for a gang of one
// tenant serve no other tenant meanwhile): on the Venus snapshot, with 30
// minutes the average JCT is 19,783 s but 53 % of the tenant-hours are
// losses; with one hour 21,899 s and 45 %; with two hours 29,627 s and
// 44 %; without reservations 34,498 s and 42 %.
const DefaultReserveAfter = time.Hour

// Variants returns the named variants of o, o itself first: "astraea"
// (o), "astraea-eq8" (Eq. 8 tenant accounts), "astraea-single" (job
// ledger only, no tenant phase), "astraea-nocredit" (no lease pre-credit)
// and the extension "astraea-reserve" (reservations after
// DefaultReserveAfter). Each keeps o's other choices (e.g. NewJobs).
func Variants(o Options) []Options {
	o.Name = "astraea"
	eq8 := o
	eq8.Name, eq8.Accounts = "astraea-eq8", ledger.DemandAware
	single := o
	single.Name, single.SingleLevel = "astraea-single", true
	nc := o
	nc.Name, nc.NoPreCredit = "astraea-nocredit", true
	rsv := o
	rsv.Name, rsv.ReserveAfter = "astraea-reserve", DefaultReserveAfter
	return []Options{o, eq8, single, nc, rsv}
}

// Policies returns the variants of DefaultOptions by name (see Variants).
// The map is built on every call; a command adds other packages' policies
// (the baselines) to its own copy.
func Policies() map[string]simulate.Constructor {
	return Constructors(DefaultOptions())
}

// Constructors returns Variants(o) by name.
func Constructors(o Options) map[string]simulate.Constructor {
	m := make(map[string]simulate.Constructor, 5)
	for _, v := range Variants(o) {
		m[v.Name] = func() (simulate.Policy, error) { return New(v) }
	}
	return m
}

// Policy is the ASTRAEA policy (see the package comment).
type Policy struct {
	opt      Options
	opts     sched.Options
	reward   sched.Reward                    // the new-job order's reward
	held     map[ledger.TenantID]ledger.GPUs // StarvedBelow's, per tick
	expiring map[ledger.TenantID]ledger.GPUs
	rounds   sched.Rounder
	reserver sched.Reserver
	// reused between ticks: the engine does not keep a Decision
	cands   []sched.Candidate
	grants  []simulate.Grant
	preempt []string
	aborts  []string
	// DisplaceYoung's, per tick
	blocked []blocked
	young   []*simulate.JobState
	ids     []string
	// queue keeps the waiting jobs that hold no GPUs between rounds (nil
	// for a variant whose round needs them all); prev is the pending list
	// it was last brought up to date with.
	queue  *sched.Queue
	room   *placement.Room       // the tick's State.ExpiringRoom, during Append
	gangs  func(ledger.GPUs) int // p.room.Gangs
	prev   []pendingMark
	next   []pendingMark
	synced time.Time // the tick of the last sync
}

// pendingMark is a pending job as the queue last saw it.
type pendingMark struct {
	js      *simulate.JobState
	leases  int
	holding bool
}

// New returns the ASTRAEA policy with the given options.
func New(o Options) (*Policy, error) {
	if o.Name == "" {
		o.Name = "astraea"
	}
	if o.Accounts != ledger.QuotaShare && o.Accounts != ledger.DemandAware {
		return nil, fmt.Errorf("%w: astraea %s: unknown accounts mode %v", simulate.ErrConfig, o.Name, o.Accounts)
	}
	if !(o.StarvedBelow >= 0 && o.StarvedBelow <= 1) || o.WaitFirstAfter < 0 {
		return nil, fmt.Errorf("%w: astraea %s: StarvedBelow %v must lie in [0, 1] and WaitFirstAfter %v must not be negative", simulate.ErrConfig, o.Name, o.StarvedBelow, o.WaitFirstAfter)
	}
	if o.ReserveAfter < 0 || o.DisplaceYoung < 0 {
		return nil, fmt.Errorf("%w: astraea %s: ReserveAfter %v and DisplaceYoung %v must not be negative", simulate.ErrConfig, o.Name, o.ReserveAfter, o.DisplaceYoung)
	}
	p := &Policy{opt: o}
	p.reserver.After = o.ReserveAfter
	p.opts.NoBackfill = o.NoBackfill
	if o.NoPreCredit {
		p.opts.PreCredit = sched.NoCredit
	}
	switch o.NewJobs {
	case FIFO:
		p.reward = sched.NewJobFirst
	case Smallest:
		p.reward = sched.SmallestNewFirst
	default:
		return nil, fmt.Errorf("%w: astraea %s: unknown %v", simulate.ErrConfig, o.Name, o.NewJobs)
	}
	p.opts.Reward = p.reward
	if o.DisplaceYoung > 0 {
		p.opts.Trace = p.watch
	}
	// A reserving variant grants its held job ahead of the round, a
	// displacing one reads every blocked pick, and a long wait is a
	// class that changes with the clock: each needs every waiting job.
	if o.ReserveAfter == 0 && o.DisplaceYoung == 0 && o.WaitFirstAfter == 0 {
		p.queue = sched.NewQueue(sched.NeverRanFirst())
		p.gangs = func(d ledger.GPUs) int { return p.room.Gangs(int(d)) }
	}
	return p, nil
}

// Name returns the variant's name.
func (p *Policy) Name() string { return p.opt.Name }

// Traits tells the engine that the policy never reads running jobs'
// attained time (its decisions depend on the accounts only); that a tick
// at which no lease ends and no pending job fits the free GPUs changes
// nothing; and that where no pending job would fit even if every expiring
// job let go, the round renews them all (a renewal always succeeds, and the
// backfill stage tries every candidate). A reserving variant declares only
// the first: its reserver must watch every tick, and drains nodes; so does
// a displacing one, whose new jobs may fit by aborting young jobs at any
// tick.
func (p *Policy) Traits() simulate.Traits {
	if p.opt.ReserveAfter > 0 || p.opt.DisplaceYoung > 0 {
		return simulate.Traits{ProgressBlind: true}
	}
	if p.opt.NoBackfill {
		// Without backfill a tenant whose pick does not fit leaves play
		// with its expiring jobs unrenewed. The order rules (StarvedBelow,
		// WaitFirstAfter) change who goes first, never what fits, so they
		// keep both traits.
		return simulate.Traits{ProgressBlind: true, IdleWhenNothingFits: true}
	}
	return simulate.Traits{ProgressBlind: true, IdleWhenNothingFits: true, RenewsWhenNothingFits: true}
}

// AccountsMode reports the tenant fair-share mode the policy reads.
func (p *Policy) AccountsMode() ledger.Mode { return p.opt.Accounts }

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

func (s singleLevel) WaitingRhoFalls() bool { return s.v.WaitingRhoFalls() }

// Schedule runs one round: planned on the engine's cluster
// ([sched.Rounder.Plan]), or on a copy for a variant that reads the
// round's cluster afterwards (reservations, displacement). Cost: that of
// [sched.Round] over the expiring jobs and the pending jobs its
// [sched.Queue] hands it (every pending job for a variant without one, or
// under State.Exhaustive), plus the queue's upkeep (O(pending)) and the
// copy's (see placement.Cluster.Clone).
func (p *Policy) Schedule(s *simulate.State) (simulate.Decision, error) {
	lease := s.Lease
	if lease <= 0 {
		lease = simulate.DefaultLease
	}
	var acc sched.Accounts = s.Accounts
	if p.opt.SingleLevel {
		acc = singleLevel{s.Accounts}
	}
	cands, err := p.waiting(s, acc, p.cands[:0])
	if err != nil {
		return simulate.Decision{}, err
	}
	for _, js := range s.Expiring {
		cands = append(cands, p.candidate(js, true))
	}
	p.cands = cands
	p.timeRules(s)
	in := sched.Input{Accounts: acc, Candidates: cands, Lease: lease}
	p.blocked = p.blocked[:0]
	var res sched.Result
	var cluster *placement.Cluster // the round's copy, for displace
	if p.opt.ReserveAfter > 0 || p.opt.DisplaceYoung > 0 {
		cluster = s.Cluster.Clone()
		in.Placer = cluster
	}
	switch {
	case p.opt.ReserveAfter > 0:
		res, err = p.reserver.Round(&p.rounds, s.Now, in, p.opts)
	case cluster != nil:
		res, err = p.rounds.Round(in, p.opts)
	default:
		// The engine applies the decision: plan on its cluster, which
		// the plan leaves as it was, rather than on a copy.
		in.Placer = s.Cluster
		res, err = p.rounds.Plan(in, p.opts)
	}
	clear(p.cands)
	if err != nil {
		return simulate.Decision{}, fmt.Errorf("astraea round: %w", err)
	}
	gs := p.grants[:0]
	for _, g := range res.Grants {
		gs = append(gs, simulate.Grant{Job: string(g.Job), Placement: g.Placement, Lease: lease, Renew: g.Kind == sched.Renewed})
	}
	pre := p.preempt[:0]
	for _, r := range res.Released {
		pre = append(pre, string(r.Job))
	}
	ab := p.aborts[:0]
	if len(p.blocked) > 0 && cluster != nil {
		if gs, ab, err = p.displace(s, cluster, lease, gs, ab); err != nil {
			return simulate.Decision{}, err
		}
	}
	p.grants, p.preempt, p.aborts = gs, pre, ab
	return simulate.Decision{Grants: gs, Preempt: pre, Abort: ab}, nil
}

// waiting appends the round's waiting candidates to cands: every pending
// job, or, with a queue, the few the round can reach (sched.Queue) and the
// jobs still writing their checkpoint (charged for GPUs, so their ρ_job
// can rise).
func (p *Policy) waiting(s *simulate.State, acc sched.Accounts, cands []sched.Candidate) ([]sched.Candidate, error) {
	if p.queue == nil || s.Exhaustive {
		for _, js := range s.Pending {
			cands = append(cands, p.candidate(js, false))
		}
		return cands, nil
	}
	if s.Now.Before(p.synced) {
		// Another run, which began before this one's last tick.
		p.queue, p.prev = sched.NewQueue(sched.NeverRanFirst()), p.prev[:0]
	}
	p.synced = s.Now
	if err := p.sync(s.Pending); err != nil {
		return cands, err
	}
	room, err := s.ExpiringRoom()
	if err != nil {
		return cands, fmt.Errorf("astraea queue: %w", err)
	}
	p.room = room
	cands, err = p.queue.Append(cands, acc, s.Now, p.gangs)
	p.room = nil
	if err != nil {
		return cands, fmt.Errorf("astraea queue: %w", err)
	}
	for _, m := range p.prev {
		if m.holding {
			cands = append(cands, p.candidate(m.js, false))
		}
	}
	return cands, nil
}

// sync brings the queue up to date with the pending list, both sorted by
// (Submit, ID): a job that left is removed, one that came is added, and
// one that ran, or finished writing its checkpoint, since the last tick
// is queued again with nothing read (its account has changed). A job
// still writing its checkpoint is left out.
func (p *Policy) sync(pending []*simulate.JobState) error {
	old, next := p.prev, p.next[:0]
	i := 0
	for _, js := range pending {
		for i < len(old) && old[i].js != js && simulate.CompareJobs(old[i].js, js) < 0 {
			if !old[i].holding {
				p.queue.Remove(ledger.JobID(old[i].js.Job.ID))
			}
			i++
		}
		m := pendingMark{js: js, leases: js.Leases, holding: js.Holding}
		switch {
		case i < len(old) && old[i].js == js:
			if o := old[i]; o.leases != m.leases || o.holding != m.holding {
				if !o.holding {
					p.queue.Remove(ledger.JobID(js.Job.ID))
				}
				if err := p.enqueue(m); err != nil {
					return err
				}
			}
			i++
		case i < len(old) && simulate.CompareJobs(old[i].js, js) == 0:
			// The same job of another run: a policy may be run again.
			if !old[i].holding {
				p.queue.Remove(ledger.JobID(js.Job.ID))
			}
			i++
			fallthrough
		default:
			if err := p.enqueue(m); err != nil {
				return err
			}
		}
		next = append(next, m)
	}
	for ; i < len(old); i++ {
		if !old[i].holding {
			p.queue.Remove(ledger.JobID(old[i].js.Job.ID))
		}
	}
	clear(old)
	p.prev, p.next = next, old[:0]
	return nil
}

// enqueue queues m's job unless it is writing its checkpoint.
func (p *Policy) enqueue(m pendingMark) error {
	if m.holding {
		return nil
	}
	if err := p.queue.Add(p.candidate(m.js, false)); err != nil {
		return fmt.Errorf("astraea queue: %w", err)
	}
	return nil
}

// timeRules sets the round's orders that depend on the tick: the tenants
// holding less than StarvedBelow of their quota, and the jobs waiting
// longer than WaitFirstAfter.
func (p *Policy) timeRules(s *simulate.State) {
	if p.opt.WaitFirstAfter > 0 {
		p.opts.Reward = sched.Lexicographic(sched.LongWaitFirst(s.Now, p.opt.WaitFirstAfter), p.reward)
	}
	if p.opt.StarvedBelow <= 0 {
		return
	}
	// What a tenant holds apart from its expiring jobs (the round's
	// candidates): the ledger's count of its running jobs' GPUs, less
	// theirs; found once a tick per tenant the order asks about.
	if p.held == nil {
		p.held = map[ledger.TenantID]ledger.GPUs{}
		p.expiring = map[ledger.TenantID]ledger.GPUs{}
	}
	clear(p.held)
	clear(p.expiring)
	for _, js := range s.Expiring {
		p.expiring[ledger.TenantID(js.Job.Tenant)] += ledger.GPUs(js.Job.GPUs)
	}
	held, expiring, acc := p.held, p.expiring, s.Accounts
	quotas, capacity, frac := s.Quotas, float64(s.Capacity), p.opt.StarvedBelow
	p.opts.TenantOrder = sched.TenantsFirst(func(t *sched.TenantState) bool {
		h, ok := held[t.ID]
		if !ok {
			info, _ := acc.Tenant(t.ID)
			h = info.Alloc - expiring[t.ID]
			held[t.ID] = h
		}
		quota := math.Floor(quotas[string(t.ID)] * capacity)
		return float64(h+t.GPUs) < frac*quota
	}, nil)
}

// candidate returns js as a round's candidate: running marks an expiring
// job, which holds its placement.
func (p *Policy) candidate(js *simulate.JobState, running bool) sched.Candidate {
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
		// When it last ran, or its submission (sched.LongWaitFirst).
		WaitingSince: js.Job.Submit,
	}
	if !js.LastStop.IsZero() {
		c.WaitingSince = js.LastStop
	}
	if p.opt.SingleLevel {
		c.Tenant = singleTenant
	}
	if running {
		c.Running, c.Placement = true, js.Placement
	}
	return c
}
