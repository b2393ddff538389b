// Package oracle is a deliberately naive reference implementation of the
// ledger's accounts, used only by tests. It stores the complete state after
// every accepted event and recomputes every integral from scratch by summing
// rate × duration over all recorded intervals, in exact rational arithmetic
// (math/big.Rat). Nothing is incremental, nothing is shared between queries:
// its only virtue is being obviously right.
//
// Under exponential decay the kernel e^(−λ(to−τ)) is not rational; the oracle
// then integrates each interval in closed form in float64,
// r·(e^(−λ(to−b)) − e^(−λ(to−a)))/λ, still summing over every interval.
//
// Times are int64 nanoseconds from the ledger's start; IDs are strings.
package oracle

import (
	"math"
	"math/big"
	"slices"
)

// Kind names why an event was rejected; the values mirror the ledger's
// sentinel errors.
type Kind string

// The kinds of rejection, each named after the ledger sentinel it mirrors
// (OK: the event was accepted).
const (
	OK                Kind = ""
	TimeBackwards     Kind = "time backwards"
	UnknownTenant     Kind = "unknown tenant"
	UnknownJob        Kind = "unknown job"
	DuplicateTenant   Kind = "duplicate tenant"
	DuplicateJob      Kind = "duplicate job"
	InvalidTransition Kind = "invalid transition"
	InvalidValue      Kind = "invalid value"
	TenantBusy        Kind = "tenant busy"
	OutOfHistory      Kind = "out of history"
)

type tenant struct {
	weight     float64
	registered bool
	parent     string // "" for a child of the cluster
}

type job struct {
	tenant  string
	demand  int
	weight  float64
	active  bool
	running bool
	finish  int64
}

type state struct {
	at       int64
	capacity int
	tenants  map[string]tenant
	jobs     map[int]job // by incarnation key: a forgotten id submitted again is a new job
}

func (s state) clone(at int64) state {
	c := state{at: at, capacity: s.capacity, tenants: make(map[string]tenant, len(s.tenants)), jobs: make(map[int]job, len(s.jobs))}
	for k, v := range s.tenants {
		c.tenants[k] = v
	}
	for k, v := range s.jobs {
		c.jobs[k] = v
	}
	return c
}

// Oracle is the reference ledger.
type Oracle struct {
	quotaShare bool    // Eq. 16 instead of Eq. 8
	splitJobs  bool    // job shares without the demand cap (ledger.SplitJobShare)
	window     int64   // trailing window in ns, 0 if none
	buckets    int64   // bucket count, 0 if none
	width      int64   // bucket width in ns
	lambda     float64 // decay per second, 0 if none
	now, base  int64
	log        []state        // state in force from log[k].at until log[k+1].at
	memo       []*rates       // rates of log[k], computed on first use
	ids        map[string]int // job id → current incarnation
	nextKey    int
}

// New returns an oracle. window > 0 selects a trailing window (ns), halfLife
// > 0 exponential decay (ns); both 0 is unbounded history.
func New(quotaShare bool, capacity int, window, halfLife int64) *Oracle {
	o := &Oracle{quotaShare: quotaShare, window: window, ids: map[string]int{}}
	if halfLife > 0 {
		o.lambda = math.Ln2 / (float64(halfLife) / 1e9)
	}
	o.log = []state{{capacity: capacity, tenants: map[string]tenant{}, jobs: map[int]job{}}}
	return o
}

// NewBuckets returns an oracle whose history is the current bucket of width
// ns and the n−1 before it, buckets aligned on time 0.
func NewBuckets(quotaShare bool, capacity int, n, width int64) *Oracle {
	o := New(quotaShare, capacity, 0, 0)
	o.buckets, o.width = n, width
	return o
}

// SplitJobShares makes a job's fair share its tenant's fair share times
// its weight over the tenant's active weight, without the demand cap, from
// the start (ledger.SplitJobShare). Call it before the first event.
func (o *Oracle) SplitJobShares() { o.splitJobs = true }

func (o *Oracle) cur() state { return o.log[len(o.log)-1] }

// Begin is the start of retained history.
func (o *Oracle) Begin() int64 {
	return o.beginAt(o.now)
}

// Now is the time of the last accepted event.
func (o *Oracle) Now() int64 { return o.now }

// beginAt is the start of retained history as seen at time t.
func (o *Oracle) beginAt(t int64) int64 {
	if o.window > 0 && t-o.window > o.base {
		return t - o.window
	}
	if o.buckets > 0 {
		k := t / o.width // the bucket t lies in, rounded toward −∞
		if k*o.width > t {
			k--
		}
		if b := (k - (o.buckets - 1)) * o.width; b > o.base {
			return b
		}
	}
	return o.base
}

// job returns the current incarnation of id as seen at time t, if known and
// not forgotten (finished before the start of history).
func (o *Oracle) job(id string, t int64) (int, job, bool) {
	k, ok := o.ids[id]
	if !ok {
		return 0, job{}, false
	}
	j := o.cur().jobs[k]
	if !j.active && j.finish < o.beginAt(t) {
		return 0, job{}, false
	}
	return k, j, true
}

// commit records state s from time at.
func (o *Oracle) commit(at int64, s state) {
	o.now = at
	s.at = at
	o.log = append(o.log, s)
}

func validWeight(w float64) bool { return w > 0 && !math.IsInf(w, 1) }

// AddTenant mirrors the ledger's AddTenant: AddTenantUnder the cluster.
func (o *Oracle) AddTenant(at int64, id string, w float64) Kind {
	return o.AddTenantUnder(at, id, "", w)
}

// AddTenantUnder mirrors the ledger's AddTenantUnder.
func (o *Oracle) AddTenantUnder(at int64, id, parent string, w float64) Kind {
	if at < o.now {
		return TimeBackwards
	}
	if !validWeight(w) {
		return InvalidValue
	}
	cur := o.cur()
	if t, ok := cur.tenants[id]; ok && t.registered {
		return DuplicateTenant
	}
	if parent != "" {
		if parent == id {
			return InvalidValue
		}
		if !cur.tenants[parent].registered {
			return UnknownTenant
		}
		for _, j := range cur.jobs {
			if j.tenant == parent && j.active {
				return TenantBusy
			}
		}
	}
	s := cur.clone(at)
	s.tenants[id] = tenant{weight: w, registered: true, parent: parent}
	o.commit(at, s)
	return OK
}

// SetTenantWeight mirrors the ledger's SetTenantWeight.
func (o *Oracle) SetTenantWeight(at int64, id string, w float64) Kind {
	if at < o.now {
		return TimeBackwards
	}
	if t, ok := o.cur().tenants[id]; !ok || !t.registered {
		return UnknownTenant
	}
	if !validWeight(w) {
		return InvalidValue
	}
	s := o.cur().clone(at)
	t := s.tenants[id]
	t.weight = w
	s.tenants[id] = t
	o.commit(at, s)
	return OK
}

// hasChildren reports whether tenant id has a registered child.
func (s state) hasChildren(id string) bool {
	for _, t := range s.tenants {
		if t.registered && t.parent == id {
			return true
		}
	}
	return false
}

// RemoveTenant mirrors the ledger's RemoveTenant.
func (o *Oracle) RemoveTenant(at int64, id string) Kind {
	if at < o.now {
		return TimeBackwards
	}
	if t, ok := o.cur().tenants[id]; !ok || !t.registered {
		return UnknownTenant
	}
	for _, j := range o.cur().jobs {
		if j.tenant == id && j.active {
			return TenantBusy
		}
	}
	if o.cur().hasChildren(id) {
		return TenantBusy
	}
	s := o.cur().clone(at)
	t := s.tenants[id]
	t.registered = false
	s.tenants[id] = t
	o.commit(at, s)
	return OK
}

// SetCapacity mirrors the ledger's SetCapacity.
func (o *Oracle) SetCapacity(at int64, m int) Kind {
	if at < o.now {
		return TimeBackwards
	}
	if m < 0 {
		return InvalidValue
	}
	s := o.cur().clone(at)
	s.capacity = m
	o.commit(at, s)
	return OK
}

// Submit mirrors the ledger's Submit.
func (o *Oracle) Submit(at int64, id, tenantID string, demand int, w float64) Kind {
	if at < o.now {
		return TimeBackwards
	}
	if _, _, ok := o.job(id, at); ok {
		return DuplicateJob
	}
	if t, ok := o.cur().tenants[tenantID]; !ok || !t.registered {
		return UnknownTenant
	}
	if o.cur().hasChildren(tenantID) {
		return TenantBusy
	}
	if demand <= 0 || !validWeight(w) {
		return InvalidValue
	}
	s := o.cur().clone(at)
	o.nextKey++
	o.ids[id] = o.nextKey
	s.jobs[o.nextKey] = job{tenant: tenantID, demand: demand, weight: w, active: true}
	o.commit(at, s)
	return OK
}

// updateJob mirrors the ledger's checks shared by every call on an active
// job (time order, known id, still active), then lets change validate and
// edit a copy of the job; the copy is committed only when change says OK.
func (o *Oracle) updateJob(at int64, id string, change func(j *job) Kind) Kind {
	if at < o.now {
		return TimeBackwards
	}
	k, j, ok := o.job(id, at)
	if !ok {
		return UnknownJob
	}
	if !j.active {
		return InvalidTransition
	}
	if kind := change(&j); kind != OK {
		return kind
	}
	s := o.cur().clone(at)
	s.jobs[k] = j
	o.commit(at, s)
	return OK
}

// SetJobWeight mirrors the ledger's SetJobWeight.
func (o *Oracle) SetJobWeight(at int64, id string, w float64) Kind {
	return o.updateJob(at, id, func(j *job) Kind {
		if !validWeight(w) {
			return InvalidValue
		}
		j.weight = w
		return OK
	})
}

// Start mirrors the ledger's Start.
func (o *Oracle) Start(at int64, id string) Kind {
	return o.updateJob(at, id, func(j *job) Kind {
		if j.running {
			return InvalidTransition
		}
		j.running = true
		return OK
	})
}

// Stop mirrors the ledger's Stop.
func (o *Oracle) Stop(at int64, id string) Kind {
	return o.updateJob(at, id, func(j *job) Kind {
		if !j.running {
			return InvalidTransition
		}
		j.running = false
		return OK
	})
}

// SetRunningAll mirrors the ledger's StartAll (on) and StopAll: every job
// in turn as Start or Stop would take it, all at time at, all or nothing.
// It returns OK and -1, or the kind of the first job that would be
// rejected and its index, with the oracle unchanged.
func (o *Oracle) SetRunningAll(at int64, ids []string, on bool) (Kind, int) {
	if len(ids) == 0 {
		return OK, -1
	}
	if at < o.now {
		return TimeBackwards, 0
	}
	s := o.cur().clone(at)
	for i, id := range ids {
		k, _, ok := o.job(id, at)
		if !ok {
			return UnknownJob, i
		}
		j := s.jobs[k] // as the jobs before it in the list left it
		if !j.active || j.running == on {
			return InvalidTransition, i
		}
		j.running = on
		s.jobs[k] = j
	}
	o.commit(at, s)
	return OK, -1
}

// Finish mirrors the ledger's Finish; validState says whether the final
// state is one of the three valid ones.
func (o *Oracle) Finish(at int64, id string, validState bool) Kind {
	return o.updateJob(at, id, func(j *job) Kind {
		if !validState {
			return InvalidValue
		}
		j.running, j.active, j.finish = false, false, at
		return OK
	})
}

// Forget mirrors the ledger's Forget: the current incarnation of a
// finished job becomes unknown. Its intervals stay in the log, where an
// inactive job adds nothing to any tenant's or the cluster's rates.
func (o *Oracle) Forget(id string) Kind {
	_, j, ok := o.job(id, o.now)
	if !ok {
		return UnknownJob
	}
	if j.active {
		return InvalidTransition
	}
	delete(o.ids, id)
	return OK
}

// Advance mirrors the ledger's Advance.
func (o *Oracle) Advance(at int64) Kind {
	if at < o.now {
		return TimeBackwards
	}
	o.now = at
	return OK
}

// Reset mirrors the ledger's Reset.
func (o *Oracle) Reset(at int64) Kind {
	if at < o.now {
		return TimeBackwards
	}
	o.now, o.base = at, at
	return OK
}

// rates of state s, exact.
type rates struct {
	tenantAlloc, tenantFair map[string]*big.Rat
	jobAlloc, jobFair       map[int]*big.Rat
	capacity, alloc, idle   *big.Rat
}

func rat(f float64) *big.Rat { return new(big.Rat).SetFloat64(f) }
func ratInt(n int) *big.Rat  { return new(big.Rat).SetInt64(int64(n)) }
func minRat(a, b *big.Rat) *big.Rat {
	if a.Cmp(b) <= 0 {
		return new(big.Rat).Set(a)
	}
	return new(big.Rat).Set(b)
}

// ratesOf computes the rates of state s from the definition, top down:
// F_root = M; a registered child c of p has quota Q_c = F_p·W_c/ΣW over
// p's registered children and fair share Q_c (QuotaShare) or, under
// DemandAware, min(D_c, Q_c) at the root's children and below them the
// water-filling split of F_p: min(D_c, W_c·λ) with Σ = F_p.
func (o *Oracle) ratesOf(s state) rates {
	r := rates{tenantAlloc: map[string]*big.Rat{}, tenantFair: map[string]*big.Rat{}, jobAlloc: map[int]*big.Rat{}, jobFair: map[int]*big.Rat{}}
	// own demand, allocation and active weight per tenant; subtree sums
	own := map[string][3]*big.Rat{}
	demand, alloc := map[string]int{}, map[string]int{}
	running := 0
	for id := range s.tenants {
		own[id] = [3]*big.Rat{new(big.Rat), new(big.Rat), new(big.Rat)}
	}
	for _, j := range s.jobs {
		if !j.active {
			continue
		}
		a := j.demand * b2i(j.running)
		running += a
		for id := j.tenant; id != ""; id = s.tenants[id].parent {
			demand[id] += j.demand
			alloc[id] += a
		}
		own[j.tenant][2].Add(own[j.tenant][2], rat(j.weight))
	}
	m := ratInt(s.capacity)
	var split func(parent string, fair *big.Rat)
	split = func(parent string, fair *big.Rat) {
		var kids []string
		sumW := new(big.Rat)
		for id, t := range s.tenants {
			if t.parent != parent {
				continue
			}
			kids = append(kids, id)
			if t.registered {
				sumW.Add(sumW, rat(t.weight))
			}
		}
		slices.Sort(kids)
		water := !o.quotaShare && parent != ""
		level := waterLevel(s, kids, demand, fair)
		for _, id := range kids {
			t := s.tenants[id]
			f := new(big.Rat)
			switch {
			case !t.registered || sumW.Sign() == 0:
			case water:
				if level == nil {
					f = ratInt(demand[id])
				} else {
					f = minRat(ratInt(demand[id]), new(big.Rat).Mul(rat(t.weight), level))
				}
			default:
				f.Mul(fair, rat(t.weight))
				f.Quo(f, sumW)
				if !o.quotaShare {
					f = minRat(ratInt(demand[id]), f)
				}
			}
			r.tenantFair[id] = f
			r.tenantAlloc[id] = ratInt(alloc[id])
			split(id, f)
		}
	}
	split("", m)
	for k, j := range s.jobs {
		r.jobAlloc[k], r.jobFair[k] = new(big.Rat), new(big.Rat)
		if !j.active {
			continue
		}
		if j.running {
			r.jobAlloc[k] = ratInt(j.demand)
		}
		share := new(big.Rat).Mul(r.tenantFair[j.tenant], rat(j.weight))
		share.Quo(share, own[j.tenant][2])
		if o.splitJobs {
			r.jobFair[k] = share
		} else {
			r.jobFair[k] = minRat(ratInt(j.demand), share)
		}
	}
	r.capacity, r.alloc = m, ratInt(running)
	idle := new(big.Rat).Sub(m, r.alloc)
	if idle.Sign() < 0 {
		idle.SetInt64(0)
	}
	r.idle = idle
	return r
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// waterLevel is the λ at which Σ min(D_c, W_c·λ) over the registered
// children with demand equals fair, or nil if their whole demand fits.
func waterLevel(s state, kids []string, demand map[string]int, fair *big.Rat) *big.Rat {
	type kid struct{ w, theta *big.Rat }
	var ks []kid
	for _, id := range kids {
		if t := s.tenants[id]; t.registered && demand[id] > 0 {
			w := rat(t.weight)
			ks = append(ks, kid{w, new(big.Rat).Quo(ratInt(demand[id]), w)})
		}
	}
	slices.SortFunc(ks, func(a, b kid) int { return a.theta.Cmp(b.theta) })
	left, w := new(big.Rat).Set(fair), new(big.Rat)
	for _, k := range ks {
		w.Add(w, k.w)
	}
	for _, k := range ks {
		if new(big.Rat).Mul(k.theta, w).Cmp(left) >= 0 {
			return new(big.Rat).Quo(left, w)
		}
		left.Sub(left, new(big.Rat).Mul(k.w, k.theta))
		w.Sub(w, k.w)
	}
	return nil
}

// ratesAt returns the rates of log[k]; a state never changes once logged,
// so its rates are computed once.
func (o *Oracle) ratesAt(k int) rates {
	for len(o.memo) < len(o.log) {
		o.memo = append(o.memo, nil)
	}
	if o.memo[k] == nil {
		r := o.ratesOf(o.log[k])
		o.memo[k] = &r
	}
	return *o.memo[k]
}

// integrate sums rate(state) over every recorded interval overlapping
// [from, to), the last state extending to infinity. Under decay each
// interval is weighted by e^(−λ(to−τ)).
func (o *Oracle) integrate(from, to int64, rate func(rates) *big.Rat) float64 {
	exact := new(big.Rat)
	approx := 0.0
	for k, s := range o.log {
		a := s.at
		b := int64(math.MaxInt64)
		if k+1 < len(o.log) {
			b = o.log[k+1].at
		}
		a, b = max(a, from), min(b, to)
		if a >= b {
			continue
		}
		r := rate(o.ratesAt(k))
		if r == nil || r.Sign() == 0 {
			continue
		}
		if o.lambda == 0 {
			d := new(big.Rat).SetFrac64(b-a, 1e9)
			exact.Add(exact, d.Mul(d, r))
			continue
		}
		rf, _ := r.Float64()
		ea := math.Exp(-o.lambda * float64(to-a) / 1e9)
		eb := math.Exp(-o.lambda * float64(to-b) / 1e9)
		approx += rf * (eb - ea) / o.lambda
	}
	if o.lambda == 0 {
		f, _ := exact.Float64()
		return f
	}
	return approx
}

// TenantAccount returns ∫Alloc_j and ∫FairShare_j over [from, to).
func (o *Oracle) TenantAccount(id string, from, to int64) (alloc, fair float64, known bool) {
	if _, ok := o.cur().tenants[id]; !ok {
		return 0, 0, false
	}
	alloc = o.integrate(from, to, func(r rates) *big.Rat { return r.tenantAlloc[id] })
	fair = o.integrate(from, to, func(r rates) *big.Rat { return r.tenantFair[id] })
	return alloc, fair, true
}

// JobAccount returns ∫Alloc_i and ∫FairShare_i over [from, to) for the
// current incarnation of id.
func (o *Oracle) JobAccount(id string, from, to int64) (alloc, fair float64, known bool) {
	k, _, ok := o.job(id, o.now)
	if !ok {
		return 0, 0, false
	}
	alloc = o.integrate(from, to, func(r rates) *big.Rat { return r.jobAlloc[k] })
	fair = o.integrate(from, to, func(r rates) *big.Rat { return r.jobFair[k] })
	return alloc, fair, true
}

// ClusterAccount returns ∫M, ∫allocated and ∫max(0, M − allocated) over
// [from, to).
func (o *Oracle) ClusterAccount(from, to int64) (capacity, allocated, idle float64) {
	capacity = o.integrate(from, to, func(r rates) *big.Rat { return r.capacity })
	allocated = o.integrate(from, to, func(r rates) *big.Rat { return r.alloc })
	idle = o.integrate(from, to, func(r rates) *big.Rat { return r.idle })
	return
}

// TenantFairRate is the current FairShare_j.
func (o *Oracle) TenantFairRate(id string) (float64, bool) {
	r, ok := o.ratesAt(len(o.log) - 1).tenantFair[id]
	if !ok {
		return 0, false
	}
	f, _ := r.Float64()
	return f, true
}

// JobFairRate is the current fair share of job id.
func (o *Oracle) JobFairRate(id string) (float64, bool) {
	k, _, ok := o.job(id, o.now)
	if !ok {
		return 0, false
	}
	f, _ := o.ratesAt(len(o.log) - 1).jobFair[k].Float64()
	return f, true
}

// Tenants lists every tenant ever added, sorted.
func (o *Oracle) Tenants() []string {
	var ids []string
	for id := range o.cur().tenants {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Jobs lists every known (not forgotten) job id, sorted.
func (o *Oracle) Jobs() []string {
	var ids []string
	for id := range o.ids {
		if _, _, ok := o.job(id, o.now); ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// JobInfo describes the current incarnation of a job.
type JobInfo struct {
	Tenant          string
	Demand          int
	Weight          float64
	Active, Running bool
}

// Job returns the current incarnation of id.
func (o *Oracle) Job(id string) (JobInfo, bool) {
	_, j, ok := o.job(id, o.now)
	return JobInfo{j.tenant, j.demand, j.weight, j.active, j.running}, ok
}

// Parent is tenant id's current parent, "" for the cluster.
func (o *Oracle) Parent(id string) string { return o.cur().tenants[id].parent }

// Registered reports whether tenant id is registered now.
func (o *Oracle) Registered(id string) bool { return o.cur().tenants[id].registered }

// Capacity is the current M.
func (o *Oracle) Capacity() int { return o.cur().capacity }
