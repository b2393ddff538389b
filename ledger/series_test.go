package ledger

import (
	"math"
	"math/rand/v2"
	"pgregory.net/rapid"
	"runtime"
	"testing"
	"time"
)

// The block store must behave like a plain sorted slice of breakpoints
// across block and page boundaries, including after trimming and rate
// changes at the last breakpoint's instant, whether its values are chained
// (stored as deltas) or arbitrary (stored in full), with or without decay.
func TestStoreMatchesSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for round := range 60 {
		d := decay(0)
		if round%3 == 1 {
			d = decay(math.Ln2 / 50)
		}
		var s store
		var ref []point
		if round%2 == 0 {
			var page [16]byte
			s.inline(page[:])
		}
		tm := int64(0)
		n := r.IntN(6*blockLen) + 1
		if round%10 == 9 { // several chunks of closed blocks
			n = (2 + r.IntN(2)) * chunkLen * blockLen
		}
		for i := range n {
			switch {
			case round == 5 && i == 3: // too long to encode as a delta
				tm += 1<<62 + 1
			case r.IntN(3) == 0:
				tm += 1 + r.Int64N(1<<r.IntN(40))
			case r.IntN(2) == 0: // whole microseconds, milliseconds or seconds
				tm += (1 + r.Int64N(1000)) * units[r.IntN(len(units))]
			default:
				tm += 1 + r.Int64N(1000)
			}
			rate := float64(r.IntN(9))
			if r.IntN(4) == 0 {
				rate = r.Float64() * 100
			}
			switch {
			case len(ref) > 0 && r.IntN(8) == 0: // same instant: the later rate wins
				s.setHeadRate(rate)
				ref[len(ref)-1].r = rate
				continue
			case len(ref) > 0 && (r.IntN(5) > 0 || round == 5 && i == 3): // chained value
				h := ref[len(ref)-1]
				p := point{t: tm, v: d.grow(h.v, h.r, tm-h.t), r: rate}
				if r.IntN(2) == 0 {
					s.add(p)
				} else {
					s.push(p, d) // finds that p chains
				}
				ref = append(ref, p)
			default:
				p := point{t: tm, v: float64(i), r: rate}
				s.push(p, d)
				ref = append(ref, p)
			}
			if r.IntN(40) == 0 {
				begin := r.Int64N(tm + 1)
				s.trim(begin, d)
				k := 0
				for k+1 < len(ref) && ref[k+1].t <= begin {
					k++
				}
				ref = ref[k:]
			}
		}
		if s.len() != len(ref) {
			t.Fatalf("round %d: len %d, want %d", round, s.len(), len(ref))
		}
		s.each(d, func(i int, p point) {
			if p != ref[i] {
				t.Fatalf("round %d: point %d = %+v, want %+v", round, i, p, ref[i])
			}
		})
		for range 200 {
			q := r.Int64N(tm+10) - 5
			got, ok := s.find(q, d)
			var want *point
			for i := range ref {
				if ref[i].t <= q {
					want = &ref[i]
				}
			}
			if ok != (want != nil) || ok && got != *want {
				t.Fatalf("round %d: find(%d) = %v %v, want %v", round, q, got, ok, want)
			}
		}
	}
}

// A Start or Stop allocates nothing but, now and then, a page for the
// breakpoints it retains, and retains a few bytes per account it changes
// (job, tenant, cluster allocated and idle), not a full breakpoint each.
func TestStartStopRetainsFewBytes(t *testing.T) {
	l := mustNew(t, Config{Capacity: 64, Start: t0})
	do(t, l, l.AddTenant(t0, "t", 1))
	do(t, l, l.Submit(t0, "j", "t", 8, 1))
	at, on := t0, false
	toggle := func() {
		at = at.Add(time.Second)
		var err error
		if on {
			err = l.Stop(at, "j")
		} else {
			err = l.Start(at, "j")
		}
		if err != nil {
			t.Fatal(err)
		}
		on = !on
	}
	if a := testing.AllocsPerRun(1000, toggle); a != 0 {
		t.Errorf("%v allocations per event", a)
	}
	const events = 20000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range events {
		toggle()
	}
	runtime.ReadMemStats(&after)
	// 4 accounts × (2 bytes + their share of block headers and page
	// growth); a full breakpoint per account would be 96 bytes.
	b := float64(after.TotalAlloc-before.TotalAlloc) / events
	t.Logf("%.1f bytes allocated per event", b)
	if b > 40 {
		t.Errorf("%.1f bytes allocated per event, want ≤ 40", b)
	}
	do(t, l, nil)
}

// The chunked block list must behave like a plain slice under appends and
// drops from the front, across chunk boundaries and when it empties.
func TestBlockListMatchesSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	for round := range 40 {
		var l blockList
		var ref []int64
		id := int64(0)
		for range r.IntN(8 * chunkLen * (1 + round%4)) {
			if len(ref) > 0 && r.IntN(3+round%5) == 0 {
				for k := r.IntN(min(len(ref), 2*chunkLen)) + 1; k > 0; k-- {
					l.dropFirst()
					ref = ref[1:]
				}
			} else {
				id++
				l.push(block{p: point{t: id}})
				ref = append(ref, id)
			}
			if l.len() != len(ref) {
				t.Fatalf("round %d: len %d, want %d", round, l.len(), len(ref))
			}
			if len(ref) > 0 {
				for _, i := range []int{0, len(ref) - 1, r.IntN(len(ref))} {
					if got := l.at(i).p.t; got != ref[i] {
						t.Fatalf("round %d: block %d = %d, want %d", round, i, got, ref[i])
					}
				}
			}
		}
		for i, want := range ref {
			if got := l.at(i).p.t; got != want {
				t.Fatalf("round %d: block %d = %d, want %d", round, i, got, want)
			}
		}
		if len(ref) == 0 && l.c != nil {
			t.Fatalf("round %d: an empty list keeps its chunks", round)
		}
	}
}

// TestShortMatchesEncode: whenever short takes a breakpoint, its two bytes
// are those encode writes, on deltas and rates drawn around its limits.
func TestShortMatchesEncode(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		unit := rapid.SampledFrom([]int64{1, 1e3, 1e6, 1e9}).Draw(t, "unit")
		dt := rapid.OneOf(rapid.Int64Range(1, 40), rapid.SampledFrom([]int64{15, 16})).Draw(t, "q")*unit + rapid.SampledFrom([]int64{0, 0, 0, 1, 999}).Draw(t, "off")
		whole := rapid.Map(rapid.Int64Range(-100, 100), func(v int64) float64 { return float64(v) })
		prevR := rapid.OneOf(rapid.Float64Range(-100, 100), whole).Draw(t, "prevR")
		r := rapid.Float64Range(-100, 100).Draw(t, "r")
		if rapid.Bool().Draw(t, "step") { // a whole change, around short's limits
			r = prevR + float64(rapid.OneOf(rapid.IntRange(-70, 70), rapid.SampledFrom([]int{-65, -64, 63, 64})).Draw(t, "k"))
		}
		b0, b1, ok := short(dt, prevR, r)
		want, _ := encode(nil, dt, prevR, r)
		if ok && (len(want) != 2 || want[0] != b0 || want[1] != b1) {
			t.Fatalf("short(%d, %v, %v) = %#x %#x, encode writes %#x", dt, prevR, r, b0, b1, want)
		}
		if !ok && len(want) == 2 && dt%1e6 == 0 && want[0]&1 == 0 {
			t.Fatalf("short(%d, %v, %v) declined what encode writes in two bytes, %#x", dt, prevR, r, want)
		}
	})
}

// TestShortEdges runs short and encode on every combination of the limits
// of short's two bytes: whole deltas of 15 and 16 units, rate changes of
// −65, −64, 63 and 64, on whole and fractional rates.
func TestShortEdges(t *testing.T) {
	for _, unit := range []int64{1e3, 1e6, 1e9} {
		for _, q := range []int64{1, 15, 16} {
			for _, k := range []float64{-65, -64, 0, 63, 64} {
				for _, prevR := range []float64{0, 3, 100, 2.5} {
					dt, r := q*unit, prevR+k
					b0, b1, ok := short(dt, prevR, r)
					want, _ := encode(nil, dt, prevR, r)
					two := len(want) == 2 && want[0]&1 == 0 && unit >= 1e6
					if ok != two || ok && (want[0] != b0 || want[1] != b1) {
						t.Errorf("short(%d, %v, %v) = %#x %#x %v, encode writes %#x", dt, prevR, r, b0, b1, ok, want)
					}
				}
			}
		}
	}
}
