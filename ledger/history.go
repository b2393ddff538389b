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
	histBuckets
)

// History says how much of the past the accounts remember. The zero value is
// [Unbounded], the paper's choice. Construct others with [TrailingWindow] and
// [HalfLife] and [Buckets]; an explicit [Ledger.Reset] works with every
// policy.
type History struct {
	kind historyKind
	d    time.Duration
	n    int // buckets, for Buckets only
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

// Buckets keeps the current bucket of width w and the n−1 before it: at time
// t, with buckets aligned on Config.Start (t measured from it), Begin() is
// ⌊t/w⌋·w − (n−1)·w (never earlier than Config.Start or the last Reset), so
// the window's start moves only when t crosses a bucket boundary, and in
// between the window grows from (n−1)·w to just under n·w. It is how a
// scheduler that keeps its accounts in n fixed buckets (the authors' public
// simulator of the paper: 24 hourly buckets) sees the past; the paper
// does not describe the buckets, so the reading — the current, partial bucket
// and the n−1 full ones before it — is this library's. Set Config.Start on
// a boundary (e.g. time.Time.Truncate(w)) to align the buckets with the
// wall clock.
//
// Otherwise it behaves as [TrailingWindow]: a [View] at `at` reports
// accounts over [Begin as seen at at, at), windows that start before
// Begin() are rejected with ErrOutOfHistory, jobs that finished before
// Begin() are forgotten, and older breakpoints are dropped, so memory stays
// proportional to the events inside the window. New rejects n < 1, w ≤ 0
// and an n·w that does not fit a time.Duration with ErrConfig.
func Buckets(n int, w time.Duration) History { return History{kind: histBuckets, d: w, n: n} }

// HalfLife discounts old service exponentially, as Slurm's
// PriorityDecayHalfLife and Kueue's usageHalfLifeTime do: every account over a
// window [from, to) weights the rate at time τ by e^(−λ·(to−τ)) with
// λ = ln 2 ÷ h, for Alloc and FairShare alike, so service h before `to` counts
// half. ρ stays a ratio of two identically discounted integrals. Begin() is
// Config.Start (or the last Reset). New rejects h ≤ 0 with ErrConfig.
func HalfLife(h time.Duration) History { return History{kind: histHalfLife, d: h} }

// String describes the policy, e.g. "unbounded", "trailing 168h0m0s",
// "half-life 24h0m0s", "24 buckets of 1h0m0s".
func (h History) String() string {
	switch h.kind {
	case histTrailing:
		return "trailing " + h.d.String()
	case histBuckets:
		return fmt.Sprintf("%d buckets of %v", h.n, h.d)
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

// Bucketed returns the bucket count and width, or 0, 0 when the policy is
// not [Buckets].
func (h History) Bucketed() (n int, width time.Duration) {
	if h.kind == histBuckets {
		return h.n, h.d
	}
	return 0, 0
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
	if h.kind != histBuckets && h.n != 0 {
		return fmt.Errorf("%v history with a bucket count %d", h, h.n)
	}
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
	case histBuckets:
		switch {
		case h.n < 1:
			return fmt.Errorf("bucket count %d must be ≥ 1", h.n)
		case h.d <= 0:
			return fmt.Errorf("bucket width %v must be > 0", h.d)
		case int64(h.n) > math.MaxInt64/int64(h.d):
			return fmt.Errorf("%d buckets of %v span more than a time.Duration holds", h.n, h.d)
		}
	default:
		return fmt.Errorf("unknown history policy %d", h.kind)
	}
	return nil
}

// windowed reports whether the policy forgets what lies before a moving
// start: a trailing window or buckets.
func (h History) windowed() bool { return h.kind == histTrailing || h.kind == histBuckets }

// windowStart is the start of the window seen at t (ns since Config.Start)
// under a windowed policy, before the clamp to the base; math.MinInt64
// otherwise.
func (h History) windowStart(t int64) int64 {
	switch h.kind {
	case histTrailing:
		if t < math.MinInt64+int64(h.d) {
			return math.MinInt64
		}
		return t - int64(h.d)
	case histBuckets:
		w := int64(h.d)
		b := t / w * w
		if t < 0 && b != t {
			b -= w // floor, not truncation toward zero
		}
		back := int64(h.n-1) * w
		if b < math.MinInt64+back {
			return math.MinInt64
		}
		return b - back
	}
	return math.MinInt64
}

// lambda returns the decay rate per second (0 unless HalfLife).
func (h History) lambda() float64 {
	if h.kind != histHalfLife {
		return 0
	}
	return math.Ln2 / h.d.Seconds()
}
