package metrics

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/ledger"
)

// SummaryConfig sets the thresholds of a Summary. The zero value means the
// paper's settings (see DefaultSummaryConfig).
type SummaryConfig struct {
	// JobLoss is the ρ_job threshold of a sharing-loss job; 0 means 0.95.
	JobLoss float64
	// TenantLoss is the ρ_tenant threshold of a sharing-loss interval; 0
	// means 1.
	TenantLoss float64
	// Intervals are the tenant interval lengths reported; nil means 1 h,
	// 6 h and 24 h (the paper does not state its lengths).
	Intervals []time.Duration
	// MinRun is the smallest running time used as a slowdown divisor; 0
	// means 1 s.
	MinRun time.Duration
	// Epsilon absorbs floating-point rounding in the loss tests: ρ counts as
	// a loss only when ρ < threshold − Epsilon. 0 means 1e-9; a negative
	// value means exactly 0.
	Epsilon float64
	// WindowStep and WindowBuckets set the sliding-window tenant loss
	// (Summary.TenantLossEq8Window): sampled at the end of every interval
	// of length WindowStep, over that interval and the WindowBuckets − 1
	// before it. 0 means 1 h and 24, the authors' simulator's last 24
	// hourly buckets; a negative WindowBuckets turns the figure off.
	WindowStep    time.Duration
	WindowBuckets int
}

// DefaultSummaryConfig returns the paper's thresholds: ρ_job < 0.95,
// ρ_tenant < 1 over 1 h, 6 h and 24 h intervals and over the last 24 hourly
// buckets, slowdown divisor at least 1 s, rounding tolerance 1e-9.
func DefaultSummaryConfig() SummaryConfig {
	return SummaryConfig{
		JobLoss:       0.95,
		TenantLoss:    1,
		Intervals:     []time.Duration{time.Hour, 6 * time.Hour, 24 * time.Hour},
		MinRun:        time.Second,
		Epsilon:       1e-9,
		WindowStep:    time.Hour,
		WindowBuckets: 24,
	}
}

func (c SummaryConfig) withDefaults() SummaryConfig {
	d := DefaultSummaryConfig()
	if c.JobLoss == 0 {
		c.JobLoss = d.JobLoss
	}
	if c.TenantLoss == 0 {
		c.TenantLoss = d.TenantLoss
	}
	if c.Intervals == nil {
		c.Intervals = d.Intervals
	}
	if c.MinRun == 0 {
		c.MinRun = d.MinRun
	}
	if c.WindowStep <= 0 {
		c.WindowStep = d.WindowStep
	}
	if c.WindowBuckets == 0 {
		c.WindowBuckets = d.WindowBuckets
	}
	switch {
	case c.Epsilon == 0:
		c.Epsilon = d.Epsilon
	case c.Epsilon < 0:
		c.Epsilon = 0
	}
	return c
}

// Stats summarises a distribution: mean and nearest-rank percentiles (the
// p-th percentile of n sorted values is the value of rank ⌈p·n/100⌉). All
// zero when there are no values.
type Stats struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// NewStats computes Stats of xs (which it sorts in place).
func NewStats(xs []float64) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	slices.Sort(xs)
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return Stats{
		N:    len(xs),
		Mean: sum / float64(len(xs)),
		P50:  Percentile(xs, 50),
		P90:  Percentile(xs, 90),
		P99:  Percentile(xs, 99),
		Max:  xs[len(xs)-1],
	}
}

// Percentile returns the nearest-rank p-th percentile of sorted values:
// the value of rank ⌈p·n/100⌉ (at least rank 1). It returns 0 for no values.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	return sorted[min(max(rank, 1), n)-1]
}

// IntervalLoss is the tenant sharing-loss figure for one interval length.
//
// A pair in which the tenant had no demand at all (no pending or running
// job: its Eq. 8 fair share is 0) is counted in Idle. Under Eq. 8 such a
// pair has ρ = 1 and is never a loss; under Eq. 16 its quota is owed and
// unserved, so it is a loss that no scheduler can avoid: ShareBusy leaves
// those pairs out. Idle is known only for runs with both modes
// (Run.BothModes); otherwise it is 0 and ShareBusy equals Share.
type IntervalLoss struct {
	Interval  time.Duration `json:"-"`
	Seconds   float64       `json:"interval_seconds"`
	Pairs     int           `json:"pairs"`      // (tenant, interval) pairs of this length
	Loss      int           `json:"loss"`       // pairs with ρ_tenant < threshold
	Share     float64       `json:"share"`      // Loss ÷ Pairs; 0 when there are no pairs
	Idle      int           `json:"idle"`       // pairs in which the tenant had no demand
	IdleLoss  int           `json:"idle_loss"`  // of Loss, pairs that were idle
	ShareBusy float64       `json:"share_busy"` // (Loss − IdleLoss) ÷ (Pairs − Idle); 0 when no pair was busy
}

// WindowLoss is the tenant sharing-loss figure over a sliding window of
// fixed intervals, as the authors' simulator reports tenants: at the end
// of every interval of length Step (every hour), each tenant's Eq. 8 ρ over
// that interval and the Buckets − 1 before it (its last 24 hourly buckets),
// one (tenant, interval) sample each. The window's accounts are the sums of
// the tenant's interval accounts in it, so near the start of the run it
// holds fewer intervals, and samples end where the intervals do (the
// simulator keeps those that begin by the last submission).
//
// Idle mirrors IntervalLoss: a sample whose window owed the tenant nothing
// under Eq. 8 (no demand in the whole window) has ρ = 1, is never a loss,
// and is counted in Idle; ShareBusy leaves those samples out.
type WindowLoss struct {
	Step          time.Duration `json:"-"`
	Buckets       int           `json:"buckets"`        // intervals in the window
	StepSeconds   float64       `json:"step_seconds"`   // interval length
	WindowSeconds float64       `json:"window_seconds"` // Buckets × Step
	Samples       int           `json:"samples"`        // (tenant, interval) samples
	Loss          int           `json:"loss"`           // samples with ρ_tenant < threshold
	Share         float64       `json:"share"`          // Loss ÷ Samples; 0 when there are none
	Idle          int           `json:"idle"`           // samples whose window owed the tenant nothing
	ShareBusy     float64       `json:"share_busy"`     // Loss ÷ (Samples − Idle); 0 when no sample was busy
}

// Overhead is the direct cost of preemption: the time finished jobs held
// their GPUs without progress, as a fraction of their total JCT (Σ JCT, so
// a Direct of 0.008 adds 0.8 % to the average JCT if every second of it
// lies on its job's path to completion, as it does). The paper reports
// "about 0.8 % of average JCT" for checkpoints and cold starts at a 900 s
// lease. Unlike the rise of average JCT over a run without overheads
// (PreemptionOverhead), it does not depend on how two schedules of an
// overloaded queue diverge.
//
// Spread is apart: the time jobs placed on more nodes than their minimum
// ran without doing work (simulate.Config.SpreadSlowdown), a cost of
// placement rather than of preemption, so not part of Direct.
type Overhead struct {
	Direct     float64 `json:"direct"`     // Checkpoint + ColdStart + Lost
	Checkpoint float64 `json:"checkpoint"` // writing checkpoints at lease ends
	ColdStart  float64 `json:"cold_start"` // restoring after a resume
	Lost       float64 `json:"lost"`       // work run again after a preemption
	Spread     float64 `json:"spread"`     // running slower, spread over more nodes than needed
}

// Summary holds a run's figures of merit. Shares are fractions in [0, 1];
// times are seconds. It encodes to JSON without loss (no NaN or infinity).
type Summary struct {
	Policy   string         `json:"policy"`
	Jobs     int            `json:"jobs"`
	Finished int            `json:"finished"`
	States   map[string]int `json:"states"`
	Excluded map[string]int `json:"excluded,omitempty"`

	JobLossThreshold float64 `json:"job_loss_threshold"`
	// SharingLossJobs is the share of finished jobs with ρ_job < JobLossThreshold.
	SharingLossJobs float64 `json:"sharing_loss_jobs"`
	LossJobs        int     `json:"loss_jobs"`

	TenantLossThreshold float64 `json:"tenant_loss_threshold"`
	// TenantLoss is measured in the run's reporting mode (the ledger
	// its TenantInterval.Account comes from); TenantLossEq8 and
	// TenantLossEq16 under each equation, when the run has both
	// (Run.BothModes). The paper's simulator reports Eq. 8.
	TenantLoss     []IntervalLoss `json:"tenant_loss"`
	TenantLossEq8  []IntervalLoss `json:"tenant_loss_eq8,omitempty"`
	TenantLossEq16 []IntervalLoss `json:"tenant_loss_eq16,omitempty"`
	// TenantLossEq8Window is the Eq. 8 loss over the sliding window of the
	// last SummaryConfig.WindowBuckets intervals (24 hourly buckets, as
	// the authors' simulator reports it), when the run has both modes.
	TenantLossEq8Window *WindowLoss `json:"tenant_loss_eq8_window,omitempty"`

	JCT      Stats `json:"jct_seconds"`
	Queueing Stats `json:"queueing_seconds"`
	Slowdown Stats `json:"slowdown"`

	// Utilization is ∫used ÷ ∫capacity over the recorded occupancy.
	Utilization float64 `json:"utilization"`
	// Jain is Jain's index (Σρ)² ÷ (n·Σρ²) of the tenants' whole-run ρ, in
	// (0, 1], 1 when all are equal. Tenants with ρ = +Inf (service while
	// owed nothing) are left out and counted in JainExcluded; no tenant at
	// all gives 1.
	Jain         float64 `json:"jain"`
	JainExcluded int     `json:"jain_excluded,omitempty"`

	Preemptions   int `json:"preemptions"`
	PreemptedJobs int `json:"preempted_jobs"`

	// Overhead is the direct preemption cost of the finished jobs.
	Overhead Overhead `json:"overhead"`

	// PreemptionOverhead is filled by the caller from PreemptionOverhead
	// when a zero-overhead run is available.
	PreemptionOverhead *float64 `json:"preemption_overhead,omitempty"`

	TenantRho map[string]ledger.Rho `json:"tenant_rho"`
	Quotas    map[string]float64    `json:"quotas,omitempty"`
}

// Summarize computes the summary of r under cfg. It does not modify r.
// Cost: O(J log J + T log T + U log U) for J jobs, T tenant intervals and U
// occupancy points.
//
// Conventions:
//   - Job figures (sharing loss, JCT, queueing, slowdown) count finished
//     jobs only; Jobs − Finished jobs never ended.
//   - A (tenant, interval) pair in which the tenant was owed nothing and
//     received nothing has ρ = 1 (ledger.Ratio) and is never a loss; a pair
//     with FairShare 0 and Alloc > 0 has ρ = +Inf, also not a loss.
//   - Pairs are grouped by TenantInterval.IntervalLength; lengths not in
//     cfg.Intervals are ignored.
func Summarize(r Run, cfg SummaryConfig) Summary {
	cfg = cfg.withDefaults()
	s := Summary{
		Policy:              r.Policy,
		Jobs:                len(r.Jobs),
		States:              map[string]int{},
		JobLossThreshold:    cfg.JobLoss,
		TenantLossThreshold: cfg.TenantLoss,
	}
	if len(r.Excluded) > 0 {
		s.Excluded = maps.Clone(r.Excluded)
	}
	if len(r.Quotas) > 0 {
		s.Quotas = maps.Clone(r.Quotas)
	}
	var jct, queue, slow []float64
	var ov Overhead
	totalJCT := 0.0
	for _, j := range r.Jobs {
		s.Preemptions += j.Preemptions
		if j.Preemptions > 0 {
			s.PreemptedJobs++
		}
		if !j.Finished() {
			continue
		}
		s.Finished++
		s.States[stateOrCompleted(j.State)]++
		if float64(j.Rho) < cfg.JobLoss-cfg.Epsilon {
			s.LossJobs++
		}
		jct = append(jct, j.JCT().Seconds())
		ov.Checkpoint += j.Checkpoint.Seconds()
		ov.ColdStart += j.ColdStart.Seconds()
		ov.Lost += j.Lost.Seconds()
		ov.Spread += j.Spread.Seconds()
		totalJCT += j.JCT().Seconds()
		queue = append(queue, j.Queueing().Seconds())
		slow = append(slow, j.Slowdown(cfg.MinRun))
	}
	if s.Finished > 0 {
		s.SharingLossJobs = float64(s.LossJobs) / float64(s.Finished)
	}
	s.JCT, s.Queueing, s.Slowdown = NewStats(jct), NewStats(queue), NewStats(slow)
	if totalJCT > 0 {
		ov.Checkpoint /= totalJCT
		ov.ColdStart /= totalJCT
		ov.Lost /= totalJCT
		ov.Spread /= totalJCT
		ov.Direct = ov.Checkpoint + ov.ColdStart + ov.Lost
	} else {
		ov = Overhead{}
	}
	s.Overhead = ov

	s.TenantLoss = intervalLoss(r, cfg, func(t TenantInterval) ledger.Account { return t.Account })
	if r.BothModes {
		s.TenantLossEq8 = intervalLoss(r, cfg, func(t TenantInterval) ledger.Account { return t.Eq8 })
		s.TenantLossEq16 = intervalLoss(r, cfg, func(t TenantInterval) ledger.Account { return t.Eq16 })
		if cfg.WindowBuckets > 0 {
			w := windowLoss(r, cfg)
			s.TenantLossEq8Window = &w
		}
	}

	s.Utilization = Utilization(r.Util, r.End)
	s.TenantRho = tenantRho(r)
	s.Jain, s.JainExcluded = Jain(s.TenantRho)
	return s
}

// intervalLoss is the loss of r's tenant intervals, per configured length,
// with the account acc picks from each pair.
func intervalLoss(r Run, cfg SummaryConfig, acc func(TenantInterval) ledger.Account) []IntervalLoss {
	var out []IntervalLoss
	for _, length := range cfg.Intervals {
		il := IntervalLoss{Interval: length, Seconds: length.Seconds()}
		for _, t := range r.Tenants {
			if t.IntervalLength() != length {
				continue
			}
			a := acc(t)
			idle := r.BothModes && t.Eq8.FairShare == 0
			loss := float64(ledger.Ratio(a.Alloc, a.FairShare)) < cfg.TenantLoss-cfg.Epsilon
			il.Pairs++
			if idle {
				il.Idle++
			}
			if loss {
				il.Loss++
				if idle {
					il.IdleLoss++
				}
			}
		}
		if il.Pairs > 0 {
			il.Share = float64(il.Loss) / float64(il.Pairs)
		}
		if busy := il.Pairs - il.Idle; busy > 0 {
			il.ShareBusy = float64(il.Loss-il.IdleLoss) / float64(busy)
		}
		out = append(out, il)
	}
	return out
}

// windowLoss is the Eq. 8 loss of r's tenants over the sliding window of
// cfg.WindowBuckets intervals of length cfg.WindowStep, sampled at the end
// of each. Each window is summed afresh, oldest interval first, so a
// sample's figures do not depend on the samples before it. Cost:
// O(T log T + T·b) for T intervals and b buckets.
func windowLoss(r Run, cfg SummaryConfig) WindowLoss {
	step, n := cfg.WindowStep, cfg.WindowBuckets
	wl := WindowLoss{Step: step, Buckets: n, StepSeconds: step.Seconds(), WindowSeconds: step.Seconds() * float64(n)}
	byTenant := map[string][]TenantInterval{}
	for _, t := range r.Tenants {
		if t.IntervalLength() == step {
			byTenant[t.Tenant] = append(byTenant[t.Tenant], t)
		}
	}
	span := time.Duration(n) * step
	for _, tn := range slices.Sorted(maps.Keys(byTenant)) {
		ts := byTenant[tn]
		slices.SortStableFunc(ts, func(a, b TenantInterval) int { return a.From.Compare(b.From) })
		first := 0 // the oldest interval in the window of the current sample
		for k, cur := range ts {
			// The window is the intervals that begin in (From − n·step, From].
			for !ts[first].From.After(cur.From.Add(-span)) {
				first++
			}
			var alloc, fair ledger.GPUSeconds
			for _, t := range ts[first : k+1] {
				alloc += t.Eq8.Alloc
				fair += t.Eq8.FairShare
			}
			wl.Samples++
			if fair == 0 {
				wl.Idle++
			}
			if float64(ledger.Ratio(alloc, fair)) < cfg.TenantLoss-cfg.Epsilon {
				wl.Loss++
			}
		}
	}
	if wl.Samples > 0 {
		wl.Share = float64(wl.Loss) / float64(wl.Samples)
	}
	if busy := wl.Samples - wl.Idle; busy > 0 {
		wl.ShareBusy = float64(wl.Loss) / float64(busy)
	}
	return wl
}

func stateOrCompleted(s string) string {
	if s == "" {
		return "COMPLETED"
	}
	return s
}

// Utilization returns ∫used ÷ ∫capacity of the step function pts (each
// point holds until the next; the last until end, or counts for nothing
// when end is zero or not after it). Points are taken in time order (a
// sorted copy is made when needed). It returns 0 when no capacity was
// recorded.
func Utilization(pts []UtilPoint, end time.Time) float64 {
	if !slices.IsSortedFunc(pts, cmpUtil) {
		pts = slices.Clone(pts)
		slices.SortStableFunc(pts, cmpUtil)
	}
	var used, capacity float64
	for i, p := range pts {
		next := end
		if i+1 < len(pts) {
			next = pts[i+1].At
		}
		if next.IsZero() || !next.After(p.At) {
			continue
		}
		dt := next.Sub(p.At).Seconds()
		used += float64(p.Used) * dt
		capacity += float64(p.Capacity) * dt
	}
	if !(capacity > 0) {
		return 0
	}
	return used / capacity
}

func cmpUtil(a, b UtilPoint) int { return a.At.Compare(b.At) }

// tenantRho is each tenant's whole-run ρ: from r.TenantTotals, or else the
// sum of its intervals of the shortest length present.
func tenantRho(r Run) map[string]ledger.Rho {
	out := map[string]ledger.Rho{}
	if r.TenantTotals != nil {
		for t, a := range r.TenantTotals {
			out[t] = ledger.Ratio(a.Alloc, a.FairShare)
		}
		return out
	}
	shortest := shortestLength(r.Tenants)
	type sum struct{ alloc, fair ledger.GPUSeconds }
	sums := map[string]sum{}
	for _, t := range r.Tenants {
		if t.IntervalLength() != shortest {
			continue
		}
		s := sums[t.Tenant]
		s.alloc += t.Account.Alloc
		s.fair += t.Account.FairShare
		sums[t.Tenant] = s
	}
	for t, s := range sums {
		out[t] = ledger.Ratio(s.alloc, s.fair)
	}
	return out
}

// Jain returns Jain's fairness index (Σx)² ÷ (n·Σx²) over the finite ρ
// values, and how many +Inf values it left out. It is 1 when there are no
// finite values or all are 0 (nobody is treated differently).
func Jain(rho map[string]ledger.Rho) (index float64, excluded int) {
	var sum, sq float64
	n := 0
	for _, k := range slices.Sorted(maps.Keys(rho)) { // fixed order: identical sums on every run
		r := rho[k]
		if r.IsInf() {
			excluded++
			continue
		}
		x := float64(r)
		sum += x
		sq += x * x
		n++
	}
	if n == 0 || sq == 0 {
		return 1, excluded
	}
	return sum * sum / (float64(n) * sq), excluded
}

// ErrIncomparable reports two summaries that PreemptionOverhead cannot
// compare.
var ErrIncomparable = errors.New("metrics: summaries are not comparable")

// PreemptionOverhead returns the relative increase of the average JCT of a
// run with preemption overheads over the same run without them:
// (JCT_with − JCT_without) ÷ JCT_without. The paper reports about 0.008 for
// ASTRAEA on Venus at a 900 s lease. It fails when the runs finished a
// different number of jobs or the zero-overhead run has no positive JCT.
func PreemptionOverhead(with, without Summary) (float64, error) {
	if with.Finished != without.Finished {
		return 0, fmt.Errorf("%w: %d vs %d finished jobs", ErrIncomparable, with.Finished, without.Finished)
	}
	if !(without.JCT.Mean > 0) {
		return 0, fmt.Errorf("%w: zero-overhead run has average JCT %v", ErrIncomparable, without.JCT.Mean)
	}
	return (with.JCT.Mean - without.JCT.Mean) / without.JCT.Mean, nil
}

// cmpJobs orders job records by submit time, then id.
func cmpJobs(a, b JobRecord) int {
	return cmp.Or(a.Submit.Compare(b.Submit), cmp.Compare(a.ID, b.ID))
}
