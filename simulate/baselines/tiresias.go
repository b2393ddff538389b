package baselines

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/simulate"
)

// TiresiasConfig tunes [Tiresias]. [DefaultTiresiasConfig] gives the defaults.
type TiresiasConfig struct {
	// Thresholds are the attained-service limits, in GPU·seconds, between
	// consecutive priority queues; K = len(Thresholds)+1 queues. They must be
	// positive and strictly increasing. Default {3250}: two queues, the
	// split the Tiresias paper recommends (§4.2, "K = 2 is good enough") with
	// the first-queue limit of its released simulator (SymbioticLab/Tiresias,
	// queue_limit[0] = 3250, used with GPU time for dlas-gpu).
	Thresholds []float64
	// PromoteKnob is Tiresias's PROMOTEKNOB: a waiting job below the top
	// queue is promoted back to it once it has waited, since it last ran,
	// at least PromoteKnob × the time it ran since it last entered the top
	// queue. 0 disables promotion. The released simulator compares the
	// waiting time accumulated since the last promotion instead of the
	// current wait; ours promotes less eagerly, which limits the churn of
	// large gangs (see the README). Default 8, one of the knob values
	// that the released simulator's run script names (dlas-gpu-05 …
	// dlas-gpu-1000); the paper leaves it as a knob and the ASTRAEA paper
	// does not say which value it used.
	PromoteKnob float64
}

// DefaultTiresiasConfig returns K = 2 queues split at 3250 GPU·s and
// PromoteKnob 8 (see the field docs for their sources).
func DefaultTiresiasConfig() TiresiasConfig {
	return TiresiasConfig{Thresholds: []float64{3250}, PromoteKnob: 8}
}

// Tiresias models Tiresias-L (Gu et al., NSDI '19), the variant that knows
// nothing about job durations: two-dimensional least attained service
// (2D-LAS), where a job's attained service is GPUs × time it has run, in K
// discretised priority queues.
//
//   - A job starts in the top queue and is demoted when its attained service
//     (since it last entered the top queue) crosses a queue's threshold.
//   - Jobs are ordered by queue, then first-in-first-out inside a queue by
//     (submit, id); the cluster goes to that order, skipping a job whose gang
//     does not fit (Tiresias schedules "fit-first" within the FIFO order).
//   - A running job that no longer belongs to the chosen set is preempted. The
//     simulator calls policies at scheduling-interval boundaries, so this is
//     where preemption happens; [Tiresias.NextWakeup] asks for a tick when a
//     running job crosses a threshold or a waiting job becomes due for
//     promotion, so that no crossing waits for an unrelated event.
//   - Starvation: a waiting job below the top queue whose waiting time since
//     it last ran reaches PromoteKnob × its run time since it last entered
//     the top queue goes back to the top queue with its counter reset.
//
// No tenant level: Tiresias knows jobs only, which is why the ASTRAEA paper
// finds it unfair across tenants. Simplified: placement is the cluster's
// consolidated placer (Tiresias's own placement profiles model skew to decide
// consolidation; we always consolidate), no Gittins-index variant.
//
// Cost per tick: O(a log a) for a active jobs.
type Tiresias struct {
	cfg   TiresiasConfig
	jobs  map[string]*tiresiasJob
	ticks uint64 // Schedule calls, which stamp tiresiasJob.chosen
	// a tick's active jobs, their states and their order, kept for the
	// next tick's use
	js    []*simulate.JobState
	st    []*tiresiasJob
	order []tiresiasKey
}

// tiresiasKey is an active job's place in Tiresias's order: its queue, its
// submit time, and its index in the tick's job list.
type tiresiasKey struct {
	submit timeKey
	q      int
	i      int32
}

type tiresiasJob struct {
	offset   float64       // attained service (GPU·s) when the job last entered the top queue
	runAt    time.Duration // attained run time when the job last entered the top queue
	lastStop time.Time     // when the job last stopped running (or was submitted)
	chosen   uint64        // the tick (Tiresias.ticks) at which the job was last chosen to run
}

// NewTiresias validates cfg and returns a Tiresias-L policy.
func NewTiresias(cfg TiresiasConfig) (*Tiresias, error) {
	for i, t := range cfg.Thresholds {
		if !(t > 0) || math.IsInf(t, 0) || (i > 0 && t <= cfg.Thresholds[i-1]) {
			return nil, configError("tiresias", "Thresholds", cfg.Thresholds, "must be positive, finite and strictly increasing")
		}
	}
	if !(cfg.PromoteKnob >= 0) || math.IsInf(cfg.PromoteKnob, 0) {
		return nil, configError("tiresias", "PromoteKnob", cfg.PromoteKnob, "must be finite and ≥ 0")
	}
	cfg.Thresholds = slices.Clone(cfg.Thresholds)
	return &Tiresias{cfg: cfg, jobs: make(map[string]*tiresiasJob)}, nil
}

// Name is "tiresias-l".
func (t *Tiresias) Name() string { return "tiresias-l" }

func (t *Tiresias) state(js *simulate.JobState) *tiresiasJob {
	st, ok := t.jobs[js.Job.ID]
	if !ok {
		st = &tiresiasJob{lastStop: js.Job.Submit}
		t.jobs[js.Job.ID] = st
	}
	return st
}

// queueOf returns the queue index of the job whose state is st, 0 being
// the highest priority.
func (t *Tiresias) queueOf(js *simulate.JobState, st *tiresiasJob) int {
	sv := service(js) - st.offset
	q := 0
	for q < len(t.cfg.Thresholds) && sv >= t.cfg.Thresholds[q] {
		q++
	}
	return q
}

// promoteAt is when a waiting job becomes due for promotion, or the zero time
// when it never will (top queue, promotion off, or it never ran).
func (t *Tiresias) promoteAt(js *simulate.JobState) time.Time {
	st := t.state(js)
	return t.promoteAtOf(js, st, t.queueOf(js, st))
}

// promoteAtOf is promoteAt for the job's state st and queue q.
func (t *Tiresias) promoteAtOf(js *simulate.JobState, st *tiresiasJob, q int) time.Time {
	if t.cfg.PromoteKnob == 0 || q == 0 {
		return time.Time{}
	}
	ran := js.Attained - st.runAt
	if ran <= 0 {
		return time.Time{}
	}
	return st.lastStop.Add(time.Duration(t.cfg.PromoteKnob * float64(ran)))
}

// Schedule promotes starving jobs, orders all active jobs by (queue, submit,
// id), and gives the cluster to that order, preempting running jobs that fall
// outside it.
func (t *Tiresias) Schedule(s *simulate.State) (simulate.Decision, error) {
	t.forget(s)
	t.ticks++
	// The order is sorted as keys without pointers (timeKey), which read
	// no JobState unless two jobs tie up to the submit time.
	n := len(s.Running) + len(s.Pending)
	t.js, t.st, t.order = slices.Grow(t.js[:0], n), slices.Grow(t.st[:0], n), slices.Grow(t.order[:0], n)
	add := func(js *simulate.JobState, st *tiresiasJob, q int) {
		t.order = append(t.order, tiresiasKey{q: q, submit: keyOf(js.Job.Submit), i: int32(len(t.js))})
		t.js, t.st = append(t.js, js), append(t.st, st)
	}
	for _, js := range s.Running {
		st := t.state(js)
		add(js, st, t.queueOf(js, st))
	}
	for _, js := range s.Pending {
		st := t.state(js)
		q := t.queueOf(js, st)
		if at := t.promoteAtOf(js, st, q); !at.IsZero() && !at.After(s.Now) {
			st.offset = service(js)
			st.runAt = js.Attained
			q = t.queueOf(js, st)
		}
		add(js, st, q)
	}
	jobs, states := t.js, t.st
	slices.SortFunc(t.order, func(a, b tiresiasKey) int {
		if c := cmp.Compare(a.q, b.q); c != 0 {
			return c
		}
		if c, ok := a.submit.compare(b.submit); c != 0 && ok {
			return c
		}
		return simulate.CompareJobs(jobs[a.i], jobs[b.i])
	})
	defer func() { clear(t.js); clear(t.st) }() // hold no job past the tick

	budget := s.Capacity
	for _, k := range t.order {
		if d := jobs[k.i].Job.GPUs; d <= budget {
			states[k.i].chosen = t.ticks
			budget -= d
		}
	}
	p := newPlan(s)
	for i, js := range s.Running { // jobs begins with s.Running
		if st := states[i]; st.chosen != t.ticks {
			if err := p.stop(js); err != nil {
				return simulate.Decision{}, err
			}
			st.lastStop = s.Now
		}
	}
	for _, k := range t.order { // chosen first, in priority order
		if js := jobs[k.i]; js.Status == simulate.Pending && states[k.i].chosen == t.ticks {
			p.start(js, 0)
		}
	}
	// A chosen gang that did not fit (fragmentation) leaves GPUs unused:
	// running jobs whose GPUs are still free keep them (no checkpoint, no
	// cold start) before waiting jobs get the rest.
	for _, k := range t.order {
		if js := jobs[k.i]; js.Status == simulate.Running && states[k.i].chosen != t.ticks {
			p.unstop(js.Job.ID) // its lastStop is rewritten when it really stops
		}
	}
	for _, k := range t.order { // work conservation
		if p.free() == 0 {
			break
		}
		if js := jobs[k.i]; js.Status == simulate.Pending && !p.decided[js.Job.ID] && js.Job.GPUs <= p.free() {
			p.start(js, 0)
		}
	}
	return p.decision(), nil
}

// forget drops the state of jobs that left the system.
func (t *Tiresias) forget(s *simulate.State) {
	if len(t.jobs) <= 2*(len(s.Pending)+len(s.Running))+64 {
		return
	}
	forgetLeft(t.jobs, s)
}

// NextWakeup returns the earliest future time when a running job crosses a
// queue threshold or a waiting job becomes due for promotion; zero if none.
func (t *Tiresias) NextWakeup(s *simulate.State) time.Time {
	var next time.Time
	consider := func(at time.Time) {
		if at.After(s.Now) && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	for _, js := range s.Running {
		st := t.state(js)
		q := t.queueOf(js, st)
		if q >= len(t.cfg.Thresholds) || js.Job.GPUs == 0 {
			continue
		}
		left := t.cfg.Thresholds[q] - (service(js) - st.offset)
		sec := left / float64(js.Job.GPUs)
		consider(s.Now.Add(time.Duration(math.Ceil(sec * float64(time.Second)))))
	}
	for _, js := range s.Pending {
		consider(t.promoteAt(js))
	}
	return next
}
