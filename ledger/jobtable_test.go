package ledger

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestJobTableAgainstMap runs random puts, replacements and removals on a
// jobTable and a Go map side by side. Ids come from a small set so that
// records are replaced and removed often, and tables stay small, so probe
// runs collide, wrap around the end and are shifted back by removals.
func TestJobTableAgainstMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var tab jobTable
		want := map[JobID]*job{}
		ids := rapid.IntRange(1, 200).Draw(t, "ids")
		id := func() JobID { return JobID(fmt.Sprintf("j%d", rapid.IntRange(0, ids-1).Draw(t, "id"))) }
		for range rapid.IntRange(0, 400).Draw(t, "ops") {
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0:
				j := &job{id: id()}
				tab.put(j)
				want[j.id] = j
			case 1:
				k := id()
				old := want[k]
				if old == nil || rapid.Bool().Draw(t, "stale") {
					tab.remove(&job{id: k}) // not the indexed record: no change
					continue
				}
				tab.remove(old)
				delete(want, k)
			case 2:
				k := id()
				if got := tab.get(k); got != want[k] {
					t.Fatalf("get(%q) = %p, want %p", k, got, want[k])
				}
			}
			if tab.len() != len(want) {
				t.Fatalf("len %d, want %d", tab.len(), len(want))
			}
		}
		for k, j := range want {
			if tab.get(k) != j {
				t.Fatalf("get(%q) lost its record", k)
			}
		}
		all := tab.all()
		if len(all) != len(want) || slices.ContainsFunc(all, func(j *job) bool { return want[j.id] != j }) {
			t.Fatalf("all() = %d records, not those of the map (%d)", len(all), len(want))
		}
	})
}

// TestJobTableZero: the zero table answers lookups and removals.
func TestJobTableZero(t *testing.T) {
	var tab jobTable
	if tab.get("x") != nil || tab.len() != 0 || len(tab.all()) != 0 {
		t.Fatal("zero table not empty")
	}
	tab.remove(&job{id: "x"})
	if tab.len() != 0 {
		t.Fatal("remove on the zero table changed it")
	}
}
