package baselines

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate"
)

// ErrConfig is matched (errors.Is) by every configuration a constructor
// rejects; the concrete error is a *ConfigError naming the policy and field.
var ErrConfig = errors.New("baselines: invalid configuration")

// ConfigError reports one rejected configuration field.
type ConfigError struct {
	Policy string // policy name, e.g. "themis"
	Field  string // field name in the policy's Config
	Value  any    // the rejected value
	Reason string // why it is rejected
}

// Error names the policy, the field, the value and the reason.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("baselines: %s: %s = %v: %s", e.Policy, e.Field, e.Value, e.Reason)
}

// Unwrap makes errors.Is(err, ErrConfig) hold.
func (e *ConfigError) Unwrap() error { return ErrConfig }

func configError(policy, field string, v any, reason string) error {
	return &ConfigError{Policy: policy, Field: field, Value: v, Reason: reason}
}

// timeKey is a time as a sort key without pointers: a slice of them sorts
// without a write barrier at each swap and compares without reading the
// jobs the times belong to.
type timeKey struct {
	sec  int64
	nsec int32
	mono bool // the time carries a monotonic clock reading
}

func keyOf(t time.Time) timeKey {
	return timeKey{sec: t.Unix(), nsec: int32(t.Nanosecond()), mono: t != t.Round(0)}
}

// compare orders a and b as Time.Compare orders their times, and reports
// false where it cannot: when both times carry a monotonic clock reading,
// which Compare then reads instead (a trace's times never do).
func (a timeKey) compare(b timeKey) (int, bool) {
	if a.mono && b.mono {
		return 0, false
	}
	if c := cmp.Compare(a.sec, b.sec); c != 0 {
		return c, true
	}
	return cmp.Compare(a.nsec, b.nsec), true
}

// plan is one tick's working copy of the cluster and the decision being built.
// Preemptions release GPUs in the copy at once, so later grants see them
// free, which is the order the engine applies (preempt, renew, start).
type plan struct {
	s        *simulate.State
	c        *placement.Cluster
	preempt  []string
	grants   []simulate.Grant
	decided  map[string]bool // job ids granted, renewed or preempted in this plan
	released map[string]placement.Placement
}

func newPlan(s *simulate.State) *plan {
	return &plan{
		s:        s,
		c:        s.Cluster.Clone(),
		decided:  make(map[string]bool),
		released: make(map[string]placement.Placement),
	}
}

// free is the number of idle GPUs in the plan.
func (p *plan) free() int { return p.c.Free() }

// fits reports whether a gang of d GPUs can be placed now.
func (p *plan) fits(d int) bool { return p.c.Fits(d) }

// stop preempts a running job and frees its GPUs in the plan.
func (p *plan) stop(js *simulate.JobState) error {
	pl, err := p.c.Release(js.Job.ID)
	if err != nil {
		return fmt.Errorf("baselines: preempt %s at %s: %w", js.Job.ID, p.s.Now.Format(time.RFC3339), err)
	}
	p.released[js.Job.ID] = pl
	p.preempt = append(p.preempt, js.Job.ID)
	p.decided[js.Job.ID] = true
	return nil
}

// unstop undoes stop when the job's GPUs are still free; it reports success.
func (p *plan) unstop(id string) bool {
	pl, ok := p.released[id]
	if !ok || p.c.Allocate(id, pl) != nil {
		return false
	}
	delete(p.released, id)
	delete(p.decided, id)
	p.preempt = slices.DeleteFunc(p.preempt, func(s string) bool { return s == id })
	return true
}

// start places a pending job and grants it; it reports whether it fit.
func (p *plan) start(js *simulate.JobState, lease time.Duration) bool {
	pl, err := p.c.Place(js.Job.GPUs)
	if err != nil {
		return false
	}
	if p.c.Allocate(js.Job.ID, pl) != nil {
		return false
	}
	p.grants = append(p.grants, simulate.Grant{Job: js.Job.ID, Placement: pl, Lease: lease})
	p.decided[js.Job.ID] = true
	return true
}

// renew keeps a running job in place for another lease. A job whose lease is
// renewed must still hold its GPUs in the plan (it was never stopped).
func (p *plan) renew(js *simulate.JobState, lease time.Duration) {
	p.grants = append(p.grants, simulate.Grant{Job: js.Job.ID, Placement: js.Placement, Lease: lease, Renew: true})
	p.decided[js.Job.ID] = true
}

func (p *plan) decision() simulate.Decision {
	return simulate.Decision{Preempt: p.preempt, Grants: p.grants}
}

// fracTolerance is far above the rounding error of w ÷ Σw × M for any
// cluster size (about M × 2⁻⁵²) and far below any real difference of two
// fractional parts of weights given to a few decimals.
const fracTolerance = 1e-9

// capacities splits capacity GPUs among tenants in proportion to their quota
// weights by the largest-remainder method: every tenant gets ⌊w×M⌋ and the
// GPUs left over go one each to the largest fractional parts (ties by tenant
// name). Weights need not sum to 1: they are normalised by their sum, so the
// result sums to exactly capacity and no GPU is owned by nobody or promised
// twice. Tenants with weight ≤ 0, NaN or +Inf get 0, as do all tenants when
// no weight is positive and finite.
//
// Shares are floats, so two fractional parts that are equal in exact
// arithmetic (7/21 and 4/21 of 28 GPUs are both ⅓ past a whole GPU) can differ
// in the last bits; parts are compared in whole units of fracTolerance, so
// such parts count as equal and go by name, as the rule says.
func capacities(quotas map[string]float64, capacity int) map[string]int {
	names := make([]string, 0, len(quotas))
	var sum float64
	for t, w := range quotas {
		names = append(names, t)
		if w > 0 && !math.IsInf(w, 0) {
			sum += w
		}
	}
	slices.Sort(names)
	out := make(map[string]int, len(names))
	if sum <= 0 || capacity <= 0 {
		for _, t := range names {
			out[t] = 0
		}
		return out
	}
	type frac struct {
		t string
		f float64
	}
	var fr []frac
	given := 0
	for _, t := range names {
		w := quotas[t]
		if !(w > 0) || math.IsInf(w, 0) {
			out[t] = 0
			continue
		}
		x := w / sum * float64(capacity)
		n := int(math.Floor(x + fracTolerance))
		out[t] = n
		given += n
		fr = append(fr, frac{t, math.Round(max(0, x-float64(n)) / fracTolerance)})
	}
	slices.SortStableFunc(fr, func(a, b frac) int { return cmp.Or(cmp.Compare(b.f, a.f), cmp.Compare(a.t, b.t)) })
	for i := 0; given < capacity && len(fr) > 0; i = (i + 1) % len(fr) {
		out[fr[i].t]++
		given++
	}
	return out
}

// forgetLeft deletes from m, a policy's per-job state keyed by job id, the
// jobs that are neither pending nor running in s (they finished). O(len(m) +
// jobs in s); callers run it only when m has grown well past the live jobs.
func forgetLeft[V any](m map[string]V, s *simulate.State) {
	live := make(map[string]bool, len(s.Pending)+len(s.Running))
	for _, js := range s.Pending {
		live[js.Job.ID] = true
	}
	for _, js := range s.Running {
		live[js.Job.ID] = true
	}
	for id := range m {
		if !live[id] {
			delete(m, id)
		}
	}
}

// service is a job's attained service in GPU·seconds: GPUs × useful run time.
func service(js *simulate.JobState) float64 {
	return float64(js.Job.GPUs) * js.Attained.Seconds()
}
