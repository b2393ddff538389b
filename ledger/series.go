package ledger

import (
	"encoding/binary"
	"math"
	"sort"
)

// Accounts are integrals of piecewise-constant rates. Each integrated
// quantity is a series of breakpoints, one per rate change: the (decayed)
// cumulative value at the breakpoint and the rate that holds from it until the
// next one. Event times never decrease, so appending keeps the series sorted.
// Two events at the same instant share one breakpoint (the later rate wins),
// so breakpoint times strictly increase and zero-length intervals contribute
// nothing.
//
// With decay rate λ (0 without HalfLife) the stored value is
// V(t) = ∫_{−∞}^{t} r(τ)·e^(−λ(t−τ)) dτ, which stays bounded however long the
// history is; the account over [from, to) is V(to) − V(from)·e^(−λ(to−from)).
// With λ = 0 this is the plain difference of cumulative integrals.
//
// # Storage
//
// An unbounded ledger keeps every breakpoint, so the bytes an event retains
// are its dominant cost: fresh memory is paid for when first touched (a page
// fault, zeroing) and again by the garbage collector's heap growth. A
// breakpoint's value is never stored when it can be recomputed exactly: it is
// grow(previous value, previous rate, Δt), the very float operation that
// produced it. So a series is a list of blocks of at most blockLen
// breakpoints; a block holds its first breakpoint in full and the others as
// a few bytes each: the time delta and the rate, the rate as an integer
// difference from the previous rate when that is exact (allocations, counted
// in whole GPUs) and as its 8-byte bit pattern otherwise (fair shares). A
// Start or Stop thus retains 2 to 6 bytes per series it changes instead of
// 24 to 40 (see encode), plus its share of a 48-byte block header per 32
// breakpoints. Replaying a block repeats the original arithmetic, so every
// value is bit-identical to one stored in full.
//
// Costs: an append is O(1) (one allocation per page of bytes, pages reused
// by later blocks until full; the closed blocks are listed in chunks, so
// closing one never copies the whole list, see blockList); the last breakpoint (the head) is kept
// decoded, so reading or extending the current state decodes nothing; a
// lookup at time t is a binary search over the blocks, O(log n), plus the
// replay of at most blockLen−1 breakpoints inside one block; trimming a
// trailing window drops whole blocks and then breakpoints from the front of
// the first block.

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

// grow advances value v at constant rate r for dt nanoseconds. The explicit
// float64 conversions forbid fusing a multiply and an add (which Go allows on
// some platforms, and may do differently where grow is inlined), so the same
// operands give the same bits wherever it runs: a series replays its values
// with grow and relies on that.
func (d decay) grow(v, r float64, dt int64) float64 {
	if dt == 0 {
		return v
	}
	if d == 0 {
		return linear(v, r, dt)
	}
	x := float64(d) * sec(dt)
	return float64(v*math.Exp(-x)) + float64(r*(-math.Expm1(-x))/float64(d))
}

// linear is grow without decay. It is small enough to inline where grow is
// not, so that the appends and reads of an undecayed series call it
// directly, computing the same bits as grow.
func linear(v, r float64, dt int64) float64 { return v + float64(r*sec(dt)) }

// window is the account over [from, to) given the values at both ends.
func (d decay) window(vFrom, vTo float64, from, to int64) float64 {
	w := vTo - vFrom // without decay: factor is 1, and x·1 = x
	if d != 0 {
		w = vTo - vFrom*d.factor(to-from)
	}
	if w < 0 { // rounding of equal values; accounts are never negative
		return 0
	}
	return w
}

const (
	// blockLen bounds the breakpoints of a block, hence the replay of a
	// lookup.
	blockLen = 32
	// maxEnc is the longest encoding of one breakpoint: a uvarint delta and
	// an 8-byte rate (or a shorter varint).
	maxEnc = binary.MaxVarintLen64 + 8
	// firstPage and maxPage bound the byte pages of a series: pages double
	// from firstPage so short series stay small.
	firstPage = 32
	maxPage   = 2048
	// minRoom is the least room left in a page worth starting a block in.
	minRoom = 16
)

// point is one breakpoint.
type point struct {
	t int64
	v float64 // value at t
	r float64 // rate from t on
}

// block is a run of breakpoints: the first in full, the rest encoded in b.
type block struct {
	p point
	b []byte // encoded breakpoints after p
}

// store is a time-ordered sequence of breakpoints in blocks. Blocks are never
// empty; breakpoint times strictly increase. The last block, the one still
// growing, lives in the store itself (cur, tail, cnt), and blocks holds the
// closed ones: everything an append reads or writes, except the bytes
// themselves, is in the store, so extending a series touches the record that
// holds it and the page the bytes go to, and a series of one block needs no
// block list at all.
type store struct {
	// what an append reads and writes: 64 bytes
	head   point   // the last breakpoint, decoded (valid when cnt > 0)
	prevR  float64 // rate of the breakpoint before head (the base of head's encoding)
	tail   []byte  // the last block's encoded breakpoints; its spare capacity is the page's free room
	cnt    uint8   // breakpoints in the last block; 0 when the store is empty
	headAt int16   // offset of head's encoding in tail; −1 if head is cur
	page   uint16  // size of the last byte page allocated

	cur    point     // the last block's first breakpoint
	blocks blockList // the closed blocks, before cur
}

// len returns the number of breakpoints. O(n): for checks and encoding.
func (s *store) len() int {
	n := 0
	s.each(0, func(int, point) { n++ })
	return n
}

// first returns the first breakpoint; the store must not be empty.
func (s *store) first() point {
	if s.blocks.len() > 0 {
		return s.blocks.at(0).p
	}
	return s.cur
}

// run returns block i's first breakpoint and the encoding of the others;
// block len(s.blocks) is the last one.
func (s *store) run(i int) (point, []byte) {
	if i == s.blocks.len() {
		return s.cur, s.tail
	}
	b := s.blocks.at(i)
	return b.p, b.b
}

// inline makes the store use room owned by its owner for its first encoded
// breakpoints, so a short series costs no allocation of its own. The store
// must be empty.
func (s *store) inline(page []byte) {
	s.tail = page[:0]
	s.page = uint16(len(page))
}

// units are the time units a delta may be counted in: event times are often
// whole milliseconds or seconds, and a delta in the largest unit dividing it
// takes one to three bytes instead of three to five.
var units = [4]int64{1, 1e3, 1e6, 1e9}

// encode appends the breakpoint that follows one with rate prevR after dt
// nanoseconds and has rate r; false if dt is too long to encode (more than
// about 73 years in a unit finer than a second), in which case b is
// unchanged.
func encode(b []byte, dt int64, prevR, r float64) ([]byte, bool) {
	// constant divisors compile to multiplications
	var u int
	var q uint64
	switch {
	case dt%1e9 == 0:
		u, q = 3, uint64(dt/1e9)
	case dt%1e6 == 0:
		u, q = 2, uint64(dt/1e6)
	case dt%1e3 == 0:
		u, q = 1, uint64(dt/1e3)
	default:
		u, q = 0, uint64(dt)
	}
	if q >= 1<<61 {
		return b, false
	}
	head := q<<3 | uint64(u)<<1
	d := r - prevR
	if d >= -1<<53 && d <= 1<<53 && d == math.Trunc(d) &&
		math.Float64bits(prevR+float64(int64(d))) == math.Float64bits(r) {
		b = binary.AppendUvarint(b, head)
		return binary.AppendVarint(b, int64(d)), true
	}
	b = binary.AppendUvarint(b, head|1)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(r)), true
}

// short returns the two bytes encode writes for the common breakpoint, a
// start or stop of a few GPUs soon after the last one: a delta of fewer than
// 16 whole seconds or milliseconds and a rate that changes by a whole number
// in [−64, 64), each a one-byte varint; false for any other (dt > 0), which
// encode handles. Appends call it first: it takes a fraction of encode's
// instructions and no slice in or out.
func short(dt int64, prevR, r float64) (byte, byte, bool) {
	var head int64
	switch {
	case dt%1e9 == 0:
		head = dt/1e9<<3 | 3<<1
	case dt%1e6 == 0:
		head = dt/1e6<<3 | 2<<1
	default:
		return 0, 0, false
	}
	d := r - prevR
	k := int64(d)
	if head >= 0x80 || !(d >= -64 && d < 64) || float64(k) != d ||
		math.Float64bits(prevR+float64(k)) != math.Float64bits(r) {
		return 0, 0, false
	}
	return byte(head), byte(k<<1 ^ k>>63), true
}

// delta decodes the time delta at the start of an encoded breakpoint: the
// delta in nanoseconds, whether the rate follows as a float, and the bytes
// read.
func delta(b []byte) (dt int64, float bool, n int) {
	h, n := binary.Uvarint(b)
	return int64(h>>3) * units[h>>1&3], h&1 == 1, n
}

// next decodes the breakpoint encoded at the start of b that follows p, and
// the bytes it takes. The bytes were written by encode, so they are valid.
func next(p point, b []byte, d decay) (point, int) {
	dt, float, n := delta(b)
	q := point{t: p.t + dt}
	if d == 0 { // grow without decay, inline: dt > 0 here
		q.v = p.v + float64(p.r*sec(dt))
	} else {
		q.v = d.grow(p.v, p.r, dt)
	}
	if !float {
		if k := b[n]; k < 0x80 { // one-byte zigzag varint: a small rate change
			q.r = p.r + float64(int64(k>>1)^-int64(k&1))
			return q, n + 1
		}
		k, m := binary.Varint(b[n:])
		q.r = p.r + float64(k)
		return q, n + m
	}
	q.r = math.Float64frombits(binary.LittleEndian.Uint64(b[n:]))
	return q, n + 8
}

// push appends p (p.t after the last breakpoint). When p's value is exactly
// what the series computes at p.t it is encoded in a few bytes, otherwise it
// starts a block of its own. O(1); allocates once per page.
func (s *store) push(p point, d decay) {
	if s.cnt > 0 && math.Float64bits(d.grow(s.head.v, s.head.r, p.t-s.head.t)) == math.Float64bits(p.v) {
		s.add(p)
		return
	}
	s.open(p)
}

// add appends p, whose value is grow(head) at p.t. O(1) amortized;
// allocates once per page.
func (s *store) add(p point) {
	if s.cnt >= blockLen {
		s.open(p)
		return
	}
	h := s.head
	at := len(s.tail)
	if cap(s.tail)-at >= maxEnc {
		// room for any encoding: write it where it goes, no copy
		if b0, b1, ok := short(p.t-h.t, h.r, p.r); ok {
			tail := s.tail[:at+2]
			tail[at], tail[at+1] = b0, b1
			s.appended(tail, at, p)
			return
		}
		tail, ok := encode(s.tail, p.t-h.t, h.r, p.r)
		if !ok {
			s.open(p)
			return
		}
		s.appended(tail, at, p)
		return
	}
	var buf [maxEnc]byte
	e, ok := encode(buf[:0], p.t-h.t, h.r, p.r)
	if !ok {
		s.open(p)
		return
	}
	tail := s.tail
	if cap(tail)-at < len(e) {
		// the block outgrows its page: move its bytes to a larger one
		s.page = s.nextPage()
		tail = append(make([]byte, 0, max(int(s.page), 2*at+len(e))), tail...)
	}
	s.appended(append(tail, e...), at, p)
}

// appended makes p, encoded in tail from offset at on, the head.
func (s *store) appended(tail []byte, at int, p point) {
	s.tail, s.headAt = tail, int16(at)
	s.cnt++
	s.prevR, s.head = s.head.r, p
}

// nextPage is the size of the next byte page: pages double from firstPage
// up to maxPage.
func (s *store) nextPage() uint16 { return uint16(min(max(2*int(s.page), firstPage), maxPage)) }

// open starts a block with p, in the room left in the current page or in a
// new page.
func (s *store) open(p point) {
	room := s.tail[len(s.tail):]
	if s.cnt > 0 {
		// close the last block
		s.blocks.push(block{p: s.cur, b: s.tail[:len(s.tail):len(s.tail)]})
	}
	if cap(room) < minRoom {
		s.page = s.nextPage()
		room = make([]byte, 0, s.page)
	}
	s.cur, s.tail, s.cnt = p, room, 1
	s.head, s.headAt = p, -1
}

// setHeadRate replaces the rate of the last breakpoint. O(1).
func (s *store) setHeadRate(r float64) {
	if s.headAt < 0 {
		s.cur.r = r
	} else {
		// the delta encoded before still fits: only its unit is chosen by it
		dt, _, _ := delta(s.tail[s.headAt:])
		s.tail, _ = encode(s.tail[:s.headAt], dt, s.prevR, r)
	}
	s.head.r = r
}

// find returns the last breakpoint with time ≤ t; false if there is none.
// O(log n + blockLen), O(1) when t is at or after the last breakpoint.
func (s *store) find(t int64, d decay) (point, bool) {
	if s.cnt == 0 {
		return point{}, false
	}
	// A query at or after the last breakpoint, what a View asks at Now(),
	// is answered before first() reaches into the block list.
	if t >= s.head.t {
		return s.head, true
	}
	switch first := s.first(); {
	case t < first.t:
		return point{}, false
	case t == first.t:
		// a window from the start of history, as a lifetime account is
		return first, true
	}
	bi := s.blocks.len()
	if t < s.cur.t {
		bi = sort.Search(bi, func(i int) bool { return s.blocks.at(i).p.t > t }) - 1
	}
	p, b := s.run(bi)
	for len(b) > 0 {
		q, n := next(p, b, d)
		if q.t > t {
			break
		}
		p, b = q, b[n:]
	}
	return p, true
}

// trim drops the breakpoints that no time ≥ begin needs: all before the
// last one at or before begin. O(1) amortized, O(1) when there is nothing to
// drop.
func (s *store) trim(begin int64, d decay) {
	if s.cnt == 0 || begin == math.MinInt64 {
		return
	}
	for n := s.blocks.len(); n > 0; n-- {
		nextT := s.cur.t
		if n > 1 {
			nextT = s.blocks.at(1).p.t
		}
		if nextT > begin {
			break
		}
		s.blocks.dropFirst()
	}
	if s.blocks.len() > 0 {
		b0 := s.blocks.at(0)
		for len(b0.b) > 0 {
			q, n := next(b0.p, b0.b, d)
			if q.t > begin {
				break
			}
			b0.p, b0.b = q, b0.b[n:]
		}
		return
	}
	for len(s.tail) > 0 {
		q, n := next(s.cur, s.tail, d)
		if q.t > begin {
			break
		}
		s.cur, s.tail = q, s.tail[n:]
		s.cnt--
		s.headAt -= int16(n)
	}
	if len(s.tail) == 0 {
		s.headAt = -1
	}
}

// each calls f on every breakpoint in time order.
func (s *store) each(d decay, f func(i int, p point)) {
	if s.cnt == 0 {
		return
	}
	i := 0
	for bi := range s.blocks.len() + 1 {
		p, b := s.run(bi)
		f(i, p)
		i++
		for len(b) > 0 {
			q, n := next(p, b, d)
			f(i, q)
			i++
			p, b = q, b[n:]
		}
	}
}

// series integrates one rate: a job's Alloc, a tenant's Alloc or FairShare,
// a θ-group's ∫min(θ, x), the cluster's capacity, allocation or idle GPUs.
type series struct{ st store }

// set records that from time t (≥ the last breakpoint) the rate is r. O(1);
// with trailing history it also drops breakpoints that end before begin.
func (s *series) set(t int64, r float64, d decay, begin int64) {
	if s.st.cnt == 0 {
		s.st.open(point{t: t, r: r})
		return
	}
	h := &s.st.head
	if h.r == r {
		return
	}
	if h.t == t {
		s.st.setHeadRate(r)
		return
	}
	// t > h.t here; without decay grow is linear, called directly.
	p := point{t: t, v: linear(h.v, h.r, t-h.t), r: r}
	if d != 0 {
		p.v = d.grow(h.v, h.r, t-h.t)
	}
	if begin != math.MinInt64 { // a trailing window: drop what it no longer needs
		s.st.trim(begin, d)
	}
	s.st.add(p)
}

// at returns the value at time t. O(log n + blockLen) (see find); O(1)
// when t is at or after the last breakpoint.
func (s *series) at(t int64, d decay) float64 {
	p, ok := s.st.find(t, d)
	switch {
	case !ok:
		return 0
	case t == p.t: // what grow returns for no time
		return p.v
	case d == 0: // grow without decay, as in set
		return linear(p.v, p.r, t-p.t)
	}
	return d.grow(p.v, p.r, t-p.t)
}

// rate returns the current rate (that of the last breakpoint).
func (s *series) rate() float64 {
	if s.st.cnt > 0 {
		return s.st.head.r
	}
	return 0
}

func (s *series) trim(begin int64, d decay) { s.st.trim(begin, d) }
