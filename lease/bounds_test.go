package lease

import (
	"errors"
	"fmt"
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
		{"a start whose lease ends after 2262", []step{submit(lastDay.Add(-time.Hour))}, start(lastDay)},
		{"a renewal whose lease ends after 2262", []step{submit(lastDay.Add(-time.Hour)), start(lastDay.Add(-time.Hour))}, renew(lastDay, 0)},
		{"a restore whose lease ends after 2262", []step{submit(lastDay.Add(-time.Hour)), start(lastDay.Add(-time.Hour)),
			ckpt(lastDay.Add(-time.Minute)), release(lastDay.Add(-time.Minute), 0)}, restore(lastDay, 0)},
		{"a start after 2262 within the job's span", []step{submit(lastDay)}, start(lastDay.Add(time.Hour))},
		{"a renewal 300 years out", []step{submit(t0), start(t1)}, renew(far, 0)},
		{"a submission 300 years out", nil, func(tb *Table) error { return tb.Submit(far, "j") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newTable(t, Config{})
			for _, s := range tt.setup {
				must(t, s(tb))
			}
			before, _ := tb.Info("j")
			err := tt.call(tb)
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("%v, want ErrInvalidValue", err)
			}
			if after, _ := tb.Info("j"); after != before {
				t.Fatalf("a refused call changed the job: %+v → %+v", before, after)
			}
			check(t, tb)
		})
	}
	for name, cfg := range map[string]Config{
		"a lease of 2^63-1 ns":           {Lease: math.MaxInt64},
		"a minimum runtime of 2^63-1 ns": {Lease: testLease, MinRuntime: math.MaxInt64},
		"a lease just over MaxSpan":      {Lease: MaxSpan + 1},
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

// TestJobLifeIsBoundedByMaxSpan: the years 1678 to 2262 hold twice the 292
// years a Duration can count, so a job held from 1700 to 2100 would
// overflow its usage. No event or query more than MaxSpan after a job's
// submission is accepted, and a refused one leaves the table as it was.
func TestJobLifeIsBoundedByMaxSpan(t *testing.T) {
	b := time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC)
	end := b.Add(MaxSpan) // the last instant job j can have an event
	tests := []struct {
		name  string
		setup []step
		call  step
	}{
		{"a renewal a nanosecond past the span", []step{submit(b), start(b)}, renew(end.Add(1), 0)},
		{"a checkpoint 400 years after the submission", []step{submit(b), start(b)}, ckpt(b.AddDate(400, 0, 0))},
		{"a completion 400 years after the submission", []step{submit(b), start(b)}, finish(b.AddDate(400, 0, 0), Completed)},
		{"a release past the span", []step{submit(b), start(b), ckpt(b.Add(time.Hour))}, release(end.Add(time.Second), 0)},
		{"a restore past the span", []step{submit(b), start(b), ckpt(b.Add(time.Hour)), release(b.Add(2*time.Hour), 0)}, restore(end.Add(time.Second), 0)},
		{"a cancellation of a job pending past the span", []step{submit(b)}, finish(end.Add(time.Second), Cancelled)},
		{"a start of a job pending past the span", []step{submit(b)}, start(end.Add(time.Second))},
		{"a query past the span", []step{submit(b), start(b)}, func(tb *Table) error {
			_, err := tb.InfoAt(end.Add(1), "j")
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newTable(t, Config{})
			for _, s := range tt.setup {
				must(t, s(tb))
			}
			before, _ := tb.Info("j")
			totals := tb.Totals(end)
			err := tt.call(tb)
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("%v, want ErrInvalidValue", err)
			}
			var e *Error
			if !errors.As(err, &e) || e.Job != "j" {
				t.Fatalf("%v does not name job j", err)
			}
			if after, _ := tb.Info("j"); after != before {
				t.Fatalf("a refused call changed the job: %+v → %+v", before, after)
			}
			if got := tb.Totals(end); got != totals {
				t.Fatalf("a refused call changed the totals: %+v → %+v", totals, got)
			}
			check(t, tb)
		})
	}
	t.Run("a job held to the end of its span counts MaxSpan exactly", func(t *testing.T) {
		tb := newTable(t, Config{})
		must(t, tb.Submit(b, "j"))
		must(t, tb.Start(b, "j"))
		in, err := tb.InfoAt(end, "j")
		must(t, err)
		if in.Usage.Held != MaxSpan || in.Usage.Progress != MaxSpan {
			t.Fatalf("usage at the end of the span %+v, want Held = Progress = %v", in.Usage, MaxSpan)
		}
		// Totals later than the span, up to the last countable year, count
		// the job to the end of its span and no further.
		for _, at := range []time.Time{end, end.Add(1), b.AddDate(400, 0, 0), time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)} {
			if u := tb.Totals(at); u != in.Usage {
				t.Errorf("Totals(%v) = %+v, want %+v", at, u, in.Usage)
			}
		}
		must(t, tb.Finish(end, "j", Completed))
		check(t, tb)
	})
}

// TestUsageSumsSaturate: a sum of usages past the 292 years a Duration holds
// stops at its end instead of wrapping round to a negative or small value,
// and Check reports it.
func TestUsageSumsSaturate(t *testing.T) {
	const max, min = time.Duration(math.MaxInt64), time.Duration(math.MinInt64)
	tests := []struct {
		name    string
		u, v    Usage
		want    Usage
		overhed time.Duration
		sat     bool
	}{
		{"sums that fit are exact", Usage{Held: max - 4, Progress: max - 7, Lost: 3}, Usage{Held: 3, Progress: 3, Lost: 3},
			Usage{Held: max - 1, Progress: max - 4, Lost: 6}, 6, false},
		{"a sum one past the end stops there", Usage{Held: max, Progress: max - 1, ColdStart: 1}, Usage{Held: 1, Progress: 1, ColdStart: 1},
			Usage{Held: max, Progress: max, ColdStart: 2}, 2, true},
		{"a sum of two ends stops at the end", Usage{Held: max, Checkpoint: max}, Usage{Held: max, Checkpoint: max},
			Usage{Held: max, Checkpoint: max}, max, true},
		{"a negative sum stops at the other end", Usage{Held: min + 1, Lost: -1}, Usage{Held: -2, Lost: min},
			Usage{Held: min, Lost: min}, min, true},
		{"overheads that do not fit together saturate", Usage{Checkpoint: max / 2, ColdStart: max / 2, Lost: max / 2}, Usage{},
			Usage{Checkpoint: max / 2, ColdStart: max / 2, Lost: max / 2}, max, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.u.Add(tt.v)
			if got != tt.want {
				t.Fatalf("Add = %+v, want %+v", got, tt.want)
			}
			if o := got.Overhead(); o != tt.overhed {
				t.Fatalf("Overhead = %v, want %v", o, tt.overhed)
			}
			if sat := got.Saturated(); sat != tt.sat {
				t.Fatalf("Saturated = %v for %+v, want %v", sat, got, tt.sat)
			}
		})
	}
	t.Run("a saturated sum fails Check even when its parts add up", func(t *testing.T) {
		if err := (Usage{Held: max, Progress: max}).Check(); err == nil {
			t.Fatal("Check accepted a saturated usage")
		}
		if err := (Usage{Held: max - 1, Progress: max - 1}).Check(); err != nil {
			t.Fatalf("Check refused a usage one short of saturation: %v", err)
		}
	})
	t.Run("a table whose jobs together held more than 292 years", func(t *testing.T) {
		b := time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC)
		tb := newTable(t, Config{})
		const n = 7 // 7 × 50 years > 292 years
		for i := range n {
			id := JobID(fmt.Sprint("j", i))
			must(t, tb.Submit(b, id))
			must(t, tb.Start(b, id))
			must(t, tb.Finish(b.Add(MaxSpan), id, Completed))
			if i%2 == 0 {
				must(t, tb.Forget(id)) // half of the sum in the forgotten jobs' tally
			}
		}
		check(t, tb) // a saturated tally of forgotten jobs is no corruption
		u := tb.Totals(b.Add(MaxSpan))
		if !u.Saturated() || u.Held != max || u.Progress != max || u.Overhead() != 0 {
			t.Fatalf("Totals = %+v, want Held and Progress saturated, no overhead", u)
		}
		for id := range tb.Jobs() {
			must(t, tb.Forget(id))
		}
		check(t, tb)
		if got := tb.Totals(b.Add(MaxSpan)); got != u {
			t.Fatalf("Totals after forgetting every job %+v, want %+v", got, u)
		}
	})
}

// Expired counts a lease end in the first or the last second the table can
// count like any other: one that ended by the query time is listed, one
// that has not is not.
func TestExpiredAtTheEndsOfTheCountableYears(t *testing.T) {
	for name, sec := range map[string]int64{"the first second": minProgressSec, "the last second": maxProgressSec} {
		t.Run(name, func(t *testing.T) {
			tb := newTable(t, Config{Lease: 100 * time.Millisecond})
			start := time.Unix(sec, 0)
			must(t, tb.Submit(start, "j"))
			must(t, tb.Start(start, "j"))
			if got := tb.Expired(start.Add(50 * time.Millisecond)); len(got) != 0 {
				t.Errorf("Expired before the lease end = %v, want none", got)
			}
			if got := tb.Expired(start.Add(500 * time.Millisecond)); len(got) != 1 {
				t.Errorf("Expired after the lease end = %v, want [j]", got)
			}
		})
	}
}
