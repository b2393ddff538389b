package ledger

import (
	"math"
	"sort"
)

// Accounts are integrals of piecewise-constant rates. Each integrated
// quantity is stored as an append-only slice of breakpoints, one per rate
// change: the (decayed) cumulative value at the breakpoint and the rates that
// hold from it until the next one. Event times never decrease, so appending
// keeps the slice sorted and a point lookup is a binary search, O(log n); an
// append is amortized O(1) with no per-node allocation, which a btree would
// not give, and trimming a trailing window is a re-slice of the prefix. Two
// events at the same instant share one breakpoint (the later rates win), so
// breakpoint times are strictly increasing and zero-length intervals
// contribute nothing.
//
// With decay rate λ (0 without HalfLife) the stored value is
// V(t) = ∫_{−∞}^{t} r(τ)·e^(−λ(t−τ)) dτ, which stays bounded however long the
// history is; the account over [from, to) is V(to) − V(from)·e^(−λ(to−from)).
// With λ = 0 this is the plain difference of cumulative integrals.

// sec converts nanoseconds to seconds.
func sec(dt int64) float64 { return float64(dt) / 1e9 }

// decay holds λ per second.
type decay float64

// factor is e^(−λ·dt).
func (d decay) factor(dt int64) float64 {
	if d == 0 || dt == 0 {
		return 1
	}
	return math.Exp(-float64(d) * sec(dt))
}

// grow advances value v at constant rate r for dt nanoseconds.
func (d decay) grow(v, r float64, dt int64) float64 {
	if dt == 0 {
		return v
	}
	if d == 0 {
		return v + r*sec(dt)
	}
	x := float64(d) * sec(dt)
	return v*math.Exp(-x) + r*(-math.Expm1(-x))/float64(d)
}

// window is the account over [from, to) given the values at both ends.
func (d decay) window(vFrom, vTo float64, from, to int64) float64 {
	w := vTo - vFrom*d.factor(to-from)
	if w < 0 { // rounding of equal values; accounts are never negative
		return 0
	}
	return w
}

// point2 is a breakpoint of two integrated quantities (a and b).
type point2 struct {
	t      int64
	a, b   float64 // values at t
	ra, rb float64 // rates from t on
}

// series2 integrates two rates (Alloc and FairShare of a tenant; capacity and
// allocation of the cluster).
type series2 struct{ p []point2 }

// set records that from time t (≥ the last breakpoint) the rates are ra, rb.
// O(1) amortized; with trailing history it also drops breakpoints that end
// before begin.
func (s *series2) set(t int64, ra, rb float64, d decay, begin int64) {
	n := len(s.p)
	if n == 0 {
		s.p = append(s.p, point2{t: t, ra: ra, rb: rb})
		return
	}
	last := &s.p[n-1]
	if last.ra == ra && last.rb == rb {
		return
	}
	if last.t == t {
		last.ra, last.rb = ra, rb
		return
	}
	a, b := d.grow(last.a, last.ra, t-last.t), d.grow(last.b, last.rb, t-last.t)
	if n > 1 && s.p[1].t <= begin {
		k := sort.Search(n, func(i int) bool { return s.p[i].t > begin }) - 1
		s.p = s.p[k:]
	}
	s.p = append(s.p, point2{t: t, a: a, b: b, ra: ra, rb: rb})
}

// at returns the values at time t. O(log n); O(1) when t is at or after the
// last breakpoint.
func (s *series2) at(t int64, d decay) (a, b float64) {
	n := len(s.p)
	if n == 0 || t < s.p[0].t {
		return 0, 0
	}
	i := n - 1
	if t < s.p[i].t {
		i = sort.Search(n, func(i int) bool { return s.p[i].t > t }) - 1
	}
	p := &s.p[i]
	return d.grow(p.a, p.ra, t-p.t), d.grow(p.b, p.rb, t-p.t)
}

// rates returns the current rates (those of the last breakpoint).
func (s *series2) rates() (ra, rb float64) {
	if len(s.p) == 0 {
		return 0, 0
	}
	p := s.p[len(s.p)-1]
	return p.ra, p.rb
}

// point1 is a breakpoint of one integrated quantity.
type point1 struct {
	t int64
	v float64 // value at t
	r float64 // rate from t on
}

// series1 integrates one rate (a job's Alloc, a group's ∫min(θ, x)).
type series1 struct{ p []point1 }

func (s *series1) set(t int64, r float64, d decay, begin int64) {
	n := len(s.p)
	if n == 0 {
		s.p = append(s.p, point1{t: t, r: r})
		return
	}
	last := &s.p[n-1]
	if last.r == r {
		return
	}
	if last.t == t {
		last.r = r
		return
	}
	v := d.grow(last.v, last.r, t-last.t)
	if n > 1 && s.p[1].t <= begin {
		k := sort.Search(n, func(i int) bool { return s.p[i].t > begin }) - 1
		s.p = s.p[k:]
	}
	s.p = append(s.p, point1{t: t, v: v, r: r})
}

func (s *series1) at(t int64, d decay) float64 {
	n := len(s.p)
	if n == 0 || t < s.p[0].t {
		return 0
	}
	i := n - 1
	if t < s.p[i].t {
		i = sort.Search(n, func(i int) bool { return s.p[i].t > t }) - 1
	}
	p := &s.p[i]
	return d.grow(p.v, p.r, t-p.t)
}

func (s *series1) rate() float64 {
	if len(s.p) == 0 {
		return 0
	}
	return s.p[len(s.p)-1].r
}

// trim drops breakpoints not needed for times ≥ begin.
func (s *series2) trim(begin int64) {
	if n := len(s.p); n > 1 && s.p[1].t <= begin {
		k := sort.Search(n, func(i int) bool { return s.p[i].t > begin }) - 1
		s.p = s.p[k:]
	}
}

func (s *series1) trim(begin int64) {
	if n := len(s.p); n > 1 && s.p[1].t <= begin {
		k := sort.Search(n, func(i int) bool { return s.p[i].t > begin }) - 1
		s.p = s.p[k:]
	}
}
