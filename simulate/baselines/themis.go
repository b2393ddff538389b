package baselines

import (
	"cmp"
	"hash/fnv"
	"math"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/simulate"
)

// ThemisConfig tunes [Themis]. [DefaultThemisConfig] gives the defaults.
type ThemisConfig struct {
	// Fairness is Themis's fairness knob f in (0, 1]: each round, the
	// resources on offer go first to the fraction f of candidate jobs with
	// the worst (largest) finish-time fairness ρ. f = 1 is the fairest
	// setting. Default 0.8, the value the Themis paper evaluates with.
	Fairness float64
	// EstimateError is the relative error ε of remaining-time estimates: a
	// job's remaining time is read as Remaining × (1 + ε·u) with u in
	// [−1, 1] drawn deterministically from the job id and Seed. Default 0
	// (exact estimates): the ASTRAEA paper does not publish the value it used.
	EstimateError float64
	// Seed varies the estimate errors between runs; it has no other effect.
	Seed uint64
	// Lease is the lease length granted to a job. Zero means the engine's
	// lease (State.Lease; 900 s in the reference configuration), so that
	// Themis and ASTRAEA revisit allocations equally often.
	Lease time.Duration
}

// DefaultThemisConfig returns f = 0.8, exact estimates and the engine's lease.
func DefaultThemisConfig() ThemisConfig { return ThemisConfig{Fairness: 0.8} }

// Themis models Themis (Mahajan et al., NSDI '20): finish-time fairness with
// leases.
//
//   - A job's finish-time fairness is ρ = T_shared ÷ T_independent, where
//     T_independent is its run time alone on its full gang (the trace
//     duration) and T_shared its completion time in the shared cluster. At a
//     round we estimate T_shared as the time since submission plus the
//     (estimated) remaining time, i.e. the ρ the job would reach if it ran
//     from now to the end; a job that keeps waiting sees its ρ grow.
//   - Resources are granted in leases. A round happens whenever resources are
//     on offer: a lease ends, a job completes, or a job arrives to free GPUs.
//     The candidates are the waiting jobs plus the running jobs whose lease
//     ended; running jobs inside their lease keep their GPUs.
//   - The offer goes to the fraction f of candidates with the worst ρ,
//     worst first; what they cannot use goes to the other candidates, again
//     in ρ order (Themis's leftover allocation keeps the cluster busy).
//   - A re-selected running job renews its lease in place; one that is not
//     selected is preempted at its lease end.
//
// Simplified: Themis runs a partial-allocation auction among apps (groups of
// hyper-parameter jobs) that bid with their ρ for placements; with
// homogeneous GPUs and single-job apps the auction's winner order is the ρ
// order, so we grant gangs greedily by ρ. Apps are jobs; there is no tenant
// level (Themis is job-fair, which is what the ASTRAEA paper compares).
//
// Cost per tick: O(c log c) for c candidates.
type Themis struct{ cfg ThemisConfig }

// NewThemis validates cfg and returns a Themis policy.
func NewThemis(cfg ThemisConfig) (*Themis, error) {
	if !(cfg.Fairness > 0 && cfg.Fairness <= 1) {
		return nil, configError("themis", "Fairness", cfg.Fairness, "must be in (0, 1]")
	}
	if !(cfg.EstimateError >= 0 && cfg.EstimateError < 1) {
		return nil, configError("themis", "EstimateError", cfg.EstimateError, "must be in [0, 1)")
	}
	if cfg.Lease < 0 {
		return nil, configError("themis", "Lease", cfg.Lease, "must not be negative")
	}
	return &Themis{cfg: cfg}, nil
}

// Name is "themis".
func (t *Themis) Name() string { return "themis" }

// Rho returns the finish-time fairness the policy assigns to a job at now:
// (now − submit + estimated remaining) ÷ duration, with durations under one
// second read as one second.
func (t *Themis) Rho(js *simulate.JobState, now time.Time) float64 {
	rem := js.Remaining.Seconds()
	if t.cfg.EstimateError > 0 {
		h := fnv.New64a()
		var seed [8]byte
		for i := range seed {
			seed[i] = byte(t.cfg.Seed >> (8 * i))
		}
		h.Write(seed[:])
		h.Write([]byte(js.Job.ID))
		u := float64(h.Sum64()>>11)/float64(1<<53)*2 - 1
		rem *= 1 + t.cfg.EstimateError*u
	}
	ind := max(js.Job.Duration.Seconds(), 1)
	return (now.Sub(js.Job.Submit).Seconds() + max(rem, 0)) / ind
}

func (t *Themis) lease(s *simulate.State) time.Duration {
	if t.cfg.Lease > 0 {
		return t.cfg.Lease
	}
	return s.Lease
}

// Schedule offers free GPUs and GPUs of ended leases to the worst-ρ jobs.
func (t *Themis) Schedule(s *simulate.State) (simulate.Decision, error) {
	lease := t.lease(s)
	type cand struct {
		js  *simulate.JobState
		rho float64
	}
	var cands []cand
	var expired []*simulate.JobState
	for _, js := range s.Running {
		if !js.LeaseEnd.IsZero() && !js.LeaseEnd.After(s.Now) {
			expired = append(expired, js)
			cands = append(cands, cand{js, t.Rho(js, s.Now)})
		}
	}
	for _, js := range s.Pending {
		cands = append(cands, cand{js, t.Rho(js, s.Now)})
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if c := cmp.Compare(b.rho, a.rho); c != 0 {
			return c
		}
		return simulate.CompareJobs(a.js, b.js)
	})
	k := int(math.Ceil(t.cfg.Fairness * float64(len(cands))))

	p := newPlan(s)
	held := make(map[string]bool, len(expired))
	for _, js := range expired { // ended leases are on offer
		if err := p.stop(js); err != nil {
			return simulate.Decision{}, err
		}
		held[js.Job.ID] = true
	}
	grant := func(c cand) {
		if p.free() < c.js.Job.GPUs {
			return
		}
		if held[c.js.Job.ID] {
			if p.unstop(c.js.Job.ID) {
				p.renew(c.js, lease)
			}
			return
		}
		if !p.decided[c.js.Job.ID] {
			p.start(c.js, lease)
		}
	}
	// Within each group the GPUs are counted out in ρ order; then the chosen
	// renewals take back their own GPUs before the chosen new jobs are
	// placed, so that a renewal never loses its place to a later grant.
	for _, group := range [][]cand{cands[:k], cands[k:]} {
		budget := p.free()
		var chosen []cand
		for _, c := range group {
			if c.js.Job.GPUs <= budget {
				chosen = append(chosen, c)
				budget -= c.js.Job.GPUs
			}
		}
		for _, c := range chosen {
			if held[c.js.Job.ID] {
				grant(c)
			}
		}
		for _, c := range chosen {
			if !held[c.js.Job.ID] {
				grant(c)
			}
		}
		for _, c := range group { // gangs that fitted by count but not by placement
			if p.free() == 0 {
				break
			}
			if !held[c.js.Job.ID] && !p.decided[c.js.Job.ID] {
				grant(c)
			}
		}
	}
	return p.decision(), nil
}
