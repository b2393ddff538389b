package simulate

import (
	"cmp"
	"fmt"

	"github.com/astraea-sched/astraea/ledger"
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
	return []AstraeaOptions{d, eq8, single, nc}
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
	// exhaustive disables the fast paths and the trimming (tests compare).
	exhaustive bool
}

// NewAstraea returns the ASTRAEA policy with the given options.
func NewAstraea(o AstraeaOptions) (*Astraea, error) {
	if o.Name == "" {
		o.Name = "astraea"
	}
	a := &Astraea{opt: o}
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
// plus a clone of the cluster; a tick at which no lease ends and no pending
// job can fit the free GPUs returns at once, in O(pending).
func (a *Astraea) Schedule(s *State) (Decision, error) {
	expiring, expGPUs := len(s.Expiring), 0
	for _, r := range s.Expiring {
		expGPUs += r.Job.GPUs
	}
	if !a.exhaustive && expiring == 0 && !anyFits(s) {
		return Decision{}, nil
	}
	lease := s.Lease
	if lease <= 0 {
		lease = DefaultLease
	}
	if !a.exhaustive && expiring > 0 && (len(s.PendingDemands) == 0 || s.PendingDemands[0] > s.Cluster.Free()+expGPUs) {
		// No waiting job can get GPUs even if every expiring job let go:
		// the round would renew every expiring job in place (the backfill
		// stage renews those of tenants that left play).
		gs := a.grants[:0]
		for _, r := range s.Expiring {
			gs = append(gs, Grant{Job: r.Job.ID, Placement: r.Placement, Lease: lease, Renew: true})
		}
		a.grants = gs
		return Decision{Grants: gs}, nil
	}
	// No candidate can get more than the free GPUs plus those of the
	// expiring jobs during the round.
	a.trim.reset(s.Cluster.Free() + expGPUs)
	cands := a.cands[:0]
	add := func(js *JobState, running bool) {
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
		cands = append(cands, c)
	}
	for _, p := range s.Pending {
		if !a.exhaustive && !p.Ran && !a.trim.keep(string(p.Job.Tenant), p.Job.GPUs, a.opt.SingleLevel) {
			continue
		}
		add(p, false)
	}
	for _, r := range s.Expiring {
		add(r, true)
	}
	a.cands = cands
	var acc sched.Accounts = s.Accounts
	if a.opt.SingleLevel {
		acc = singleLevel{s.Accounts}
	}
	res, err := sched.Round(sched.Input{Accounts: acc, Candidates: cands, Lease: lease, Placer: s.Cluster.Clone()}, a.opts)
	clear(a.cands)
	if err != nil {
		return Decision{}, fmt.Errorf("astraea round: %w", err)
	}
	gs := a.grants[:0]
	for _, g := range res.Grants {
		gs = append(gs, Grant{Job: string(g.Job), Placement: g.Placement, Lease: lease, Renew: g.Kind == sched.Renewed})
	}
	a.grants = gs
	d := Decision{Grants: gs}
	for _, r := range res.Released {
		d.Preempt = append(d.Preempt, string(r.Job))
	}
	return d, nil
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

// trimmer leaves out of a round the new (never started) pending jobs that
// cannot change its outcome. It relies on three facts:
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
//   - A job with d > F never fits. Only the first such job of a tenant in
//     its Phase 2 order matters: the fair stage stops serving the tenant
//     there at the latest. New jobs come first in that order, so the
//     tenant's first such new job in submission order is that job when it
//     exists; old (suspended) jobs are never trimmed.
//
// The round's grants and releases are therefore exactly those of a round
// over all candidates; only the list of waiting jobs is shorter.
type trimmer struct {
	free    int
	counts  map[trimKey]int
	blocked map[string]bool // tenants whose first impossible new job is kept
}

type trimKey struct {
	tenant string
	demand int
}

func (t *trimmer) reset(free int) {
	t.free = free
	if t.counts == nil {
		t.counts, t.blocked = map[trimKey]int{}, map[string]bool{}
	}
	clear(t.counts)
	clear(t.blocked)
}

// keep reports whether the next new job of tenant with demand d in
// submission order must be a candidate. It keeps ⌊F/d⌋ + 1 per (tenant, d)
// for d ≤ F (a superset of the bound above: it does not ask whether d fits
// at all), and of the jobs with d > F, which can never fit, only the
// tenant's first: it is the one that would send the tenant out of play.
func (t *trimmer) keep(tenant string, d int, single bool) bool {
	if single {
		tenant = ""
	}
	if d > t.free {
		if t.blocked[tenant] {
			return false
		}
		t.blocked[tenant] = true
		return true
	}
	limit := t.free/d + 1
	k := trimKey{tenant, d}
	n := t.counts[k]
	if n >= limit {
		return false
	}
	t.counts[k] = n + 1
	return true
}
