package ledger

import (
	"iter"
	"time"
)

// TenantInfo is the current state of a tenant.
type TenantInfo struct {
	ID         TenantID
	Weight     float64  // W_j (the last weight, if removed)
	Registered bool     // false once removed
	Demand     GPUs     // Σ demand of the active jobs in its subtree
	Alloc      GPUs     // Σ demand of the running jobs in its subtree
	ActiveJobs int      // pending or running jobs in its subtree
	Quota      float64  // its parent's fair share × W_j/ΣW of its siblings now, in GPUs (0 once removed)
	FairRate   float64  // FairShare_j now, in GPUs
	Parent     TenantID // "" for a top-level tenant (a child of the cluster)
	Children   int      // registered children; jobs hang only under a tenant with none
}

// Tenant returns the current state of a tenant (registered or removed);
// false if it was never added. O(1).
func (l *Ledger) Tenant(id TenantID) (TenantInfo, bool) {
	tn := l.tenantIx[id]
	if tn == nil {
		return TenantInfo{}, false
	}
	return TenantInfo{
		ID: tn.id, Weight: tn.weight, Registered: tn.registered, Demand: tn.demand, Alloc: tn.alloc,
		ActiveJobs: tn.nActive, Quota: l.quota(tn), FairRate: l.fairRate(tn),
		Parent: tn.parent.id, Children: tn.nKids,
	}, true
}

// Tenants yields every tenant ever added, registered or removed, in the
// order they were first added. The ledger must not change during the
// iteration. O(T) for the whole sequence.
func (l *Ledger) Tenants() iter.Seq[TenantID] {
	return func(yield func(TenantID) bool) {
		for _, tn := range l.tenants {
			if !yield(tn.id) {
				return
			}
		}
	}
}

// JobInfo is the current state of a job.
type JobInfo struct {
	ID       JobID
	Tenant   TenantID
	Demand   GPUs
	Weight   float64
	Running  bool       // holds its GPUs now
	Active   bool       // pending or running (false once finished)
	Final    FinalState // 0 while active
	Submit   time.Time
	Finish   time.Time // zero while active
	FairRate float64   // its fair share now, in GPUs (0 once finished)
}

// Job returns the current state of a job; false if unknown or forgotten.
// O(1).
func (l *Ledger) Job(id JobID) (JobInfo, bool) {
	j := l.jobs.get(id)
	if j == nil || l.forgotten(j) {
		return JobInfo{}, false
	}
	info := JobInfo{
		ID: j.id, Tenant: j.tn.id, Demand: j.demand, Weight: j.weight,
		Running: j.state == running, Active: j.state != finished, Final: j.final,
		Submit: l.time(j.submit), FairRate: l.jobFairRate(j),
	}
	if j.state == finished {
		info.Finish = l.time(j.finish)
	}
	return info, true
}
