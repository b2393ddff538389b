package ledger

import (
	"math"
	"sort"
)

// Accounts are integrals of piecewise-constant rates. Each integrated
// quantity is stored as an append-only sequence of breakpoints, one per rate
// change: the (decayed) cumulative value at the breakpoint and the rates that
// hold from it until the next one. Event times never decrease, so appending
// keeps the sequence sorted and a point lookup is a binary search, O(log n).
// The sequence is a list of fixed-size chunks rather than a btree: an append
// is O(1) (one allocation per chunk, never a copy of old breakpoints), a
// lookup is two binary searches over contiguous memory, and trimming a
// trailing window drops whole chunks from the front. A btree would pay for
// rebalancing and per-node pointers to support inserts in the middle, which
// time-ordered accounts never need. Two
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

// chunkSize is the number of breakpoints per chunk once a series outgrows
// its first chunk (which grows like a slice, so short series stay small).
const chunkSize = 256

type timed interface{ time() int64 }

// store is an append-only, time-ordered sequence of breakpoints in chunks.
// Chunks are never empty; breakpoint times strictly increase.
type store[P timed] struct {
	c [][]P
	n int
}

func (s *store[P]) len() int { return s.n }

// last returns the last breakpoint, or nil.
func (s *store[P]) last() *P {
	if s.n == 0 {
		return nil
	}
	ch := s.c[len(s.c)-1]
	return &ch[len(ch)-1]
}

// first returns the first breakpoint, or nil.
func (s *store[P]) first() *P {
	if s.n == 0 {
		return nil
	}
	return &s.c[0][0]
}

// push appends p. O(1); allocates once per chunk.
func (s *store[P]) push(p P) {
	k := len(s.c) - 1
	switch {
	case k < 0 && cap(s.c) > 0 && cap(s.c[:1][0]) > 0:
		// storage provided by the owner (see inline)
		s.c = s.c[:1]
		s.c[0] = append(s.c[0][:0], p)
	case k < 0:
		s.c = append(s.c, append(make([]P, 0, 1), p))
	case len(s.c[k]) < chunkSize:
		s.c[k] = append(s.c[k], p)
	default:
		ch := make([]P, 1, chunkSize)
		ch[0] = p
		s.c = append(s.c, ch)
	}
	s.n++
}

// inline makes the store use room owned by its owner for its first
// breakpoints (outer must have capacity ≥ 1, first capacity ≥ 1), so a short
// series costs no allocation of its own. The store must be empty.
func (s *store[P]) inline(outer [][]P, first []P) {
	outer = outer[:1]
	outer[0] = first[:0]
	s.c = outer[:0]
}

// locate returns the chunk and index of the last breakpoint with time ≤ t,
// or ok = false if there is none. O(log n).
func (s *store[P]) locate(t int64) (ci, k int, ok bool) {
	if s.n == 0 || t < s.c[0][0].time() {
		return 0, 0, false
	}
	ci = len(s.c) - 1
	if t < s.c[ci][0].time() {
		ci = sort.Search(len(s.c), func(i int) bool { return s.c[i][0].time() > t }) - 1
	}
	ch := s.c[ci]
	k = len(ch) - 1
	if t < ch[k].time() {
		k = sort.Search(len(ch), func(i int) bool { return ch[i].time() > t }) - 1
	}
	return ci, k, true
}

// find returns the last breakpoint with time ≤ t, or nil. O(log n), O(1)
// when t is at or after the last breakpoint.
func (s *store[P]) find(t int64) *P {
	ci, k, ok := s.locate(t)
	if !ok {
		return nil
	}
	return &s.c[ci][k]
}

// trim drops the breakpoints that no time ≥ begin needs: all before the
// last one at or before begin. O(1) when there is nothing to drop.
func (s *store[P]) trim(begin int64) {
	if s.n < 2 || begin == math.MinInt64 {
		return
	}
	second := 0
	if len(s.c[0]) > 1 {
		second = 1
	}
	ch := s.c[0]
	if second == 0 {
		ch = s.c[1]
	}
	if ch[second].time() > begin {
		return
	}
	ci, k, _ := s.locate(begin)
	for i := range ci {
		s.n -= len(s.c[i])
		s.c[i] = nil
	}
	s.c = s.c[ci:]
	s.n -= k
	s.c[0] = s.c[0][k:]
}

// each calls f on every breakpoint in time order.
func (s *store[P]) each(f func(i int, p *P)) {
	i := 0
	for _, ch := range s.c {
		for k := range ch {
			f(i, &ch[k])
			i++
		}
	}
}

// point2 is a breakpoint of two integrated quantities (a and b).
type point2 struct {
	t      int64
	a, b   float64 // values at t
	ra, rb float64 // rates from t on
}

func (p point2) time() int64 { return p.t }

// series2 integrates two rates (Alloc and FairShare of a tenant; capacity and
// allocation of the cluster).
type series2 struct{ st store[point2] }

// set records that from time t (≥ the last breakpoint) the rates are ra, rb.
// O(1); with trailing history it also drops breakpoints that end before
// begin.
func (s *series2) set(t int64, ra, rb float64, d decay, begin int64) {
	last := s.st.last()
	if last == nil {
		s.st.push(point2{t: t, ra: ra, rb: rb})
		return
	}
	if last.ra == ra && last.rb == rb {
		return
	}
	if last.t == t {
		last.ra, last.rb = ra, rb
		return
	}
	p := point2{t: t, a: d.grow(last.a, last.ra, t-last.t), b: d.grow(last.b, last.rb, t-last.t), ra: ra, rb: rb}
	s.st.trim(begin)
	s.st.push(p)
}

// at returns the values at time t. O(log n); O(1) when t is at or after the
// last breakpoint.
func (s *series2) at(t int64, d decay) (a, b float64) {
	p := s.st.find(t)
	if p == nil {
		return 0, 0
	}
	return d.grow(p.a, p.ra, t-p.t), d.grow(p.b, p.rb, t-p.t)
}

// rates returns the current rates (those of the last breakpoint).
func (s *series2) rates() (ra, rb float64) {
	if p := s.st.last(); p != nil {
		return p.ra, p.rb
	}
	return 0, 0
}

func (s *series2) trim(begin int64) { s.st.trim(begin) }

// point1 is a breakpoint of one integrated quantity.
type point1 struct {
	t int64
	v float64 // value at t
	r float64 // rate from t on
}

func (p point1) time() int64 { return p.t }

// series1 integrates one rate (a job's Alloc, a group's ∫min(θ, x)).
type series1 struct{ st store[point1] }

func (s *series1) set(t int64, r float64, d decay, begin int64) {
	last := s.st.last()
	if last == nil {
		s.st.push(point1{t: t, r: r})
		return
	}
	if last.r == r {
		return
	}
	if last.t == t {
		last.r = r
		return
	}
	p := point1{t: t, v: d.grow(last.v, last.r, t-last.t), r: r}
	s.st.trim(begin)
	s.st.push(p)
}

func (s *series1) at(t int64, d decay) float64 {
	p := s.st.find(t)
	if p == nil {
		return 0
	}
	return d.grow(p.v, p.r, t-p.t)
}

func (s *series1) rate() float64 {
	if p := s.st.last(); p != nil {
		return p.r
	}
	return 0
}

func (s *series1) trim(begin int64) { s.st.trim(begin) }
