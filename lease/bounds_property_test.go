package lease

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// tableView is everything a caller can read from a table, to check that a
// refused call changed nothing.
type tableView struct {
	infos  []Info
	totals Usage
	expiry time.Time
}

func viewOf(tb *Table, far time.Time) tableView {
	var v tableView
	for id := range tb.Jobs() {
		in, _ := tb.Info(id)
		v.infos = append(v.infos, in)
	}
	v.totals = tb.Totals(far)
	v.expiry, _ = tb.NextExpiry()
	return v
}

func (v tableView) equal(w tableView) bool {
	return slices.Equal(v.infos, w.infos) && v.totals == w.totals && v.expiry.Equal(w.expiry)
}

// TestTableBoundsProperty drives a table with the times and durations a
// broken clock or pipeline produces — the ends of the years Unix
// nanoseconds hold, jumps of centuries, a nanosecond past a job's span,
// durations of ±2^63 ns — mixed with ordinary ones, and checks after every
// call:
//   - a refused call returns an *Error matching one of the package's
//     sentinels, and leaves everything a caller can read as it was;
//   - the table passes Check;
//   - no field of any job's usage is negative or above MaxSpan, nor above
//     the time since its submission;
//   - Totals at any time is non-negative and, unless saturated, adds up.
func TestTableBoundsProperty(t *testing.T) {
	sentinels := []error{ErrInvalidTransition, ErrUnknownJob, ErrDuplicateJob, ErrTimeBackwards, ErrInvalidValue, ErrGuarded}
	first, last := time.Unix(minProgressSec, 0), time.Unix(maxProgressSec, 0)
	far := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	rapid.Check(t, func(rt *rapid.T) {
		tb := newTable(rt, Config{
			Lease:      rapid.SampledFrom([]time.Duration{time.Nanosecond, testLease, 24 * time.Hour, MaxSpan}).Draw(rt, "lease"),
			MinRuntime: rapid.SampledFrom([]time.Duration{0, time.Minute, MaxSpan}).Draw(rt, "minRuntime"),
		})
		var ids []JobID
		// A time near a job's last event, near its span's end, or
		// anywhere in (and just outside) the countable years.
		drawTime := func(rt *rapid.T, id JobID) time.Time {
			in, ok := tb.Info(id)
			base := in.Since
			if !ok {
				base = time.Unix(0, rapid.Int64().Draw(rt, "anywhere"))
			}
			switch rapid.IntRange(0, 5).Draw(rt, "when") {
			case 0:
				return base.Add(time.Duration(rapid.Int64Range(-1, int64(time.Hour)).Draw(rt, "soon")))
			case 1:
				return in.Submitted.Add(MaxSpan + time.Duration(rapid.Int64Range(-1, 1).Draw(rt, "edge")))
			case 2:
				return base.AddDate(rapid.IntRange(1, 600).Draw(rt, "years"), 0, 0)
			case 3:
				return rapid.SampledFrom([]time.Time{first, first.Add(-time.Second), last, last.Add(time.Second), far}).Draw(rt, "end")
			default:
				return time.Unix(0, rapid.Int64().Draw(rt, "unixNano"))
			}
		}
		drawDuration := func(rt *rapid.T) time.Duration {
			return rapid.SampledFrom([]time.Duration{
				0, time.Second, time.Hour, MaxSpan, MaxSpan + 1, -1, math.MaxInt64, math.MinInt64,
				time.Duration(rapid.Int64().Draw(rt, "d")),
			}).Draw(rt, "duration")
		}
		drawJob := func(rt *rapid.T) JobID {
			if len(ids) == 0 || rapid.IntRange(0, 9).Draw(rt, "unknown") == 0 {
				return "x"
			}
			return rapid.SampledFrom(ids).Draw(rt, "job")
		}
		calls := map[string]func(rt *rapid.T, id JobID, at time.Time) error{
			"submit": func(rt *rapid.T, _ JobID, at time.Time) error {
				id := JobID(fmt.Sprint("j", len(ids)))
				err := tb.Submit(at, id)
				if err == nil {
					ids = append(ids, id)
				}
				return err
			},
			"start":      func(rt *rapid.T, id JobID, at time.Time) error { return tb.Start(at, id) },
			"renew":      func(rt *rapid.T, id JobID, at time.Time) error { return tb.Renew(at, id, drawDuration(rt)) },
			"checkpoint": func(rt *rapid.T, id JobID, at time.Time) error { return tb.Checkpoint(at, id) },
			"release":    func(rt *rapid.T, id JobID, at time.Time) error { return tb.Release(at, id, drawDuration(rt)) },
			"restore":    func(rt *rapid.T, id JobID, at time.Time) error { return tb.Restore(at, id, drawDuration(rt)) },
			"finish": func(rt *rapid.T, id JobID, at time.Time) error {
				return tb.Finish(at, id, rapid.SampledFrom([]State{Completed, Failed, Cancelled, Running}).Draw(rt, "final"))
			},
			"query": func(rt *rapid.T, id JobID, at time.Time) error {
				_, err := tb.InfoAt(at, id)
				return err
			},
			"forget": func(rt *rapid.T, id JobID, _ time.Time) error {
				err := tb.Forget(id)
				if err == nil {
					ids = slices.DeleteFunc(ids, func(x JobID) bool { return x == id })
				}
				return err
			},
		}
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range calls {
				if !yield(n) {
					return
				}
			}
		})
		rt.Repeat(map[string]func(*rapid.T){
			"call": func(rt *rapid.T) {
				name := rapid.SampledFrom(names).Draw(rt, "call")
				id := drawJob(rt)
				at := drawTime(rt, id)
				before := viewOf(tb, far)
				err := calls[name](rt, id, at)
				if err == nil {
					return
				}
				var e *Error
				if !errors.As(err, &e) || !slices.ContainsFunc(sentinels, func(s error) bool { return errors.Is(err, s) }) {
					rt.Fatalf("%s: %v is not an *Error matching a sentinel", name, err)
				}
				if after := viewOf(tb, far); !after.equal(before) {
					rt.Fatalf("refused %s (%v) changed the table:\n%+v\n→ %+v", name, err, before, after)
				}
			},
			"expired": func(rt *rapid.T) {
				at := drawTime(rt, drawJob(rt))
				prev := time.Time{}
				got := tb.Expired(at)
				for _, id := range got {
					in, _ := tb.Info(id)
					if in.LeaseEnd.After(at) || in.LeaseEnd.Before(prev) {
						rt.Fatalf("Expired(%v) lists %s with lease end %v, after %v", at, id, in.LeaseEnd, prev)
					}
					prev = in.LeaseEnd
				}
				// And it misses none: a running job, or one whose cold
				// start is over by at, whose lease ended by at.
				for _, id := range ids {
					in, _ := tb.Info(id)
					running := in.State == Running || in.State == Restoring && !at.Before(in.ReadyAt)
					if running && !in.LeaseEnd.After(at) && !slices.Contains(got, id) {
						rt.Fatalf("Expired(%v) = %v misses %s, whose lease ended at %v", at, got, id, in.LeaseEnd)
					}
				}
			},
			"": func(rt *rapid.T) {
				if err := tb.Check(); err != nil {
					rt.Fatal(err)
				}
				for _, id := range ids {
					in, _ := tb.Info(id)
					u := in.Usage
					if in.State.Holds() && !countable(in.LeaseEnd) {
						rt.Fatalf("%s holds a lease to %v, past the countable years", id, in.LeaseEnd)
					}
					life := min(in.Since.Sub(in.Submitted), MaxSpan)
					for _, d := range []time.Duration{u.Held, u.Progress, u.Checkpoint, u.ColdStart, u.Lost} {
						if d < 0 || d > life {
							rt.Fatalf("%s usage %+v outside [0, %v], its time in the table", id, u, life)
						}
					}
				}
				at := drawTime(rt, drawJob(rt))
				u := tb.Totals(at)
				if u.Held < 0 || u.Progress < 0 || u.Checkpoint < 0 || u.ColdStart < 0 || u.Lost < 0 {
					rt.Fatalf("Totals(%v) = %+v is negative", at, u)
				}
				if err := u.Check(); err != nil && !u.Saturated() {
					rt.Fatalf("Totals(%v): %v", at, err)
				}
			},
		})
	})
}
