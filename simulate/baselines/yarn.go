package baselines

import (
	"cmp"

	"github.com/astraea-sched/astraea/simulate"
)

// YARNConfig tunes [YARNCS]. The zero value is the configuration of the
// ASTRAEA comparison.
type YARNConfig struct {
	// Elastic lets a virtual cluster use idle GPUs beyond its capacity
	// (YARN's maximum-capacity above capacity). Borrowed GPUs are never
	// taken back, because the comparison runs the capacity scheduler without
	// its preemption monitor. The default, false, is what the ASTRAEA paper
	// compares against: YARN-CS stands for the static quota, while borrowing
	// with reclaim is represented by HiveD.
	Elastic bool
}

// YARNCS models Hadoop YARN's capacity scheduler as the ASTRAEA paper uses it
// (Microsoft's Philly cluster ran it; Jeon et al., ATC '19):
//
//   - Each tenant is a queue (virtual cluster) with a static capacity equal to
//     its quota, weight × cluster GPUs, rounded to whole GPUs by the largest
//     remainder method so that the capacities sum to the cluster.
//   - Inside a queue jobs start strictly in (submit, id) order: the head of a
//     queue that does not fit blocks its own queue, never the others.
//   - Across queues, the next job comes from the queue with the lowest used ÷
//     capacity ratio, as the capacity scheduler's queue ordering does.
//   - No preemption, no leases.
//
// Simplified: one level of queues (no hierarchy), GPUs only (no memory or
// vcores), no user limits inside a queue. One rule is ours: a job asking for
// more GPUs than its queue's whole capacity would never start, so it may start
// when its queue runs nothing else and the cluster has room (YARN would
// reject it at submission; a trace replay must finish every job). Apart from
// that exception a queue never holds more than its capacity unless Elastic.
//
// Cost per tick: O(q × started + p) for q queues and p pending jobs.
type YARNCS struct {
	cfg YARNConfig
	// The queues of earlier ticks, whose job lists are reused, and the
	// tick's queues in order of first appearance.
	queues map[string]*yarnQueue
	order  []*yarnQueue
}

// NewYARNCS returns a capacity-scheduler policy. Every YARNConfig is valid.
func NewYARNCS(cfg YARNConfig) *YARNCS { return &YARNCS{cfg: cfg, queues: map[string]*yarnQueue{}} }

// Name is "yarn-cs", or "yarn-cs-elastic" with Elastic.
func (y *YARNCS) Name() string {
	if y.cfg.Elastic {
		return "yarn-cs-elastic"
	}
	return "yarn-cs"
}

// Capacities returns each tenant's capacity in GPUs for quotas on a cluster
// of capacity GPUs: the largest-remainder rounding of weight × capacity.
func Capacities(quotas map[string]float64, capacity int) map[string]int {
	return capacities(quotas, capacity)
}

type yarnQueue struct {
	name    string
	cap     int
	used    int
	jobs    []*simulate.JobState // pending, in arrival order
	head    int                  // jobs[head] is the next to start
	blocked bool
	seen    bool // in the tick's order
}

// Traits tells the engine that this policy never reads the progress of
// running jobs.
func (y *YARNCS) Traits() simulate.Traits { return simulate.Traits{ProgressBlind: true} }

// Schedule starts queue heads, least-served queue first, within capacities.
func (y *YARNCS) Schedule(s *simulate.State) (simulate.Decision, error) {
	p := newPlan(s)
	caps := capacities(s.Quotas, s.Capacity)
	order := y.order[:0]
	// Consecutive jobs are often a tenant's: the last queue found is
	// checked before the map.
	var last *yarnQueue
	get := func(t string) *yarnQueue {
		if last != nil && last.name == t {
			return last
		}
		q, ok := y.queues[t]
		if !ok {
			q = &yarnQueue{name: t}
			y.queues[t] = q
		}
		if !q.seen {
			*q = yarnQueue{name: t, cap: caps[t], jobs: q.jobs[:0], seen: true}
			order = append(order, q)
		}
		last = q
		return q
	}
	defer func() {
		for _, q := range order { // hold no job past the tick
			clear(q.jobs)
			q.jobs, q.seen = q.jobs[:0], false
		}
		y.order = order[:0]
	}()
	for _, js := range s.Running {
		get(js.Job.Tenant).used += js.Job.GPUs
	}
	for _, js := range s.Pending {
		q := get(js.Job.Tenant)
		q.jobs = append(q.jobs, js)
	}
	// ratio compares used/cap without division; a queue with no capacity
	// sorts last.
	// The names are compared only on a tie (cmp.Or would compare them at
	// every call).
	less := func(a, b *yarnQueue) int {
		c := cmp.Compare(b.cap, a.cap)
		if a.cap != 0 && b.cap != 0 {
			c = cmp.Compare(a.used*b.cap, b.used*a.cap)
		}
		if c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	}
	for p.free() > 0 {
		var best *yarnQueue
		for _, q := range order {
			if q.blocked || q.head == len(q.jobs) {
				continue
			}
			if best == nil || less(q, best) < 0 {
				best = q
			}
		}
		if best == nil {
			break
		}
		js := best.jobs[best.head]
		d := js.Job.GPUs
		allowed := best.used+d <= best.cap ||
			y.cfg.Elastic ||
			(d > best.cap && best.used == 0)
		if !allowed || d > p.free() || !p.start(js, 0) {
			best.blocked = true
			continue
		}
		best.used += d
		best.head++
	}
	return p.decision(), nil
}
