package ledger

import (
	"fmt"
	"math"
	"time"
)

type historyKind uint8

const (
	histUnbounded historyKind = iota
	histTrailing
	histHalfLife
)

// History says how much of the past the accounts remember. The zero value is
// [Unbounded], the paper's choice. Construct others with [TrailingWindow] and
// [HalfLife]; an explicit [Ledger.Reset] works with every policy.
type History struct {
	kind historyKind
	d    time.Duration
}

// Unbounded keeps every event since Config.Start (or the last Reset): ρ is the
// paper's ratio over [t_begin, t_now]. It is the zero value of History.
func Unbounded() History { return History{} }

// TrailingWindow keeps only the last w of history: Begin() is Now()−w (never
// earlier than Config.Start or the last Reset), a [View] reports accounts over
// [at−w, at), windows that start before Begin() are rejected with
// ErrOutOfHistory, and jobs that finished before Begin() are forgotten. Older
// breakpoints are dropped, so memory stays proportional to the events inside
// the window. New rejects w ≤ 0 with ErrConfig.
func TrailingWindow(w time.Duration) History { return History{kind: histTrailing, d: w} }

// HalfLife discounts old service exponentially, as Slurm's
// PriorityDecayHalfLife and Kueue's usageHalfLifeTime do: every account over a
// window [from, to) weights the rate at time τ by e^(−λ·(to−τ)) with
// λ = ln 2 ÷ h, for Alloc and FairShare alike, so service h before `to` counts
// half. ρ stays a ratio of two identically discounted integrals. Begin() is
// Config.Start (or the last Reset). New rejects h ≤ 0 with ErrConfig.
func HalfLife(h time.Duration) History { return History{kind: histHalfLife, d: h} }

// String describes the policy, e.g. "unbounded", "trailing 168h0m0s",
// "half-life 24h0m0s".
func (h History) String() string {
	switch h.kind {
	case histTrailing:
		return "trailing " + h.d.String()
	case histHalfLife:
		return "half-life " + h.d.String()
	case histUnbounded:
		return "unbounded"
	}
	return fmt.Sprintf("History(%d)", h.kind)
}

// Window returns the trailing window length, or 0 when the policy is not
// [TrailingWindow].
func (h History) Window() time.Duration {
	if h.kind == histTrailing {
		return h.d
	}
	return 0
}

// HalfLifeDuration returns the half-life, or 0 when the policy is not
// [HalfLife].
func (h History) HalfLifeDuration() time.Duration {
	if h.kind == histHalfLife {
		return h.d
	}
	return 0
}

func (h History) validate() error {
	switch h.kind {
	case histUnbounded:
		if h.d != 0 {
			return fmt.Errorf("unbounded history with a duration %v", h.d)
		}
	case histTrailing:
		if h.d <= 0 {
			return fmt.Errorf("trailing window %v must be > 0", h.d)
		}
	case histHalfLife:
		if h.d <= 0 {
			return fmt.Errorf("half-life %v must be > 0", h.d)
		}
	default:
		return fmt.Errorf("unknown history policy %d", h.kind)
	}
	return nil
}

// lambda returns the decay rate per second (0 unless HalfLife).
func (h History) lambda() float64 {
	if h.kind != histHalfLife {
		return 0
	}
	return math.Ln2 / h.d.Seconds()
}
