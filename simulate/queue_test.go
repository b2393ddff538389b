package simulate

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The event queue pops events in (at, kind, job, seq) order, and remove and
// replace take out exactly a job's event of a slot, as a sorted list would;
// the stale-time set holds each time once and pops them in order.
func TestPropertyEventQueue(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q eventQueue
		var model []event // pushed, not yet popped or removed
		var ts timeSet
		var times []time.Duration
		for i := range rapid.IntRange(1, 200).Draw(t, "ops") {
			switch op := rapid.IntRange(0, 3).Draw(t, "op"); {
			case op == 0 && len(model) > 0:
				got := q.pop()
				// the documented order, spelled out rather than read from
				// event.less, so that a wrong less fails too
				slices.SortFunc(model, func(a, b event) int {
					return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.kind, b.kind), cmp.Compare(a.j, b.j), cmp.Compare(a.seq, b.seq))
				})
				if got != model[0] {
					t.Fatalf("op %d: pop %+v, want %+v", i, got, model[0])
				}
				model = model[1:]
			case op == 1:
				j := int32(rapid.IntRange(0, 5).Draw(t, "job"))
				kind := evKind(rapid.IntRange(0, 3).Draw(t, "kind"))
				e := event{at: time.Duration(rapid.IntRange(0, 20).Draw(t, "at")), j: j, kind: kind}
				k := slices.IndexFunc(model, func(m event) bool { return m.j == j && m.slot() == e.slot() })
				if rapid.Bool().Draw(t, "replace") {
					old, ok := q.replace(e)
					if ok != (k >= 0) || ok && old != model[k] {
						t.Fatalf("op %d: replace gave %+v, %v", i, old, ok)
					}
				} else {
					if _, ok := q.remove(j, int(e.slot())); ok != (k >= 0) { // one event per slot
						t.Fatalf("op %d: remove found %v", i, ok)
					}
					q.push(e)
				}
				if k >= 0 {
					model = slices.Delete(model, k, k+1)
				}
				e.seq = q.seq
				model = append(model, e)
			case op == 2:
				j := int32(rapid.IntRange(0, 5).Draw(t, "job"))
				slot := rapid.IntRange(0, slots-1).Draw(t, "slot")
				got, ok := q.remove(j, slot)
				k := slices.IndexFunc(model, func(m event) bool { return m.j == j && int(m.slot()) == slot })
				if ok != (k >= 0) || ok && got != model[k] {
					t.Fatalf("op %d: remove(%d, %d) = %+v, %v", i, j, slot, got, ok)
				}
				if ok {
					model = slices.Delete(model, k, k+1)
				}
			case op == 3:
				d := time.Duration(rapid.IntRange(0, 20).Draw(t, "time"))
				if ts.has(d) != slices.Contains(times, d) {
					t.Fatalf("op %d: has(%v) = %v", i, d, ts.has(d))
				}
				ts.add(d)
				if !slices.Contains(times, d) {
					times = append(times, d)
				}
				if rapid.IntRange(0, 3).Draw(t, "pop") == 0 {
					slices.Sort(times)
					if got := ts.popMin(); got != times[0] {
						t.Fatalf("op %d: time set popped %v, want %v", i, got, times[0])
					}
					times = times[1:]
				}
			}
			if q.Len() != len(model) {
				t.Fatalf("op %d: %d events queued, want %d", i, q.Len(), len(model))
			}
		}
		slices.Sort(times)
		if ts.len() != len(times) {
			t.Fatalf("time set holds %d times, want %d", ts.len(), len(times))
		}
		for _, want := range times {
			if got := ts.popMin(); got != want {
				t.Fatalf("time set popped %v, want %v", got, want)
			}
		}
	})
}

// lastEnd, which keeps its last answer for the span of times that share
// it, answers as the plain formula max over interval lengths l of ⌊t/l⌋·l
// (and 0) for any sequence of times.
func TestPropertyLastEnd(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var e engine
		for range rapid.IntRange(0, 3).Draw(t, "lengths") {
			e.cfg.Intervals = append(e.cfg.Intervals, time.Duration(rapid.IntRange(1, 50).Draw(t, "length")))
		}
		for i := range rapid.IntRange(1, 100).Draw(t, "times") {
			at := time.Duration(rapid.IntRange(-20, 400).Draw(t, "t"))
			want := time.Duration(0)
			for _, l := range e.cfg.Intervals {
				want = max(want, at/l*l)
			}
			if got := e.lastEnd(at); got != want {
				t.Fatalf("time %d (%v): lastEnd = %v, want %v (intervals %v)", i, at, got, want, e.cfg.Intervals)
			}
		}
	})
}

// TestWipe: wipe zeroes every element, the first included, so that the
// engine's scratch lists hold no job once a tick is done with them.
func TestWipe(t *testing.T) {
	s := []*int{new(int), new(int), new(int)}
	wipe(s)
	for i, p := range s {
		if p != nil {
			t.Fatalf("element %d kept after wipe", i)
		}
	}
	wipe([]*int(nil)) // nothing to do, no panic
}
