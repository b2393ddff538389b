package ledger

import (
	"errors"
	"math"
	"testing"
	"time"
)

// FuzzWeightsRoundTrip: whatever tenant weight, job weight and demand the
// ledger accepts, the ledger it makes snapshots, restores to the same
// bytes and keeps its invariants; whatever it refuses is ErrInvalidValue
// and changes nothing.
func FuzzWeightsRoundTrip(f *testing.F) {
	f.Add(1.0, 1.0, uint32(1), int64(60))
	f.Add(1.0, 5e-324, uint32(1), int64(60))
	f.Add(1.0, 1e-300, uint32(1<<31), int64(60))
	f.Add(5e-324, 1.0, uint32(8), int64(3600))
	f.Add(math.MaxFloat64, math.MaxFloat64, uint32(1<<31), int64(1e9))
	f.Add(1e-12, 1e12, uint32(3), int64(1))
	f.Fuzz(func(t *testing.T, tw, jw float64, demand uint32, secs int64) {
		l := mustNew(t, Config{Capacity: MaxGPUs})
		before, _ := l.MarshalBinary()
		if err := l.AddTenant(t0, "a", tw); err != nil {
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("tenant weight %v: %v", tw, err)
			}
			if after, _ := l.MarshalBinary(); string(after) != string(before) {
				t.Fatal("a refused tenant weight changed the ledger")
			}
			return
		}
		before, _ = l.MarshalBinary()
		if err := l.Submit(t0, "j", "a", GPUs(demand), jw); err != nil {
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("job weight %v demand %d: %v", jw, demand, err)
			}
			if after, _ := l.MarshalBinary(); string(after) != string(before) {
				t.Fatal("a refused job changed the ledger")
			}
			return
		}
		do(t, l, l.Start(t0, "j"))
		do(t, l, l.Advance(t0.Add(time.Duration(max(0, min(secs, 1e10)))*time.Second)))
		data, err := l.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Restore(data)
		if err != nil {
			t.Fatalf("tenant weight %v, job weight %v, demand %d: the snapshot is refused: %v", tw, jw, demand, err)
		}
		if again, _ := back.MarshalBinary(); string(again) != string(data) {
			t.Fatal("the restored ledger encodes differently")
		}
		do(t, back, back.Check())
	})
}
