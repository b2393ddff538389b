package volcano

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/framework"

	"github.com/astraea-sched/astraea/ledger"
)

// Name is the plugin's name in the scheduler configuration.
const Name = "astraea"

// Builder keeps the accounts across Volcano's sessions and builds the
// session's plugin. Volcano builds a new plugin value for every session
// (every schedule period) from the registered framework.PluginBuilder, so
// what must outlive a session lives here: the ledger and the records that
// map Volcano's jobs onto it. Register Build:
//
//	framework.RegisterPluginBuilder(volcano.Name, volcano.NewBuilder(nil).Build)
//
// A Builder is safe for concurrent use: sessions are serialized on it.
type Builder struct {
	now func() time.Time

	mu      sync.Mutex
	cfg     Config // of the ledger below
	ledger  *ledger.Ledger
	records map[string]*record // by Volcano job id
}

// NewBuilder returns a Builder whose sessions read the time from now, or
// from time.Now when now is nil (tests pass a clock of their own).
func NewBuilder(now func() time.Time) *Builder {
	if now == nil {
		now = time.Now
	}
	return &Builder{now: now}
}

// Build is the framework.PluginBuilder: it parses the session's arguments
// (see the Arg* constants) and returns the plugin for one session.
func (b *Builder) Build(args framework.Arguments) framework.Plugin {
	cfg, err := ParseArguments(args)
	return &plugin{b: b, cfg: cfg, argErr: err}
}

// Read calls fn with the ledger as the last session left it (nil before the
// first session), under the Builder's lock: fn must not keep the ledger or
// change it. It is for inspection, tests and metrics.
func (b *Builder) Read(fn func(*ledger.Ledger)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fn(b.ledger)
}

// open makes the ledger ready for a session at now with configuration cfg:
// the first session reads the snapshot file, if any; a change of mode or
// history starts the accounts afresh. It returns the time the session's
// events are recorded at, which never goes before the ledger's Now().
func (b *Builder) open(now time.Time, cfg Config) (time.Time, error) {
	if b.ledger != nil && !b.cfg.sameAccounts(cfg) {
		klog.Warningf("astraea: mode or history changed (%s, %s → %s, %s): the accounts start afresh",
			b.cfg.Mode, b.cfg.History, cfg.Mode, cfg.History)
		b.ledger, b.records = nil, nil
	}
	if b.ledger == nil && cfg.Snapshot != "" {
		l, recs, err := readSnapshot(cfg.Snapshot)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			// Keep the file for inspection and start afresh: refusing to
			// schedule fairly because of a damaged file helps no one.
			aside := fmt.Sprintf("%s.bad-%d", cfg.Snapshot, now.Unix())
			klog.Errorf("astraea: %v; moved to %s, the accounts start afresh", err, aside)
			if rerr := os.Rename(cfg.Snapshot, aside); rerr != nil {
				klog.Errorf("astraea: %v", rerr)
			}
		case l.Mode() != cfg.Mode || l.History() != cfg.History:
			klog.Warningf("astraea: snapshot %s keeps %s, %s accounts, the arguments ask for %s, %s: the accounts start afresh",
				cfg.Snapshot, l.Mode(), l.History(), cfg.Mode, cfg.History)
		default:
			b.ledger, b.records = l, recs
			klog.Infof("astraea: accounts restored from %s (%d jobs, up to %s)", cfg.Snapshot, len(recs), l.Now().Format(time.RFC3339))
		}
	}
	if b.ledger == nil {
		l, err := ledger.New(ledger.Config{Mode: cfg.Mode, History: cfg.History, Start: now})
		if err != nil {
			return now, err
		}
		b.ledger, b.records = l, map[string]*record{}
	}
	b.cfg = cfg
	if now.Before(b.ledger.Now()) {
		klog.Warningf("astraea: the clock (%s) is before the ledger's last event (%s): recording at the latter",
			now.Format(time.RFC3339Nano), b.ledger.Now().Format(time.RFC3339Nano))
		now = b.ledger.Now()
	}
	return now, b.ledger.Advance(now)
}

// plugin is one session's face of a Builder.
type plugin struct {
	b      *Builder
	cfg    Config
	argErr error

	ssn    *framework.Session
	tenant map[ledger.TenantID]ledger.Account // accounts at session open
	job    map[api.JobID]jobKey               // order keys at session open
	credit map[ledger.TenantID]ledger.GPUSeconds
	gang   map[api.JobID]bool // gangs allocated in this session, credited
}

// jobKey is what JobOrderFn compares after the session opens.
type jobKey struct {
	tracked bool
	fresh   bool // never ran: new jobs go first
	rho     ledger.Rho
	demand  ledger.GPUs
	tenant  ledger.TenantID
	running bool // at session open
}

func (p *plugin) Name() string { return Name }

// OnSessionOpen reconciles the ledger with the session and adds the orders
// and event handlers. When the arguments are bad or the ledger cannot be
// made ready, it logs why and adds nothing, so the other plugins decide.
func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	if p.argErr != nil {
		klog.Errorf("astraea: %v: the plugin is off for this session", p.argErr)
		return
	}
	b := p.b
	b.mu.Lock()
	defer b.mu.Unlock()
	at, err := b.open(b.now(), p.cfg)
	if err != nil {
		klog.Errorf("astraea: %v: the plugin is off for this session", err)
		return
	}
	o := observe(ssn.Nodes, ssn.Queues, ssn.Jobs, v1.ResourceName(p.cfg.Resource))
	if err := reconcile(b.ledger, b.records, o, at); err != nil {
		// What could be applied was; the orders use it.
		klog.Errorf("%v", err)
	}
	view := b.ledger.View(at)
	p.ssn = ssn
	p.tenant = make(map[ledger.TenantID]ledger.Account, len(o.queues))
	for _, q := range o.queues {
		a, ok := view.TenantAccount(q.name)
		if !ok {
			a = ledger.Account{Rho: 1}
		}
		p.tenant[q.name] = a
	}
	p.job = make(map[api.JobID]jobKey, len(ssn.Jobs))
	for id, j := range ssn.Jobs {
		k := jobKey{fresh: !anyAllocated(j), rho: 1}
		if r, ok := b.records[string(id)]; ok {
			k = jobKey{tracked: true, fresh: !r.Started, rho: 1, demand: r.Demand, tenant: r.Tenant, running: r.Running}
			if a, ok := view.JobAccount(r.Ledger); ok {
				k.rho = a.Rho
			}
		}
		p.job[id] = k
	}
	p.credit = map[ledger.TenantID]ledger.GPUSeconds{}
	p.gang = map[api.JobID]bool{}
	ssn.AddQueueOrderFn(Name, p.queueOrder)
	ssn.AddJobOrderFn(Name, p.jobOrder)
	ssn.AddEventHandler(&framework.EventHandler{AllocateFunc: p.allocated, DeallocateFunc: p.deallocated})
	if klog.V(3).Enabled() {
		for _, q := range o.queues {
			a := p.tenant[q.name]
			klog.Infof("astraea: queue %s weight %g: received %.0f of %.0f GPU·s owed, ρ %s", q.name, q.weight, a.Alloc, a.FairShare, a.Rho)
		}
	}
}

// OnSessionClose writes the snapshot file, if one is configured. The
// session's allocations reach the ledger at the next session open, when
// their pods are seen bound.
func (p *plugin) OnSessionClose(*framework.Session) {
	if p.argErr != nil || p.cfg.Snapshot == "" || p.tenant == nil {
		return
	}
	b := p.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := writeSnapshot(p.cfg.Snapshot, b.ledger, b.records); err != nil {
		klog.Errorf("astraea: writing snapshot: %v", err)
	}
}

// queueRho is a queue's ρ as the session sees it: its account at session
// open plus the pre-credit of the gangs allocated to it since.
func (p *plugin) queueRho(q *api.QueueInfo) ledger.Rho {
	id := ledger.TenantID(q.Name)
	a, ok := p.tenant[id]
	if !ok {
		return 1
	}
	if c := p.credit[id]; c > 0 {
		return ledger.Ratio(a.Alloc+c, a.FairShare)
	}
	return a.Rho
}

// queueOrder is the QueueOrderFn: lowest ρ first (pre-credit included), then
// the earlier created queue, then the queue's name, so it is a strict total
// order and Volcano's own tie-breaks are never reached.
func (p *plugin) queueOrder(l, r any) int {
	lq, rq := l.(*api.QueueInfo), r.(*api.QueueInfo)
	return cmp.Or(
		p.queueRho(lq).Compare(p.queueRho(rq)),
		created(lq).Compare(created(rq)),
		cmp.Compare(lq.UID, rq.UID),
	)
}

func created(q *api.QueueInfo) time.Time {
	if q.Queue == nil {
		return time.Time{}
	}
	return q.Queue.CreationTimestamp.Time
}

// jobOrder is the JobOrderFn inside a queue: new jobs (never ran) first,
// then the lowest job ρ, then the earlier created, then Volcano's job id. A
// job that asks for no GPU is not in the ledger: it is new until a task of
// it is allocated, and its ρ is 1.
func (p *plugin) jobOrder(l, r any) int {
	lj, rj := l.(*api.JobInfo), r.(*api.JobInfo)
	lk, rk := p.job[lj.UID], p.job[rj.UID]
	return cmp.Or(
		-compareBool(lk.fresh, rk.fresh),
		lk.rho.Compare(rk.rho),
		lj.CreationTimestamp.Time.Compare(rj.CreationTimestamp.Time),
		cmp.Compare(lj.UID, rj.UID),
	)
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// allocated pre-credits a queue once a gang of it that was not running at
// session open has every live task allocated.
func (p *plugin) allocated(e *framework.Event) {
	j, k, ok := p.gangOf(e)
	if !ok || k.running || p.gang[j.UID] || !allAllocated(j) {
		return
	}
	p.gang[j.UID] = true
	p.credit[k.tenant] += ledger.GPUSeconds(float64(k.demand) * p.cfg.Lease.Seconds())
}

// deallocated takes the pre-credit back when a credited gang loses a task
// (a statement discarded, a task evicted).
func (p *plugin) deallocated(e *framework.Event) {
	j, k, ok := p.gangOf(e)
	if !ok || !p.gang[j.UID] || allAllocated(j) {
		return
	}
	delete(p.gang, j.UID)
	p.credit[k.tenant] = max(0, p.credit[k.tenant]-ledger.GPUSeconds(float64(k.demand)*p.cfg.Lease.Seconds()))
}

func (p *plugin) gangOf(e *framework.Event) (*api.JobInfo, jobKey, bool) {
	if e == nil || e.Task == nil {
		return nil, jobKey{}, false
	}
	j, ok := p.ssn.Jobs[e.Task.Job]
	if !ok {
		return nil, jobKey{}, false
	}
	k := p.job[j.UID]
	return j, k, k.tracked
}

// allAllocated reports whether every live task of j holds a node in the
// session (allocated, binding, bound or running).
func allAllocated(j *api.JobInfo) bool {
	live := 0
	for _, t := range j.Tasks {
		switch {
		case t.Status == api.Succeeded || t.Status == api.Failed:
		case api.AllocatedStatus(t.Status):
			live++
		default:
			return false
		}
	}
	return live > 0
}

func anyAllocated(j *api.JobInfo) bool {
	for _, t := range j.Tasks {
		if api.AllocatedStatus(t.Status) {
			return true
		}
	}
	return false
}
