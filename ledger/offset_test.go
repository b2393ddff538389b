package ledger

import (
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestOffsetMatchesSub checks the event-time conversion against what it
// replaces, at.Sub(start) with Sub's saturated results out of range, on
// times near each other, far apart, at the ends of what time.Time holds,
// and with monotonic clock readings.
func TestOffsetMatchesSub(t *testing.T) {
	secs := func() *rapid.Generator[int64] {
		return rapid.OneOf(
			rapid.Int64Range(1e9, 2e9),    // this era
			rapid.Int64Range(-1e11, 1e11), // within ±3,000 years
			rapid.Int64(),                 // anywhere
			rapid.SampledFrom([]int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64, math.MaxInt64 - 1, -62135596800, 0}),
		)
	}
	rapid.Check(t, func(t *rapid.T) {
		start := time.Unix(secs().Draw(t, "start"), rapid.Int64Range(0, 1e9-1).Draw(t, "startNs"))
		var at time.Time
		switch rapid.IntRange(0, 2).Draw(t, "how") {
		case 0:
			at = time.Unix(secs().Draw(t, "at"), rapid.Int64Range(0, 1e9-1).Draw(t, "atNs"))
		case 1: // near start, at both ends of Sub's range
			d := rapid.OneOf(rapid.Int64(), rapid.Int64Range(math.MaxInt64-3e9, math.MaxInt64), rapid.Int64Range(math.MinInt64, math.MinInt64+3e9)).Draw(t, "d")
			at = start.Add(time.Duration(d))
		case 2: // a reading of the monotonic clock
			at = time.Now().Add(time.Duration(rapid.Int64Range(-1e18, 1e18).Draw(t, "fromNow")))
		}
		l := &Ledger{start: start.Round(0)}
		got, ok := l.offset(at)
		d := at.Sub(l.start)
		wantOK := d != math.MaxInt64 && d != math.MinInt64
		if ok != wantOK || ok && got != int64(d) {
			t.Fatalf("offset(%v) from %v = %d, %v; Sub gives %d", at, start, got, ok, d)
		}
	})
}
