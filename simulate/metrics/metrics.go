package metrics

import (
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// JobRecord is the fate of one job in a run.
type JobRecord struct {
	ID, Tenant string
	GPUs       int
	Submit     time.Time
	FirstStart time.Time     // zero if never started
	End        time.Time     // completion time; zero if the job never ended
	Run        time.Duration // trace duration (useful running time)
	Held       time.Duration // total time holding GPUs, incl. overheads
	// Overhead splits the part of Held that made no progress: time
	// writing checkpoints (at unrenewed lease ends, and at renewals when
	// they are charged), restoring after a resume (cold starts), and
	// running work that a preemption then discarded.
	Checkpoint, ColdStart, Lost time.Duration
	// Spread is the part of Held that the job, placed on more nodes than
	// its minimum, ran without doing work (simulate.Config.SpreadSlowdown):
	// not a cost of preemption, so not counted in Summary's Overhead.Direct.
	Spread      time.Duration
	Rho         ledger.Rho // ρ_job over its life in the ledger: [Submit, End), or from the tick that admitted it (simulate.Config.Admit) to End
	Preemptions int
	State       string
}

// Finished reports whether the job ended (End is set).
func (j JobRecord) Finished() bool { return !j.End.IsZero() }

// JCT is the job completion time End − Submit: pending plus running time,
// overheads included. It is 0 for a job that never ended.
func (j JobRecord) JCT() time.Duration {
	if !j.Finished() {
		return 0
	}
	return j.End.Sub(j.Submit)
}

// Queueing is the delay before the first start, FirstStart − Submit; for a
// job that ended without ever starting (cancelled while pending) it is
// End − Submit, and 0 for a job that neither started nor ended.
func (j JobRecord) Queueing() time.Duration {
	switch {
	case !j.FirstStart.IsZero():
		return j.FirstStart.Sub(j.Submit)
	case j.Finished():
		return j.End.Sub(j.Submit)
	}
	return 0
}

// Slowdown is (pending + running) ÷ running = JCT ÷ Run, with Run taken as
// at least minRun (so that a job of duration 0 has a finite slowdown: a
// 0-second job that waited 30 s has slowdown 30 with minRun = 1 s) and the
// result at least 1 (a job never beats its own run time; a 0-second job that
// did not wait has slowdown 1).
func (j JobRecord) Slowdown(minRun time.Duration) float64 {
	run := max(j.Run, minRun, time.Nanosecond)
	jct := max(j.JCT(), run)
	return float64(jct) / float64(run)
}

// TenantInterval is a tenant's account over one fixed interval [From, To).
type TenantInterval struct {
	Tenant   string
	From, To time.Time
	Account  ledger.Account
	// Eq8 and Eq16 are the pair's accounts under each tenant fair-share
	// equation (Account is one of them, the run's reporting mode), set
	// when Run.BothModes is. Eq8.FairShare = 0 means the tenant had no
	// demand in the interval.
	Eq8, Eq16 ledger.Account
	// Length is the configured interval length this pair belongs to. Zero
	// means To − From. A simulator that cuts the last interval short at the
	// end of the run sets Length to the configured length so the pair is
	// counted with its peers.
	Length time.Duration
}

// IntervalLength returns Length, or To − From when Length is zero.
func (t TenantInterval) IntervalLength() time.Duration {
	if t.Length != 0 {
		return t.Length
	}
	return t.To.Sub(t.From)
}

// shortestLength is the shortest positive interval length among ts, or 0.
func shortestLength(ts []TenantInterval) time.Duration {
	var s time.Duration
	for _, t := range ts {
		if l := t.IntervalLength(); l > 0 && (s == 0 || l < s) {
			s = l
		}
	}
	return s
}

// Rho is the pair's ρ_tenant, recomputed as ledger.Ratio(Alloc, FairShare)
// so that a record built without its Rho field is still read correctly:
// FairShare = 0 and Alloc = 0 give ρ = 1, FairShare = 0 and Alloc > 0 give
// +Inf.
func (t TenantInterval) Rho() ledger.Rho {
	return ledger.Ratio(t.Account.Alloc, t.Account.FairShare)
}

// UtilPoint records cluster occupancy from At until the next point: Used of
// Capacity GPUs are held.
type UtilPoint struct {
	At             time.Time
	Used, Capacity int
}

// Run is everything one simulation records, for one policy.
type Run struct {
	Policy  string
	Jobs    []JobRecord
	Tenants []TenantInterval // for each configured interval length
	// BothModes says that every TenantInterval carries its Eq8 and Eq16
	// accounts, so that Summarize reports tenant loss under both.
	BothModes bool
	Util      []UtilPoint // step function, in time order
	Quotas    map[string]float64
	// End closes the last UtilPoint's step. Zero means the last point's
	// time (the last step then counts for nothing).
	End time.Time
	// TenantTotals is each tenant's account over the whole run, for Jain's
	// index. When nil, Summarize sums the tenant's intervals of the shortest
	// length present (intervals of one length partition the run).
	TenantTotals map[string]ledger.Account
	// Excluded counts jobs the simulator did not run (e.g. larger than the
	// whole cluster), by reason; it is copied into the summary.
	Excluded map[string]int
}
