package ledger

import (
	"fmt"
	"slices"
	"testing"

	"github.com/astraea-sched/astraea/internal/idhash"
	"pgregory.net/rapid"
)

// TestJobTableAgainstMap runs random puts, replacements and removals on a
// jobTable and a Go map side by side, checking the table's structure after
// every step. Ids come from a small set so that records are replaced and
// removed often; tables are drawn tiny as well as full-size, so that
// directories double, tables split (also after growing), probe runs
// collide, wrap around and are shifted back by removals, and, with the
// directory held to one entry, tables take the growth fallback.
func TestJobTableAgainstMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tab := jobTable{
			size:     rapid.SampledFrom([]int{2, 4, 8, tabSlots}).Draw(t, "size"),
			perEntry: rapid.SampledFrom([]int{1, 4, 1 << 30}).Draw(t, "perEntry"),
		}
		want := map[JobID]*job{}
		ids := rapid.IntRange(1, 300).Draw(t, "ids")
		id := func() JobID { return JobID(fmt.Sprintf("j%d", rapid.IntRange(0, ids-1).Draw(t, "id"))) }
		for range rapid.IntRange(0, 400).Draw(t, "ops") {
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0, 1:
				j := &job{id: id()}
				tab.put(j)
				want[j.id] = j
			case 2:
				k := id()
				old := want[k]
				if old == nil || rapid.Bool().Draw(t, "stale") {
					tab.remove(&job{id: k}) // not the indexed record: no change
					continue
				}
				tab.remove(old)
				delete(want, k)
			case 3:
				k := id()
				if got := tab.get(k); got != want[k] {
					t.Fatalf("get(%q) = %p, want %p", k, got, want[k])
				}
				// a batch of ids finds what get finds, for each
				batch := make([]JobID, rapid.IntRange(0, 40).Draw(t, "batch"))
				for i := range batch {
					batch[i] = id()
				}
				js, hs := make([]*job, len(batch)+1), make([]uint64, len(batch))
				sentinel := &job{}
				js[len(batch)] = sentinel
				tab.getBatch(batch, js, hs)
				for i, k := range batch {
					if js[i] != want[k] {
						t.Fatalf("getBatch: %q found %p, want %p", k, js[i], want[k])
					}
				}
				if js[len(batch)] != sentinel {
					t.Fatal("getBatch wrote beyond the batch")
				}
			}
			if err := tab.check(); err != nil {
				t.Fatal(err)
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

// TestJobTableScale fills full-size tables with 100k ids, so that the
// directory doubles many times, then removes and re-adds a scattered third,
// and checks every record and the structure; the directory stays within
// its bound of one entry per recordsPerEntry records.
func TestJobTableScale(t *testing.T) {
	var tab jobTable
	jobs := make([]*job, 100_000)
	for i := range jobs {
		jobs[i] = &job{id: JobID(fmt.Sprintf("big/%06d", i))}
		tab.put(jobs[i])
	}
	for i := 0; i < len(jobs); i += 3 {
		tab.remove(jobs[i])
	}
	if tab.len() != len(jobs)-(len(jobs)+2)/3 {
		t.Fatalf("len %d after removing a third", tab.len())
	}
	for i := 0; i < len(jobs); i += 3 {
		if tab.get(jobs[i].id) != nil {
			t.Fatalf("%q still found after its removal", jobs[i].id)
		}
		tab.put(jobs[i])
	}
	for _, j := range jobs {
		if tab.get(j.id) != j {
			t.Fatalf("%q lost", j.id)
		}
	}
	if err := tab.check(); err != nil {
		t.Fatal(err)
	}
	if len(tab.dir) > 2*len(jobs)/recordsPerEntry {
		t.Fatalf("directory of %d entries for %d records", len(tab.dir), len(jobs))
	}
}

// check verifies the table's structure: each directory run points to one
// table no deeper than the directory, each record sits in the table its
// hash selects and is found by a lookup, counts match, and every table has
// an empty slot.
func (t *jobTable) check() error {
	n := 0
	for i := 0; i < len(t.dir); {
		tb := t.dir[i]
		if tb.depth > t.depth {
			return fmt.Errorf("table of depth %d under a directory of depth %d", tb.depth, t.depth)
		}
		span := 1 << (t.depth - tb.depth)
		if i%span != 0 {
			return fmt.Errorf("table of depth %d starts at entry %d", tb.depth, i)
		}
		for k := range span {
			if t.dir[i+k] != tb {
				return fmt.Errorf("entries %d..%d split between tables", i, i+span-1)
			}
		}
		m := 0
		for _, s := range tb.slots {
			if s.j == nil {
				continue
			}
			m++
			if s.h != idhash.String(string(s.j.id)) || t.tab(s.h) != tb || tb.find(s.h, s.j.id).j != s.j {
				return fmt.Errorf("record %q misplaced", s.j.id)
			}
		}
		if m != tb.n || m >= len(tb.slots) {
			return fmt.Errorf("table holds %d records, counts %d, has %d slots", m, tb.n, len(tb.slots))
		}
		n += m
		i += span
	}
	if n != t.n {
		return fmt.Errorf("tables hold %d records, table counts %d", n, t.n)
	}
	return nil
}

// TestJobTableZero: the zero table answers lookups and removals.
func TestJobTableZero(t *testing.T) {
	var tab jobTable
	if tab.get("x") != nil || tab.len() != 0 || len(tab.all()) != 0 {
		t.Fatal("zero table not empty")
	}
	js := []*job{{}, {}}
	if tab.getBatch([]JobID{"x"}, js, make([]uint64, 1)); js[0] != nil || js[1] == nil {
		t.Fatalf("getBatch on the zero table: %v", js)
	}
	tab.remove(&job{id: "x"})
	if tab.len() != 0 {
		t.Fatal("remove on the zero table changed it")
	}
}
