package ledger

import (
	"math/rand/v2"
	"testing"
)

// The chunked store must behave like a plain sorted slice across chunk
// boundaries, including after trimming.
func TestStoreMatchesSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for round := range 50 {
		var s store[point1]
		var ref []point1
		tm := int64(0)
		for i := range r.IntN(3*chunkSize) + 1 {
			tm += 1 + r.Int64N(5)
			p := point1{t: tm, v: float64(i)}
			s.push(p)
			ref = append(ref, p)
			if r.IntN(40) == 0 {
				begin := r.Int64N(tm + 1)
				s.trim(begin)
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
		s.each(func(i int, p *point1) {
			if *p != ref[i] {
				t.Fatalf("round %d: point %d = %+v, want %+v", round, i, *p, ref[i])
			}
		})
		for range 200 {
			q := r.Int64N(tm+10) - 5
			got := s.find(q)
			var want *point1
			for i := range ref {
				if ref[i].t <= q {
					want = &ref[i]
				}
			}
			if (got == nil) != (want == nil) || got != nil && *got != *want {
				t.Fatalf("round %d: find(%d) = %v, want %v", round, q, got, want)
			}
		}
	}
}
