package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestStartAllStopAllRejectWhole: each way Start or Stop rejects a job
// rejects the whole list, names the first job at fault, and leaves the
// ledger byte for byte as it was.
func TestStartAllStopAllRejectWhole(t *testing.T) {
	l := mustNew(t, Config{Capacity: 16})
	do(t, l, l.AddTenant(t0, "t", 1))
	for _, id := range []JobID{"a", "b", "c", "done"} {
		do(t, l, l.Submit(t0, id, "t", 2, 1))
	}
	do(t, l, l.Start(ts(1), "c"))
	do(t, l, l.Finish(ts(2), "done", Completed))
	for _, c := range []struct {
		name  string
		start bool
		at    time.Time
		ids   []JobID
		err   error
		job   JobID
	}{
		{"a time before Now() names the first job", true, ts(1), []JobID{"a", "b"}, ErrTimeBackwards, "a"},
		{"an unknown job", true, ts(3), []JobID{"a", "nobody", "b"}, ErrUnknownJob, "nobody"},
		{"a finished job", true, ts(3), []JobID{"a", "done"}, ErrInvalidTransition, "done"},
		{"a job already running", true, ts(3), []JobID{"a", "b", "c"}, ErrInvalidTransition, "c"},
		{"a job named twice", true, ts(3), []JobID{"a", "b", "a"}, ErrInvalidTransition, "a"},
		{"a stop of a job not running", false, ts(3), []JobID{"c", "a"}, ErrInvalidTransition, "a"},
		{"a stop named twice", false, ts(3), []JobID{"c", "c"}, ErrInvalidTransition, "c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before, _ := l.MarshalBinary()
			err := l.StopAll(c.at, c.ids)
			if c.start {
				err = l.StartAll(c.at, c.ids)
			}
			var le *Error
			if !errors.Is(err, c.err) || !errors.As(err, &le) || le.Job != c.job {
				t.Fatalf("got %v, want %v naming %s", err, c.err, c.job)
			}
			if after, _ := l.MarshalBinary(); !bytes.Equal(before, after) {
				t.Fatal("the rejected call changed the ledger")
			}
			if err := l.Check(); err != nil {
				t.Fatal(err)
			}
		})
	}
	do(t, l, l.StartAll(ts(1), nil)) // an empty list does nothing, whatever the time
	if !l.Now().Equal(ts(2)) {
		t.Fatalf("an empty list moved Now() to %v", l.Now())
	}
}

// TestPropertyStartAllIsStartsInTurn: on a random ledger (more jobs than a
// batch, so that lists span several), StartAll and StopAll of a random list
// leave the very ledger (its snapshot, byte for byte) that Start or Stop of
// each job in turn leaves when all of them are accepted; when one is
// rejected they return its error and change nothing.
func TestPropertyStartAllIsStartsInTurn(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		n := rapid.IntRange(1, 80).Draw(t, "jobs")
		hist := rapid.SampledFrom([]History{Unbounded(), TrailingWindow(time.Hour), HalfLife(time.Hour)}).Draw(t, "history")
		l, err := New(Config{Capacity: 64, Start: t0, History: hist})
		must(err)
		must(l.AddTenant(t0, "t", 1))
		must(l.AddTenant(t0, "u", 2))
		ids := make([]JobID, n)
		var pending, running []JobID
		for i := range ids {
			ids[i] = JobID(fmt.Sprintf("job-%d", i))
			must(l.Submit(t0, ids[i], TenantID(rapid.SampledFrom([]string{"t", "u"}).Draw(t, "tenant")), GPUs(rapid.IntRange(1, 8).Draw(t, "demand")), 1))
			if rapid.Bool().Draw(t, "running") {
				must(l.Start(t0, ids[i]))
				running = append(running, ids[i])
			} else {
				pending = append(pending, ids[i])
			}
		}
		snap, _ := l.MarshalBinary()
		at := ts(rapid.Float64Range(-10, 7200).Draw(t, "at"))
		start := rapid.Bool().Draw(t, "start")
		// a list of jobs that can switch, in random order, with perhaps
		// one fault put in: an unknown job, a job named twice, or one
		// that cannot switch
		ok, wrong := pending, running
		if !start {
			ok, wrong = running, pending
		}
		list := rapid.Permutation(ok).Draw(t, "list")
		list = list[:rapid.IntRange(0, len(list)).Draw(t, "length")]
		var faults []JobID
		faults = append(faults, "nobody")
		faults = append(faults, list...)
		faults = append(faults, wrong...)
		if rapid.Bool().Draw(t, "fault") {
			f := rapid.SampledFrom(faults).Draw(t, "fault job")
			list = slices.Insert(list, rapid.IntRange(0, len(list)).Draw(t, "fault at"), f)
		}
		batch, err := Restore(snap)
		must(err)
		var berr error
		if start {
			berr = batch.StartAll(at, list)
		} else {
			berr = batch.StopAll(at, list)
		}
		turn, _ := Restore(snap)
		var terr error
		for _, id := range list {
			if start {
				terr = turn.Start(at, id)
			} else {
				terr = turn.Stop(at, id)
			}
			if terr != nil {
				break
			}
		}
		got, _ := batch.MarshalBinary()
		var want []byte
		if terr == nil {
			want, _ = turn.MarshalBinary()
		} else {
			want = snap
			var be, te *Error
			if !errors.As(berr, &be) || !errors.As(terr, &te) || be.Job != te.Job || !errors.Is(berr, te.Err) {
				t.Fatalf("batch error %v, in turn %v", berr, terr)
			}
		}
		if (berr == nil) != (terr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("batch (%v) and in turn (%v) leave different ledgers", berr, terr)
		}
		if err := batch.Check(); err != nil {
			t.Fatal(err)
		}
	})
}
