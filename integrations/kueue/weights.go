package kueue

import (
	"fmt"
	"math"

	"github.com/astraea-sched/astraea/ledger"
)

// WeightMap turns a tenant's ρ into the fair-sharing weight Kueue reads from
// the tenant's queue (spec.fairSharing.weight):
//
//	target(share, ρ) = share × Base × clamp(1/ρ, 1/MaxFactor, MaxFactor)
//
// rounded to thousandths. A tenant that received exactly what it was owed
// (ρ = 1) gets share × Base; one that received half gets twice that, one
// that received double gets half, and no tenant ever leaves
// [share·Base/MaxFactor, share·Base·MaxFactor], however extreme its past: a
// tenant owed nothing yet served (ρ = +Inf) sits at the lower bound, one
// served nothing of what it was owed (ρ = 0) at the upper.
//
// Kueue divides a queue's usage by this weight when it orders and preempts,
// so a weight proportional to 1/ρ asks Kueue to treat a queue as if it had
// used as much as the ledger says it is owed.
//
// Hysteresis: a written weight is only replaced when the target differs from
// it by at least the factor 1+Band (in either direction), so a ρ that wobbles
// around a value does not rewrite the queue on every period. The bounds are
// applied before the band, so a weight never leaves them.
type WeightMap struct {
	Base      float64 // weight at ρ = 1 and share 1; > 0
	MaxFactor float64 // the bound R ≥ 1 on the factor 1/ρ
	Band      float64 // relative change a rewrite needs; ≥ 0
}

// DefaultWeightMap is the map the controller uses unless told otherwise:
// base 1, the factor bounded to [1/4, 4], rewrites on a change of 10 %.
func DefaultWeightMap() WeightMap { return WeightMap{Base: 1, MaxFactor: 4, Band: 0.1} }

// minWeight is the smallest weight a WeightMap may produce: weights are
// written in thousandths, and Kueue reads a weight of 0 as "never ahead".
const minWeight = 0.001

// Validate reports a map whose weights could leave Kueue's range or be
// meaningless: Base ≤ 0, MaxFactor < 1, Band < 0, a lower bound below
// 0.001, or a value that is NaN or infinite. The error matches ErrConfig.
func (m WeightMap) Validate() error {
	bad := func(f string, a ...any) error {
		return fmt.Errorf("%w: weight map: %s", ErrConfig, fmt.Sprintf(f, a...))
	}
	for _, v := range []float64{m.Base, m.MaxFactor, m.Band} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return bad("base %g, max factor %g, band %g: every value must be finite", m.Base, m.MaxFactor, m.Band)
		}
	}
	switch {
	case m.Base <= 0:
		return bad("base %g must be > 0", m.Base)
	case m.MaxFactor < 1:
		return bad("max factor %g must be ≥ 1", m.MaxFactor)
	case m.Band < 0:
		return bad("band %g must be ≥ 0", m.Band)
	case m.Base/m.MaxFactor < minWeight:
		return bad("lowest weight base/max factor = %g is below %g", m.Base/m.MaxFactor, minWeight)
	}
	return nil
}

// Target returns the weight for a tenant of the given share (its ledger
// weight W_j, > 0) whose ρ is rho, before hysteresis. It is never below
// 0.001 for a valid map and share ≥ 1.
func (m WeightMap) Target(share float64, rho ledger.Rho) float64 {
	f := m.MaxFactor // ρ = 0: nothing of what was owed
	switch r := float64(rho); {
	case math.IsInf(r, 1):
		f = 1 / m.MaxFactor
	case r > 0:
		f = min(max(1/r, 1/m.MaxFactor), m.MaxFactor)
	}
	return max(math.Round(share*m.Base*f*1000)/1000, minWeight)
}

// Next returns the weight to write for a queue whose current weight is
// current (have is false when the queue has none set by anyone) and whose
// target is target, and whether to write it at all. A queue with no weight
// is always written; otherwise the target replaces current only when one is
// at least 1+Band times the other.
func (m WeightMap) Next(current float64, have bool, target float64) (float64, bool) {
	if !have || current <= 0 || math.IsNaN(current) {
		return target, true
	}
	if target == current {
		return current, false
	}
	hi, lo := max(target, current), min(target, current)
	if hi >= lo*(1+m.Band) {
		return target, true
	}
	return current, false
}
