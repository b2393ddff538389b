package simulate

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The event queue pops events in (at, kind, job, seq) order, and remove and
// replace take out exactly a job's event of a slot, as a sorted list would.
func TestPropertyEventQueue(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q eventQueue
		var model []event // pushed, not yet popped or removed
		for i := range rapid.IntRange(1, 200).Draw(t, "ops") {
			switch op := rapid.IntRange(0, 2).Draw(t, "op"); {
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
			}
			if q.Len() != len(model) {
				t.Fatalf("op %d: %d events queued, want %d", i, q.Len(), len(model))
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
