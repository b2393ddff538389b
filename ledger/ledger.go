package ledger

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"time"
)

// Mode selects the tenant fair-share equation of a ledger.
type Mode int

const (
	// DemandAware is Eq. 8: FairShare_j(t) = min(Demand_j(t), Quota_j(t)).
	// A tenant accrues no debt for quota it had no work to use. The zero value.
	DemandAware Mode = iota
	// QuotaShare is Eq. 16: FairShare_j(t) = Quota_j(t), accruing even while
	// the tenant is idle, so quota lent to others becomes a visible balance.
	// The paper's simulator uses it for tenant selection.
	QuotaShare
)

// String returns "DemandAware" or "QuotaShare".
func (m Mode) String() string {
	switch m {
	case DemandAware:
		return "DemandAware"
	case QuotaShare:
		return "QuotaShare"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// JobShare is the rule that divides a leaf tenant's fair share among its
// active jobs.
type JobShare int

const (
	// CappedJobShare is the paper's rule: job i is owed FairShare_ij(t) =
	// min(D_i, F_j(t)·w_i / Σ_l w_l) over the active jobs l of its tenant,
	// so no job is owed more than its gang demand. The zero value.
	CappedJobShare JobShare = iota
	// SplitJobShare drops the demand cap: FairShare_ij(t) = F_j(t)·w_i /
	// Σ_l w_l, the tenant's fair share split over its active jobs by weight
	// (with unit weights, equally), as the authors' public simulator owes
	// it. The jobs' shares then add up to F_j whenever the tenant has an
	// active job, and a job may be owed more than it can hold: a tenant with
	// quota 8 and one active 1-GPU job owes that job 8 GPUs, so its ρ_job is
	// at most 1/8 even while it runs.
	SplitJobShare
)

// String returns "capped" or "split".
func (s JobShare) String() string {
	switch s {
	case CappedJobShare:
		return "capped"
	case SplitJobShare:
		return "split"
	}
	return fmt.Sprintf("JobShare(%d)", int(s))
}

// ParseJobShare is the inverse of String: "capped" or "split". Other text
// is an error matching ErrConfig.
func ParseJobShare(s string) (JobShare, error) {
	for _, r := range []JobShare{CappedJobShare, SplitJobShare} {
		if s == r.String() {
			return r, nil
		}
	}
	return 0, &Error{Op: "ParseJobShare", Err: ErrConfig, Detail: fmt.Sprintf("%q: want capped or split", s)}
}

// FinalState is how a job ended. All three make the job inactive: its fair
// share stops accruing from the finish time.
type FinalState int

const (
	Completed FinalState = iota + 1 // ran to completion
	Failed                          // ended with an error
	Cancelled                       // withdrawn by its owner or an operator
)

// String returns "Completed", "Failed" or "Cancelled".
func (s FinalState) String() string {
	switch s {
	case Completed:
		return "Completed"
	case Failed:
		return "Failed"
	case Cancelled:
		return "Cancelled"
	}
	return fmt.Sprintf("FinalState(%d)", int(s))
}

func (s FinalState) valid() bool { return s >= Completed && s <= Cancelled }

// Config configures a new Ledger.
type Config struct {
	Mode     Mode      // tenant fair-share equation; zero value DemandAware (Eq. 8)
	Capacity GPUs      // cluster GPUs M at Start; ≥ 0
	Start    time.Time // beginning of history: Now() and Begin() at creation
	History  History   // retention policy; zero value Unbounded
	JobShare JobShare  // how a tenant's share is divided among its jobs; zero value CappedJobShare
}

// Ledger is the account book of a tree of tenants and their jobs. It is not safe for concurrent use;
// callers serialize events (queries may run concurrently with each other
// while no event is applied).
//
// Time is stored as int64 nanoseconds since Config.Start: ordering and
// equality of event times are exact (two events at one instant are never
// reordered by rounding), arithmetic allocates nothing, and the range covers
// ±292 years. Integrals are float64 GPU·seconds.
type Ledger struct {
	mode     Mode
	jobShare JobShare
	hist     History
	lam      decay
	start    time.Time
	now      int64 // ns since start
	base     int64 // start of history (Config.Start or last Reset)
	capacity GPUs
	root     *tenant // the cluster: parent of the top-level tenants, fair share M
	running  GPUs    // Σ demand of running jobs
	capa     series  // capacity M
	used     series  // allocated: Σ running demand
	over     series  // max(0, allocated − M): 0 but after a capacity cut; idle = M − allocated + over
	tenants  []*tenant
	tenantIx map[TenantID]*tenant
	jobs     jobTable
	done     []*job // trailing window only: finished jobs in finish order
	batch    []*job // StartAll's and StopAll's records, empty between calls
}

// tenant is a node of the account tree (see tree.go); the root is the
// cluster itself and is not indexed.
type tenant struct {
	id         TenantID
	weight     float64
	registered bool
	parent     *tenant // nil for the root
	ord        int     // position in Ledger.tenants: children are listed in this order
	demand     GPUs    // Σ demand of active jobs in the subtree
	alloc      GPUs    // Σ demand of running jobs in the subtree
	nActive    int     // active jobs in the subtree
	own        int     // active jobs of its own (a leaf's)
	activeW    float64 // Σ weight of its own active jobs
	s          series  // Alloc_j
	fs         series  // FairShare_j before segs[0]: history restored from a version 1–3 snapshot
	segs       []segment
	pg         *group // its group among its parent's kid groups; nil while its rate is 0
	groups     []*group
	groupIx    map[float64]*group // θ = D/w → group of active jobs

	// as a parent
	kids     []*tenant  // children ever added here, in Ledger.tenants order
	nKids    int        // registered children
	kidW     float64    // Σ weights of registered children, rounded from kidSum
	kidSum   *big.Float // that sum, exact (nil until a child is added)
	unit     float64    // the x of its kid groups: FairShare / kidW, or the water level (see unitOf)
	kgroups  []*group
	kgroupIx map[float64]*group // θ = D/W (+Inf under QuotaShare) → group of children
	deps     []*tenant          // children whose fair rate something below them follows
	depIx    int                // index in parent.deps; −1 if not there
}

// group integrates G_θ(t) = ∫ min(θ, x_j(t)) dt for the active jobs of one
// tenant sharing θ = demand/weight; x_j = FairShare_j / Σ active weights. A
// job's fair share is weight × min(θ, x_j), so its integral is weight × ΔG.
//
// A kid group is the same for the children of one tenant (or of the root)
// sharing θ = D/W (+Inf under QuotaShare); x is then the parent's share per
// unit weight u.
type group struct {
	theta float64
	n     int     // active jobs (or registered children) in the group
	ix    int     // index in tenant.groups (or kgroups), -1 once dropped
	kid   bool    // a group of children, not of jobs
	w     float64 // kid group: Σ weight of its members
	s     series
}

type jobState uint8

const (
	pending jobState = iota
	running
	finished
)

type job struct {
	// A record is 256 bytes, a size class whose objects start on cache-line
	// boundaries, and what every Start and Stop reads fills its first two
	// lines: the id, which the lookup compares, the state the event checks
	// and changes, and the first bytes of the alloc series in the first;
	// the 64 bytes of the series an append writes (see store) in the
	// second. TestJobRecordLayout keeps it so.
	id     JobID
	state  jobState
	final  FinalState
	tn     *tenant
	demand GPUs
	finish int64
	allocP [8]byte // backing for the first encoded alloc breakpoints (a few starts and stops)
	alloc  series  // rate demand while running

	weight    float64
	submit    int64
	segs      []segment
	grp       *group     // current group while active
	finalFair float64    // fair value at finish
	seg0      [1]segment // backing for segs: most jobs never change weight
}

// newJob returns a job record whose first segment and first alloc
// breakpoints live inside the record itself.
func newJob(id JobID) *job {
	j := &job{id: id}
	j.segs = j.seg0[:0]
	j.alloc.st.inline(j.allocP[:])
	return j
}

// segment is a stretch of a job's active life with one weight, hence one
// group: the job's fair value at t inside it is
// base·e^(−λ(t−from)) + w·(G(t) − gFrom·e^(−λ(t−from))).
type segment struct {
	from  int64
	g     *group
	w     float64
	base  float64
	gFrom float64
}

// New returns an empty ledger: no tenants, capacity cfg.Capacity, Now() =
// Begin() = cfg.Start. It rejects a negative capacity, an unknown mode and
// History values with a window or half-life ≤ 0, with an error matching
// ErrConfig.
func New(cfg Config) (*Ledger, error) {
	fail := func(detail string) (*Ledger, error) {
		return nil, &Error{Op: "New", Err: ErrConfig, Detail: detail}
	}
	if cfg.Mode != DemandAware && cfg.Mode != QuotaShare {
		return fail(fmt.Sprintf("unknown mode %d", int(cfg.Mode)))
	}
	if cfg.JobShare != CappedJobShare && cfg.JobShare != SplitJobShare {
		return fail(fmt.Sprintf("unknown job share rule %d", int(cfg.JobShare)))
	}
	if cfg.Capacity < 0 || cfg.Capacity > MaxGPUs {
		return fail(fmt.Sprintf("capacity %d outside [0, %d]", cfg.Capacity, MaxGPUs))
	}
	if err := cfg.History.validate(); err != nil {
		return fail(err.Error())
	}
	l := &Ledger{
		mode:     cfg.Mode,
		jobShare: cfg.JobShare,
		hist:     cfg.History,
		lam:      decay(cfg.History.lambda()),
		start:    cfg.Start.Round(0),
		capacity: cfg.Capacity,
		tenantIx: make(map[TenantID]*tenant),
		root:     newRoot(),
	}
	l.refreshCluster(0)
	return l, nil
}

// Mode returns the tenant fair-share equation.
func (l *Ledger) Mode() Mode { return l.mode }

// JobShare returns the rule that divides a tenant's fair share among its
// jobs.
func (l *Ledger) JobShare() JobShare { return l.jobShare }

// History returns the retention policy.
func (l *Ledger) History() History { return l.hist }

// Capacity returns the current cluster capacity M.
func (l *Ledger) Capacity() GPUs { return l.capacity }

// Now returns the time of the last event (or Advance); events at earlier times
// are rejected.
func (l *Ledger) Now() time.Time { return l.time(l.now) }

// Begin returns the start of retained history: Config.Start or the last
// Reset, and with [TrailingWindow] w no earlier than Now()−w (with
// [Buckets], than the start of the oldest bucket it keeps).
func (l *Ledger) Begin() time.Time { return l.time(l.beginAt(l.now)) }

func (l *Ledger) time(ns int64) time.Time { return l.start.Add(time.Duration(ns)) }

// beginAt is the start of retained history as seen at time t.
func (l *Ledger) beginAt(t int64) int64 {
	if l.hist.windowed() {
		if b := l.hist.windowStart(t); b > l.base {
			return b
		}
	}
	return l.base
}

// trimBefore is the time before which breakpoints may be dropped.
// Only a trailing window or buckets trim as they go (Reset trims once,
// explicitly); otherwise it is math.MinInt64, so appends never touch old
// breakpoints.
func (l *Ledger) trimBefore() int64 {
	if l.hist.windowed() {
		return l.beginAt(l.now)
	}
	return math.MinInt64
}

// offset converts a time to ns since start; ok is false if it does not fit.
// It is at.Sub(l.start) (start has no monotonic reading, so Sub would use
// the wall clock too) without Sub's overflow check by round trip, an Add
// and an Equal that cost more than the rest of a Start or Stop's time
// handling: the difference is bounded in seconds first, then in
// nanoseconds. Sub's saturated results, ±(2^63 − 1) ns, are out of range
// here as they are there.
func (l *Ledger) offset(at time.Time) (int64, bool) {
	const maxSec = math.MaxInt64 / int64(time.Second)
	// Seconds subtract modulo 2^64, as Sub's do: times at the ends of
	// time.Time's range wrap alike in both.
	ds := at.Unix() - l.start.Unix()
	dn := int64(at.Nanosecond() - l.start.Nanosecond())
	// Give both parts one sign, so that the seconds alone bound the sum.
	switch {
	case ds > 0 && dn < 0:
		ds, dn = ds-1, dn+int64(time.Second)
	case ds < 0 && dn > 0:
		ds, dn = ds+1, dn-int64(time.Second)
	}
	if ds > maxSec || ds < -maxSec {
		return 0, false
	}
	t := ds * int64(time.Second)
	if dn > 0 && t > math.MaxInt64-dn || dn < 0 && t < math.MinInt64-dn {
		return 0, false
	}
	t += dn
	if t == math.MaxInt64 || t == math.MinInt64 {
		return 0, false
	}
	return t, true
}

// eventTime validates an event time.
func (l *Ledger) eventTime(op string, at time.Time, tn TenantID, j JobID) (int64, error) {
	t, ok := l.offset(at)
	if !ok {
		return 0, &Error{Op: op, Tenant: tn, Job: j, At: at, Err: ErrInvalidValue,
			Detail: "time out of range (more than 292 years from Config.Start)"}
	}
	if t < l.now {
		return 0, &Error{Op: op, Tenant: tn, Job: j, At: at, Err: ErrTimeBackwards,
			Detail: fmt.Sprintf("before Now() = %s", l.Now().Format(time.RFC3339Nano))}
	}
	return t, nil
}

// MinWeight and MaxWeight bound a tenant or job weight. Inside them sums of
// weights cannot overflow, and every
// quantity the ledger derives from a weight — a job's θ = demand/weight,
// its fair rate, their integrals over the 292 years the clock spans — is a
// finite float64 that a snapshot keeps; a weight of 5e-324 made θ infinite
// and the snapshot unreadable. Only ratios of weights matter, so scale
// weights into the range (shares, GPU counts and node counts all fit).
const (
	MinWeight = 1e-12
	MaxWeight = 1e12
)

func validWeight(w float64) bool { return w >= MinWeight && w <= MaxWeight } // NaN fails

// storedWeight is what a snapshot or a consistency check accepts: any
// positive finite weight, so that a snapshot written before the range was
// enforced still reads.
func storedWeight(w float64) bool { return w > 0 && !math.IsInf(w, 1) } // NaN fails w > 0

// weightDetail explains a refused weight.
func weightDetail(w float64) string {
	return fmt.Sprintf("weight %v outside [%v, %v]", w, MinWeight, MaxWeight)
}

// MaxGPUs bounds a demand or a capacity, so that sums of GPUs never overflow.
const MaxGPUs GPUs = 1 << 31

func (l *Ledger) refreshCluster(t int64) {
	tb := l.trimBefore()
	m, a := float64(l.capacity), float64(l.running)
	l.capa.set(t, m, l.lam, tb)
	l.used.set(t, a, l.lam, tb)
	// Idle GPUs, max(0, M − allocated), are not a series of their own but
	// M − allocated + over: over changes only while allocation exceeds
	// capacity, so most events leave it alone.
	l.over.set(t, max(0, a-m), l.lam, tb)
}

// advanceTo moves Now() to t (already validated) and, with a trailing
// window, forgets jobs that finished before the new Begin().
func (l *Ledger) advanceTo(t int64) {
	l.now = t
	if !l.hist.windowed() {
		return
	}
	b := l.beginAt(t)
	k := 0
	for k < len(l.done) && l.done[k].finish < b {
		l.drop(l.done[k])
		l.done[k] = nil
		k++
	}
	if k > 0 {
		l.done = l.done[k:]
	}
}

// drop removes a finished job's record from the index: queries no longer
// know it and its id is free for a new Submit. It is how every kind of
// forgetting ends (trailing window, Reset, Forget); a record already replaced
// by a new job of the same id is left alone.
func (l *Ledger) drop(j *job) {
	l.jobs.remove(j)
}

// forgotten reports whether a finished job lies wholly before retained
// history: it is then unknown to queries and its id may be submitted again.
func (l *Ledger) forgotten(j *job) bool { return l.forgottenAt(j, l.now) }

// forgottenAt judges forgetting as seen at time t (an event's time).
func (l *Ledger) forgottenAt(j *job, t int64) bool {
	return j.state == finished && j.finish < l.beginAt(t)
}

// AddTenant registers a top-level tenant (a child of the cluster) with
// weight W_j in [MinWeight, MaxWeight] at time at. It is
// AddTenantUnder(at, id, "", weight).
func (l *Ledger) AddTenant(at time.Time, id TenantID, weight float64) error {
	return l.addTenant("AddTenant", at, id, "", weight)
}

// AddTenantUnder registers tenant id with weight W in [MinWeight,
// MaxWeight] at time at as a
// child of tenant parent ("" is the cluster, the root of the tree). The
// parent must be registered and have no active jobs of its own: jobs hang
// under leaves (ErrTenantBusy otherwise; ErrUnknownTenant for an unknown
// parent). A tenant that was removed may be added again, under any
// parent: its accounts continue from its earlier history.
//
// The quotas of its new siblings change, and with them the fair rates of
// everything below them. Their accounts are not rewritten: siblings share
// one integral per θ-class (see the package documentation), so the cost is
// O(G) for the parent's classes plus, below each sibling with children or
// active jobs, the same again; adding a tenant to a flat tree of idle
// tenants is O(1).
func (l *Ledger) AddTenantUnder(at time.Time, id, parent TenantID, weight float64) error {
	return l.addTenant("AddTenantUnder", at, id, parent, weight)
}

func (l *Ledger) addTenant(op string, at time.Time, id, parent TenantID, weight float64) error {
	t, err := l.eventTime(op, at, id, "")
	if err != nil {
		return err
	}
	if id == "" {
		// placement, sched and lease refuse empty ids too: an empty id
		// cannot be told from "no tenant" in a report.
		return &Error{Op: op, At: at, Err: ErrInvalidValue, Detail: "empty tenant id"}
	}
	if !validWeight(weight) {
		return &Error{Op: op, Tenant: id, At: at, Err: ErrInvalidValue, Detail: weightDetail(weight)}
	}
	tn := l.tenantIx[id]
	if tn != nil && tn.registered {
		return &Error{Op: op, Tenant: id, At: at, Err: ErrDuplicateTenant, Detail: "already registered"}
	}
	p := l.root
	if parent != "" {
		p = l.tenantIx[parent]
		switch {
		case parent == id:
			return &Error{Op: op, Tenant: id, At: at, Err: ErrInvalidValue, Detail: "a tenant cannot be its own parent"}
		case p == nil || !p.registered:
			return &Error{Op: op, Tenant: id, At: at, Err: ErrUnknownTenant, Detail: fmt.Sprintf("parent %q is not registered", parent)}
		case p.own > 0:
			return &Error{Op: op, Tenant: id, At: at, Err: ErrTenantBusy, Detail: fmt.Sprintf("parent %q has %d active jobs of its own; jobs hang under leaves", parent, p.own)}
		}
	}
	sum, sumW := p.kidSumWith(weight, 0)
	l.advanceTo(t)
	if tn == nil {
		tn = &tenant{id: id, ord: len(l.tenants), groupIx: make(map[float64]*group), depIx: -1}
		l.tenants = append(l.tenants, tn)
		l.tenantIx[id] = tn
		tn.s.set(t, 0, l.lam, l.trimBefore())
	}
	if tn.parent != p {
		l.adopt(p, tn)
	}
	tn.weight, tn.registered = weight, true
	p.nKids++
	p.kidSum, p.kidW = sum, sumW
	l.rejoin(tn, t)
	l.setDep(p)
	l.cascade(p, t)
	return nil
}

// SetTenantWeight changes a registered tenant's weight from at on: its
// quota and its siblings' change. Cost as AddTenantUnder.
func (l *Ledger) SetTenantWeight(at time.Time, id TenantID, weight float64) error {
	const op = "SetTenantWeight"
	t, err := l.eventTime(op, at, id, "")
	if err != nil {
		return err
	}
	tn := l.tenantIx[id]
	if tn == nil || !tn.registered {
		return &Error{Op: op, Tenant: id, At: at, Err: ErrUnknownTenant}
	}
	if !validWeight(weight) {
		return &Error{Op: op, Tenant: id, At: at, Err: ErrInvalidValue, Detail: weightDetail(weight)}
	}
	p := tn.parent
	sum, sumW := p.kidSumWith(weight, tn.weight)
	l.advanceTo(t)
	p.kidSum, p.kidW = sum, sumW
	tn.weight = weight
	l.rejoin(tn, t)
	l.cascade(p, t)
	return nil
}

// RemoveTenant unregisters a tenant with no active job and no registered
// child (ErrTenantBusy otherwise): from at on it has no quota and its
// weight leaves its siblings' ΣW. Its past stays queryable. Cost as
// AddTenantUnder.
func (l *Ledger) RemoveTenant(at time.Time, id TenantID) error {
	const op = "RemoveTenant"
	t, err := l.eventTime(op, at, id, "")
	if err != nil {
		return err
	}
	tn := l.tenantIx[id]
	if tn == nil || !tn.registered {
		return &Error{Op: op, Tenant: id, At: at, Err: ErrUnknownTenant}
	}
	if tn.nActive > 0 {
		return &Error{Op: op, Tenant: id, At: at, Err: ErrTenantBusy, Detail: fmt.Sprintf("%d active jobs", tn.nActive)}
	}
	if tn.nKids > 0 {
		return &Error{Op: op, Tenant: id, At: at, Err: ErrTenantBusy, Detail: fmt.Sprintf("%d registered children", tn.nKids)}
	}
	l.advanceTo(t)
	p := tn.parent
	tn.registered = false
	p.nKids--
	p.kidSum, p.kidW = p.kidSumWith(0, tn.weight)
	l.rejoin(tn, t)
	l.setDep(tn)
	l.setDep(p)
	l.cascade(p, t)
	return nil
}

// SetCapacity changes the cluster capacity M from at on (nodes added,
// drained or failed). Running jobs are not stopped: the caller stops what no
// longer fits. Cost as AddTenantUnder at the root.
func (l *Ledger) SetCapacity(at time.Time, m GPUs) error {
	const op = "SetCapacity"
	t, err := l.eventTime(op, at, "", "")
	if err != nil {
		return err
	}
	if m < 0 || m > MaxGPUs {
		return &Error{Op: op, At: at, Err: ErrInvalidValue, Detail: fmt.Sprintf("capacity %d outside [0, %d]", m, MaxGPUs)}
	}
	l.advanceTo(t)
	l.capacity = m
	l.cascade(l.root, t)
	l.refreshCluster(t)
	return nil
}

// Submit records a new active (pending) job of a registered tenant with gang
// demand in [1, MaxGPUs] and weight in [MinWeight, MaxWeight] inside its
// tenant. Jobs hang under leaves: a tenant with registered children
// refuses it with ErrTenantBusy. O(G_j) plus O(log G_j) for the group
// lookup: the tenant's x_j changes, so each of its θ-groups gets a
// breakpoint; never O(jobs). Under DemandAware the demand of every
// ancestor changes too, and with it their fair rates (see AddTenantUnder
// for what that costs below each).
func (l *Ledger) Submit(at time.Time, id JobID, tenantID TenantID, demand GPUs, weight float64) error {
	const op = "Submit"
	t, err := l.eventTime(op, at, tenantID, id)
	if err != nil {
		return err
	}
	if id == "" {
		return &Error{Op: op, Tenant: tenantID, At: at, Err: ErrInvalidValue, Detail: "empty job id"}
	}
	if old := l.jobs.get(id); old != nil && !l.forgottenAt(old, t) {
		return &Error{Op: op, Job: id, Tenant: tenantID, At: at, Err: ErrDuplicateJob}
	}
	tn := l.tenantIx[tenantID]
	if tn == nil || !tn.registered {
		return &Error{Op: op, Job: id, Tenant: tenantID, At: at, Err: ErrUnknownTenant}
	}
	if tn.nKids > 0 {
		return &Error{Op: op, Job: id, Tenant: tenantID, At: at, Err: ErrTenantBusy,
			Detail: fmt.Sprintf("%d registered children; jobs hang under leaves", tn.nKids)}
	}
	if demand <= 0 || demand > MaxGPUs {
		return &Error{Op: op, Job: id, Tenant: tenantID, At: at, Err: ErrInvalidValue, Detail: fmt.Sprintf("demand %d outside [1, %d]", demand, MaxGPUs)}
	}
	if !validWeight(weight) {
		return &Error{Op: op, Job: id, Tenant: tenantID, At: at, Err: ErrInvalidValue, Detail: weightDetail(weight)}
	}
	l.advanceTo(t)
	j := newJob(id)
	j.tn, j.demand, j.weight, j.state, j.submit = tn, demand, weight, pending, t
	l.jobs.put(j)
	for a := tn; a != l.root; a = a.parent {
		a.demand += demand
		a.nActive++
	}
	tn.own++
	tn.activeW += weight
	l.join(j, t, 0)
	l.setDep(tn)
	l.demandChanged(tn, t)
	return nil
}

// join puts an active job into the group of its θ from time t with fair value
// base at t.
func (l *Ledger) join(j *job, t int64, base float64) {
	tn := j.tn
	theta := l.jobTheta(j)
	g := tn.groupIx[theta]
	if g == nil {
		g = &group{theta: theta, ix: len(tn.groups)}
		tn.groups = append(tn.groups, g)
		tn.groupIx[theta] = g
	}
	g.n++
	j.grp = g
	seg := segment{from: t, g: g, w: j.weight, base: base, gFrom: g.s.at(t, l.lam)}
	if n := len(j.segs); n > 0 && j.segs[n-1].from == t {
		j.segs[n-1] = seg // the previous weight held for no time at all
		return
	}
	j.segs = append(j.segs, seg)
}

// jobTheta is the key of job j's group: θ = D/w, so that its fair rate is
// w·min(θ, x), or +Inf under SplitJobShare, where it is w·x and every
// active job of a tenant shares one group.
func (l *Ledger) jobTheta(j *job) float64 {
	if l.jobShare == SplitJobShare {
		return math.Inf(1)
	}
	return float64(j.demand) / j.weight
}

// leave takes an active job out of its group at time t; the group is dropped
// from the tenant when it empties (finished jobs keep their reference to it).
func (l *Ledger) leave(j *job) {
	g, tn := j.grp, j.tn
	j.grp = nil
	g.n--
	if g.n > 0 {
		return
	}
	tn.groups = dropGroup(tn.groups, tn.groupIx, g)
}

// dropGroup removes empty group g from list and its index, and returns
// the list.
func dropGroup(list []*group, ix map[float64]*group, g *group) []*group {
	last := len(list) - 1
	list[g.ix] = list[last]
	list[g.ix].ix = g.ix
	list[last] = nil
	delete(ix, g.theta)
	g.ix = -1
	return list[:last]
}

func (l *Ledger) activeJob(op string, at time.Time, id JobID) (int64, *job, error) {
	t, err := l.eventTime(op, at, "", id)
	if err != nil {
		return 0, nil, err
	}
	j := l.jobs.get(id)
	if j == nil || j.state == finished || l.forgottenAt(j, t) {
		return 0, nil, l.checkActive(op, at, t, id, j)
	}
	return t, j, nil
}

// checkActive returns the error of an event on job id, whose record is j
// (nil if unknown), at t unless the job is active then: unknown (or
// forgotten), or finished. The events test the cheap conditions inline and
// call it for the error, so that their common path makes no call.
func (l *Ledger) checkActive(op string, at time.Time, t int64, id JobID, j *job) error {
	switch {
	case j == nil || l.forgottenAt(j, t):
		return &Error{Op: op, Job: id, At: at, Err: ErrUnknownJob}
	case j.state == finished:
		return &Error{Op: op, Job: id, Tenant: j.tn.id, At: at, Err: ErrInvalidTransition,
			Detail: "job finished (" + j.final.String() + ")"}
	}
	return nil
}

// switchErr returns the error of a Start (from pending) or Stop (from
// running) of active job id, whose record is j, unless it is in state from.
func switchErr(op string, at time.Time, id JobID, j *job, from jobState) error {
	switch {
	case j.state == from:
		return nil
	case from == running:
		return &Error{Op: op, Job: id, Tenant: j.tn.id, At: at, Err: ErrInvalidTransition, Detail: "not running"}
	}
	return &Error{Op: op, Job: id, Tenant: j.tn.id, At: at, Err: ErrInvalidTransition, Detail: "already running"}
}

// SetJobWeight changes an active job's weight inside its tenant from at on.
// The job moves to the group of its new θ, keeping its accumulated fair
// share. O(G_j).
func (l *Ledger) SetJobWeight(at time.Time, id JobID, weight float64) error {
	const op = "SetJobWeight"
	t, j, err := l.activeJob(op, at, id)
	if err != nil {
		return err
	}
	if !validWeight(weight) {
		return &Error{Op: op, Job: id, Tenant: j.tn.id, At: at, Err: ErrInvalidValue, Detail: weightDetail(weight)}
	}
	l.advanceTo(t)
	if weight == j.weight {
		return nil
	}
	v := l.jobFairAt(j, t)
	l.leave(j)
	j.tn.activeW += weight - j.weight
	j.weight = weight
	l.join(j, t, v)
	l.refreshJobs(j.tn, t)
	return nil
}

// Start records that a pending job holds its whole gang demand from at on
// (Alloc = demand). O(1) amortized.
func (l *Ledger) Start(at time.Time, id JobID) error {
	const op = "Start"
	t, j, err := l.activeJob(op, at, id)
	if err != nil {
		return err
	}
	if j.state != pending {
		return switchErr(op, at, id, j, pending)
	}
	l.advanceTo(t)
	l.setRunning(j, t, true)
	return nil
}

// Stop records that a running job released its GPUs at at (suspended or
// preempted): Alloc = 0 from at on, but the job stays active and keeps
// accruing fair share. O(1) amortized.
func (l *Ledger) Stop(at time.Time, id JobID) error {
	const op = "Stop"
	t, j, err := l.activeJob(op, at, id)
	if err != nil {
		return err
	}
	if j.state != running {
		return switchErr(op, at, id, j, running)
	}
	l.advanceTo(t)
	l.setRunning(j, t, false)
	return nil
}

func (l *Ledger) setRunning(j *job, t int64, on bool) {
	tb := l.trimBefore()
	d := j.demand
	if on {
		j.state = running
		l.running += d
		j.alloc.set(t, float64(d), l.lam, tb)
	} else {
		j.state = pending
		d = -d
		l.running += d
		j.alloc.set(t, 0, l.lam, tb)
	}
	for a := j.tn; a.parent != nil; a = a.parent {
		a.alloc += d
		a.s.set(t, float64(a.alloc), l.lam, tb)
	}
	// Only the allocation moved: capacity's series needs no look, and the
	// over-allocation's only if there is or was some.
	a := float64(l.running)
	l.used.set(t, a, l.lam, tb)
	if over := max(0, a-float64(l.capacity)); over != 0 || l.over.rate() != 0 {
		l.over.set(t, over, l.lam, tb)
	}
}

// Finish records that an active job ended at at with final state s
// (Completed, Failed or Cancelled). A running job releases its GPUs at the
// same instant; from at on the job is inactive and accrues nothing. Its
// accounts stay queryable until [Ledger.Forget] (or history) drops them.
// O(G_j).
func (l *Ledger) Finish(at time.Time, id JobID, s FinalState) error {
	const op = "Finish"
	t, j, err := l.activeJob(op, at, id)
	if err != nil {
		return err
	}
	if !s.valid() {
		return &Error{Op: op, Job: id, Tenant: j.tn.id, At: at, Err: ErrInvalidValue, Detail: fmt.Sprintf("final state %d", int(s))}
	}
	l.advanceTo(t)
	if j.state == running {
		l.setRunning(j, t, false)
	}
	j.finalFair = l.jobFairAt(j, t)
	l.leave(j)
	tn := j.tn
	for a := tn; a != l.root; a = a.parent {
		a.demand -= j.demand
		a.nActive--
	}
	tn.own--
	tn.activeW -= j.weight
	if tn.own == 0 {
		tn.activeW = 0 // no drift left behind by float sums
	}
	j.state, j.final, j.finish = finished, s, t
	if l.hist.windowed() {
		l.done = append(l.done, j)
	}
	l.setDep(tn)
	l.demandChanged(tn, t)
	return nil
}

// Forget drops the record of a finished job at once, as a trailing window
// does when the job falls before Begin(): from then on JobAccount, Job and
// the View's job lookups report it unknown, snapshots omit it, and its id
// may be submitted again. Tenant and cluster accounts are unchanged, over
// every window: they are kept in their own series, which a job's record
// only fed while the job was active (a finished job's fair value is frozen
// in its record, and the θ-group it shared has moved on without it).
//
// It exists because a long-lived ledger with [Unbounded] or [HalfLife]
// history otherwise keeps every finished job's record and breakpoints
// forever: an application that has read what it needs of a job (its final
// ρ_job, say) forgets it to keep memory proportional to the active jobs.
//
// Forget takes no time: it changes no account at any time, so it has no
// place in the order of events and never moves Now(). Errors: ErrUnknownJob
// for an id never submitted or already forgotten; ErrInvalidTransition for a
// job that is still active (pending or running): Finish it first. A
// rejected call changes nothing.
//
// O(1), plus under a [TrailingWindow] the jobs that finished at or after
// this one (a job forgotten right after its Finish is found at once).
func (l *Ledger) Forget(id JobID) error {
	const op = "Forget"
	j := l.jobs.get(id)
	if j == nil || l.forgotten(j) {
		return &Error{Op: op, Job: id, Err: ErrUnknownJob}
	}
	if j.state != finished {
		return &Error{Op: op, Job: id, Tenant: j.tn.id, Err: ErrInvalidTransition,
			Detail: "job is still active: only a finished job can be forgotten"}
	}
	l.drop(j)
	// The finish-ordered list of the trailing window must not keep the
	// record alive until it falls before Begin(): search it from the end.
	for k := len(l.done) - 1; k >= 0 && l.done[k].finish >= j.finish; k-- {
		if l.done[k] == j {
			l.done = slices.Delete(l.done, k, k+1)
			break
		}
	}
	return nil
}

// Advance moves Now() to at without any other change; accounts extrapolate
// the current rates. Calling it more or less often never changes a result.
// O(1) (with a trailing window, plus the jobs it forgets).
func (l *Ledger) Advance(at time.Time) error {
	t, err := l.eventTime("Advance", at, "", "")
	if err != nil {
		return err
	}
	l.advanceTo(t)
	return nil
}

// Reset starts history anew at at: Begin() becomes at, windows before it are
// rejected, and jobs that finished before it are forgotten. Current state
// (tenants, weights, capacity, active and running jobs) carries over, so
// accounts restart at zero and accrue from at. O(jobs + breakpoints).
func (l *Ledger) Reset(at time.Time) error {
	t, err := l.eventTime("Reset", at, "", "")
	if err != nil {
		return err
	}
	l.advanceTo(t)
	l.base = t
	for _, j := range l.jobs.all() {
		if j.state == finished && j.finish < t {
			l.drop(j)
		}
	}
	l.done = slices.DeleteFunc(l.done, func(j *job) bool { return j.finish < t })
	for _, tn := range append([]*tenant{l.root}, l.tenants...) {
		tn.s.trim(t, l.lam)
		tn.fs.trim(t, l.lam)
		tn.segs = trimSegs(tn.segs, t)
		for _, g := range tn.groups {
			g.s.trim(t, l.lam)
		}
		for _, g := range tn.kgroups {
			g.s.trim(t, l.lam)
		}
	}
	for _, j := range l.jobs.all() {
		j.alloc.trim(t, l.lam)
		if j.grp == nil {
			continue
		}
		j.segs = trimSegs(j.segs, t)
	}
	l.capa.trim(t, l.lam)
	l.used.trim(t, l.lam)
	l.over.trim(t, l.lam)
	return nil
}
