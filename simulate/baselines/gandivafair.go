package baselines

import (
	"cmp"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/simulate"
)

// GandivaFairConfig tunes [GandivaFair]. The zero value uses the defaults.
type GandivaFairConfig struct {
	// Quantum is the time-slice length: at every quantum boundary the whole
	// allocation is recomputed from the stride passes, and running jobs that
	// lose their turn are suspended. Zero means the engine's lease
	// (State.Lease, 900 s in the reference configuration; 15 minutes for a
	// State without one). Gandiva's
	// prototype slices in about a minute because it suspends in GPU memory;
	// the simulator charges every suspension a checkpoint and every resume a
	// cold start, so we slice at the same granularity as the lease-based
	// policies to keep the comparison about the policy, not the overhead.
	Quantum time.Duration
}

// GandivaFair models Gandiva_fair (Chaudhary et al., EuroSys '20) on a
// homogeneous cluster: cluster-wide GPU-time fairness among tenants by
// gang-aware stride scheduling of tickets.
//
//   - Each tenant holds tickets ∝ its quota weight; its stride is 1 ÷
//     tickets and its pass starts at 0. A tenant that becomes active again
//     joins at the smallest pass among active tenants, so idling earns no
//     credit (stride scheduling's rule, and Gandiva_fair's: fairness is among
//     active users).
//   - Gang-aware strides: scheduling a job of g GPUs for one quantum advances
//     its tenant's pass by g × stride, so a tenant's GPU·time, not its job
//     count, is what the passes equalise.
//   - At each quantum boundary the allocation is rebuilt: repeatedly the
//     tenant with the lowest pass that still has a job that fits receives
//     its least recently run job (round robin inside a tenant; ties by
//     submit, id). Running jobs not re-selected are suspended.
//   - Between boundaries, GPUs freed by completions go to waiting jobs in the
//     same pass order, without preemption (work conservation).
//
// Simplified: Gandiva_fair splits the cluster into per-server stride
// schedulers with a central load balancer and migration; we run one
// cluster-wide stride scheduler over the consolidated placer, which is the
// allocation its load balancer aims at. No heterogeneity trading (the ASTRAEA
// paper's setting has one GPU type, as it states).
//
// Cost per tick: O(a log a + t × s) for a active jobs, t tenants and s
// selections.
type GandivaFair struct {
	cfg      GandivaFairConfig
	pass     map[string]float64
	active   map[string]bool
	lastRun  map[string]time.Time // when each job last stopped running
	boundary time.Time            // next quantum boundary; zero before the first tick
}

// NewGandivaFair validates cfg and returns a Gandiva_fair policy.
func NewGandivaFair(cfg GandivaFairConfig) (*GandivaFair, error) {
	if cfg.Quantum < 0 {
		return nil, configError("gandiva-fair", "Quantum", cfg.Quantum, "must not be negative")
	}
	return &GandivaFair{
		cfg:     cfg,
		pass:    make(map[string]float64),
		active:  make(map[string]bool),
		lastRun: make(map[string]time.Time),
	}, nil
}

// Name is "gandiva-fair".
func (g *GandivaFair) Name() string { return "gandiva-fair" }

func (g *GandivaFair) quantum(s *simulate.State) time.Duration {
	if g.cfg.Quantum > 0 {
		return g.cfg.Quantum
	}
	if s.Lease > 0 {
		return s.Lease
	}
	return 15 * time.Minute
}

// tickets returns each tenant's ticket count: its quota weight, or the mean
// weight for a tenant without a quota, so that it is neither starved nor
// favoured.
func tickets(s *simulate.State, tenants []string) map[string]float64 {
	out := make(map[string]float64, len(tenants))
	var sum float64
	n := 0
	for _, w := range s.Quotas {
		if w > 0 {
			sum += w
			n++
		}
	}
	mean := 1.0
	if n > 0 {
		mean = sum / float64(n)
	}
	for _, t := range tenants {
		if w := s.Quotas[t]; w > 0 {
			out[t] = w
		} else {
			out[t] = mean
		}
	}
	return out
}

// Traits tells the engine that this policy never reads the progress of
// running jobs.
func (g *GandivaFair) Traits() simulate.Traits { return simulate.Traits{ProgressBlind: true} }

// Schedule rebuilds the allocation at a quantum boundary and otherwise fills
// idle GPUs in pass order.
func (g *GandivaFair) Schedule(s *simulate.State) (simulate.Decision, error) {
	p := newPlan(s)
	reslice := g.boundary.IsZero() || !s.Now.Before(g.boundary)
	if reslice {
		g.boundary = s.Now.Add(g.quantum(s))
	}

	// Active tenants and the join rule.
	jobsOf := make(map[string][]*simulate.JobState)
	for _, js := range s.Running {
		jobsOf[js.Job.Tenant] = append(jobsOf[js.Job.Tenant], js)
	}
	for _, js := range s.Pending {
		jobsOf[js.Job.Tenant] = append(jobsOf[js.Job.Tenant], js)
	}
	tenants := make([]string, 0, len(jobsOf))
	for t := range jobsOf {
		tenants = append(tenants, t)
	}
	slices.Sort(tenants)
	minPass, any := 0.0, false
	for _, t := range tenants {
		if g.active[t] && (!any || g.pass[t] < minPass) {
			minPass, any = g.pass[t], true
		}
	}
	next := make(map[string]bool, len(tenants))
	for _, t := range tenants {
		if !g.active[t] && any {
			g.pass[t] = max(g.pass[t], minPass)
		}
		next[t] = true
	}
	g.active = next
	tk := tickets(s, tenants)

	// Candidates per tenant: least recently run first.
	last := func(js *simulate.JobState) time.Time {
		if js.Status == simulate.Running {
			return s.Now
		}
		if at, ok := g.lastRun[js.Job.ID]; ok {
			return at
		}
		return js.Job.Submit
	}
	// Sorted by keys found once per job (timeKey), not at each comparison.
	type keyed struct {
		last timeKey
		i    int32
	}
	var ks []keyed
	var sorted []*simulate.JobState
	for _, t := range tenants {
		jobs := jobsOf[t]
		ks = ks[:0]
		for i, js := range jobs {
			ks = append(ks, keyed{keyOf(last(js)), int32(i)})
		}
		slices.SortFunc(ks, func(a, b keyed) int {
			c, ok := a.last.compare(b.last)
			if !ok {
				c = last(jobs[a.i]).Compare(last(jobs[b.i]))
			}
			if c != 0 {
				return c
			}
			return simulate.CompareJobs(jobs[a.i], jobs[b.i])
		})
		sorted = sorted[:0]
		for _, k := range ks {
			sorted = append(sorted, jobs[k.i])
		}
		copy(jobs, sorted)
	}

	var budget int
	chosen := make(map[string]bool, len(s.Running))
	if reslice {
		budget = s.Capacity
	} else {
		budget = p.free()
		for _, js := range s.Running { // not candidates between boundaries
			chosen[js.Job.ID] = true
		}
	}
	var order []*simulate.JobState
	inPlay := slices.Clone(tenants)
	// Where each tenant's search for a pick resumes: the jobs before it are
	// chosen or larger than the budget, which only shrinks, so they never
	// become picks.
	from := make(map[string]int, len(tenants))
	for len(inPlay) > 0 && budget > 0 {
		best := -1
		for i, t := range inPlay {
			if best < 0 || cmp.Or(cmp.Compare(g.pass[t], g.pass[inPlay[best]]), cmp.Compare(t, inPlay[best])) < 0 {
				best = i
			}
		}
		t := inPlay[best]
		pick := -1
		for i := from[t]; i < len(jobsOf[t]); i++ {
			if js := jobsOf[t][i]; !chosen[js.Job.ID] && js.Job.GPUs <= budget {
				pick = i
				break
			}
		}
		if pick < 0 {
			inPlay = slices.Delete(inPlay, best, best+1)
			continue
		}
		from[t] = pick + 1
		js := jobsOf[t][pick]
		chosen[js.Job.ID] = true
		order = append(order, js)
		budget -= js.Job.GPUs
		g.pass[t] += float64(js.Job.GPUs) / tk[t]
	}

	if reslice {
		for _, js := range s.Running {
			if !chosen[js.Job.ID] {
				if err := p.stop(js); err != nil {
					return simulate.Decision{}, err
				}
				g.lastRun[js.Job.ID] = s.Now
			}
		}
	}
	for _, js := range order {
		if js.Status == simulate.Pending {
			p.start(js, 0)
		}
	}
	// Suspended jobs whose GPUs nobody took keep running: a chosen gang did
	// not fit, so suspending them would only cost a checkpoint.
	for _, js := range s.Running {
		if !chosen[js.Job.ID] && p.unstop(js.Job.ID) {
			delete(g.lastRun, js.Job.ID)
		}
	}
	for _, t := range tenants { // gangs that fitted by count but not by placement
		for _, js := range jobsOf[t] {
			if p.free() == 0 {
				break
			}
			if js.Status == simulate.Pending && !p.decided[js.Job.ID] && js.Job.GPUs <= p.free() {
				p.start(js, 0)
			}
		}
	}
	if n := len(s.Pending) + len(s.Running); len(g.lastRun) > 2*n+1024 {
		forgetLeft(g.lastRun, s) // forget jobs that left
	}
	return p.decision(), nil
}

// NextWakeup asks for the next quantum boundary while jobs are waiting or
// running; zero when the cluster is empty.
func (g *GandivaFair) NextWakeup(s *simulate.State) time.Time {
	if len(s.Pending) == 0 || g.boundary.IsZero() {
		return time.Time{}
	}
	return g.boundary
}
