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

// TestStartAllForgottenJob: a job finished before the trailing window (or
// the buckets) that the call's time sets is unknown to StartAll, as to
// Start, though the ledger (its clock not moved yet) still holds its record.
func TestStartAllForgottenJob(t *testing.T) {
	for _, h := range []History{TrailingWindow(time.Hour), Buckets(2, 30*time.Minute)} {
		t.Run(h.String(), func(t *testing.T) {
			l := mustNew(t, Config{Capacity: 16, History: h})
			do(t, l, l.AddTenant(t0, "t", 1))
			do(t, l, l.Submit(t0, "a", "t", 2, 1))
			do(t, l, l.Submit(t0, "old", "t", 2, 1))
			do(t, l, l.Finish(ts(1), "old", Completed))
			before, _ := l.MarshalBinary()
			for _, op := range []struct {
				name string
				call func() error
			}{
				{"StartAll", func() error { return l.StartAll(ts(7200), []JobID{"a", "old"}) }},
				{"StopAll", func() error { return l.StopAll(ts(7200), []JobID{"old"}) }},
			} {
				var le *Error
				if err := op.call(); !errors.Is(err, ErrUnknownJob) || !errors.As(err, &le) || le.Job != "old" {
					t.Fatalf("%s: got %v, want ErrUnknownJob naming old", op.name, err)
				}
				if after, _ := l.MarshalBinary(); !bytes.Equal(before, after) {
					t.Fatalf("%s: the rejected call changed the ledger", op.name)
				}
			}
			if err := l.Start(ts(7200), "old"); !errors.Is(err, ErrUnknownJob) {
				t.Fatalf("Start: got %v, want ErrUnknownJob", err)
			}
		})
	}
}

// TestStartAllKeepsNoRecord: the ledger's scratch list of records is empty
// between calls, after an accepted call as after a rejected one (whose
// rejection comes after more jobs than a batch), so that it keeps no
// finished or forgotten job alive.
func TestStartAllKeepsNoRecord(t *testing.T) {
	l := mustNew(t, Config{Capacity: 1 << 10})
	do(t, l, l.AddTenant(t0, "t", 1))
	ids := make([]JobID, 2*lookupBatch+1)
	for i := range ids {
		ids[i] = JobID(fmt.Sprintf("job-%d", i))
		do(t, l, l.Submit(t0, ids[i], "t", 1, 1))
	}
	empty := func(when string) {
		if slices.ContainsFunc(l.batch[:cap(l.batch)], func(j *job) bool { return j != nil }) {
			t.Fatalf("%s: the ledger keeps records between calls", when)
		}
	}
	do(t, l, l.StartAll(ts(1), ids[1:]))
	empty("after an accepted call")
	if err := l.StopAll(ts(2), ids); !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("StopAll with a job not running: %v", err)
	}
	if err := l.StartAll(ts(2), append(ids[:1:1], ids[1:]...)); !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("StartAll with jobs already running: %v", err)
	}
	if err := l.StopAll(ts(2), append(slices.Clone(ids[1:]), ids[0])); !errors.Is(err, ErrInvalidTransition) {
		t.Fatalf("StopAll with a job not running last: %v", err)
	}
	empty("after rejected calls")
	if err := l.Check(); err != nil {
		t.Fatal(err)
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
		hist := rapid.SampledFrom([]History{Unbounded(), TrailingWindow(time.Hour), Buckets(3, 20*time.Minute), HalfLife(time.Hour)}).Draw(t, "history")
		l, err := New(Config{Capacity: 64, Start: t0, History: hist})
		must(err)
		must(l.AddTenant(t0, "t", 1))
		must(l.AddTenant(t0, "u", 2))
		ids := make([]JobID, n)
		var pending, running, finished []JobID
		for i := range ids {
			ids[i] = JobID(fmt.Sprintf("job-%d", i))
			must(l.Submit(t0, ids[i], TenantID(rapid.SampledFrom([]string{"t", "u"}).Draw(t, "tenant")), GPUs(rapid.IntRange(1, 8).Draw(t, "demand")), 1))
			switch rapid.IntRange(0, 4).Draw(t, "state") {
			case 0, 1:
				pending = append(pending, ids[i])
			case 2, 3:
				must(l.Start(t0, ids[i]))
				running = append(running, ids[i])
			default:
				// finished at t0: under the trailing window of an hour,
				// forgotten (unknown) at a time past an hour, though its
				// record is still indexed until the clock moves
				must(l.Finish(t0, ids[i], Completed))
				finished = append(finished, ids[i])
			}
		}
		snap, _ := l.MarshalBinary()
		sec := rapid.Float64Range(-10, 7200).Draw(t, "at")
		if rapid.Bool().Draw(t, "an hour later") {
			sec += 3600 // past the trailing window of the jobs finished at t0
		}
		at := ts(sec)
		start := rapid.Bool().Draw(t, "start")
		// a list of jobs that can switch, in random order, with perhaps
		// one fault put in: an unknown job, a job named twice, one that
		// cannot switch, or a finished one (perhaps forgotten at at)
		ok, wrong := pending, running
		if !start {
			ok, wrong = running, pending
		}
		list := rapid.Permutation(ok).Draw(t, "list")
		list = list[:rapid.IntRange(0, len(list)).Draw(t, "length")]
		// each kind of fault alike, whatever the number of jobs of each
		faults := [][]JobID{{"nobody"}}
		for _, f := range [][]JobID{list, wrong, finished} {
			if len(f) > 0 {
				faults = append(faults, f)
			}
		}
		if rapid.Bool().Draw(t, "fault") {
			f := rapid.SampledFrom(rapid.SampledFrom(faults).Draw(t, "fault kind")).Draw(t, "fault job")
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
