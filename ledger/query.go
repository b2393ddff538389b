package ledger

import (
	"fmt"
	"sort"
	"time"
)

// Account is what an entity received and was owed over a window.
type Account struct {
	Alloc     GPUSeconds // ∫ Alloc over the window
	FairShare GPUSeconds // ∫ FairShare over the window
	Rho       Rho        // Ratio(Alloc, FairShare)
}

func account(alloc, fair float64) Account {
	return Account{Alloc: GPUSeconds(alloc), FairShare: GPUSeconds(fair), Rho: Ratio(GPUSeconds(alloc), GPUSeconds(fair))}
}

// ClusterAccount is the cluster's service over a window: the GPU·seconds of
// capacity (∫M), of allocation (∫Σ running demand) and idle
// (∫max(0, M − allocated)). Allocated can exceed Capacity only if the caller
// kept jobs running beyond a capacity cut.
type ClusterAccount struct{ Capacity, Allocated, Idle GPUSeconds }

// jobFairAt is the job's (decayed) cumulative fair value at time t.
// O(log s + log n): s segments (1 unless its weight changed), n breakpoints
// of its group.
func (l *Ledger) jobFairAt(j *job, t int64) float64 {
	if t <= j.submit || len(j.segs) == 0 {
		return 0
	}
	if j.state == finished && t >= j.finish {
		return j.finalFair * l.lam.factor(t-j.finish)
	}
	k := len(j.segs) - 1
	if t < j.segs[k].from {
		k = sort.Search(len(j.segs), func(i int) bool { return j.segs[i].from > t }) - 1
		if k < 0 {
			return 0
		}
	}
	return j.segs[k].at(t, l.lam)
}

// window validates a query window and converts it to nanoseconds.
func (l *Ledger) window(op string, tn TenantID, j JobID, from, to time.Time) (int64, int64, error) {
	f, ok1 := l.offset(from)
	t, ok2 := l.offset(to)
	if !ok1 || !ok2 {
		return 0, 0, &Error{Op: op, Tenant: tn, Job: j, At: from, Err: ErrInvalidValue, Detail: "time out of range"}
	}
	if f > t {
		return 0, 0, &Error{Op: op, Tenant: tn, Job: j, At: from, Err: ErrInvalidValue,
			Detail: fmt.Sprintf("window from %s is after to %s", from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))}
	}
	if b := l.beginAt(l.now); f < b {
		return 0, 0, &Error{Op: op, Tenant: tn, Job: j, At: from, Err: ErrOutOfHistory,
			Detail: "history begins at " + l.time(b).Format(time.RFC3339Nano)}
	}
	return f, t, nil
}

func (l *Ledger) tenantWindow(tn *tenant, f, t int64) Account {
	a := l.lam.window(tn.s.at(f, l.lam), tn.s.at(t, l.lam), f, t)
	fr := l.lam.window(l.tenantFairAt(tn, f), l.tenantFairAt(tn, t), f, t)
	return account(a, fr)
}

func (l *Ledger) jobWindow(j *job, f, t int64) Account {
	if f <= j.submit {
		// A window from before the job was submitted, as its lifetime
		// account is: both its accounts are 0 at f, and a window from 0 is
		// the value at t.
		return account(max(0, j.alloc.at(t, l.lam)), max(0, l.jobFairAt(j, t)))
	}
	a := l.lam.window(j.alloc.at(f, l.lam), j.alloc.at(t, l.lam), f, t)
	fr := l.lam.window(l.jobFairAt(j, f), l.jobFairAt(j, t), f, t)
	return account(a, fr)
}

// touchRecords reads a word of every cache line of the records that an
// account reads beyond the first (which the lookup brought in), for a batch
// of records at once, so that their loads overlap instead of waiting one
// after another inside the accounts. It returns what it read only so that
// the loads are kept; it is not inlined so that the caller may drop that.
//
//go:noinline
func touchRecords(js []*job) int64 {
	var sum int64
	for _, j := range js {
		if j != nil {
			sum += j.alloc.st.head.t + j.submit + j.seg0[0].from
		}
	}
	return sum
}

// TenantAccount returns tenant id's account over the half-open window
// [from, to). `to` may be after Now(): the current state is extrapolated,
// nothing is mutated. Errors: ErrUnknownTenant, ErrInvalidValue (from > to),
// ErrOutOfHistory (from < Begin()). A removed tenant stays queryable.
// O(log n), n = the tenant's breakpoints.
func (l *Ledger) TenantAccount(id TenantID, from, to time.Time) (Account, error) {
	const op = "TenantAccount"
	tn := l.tenantIx[id]
	if tn == nil {
		return Account{}, &Error{Op: op, Tenant: id, Err: ErrUnknownTenant}
	}
	f, t, err := l.window(op, id, "", from, to)
	if err != nil {
		return Account{}, err
	}
	return l.tenantWindow(tn, f, t), nil
}

// JobAccount returns job id's account over [from, to): ∫Alloc (demand while
// running) and ∫min(D_i, FairShare_j·w_i/Σ active w) over its active life
// inside the window. Finished jobs stay queryable until they fall before
// Begin() or are forgotten ([Ledger.Forget]). Errors as TenantAccount, with
// ErrUnknownJob.
// O(log n + log s), n = breakpoints of the job and of its θ-group.
func (l *Ledger) JobAccount(id JobID, from, to time.Time) (Account, error) {
	const op = "JobAccount"
	j := l.jobs.get(id)
	if j == nil || l.forgotten(j) {
		return Account{}, &Error{Op: op, Job: id, Err: ErrUnknownJob}
	}
	f, t, err := l.window(op, j.tn.id, id, from, to)
	if err != nil {
		return Account{}, err
	}
	return l.jobWindow(j, f, t), nil
}

// ClusterAccount returns the cluster's capacity, allocated and idle
// GPU·seconds over [from, to). O(log n).
func (l *Ledger) ClusterAccount(from, to time.Time) (ClusterAccount, error) {
	f, t, err := l.window("ClusterAccount", "", "", from, to)
	if err != nil {
		return ClusterAccount{}, err
	}
	w := func(s *series) GPUSeconds { return GPUSeconds(l.lam.window(s.at(f, l.lam), s.at(t, l.lam), f, t)) }
	c, a := w(&l.capa), w(&l.used)
	return ClusterAccount{Capacity: c, Allocated: a, Idle: max(0, c-a+w(&l.over))}, nil
}

// View returns the read-only face a scheduler consumes at time at: accounts
// over [Begin, at) — with a trailing window w, [max(Begin(), at−w), at) — and
// the current rates. A View reads the ledger when its methods are called, so
// use it between events; at is normally Now().
// O(1); each lookup costs what the matching Ledger query costs.
func (l *Ledger) View(at time.Time) View {
	t, ok := l.offset(at)
	v := View{l: l, to: t, ok: ok}
	if ok {
		// never before the ledger's Begin(): older breakpoints may be gone
		v.from = max(l.beginAt(l.now), l.beginAt(t))
		v.ok = v.from <= t
	}
	return v
}

// View is a read-only window on a Ledger ending at a fixed time. The zero
// View reports nothing. It satisfies the interface schedulers read accounts
// through.
type View struct {
	l        *Ledger
	from, to int64
	ok       bool
}

// At returns the end of the View's window.
func (v View) At() time.Time {
	if v.l == nil {
		return time.Time{}
	}
	return v.l.time(v.to)
}

// TenantAccount returns the tenant's account over the View's window; false
// if the tenant is unknown or the window invalid.
func (v View) TenantAccount(id TenantID) (Account, bool) {
	if !v.ok {
		return Account{}, false
	}
	tn := v.l.tenantIx[id]
	if tn == nil {
		return Account{}, false
	}
	return v.l.tenantWindow(tn, v.from, v.to), true
}

// JobAccount returns the job's account over the View's window; false if
// the job is unknown (or forgotten) or the window invalid.
func (v View) JobAccount(id JobID) (Account, bool) {
	if !v.ok {
		return Account{}, false
	}
	j := v.l.jobs.get(id)
	if j == nil || v.l.forgotten(j) {
		return Account{}, false
	}
	return v.l.jobWindow(j, v.from, v.to), true
}

// WaitingRhoFalls reports whether the View's accounts let a scheduler bound
// a waiting job's ρ_job from an earlier read: they accumulate from the
// ledger's start (or last Reset) with nothing forgotten ([Unbounded]
// history), and a job is never owed more than its demand ([CappedJobShare]).
// Then a job that holds no GPUs keeps its Alloc while its FairShare grows
// by at most its demand per second, so its ρ_job (Ratio(Alloc,
// FairShare)) does not rise, until the next Reset. The scheduling
// package's Queue relies on it. O(1).
func (v View) WaitingRhoFalls() bool {
	return v.ok && v.l.hist.kind == histUnbounded && v.l.jobShare == CappedJobShare
}

// TenantFairRate returns the tenant's current FairShare_j(t) in GPUs
// (GPU·seconds per second) under the ledger's mode; false if unknown.
func (v View) TenantFairRate(id TenantID) (float64, bool) {
	if v.l == nil {
		return 0, false
	}
	tn := v.l.tenantIx[id]
	if tn == nil {
		return 0, false
	}
	return v.l.fairRate(tn), true
}

// JobFairRate returns the job's current fair share min(D_i, FairShare_j·w_i/Σw)
// in GPUs (FairShare_j·w_i/Σw under SplitJobShare); 0 for a finished job; false if unknown.
func (v View) JobFairRate(id JobID) (float64, bool) {
	if v.l == nil {
		return 0, false
	}
	j := v.l.jobs.get(id)
	if j == nil || v.l.forgotten(j) {
		return 0, false
	}
	return v.l.jobFairRate(j), true
}

// TenantParent returns the tenant's parent in the tree ("" for a child of
// the cluster); false if unknown. It is what [sched.Options] Parent takes.
func (v View) TenantParent(id TenantID) (TenantID, bool) {
	if v.l == nil {
		return "", false
	}
	tn := v.l.tenantIx[id]
	if tn == nil {
		return "", false
	}
	return tn.parent.id, true
}

// TenantQuota returns the tenant's current quota M·W_j/ΣW in GPUs (0 once
// removed); false if unknown.
func (v View) TenantQuota(id TenantID) (float64, bool) {
	if v.l == nil {
		return 0, false
	}
	tn := v.l.tenantIx[id]
	if tn == nil {
		return 0, false
	}
	return v.l.quota(tn), true
}

// Tenant returns the tenant's current state, as [Ledger.Tenant] does
// (what its running jobs hold now, its quota, its fair rate); false if
// unknown. A scheduler that serves first the tenants holding little of
// their quota reads it here rather than summing its running jobs.
func (v View) Tenant(id TenantID) (TenantInfo, bool) {
	if v.l == nil {
		return TenantInfo{}, false
	}
	return v.l.Tenant(id)
}

func (l *Ledger) jobFairRate(j *job) float64 {
	if j.grp == nil {
		return 0
	}
	return j.weight * j.grp.s.rate()
}

// lookupBatch is how many ids AppendJobAccounts, StartAll and StopAll look
// up together: enough to keep the processor's outstanding loads busy, few
// enough that the records it brings in are still in cache when it reads
// them.
const lookupBatch = 32

// AppendJobAccounts appends to dst the account over the View's window of
// every id in ids, in order, as JobAccount returns them, and reports whether
// it knew every id. It stops before the first id that is unknown (or
// forgotten), which is then ids[len(result)-len(dst)].
//
// It gives the same accounts as calls of JobAccount, faster when the ids
// are many and their records scattered through a large ledger: it looks
// records up in batches, so the memory loads of different ids overlap
// instead of waiting for one another (a scheduling round that reads the
// accounts of a tenant's candidates at once is the case it is for).
// O(len(ids)) lookups, each as JobAccount's.
func (v View) AppendJobAccounts(dst []Account, ids []JobID) ([]Account, bool) {
	if !v.ok {
		return dst, len(ids) == 0
	}
	var (
		js [lookupBatch]*job
		hs [lookupBatch]uint64
	)
	for len(ids) > 0 {
		n := min(len(ids), lookupBatch)
		v.l.jobs.getBatch(ids[:n], js[:], hs[:])
		touchRecords(js[:n])
		for _, j := range js[:n] {
			if j == nil || v.l.forgotten(j) {
				return dst, false
			}
			dst = append(dst, v.l.jobWindow(j, v.from, v.to))
		}
		ids = ids[n:]
	}
	return dst, true
}
