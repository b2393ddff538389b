package lease

import (
	"errors"
	"math"
	"testing"
	"time"
)

// TestTableRefusesWhatItCannotCount: a duration or time the table cannot
// count is refused at the call, leaving the table as it was, instead of
// turning usage negative or clamping a lease end.
func TestTableRefusesWhatItCannotCount(t *testing.T) {
	far := time.Date(2326, 1, 1, 0, 0, 0, 0, time.UTC)        // 300 years out
	lastDay := time.Date(2262, 4, 11, 23, 40, 0, 0, time.UTC) // 7 minutes before the last Unix nanosecond
	tests := []struct {
		name  string
		setup []step
		call  step
	}{
		{"a renewal flush of 2^63-1 ns", []step{submit(t0), start(t1)}, renew(t2, math.MaxInt64)},
		{"a renewal flush just over MaxSpan", []step{submit(t0), start(t1)}, renew(t2, MaxSpan+1)},
		{"renewal flushes piling past MaxSpan", []step{submit(t0), start(t1), renew(t2, MaxSpan)}, renew(t3, 2*time.Minute)},
		{"a cold start of 2^63-1 ns", []step{submit(t0), start(t1), ckpt(t2), release(t3, 0)}, restore(t4, math.MaxInt64)},
		{"a start 300 years out", []step{submit(t0)}, start(far)},
		{"a start whose lease ends after 2262", []step{submit(t0)}, start(lastDay)},
		{"a renewal 300 years out", []step{submit(t0), start(t1)}, renew(far, 0)},
		{"a submission 300 years out", nil, func(tb *Table) error { return tb.Submit(far, "j") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newTable(t, Config{})
			for _, s := range tt.setup {
				must(t, s(tb))
			}
			before, _ := tb.InfoAt(t0.Add(time.Hour), "j")
			err := tt.call(tb)
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("%v, want ErrInvalidValue", err)
			}
			if after, _ := tb.InfoAt(t0.Add(time.Hour), "j"); after != before {
				t.Fatalf("a refused call changed the job: %+v → %+v", before, after)
			}
			check(t, tb)
		})
	}
	for name, cfg := range map[string]Config{
		"a lease of 2^63-1 ns":           {Lease: math.MaxInt64},
		"a minimum runtime of 2^63-1 ns": {Lease: testLease, MinRuntime: math.MaxInt64},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := NewTable(cfg); !errors.Is(err, ErrConfig) {
				t.Fatalf("%v, want ErrConfig", err)
			}
		})
	}
	t.Run("a lease ended is expired at any later time", func(t *testing.T) {
		tb := newTable(t, Config{})
		must(t, tb.Submit(t0, "j"))
		must(t, tb.Start(t1, "j"))
		for _, at := range []time.Time{t1.Add(testLease), far, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)} {
			if got := tb.Expired(at); len(got) != 1 {
				t.Errorf("Expired(%v) = %v, want [j]", at, got)
			}
		}
		if u := tb.Totals(far); u.Check() != nil || u.Held <= 0 {
			t.Errorf("Totals 300 years out: %+v", u)
		}
	})
}
