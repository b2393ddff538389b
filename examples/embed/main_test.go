package main

import (
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"pgregory.net/rapid"
)

// want is the whole output of the example. At 13:00 the maintenance cut
// stops v1, the job of the best-served team (vision, ρ 1.6); at 15:00 the
// least-served team (speech, ρ 0.4) goes first; after the restart the
// restored ledger carries on where the written one stopped.
const want = `
A 16-GPU cluster, teams nlp (weight 1), speech (weight 1), vision (weight 2), day 2026-03-02 (times UTC)

08:00  v1     submitted by vision: 8 GPUs for 6h
08:00  v2     submitted by vision: 8 GPUs for 3h
08:00  v1     starts on 8 GPUs (vision ρ 1.0000, job ρ 1.0000)
08:00  v2     starts on 8 GPUs (vision ρ 1.0000, job ρ 1.0000)
09:00  n1     submitted by nlp: 8 GPUs for 4h
09:30  s1     submitted by speech: 4 GPUs for 2h
10:00  n2     submitted by nlp: 4 GPUs for 5h
11:00  v2     finishes,  8 GPUs free
11:00  v3     submitted by vision: 4 GPUs for 4h
11:00  n1     starts on 8 GPUs (nlp ρ 0.0000, job ρ 0.0000)
13:00  cluster now 12 GPUs
13:00  v1     stopped (vision ρ 1.6000), 1h of work left
13:00  s1     starts on 4 GPUs (speech ρ 0.0000, job ρ 0.0000)
14:00  s2     submitted by speech: 8 GPUs for 6h
15:00  n1     finishes,  8 GPUs free
15:00  s1     finishes, 12 GPUs free
15:00  cluster now 16 GPUs
15:00  s2     starts on 8 GPUs (speech ρ 0.4000, job ρ 0.0000)
15:00  v3     starts on 4 GPUs (vision ρ 1.2308, job ρ 0.0000)
15:00  n2     starts on 4 GPUs (nlp ρ 1.4545, job ρ 0.0000)
16:00  n3     submitted by nlp: 8 GPUs for 5h
19:00  v3     finishes,  4 GPUs free
20:00  n2     finishes,  8 GPUs free
20:00  v4     submitted by vision: 8 GPUs for 8h
20:00  v1     starts on 8 GPUs (vision ρ 0.8696, job ρ 0.8000)
21:00  v1     finishes,  8 GPUs free
21:00  s2     finishes, 16 GPUs free
21:00  v4     starts on 8 GPUs (vision ρ 0.8800, job ρ 0.0000)
21:00  n3     starts on 8 GPUs (nlp ρ 1.1304, job ρ 0.0000)

Report 2026-03-02 00:00 to 2026-03-03 00:00
  team     weight used GPU-h owed GPU-h        ρ
  nlp           1       76.0       58.0   1.3103
  speech        1       56.0       44.0   1.2727
  vision        2      112.0      124.0   0.9032
  cluster: 376.0 GPU-h capacity, 244.0 used, 132.0 idle

snapshot written and read back at +1d 00:00: accounts identical

+1d 02:00  n3     finishes,  8 GPUs free
+1d 05:00  v4     finishes, 16 GPUs free

Report 2026-03-02 00:00 to 2026-03-03 05:00
  team     weight used GPU-h owed GPU-h        ρ
  nlp           1       92.0       66.0   1.3939
  speech        1       56.0       44.0   1.2727
  vision        2      152.0      164.0   0.9268
  cluster: 456.0 GPU-h capacity, 300.0 used, 156.0 idle
`

func TestOutput(t *testing.T) {
	var b strings.Builder
	if err := run(&b, filepath.Join(t.TempDir(), "ledger.snap")); err != nil {
		t.Fatal(err)
	}
	w := strings.TrimPrefix(want, "\n")
	if got := b.String(); got != w {
		t.Fatalf("output changed:\n%s\nwant:\n%s", got, w)
	}
}

// TestScriptedTally: over the scripted day and after the drain, the GPU-hours
// the ledger says the teams used add up to what the loop itself scheduled.
func TestScriptedTally(t *testing.T) {
	s, err := NewScheduler(day0, 16, Teams(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	midnight := day0.Add(24 * time.Hour)
	if err := s.Run(Script(), midnight); err != nil {
		t.Fatal(err)
	}
	verifyTally(t, s, midnight)
	end, err := s.Drain()
	if err != nil {
		t.Fatal(err)
	}
	verifyTally(t, s, end)
	if got, want := s.Scheduled(end)/3600, ledger.GPUSeconds(300); got != want {
		t.Fatalf("scheduled %v GPU-h, want %v (Σ gang × work of the script)", got, want)
	}
}

// TestTallyProperty: for any script of whole-minute submissions and capacity
// changes, Σ used GPU-hours in the ledger equals what the loop scheduled, the
// cluster account agrees, the ledger's invariants hold, and the pool is never
// over-committed.
func TestTallyProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		teams := Teams()
		n := rapid.IntRange(0, 12).Draw(t, "events")
		var script []Event
		for i := range n {
			at := time.Duration(rapid.IntRange(0, 24*60-1).Draw(t, "minute")) * time.Minute
			if rapid.IntRange(0, 4).Draw(t, "kind") == 0 {
				script = append(script, Event{At: at, Capacity: ledger.GPUs(rapid.IntRange(0, 24).Draw(t, "capacity"))})
				continue
			}
			script = append(script, Event{
				At:   at,
				Job:  ledger.JobID("j" + string(rune('a'+i))),
				Team: rapid.SampledFrom(teams).Draw(t, "team").Name,
				GPUs: ledger.GPUs(rapid.SampledFrom([]int{1, 2, 4, 8, 16}).Draw(t, "gpus")),
				Work: time.Duration(rapid.IntRange(1, 20*60).Draw(t, "work")) * time.Minute,
			})
		}
		s, err := NewScheduler(day0, 16, teams, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		midnight := day0.Add(24 * time.Hour)
		if err := s.Run(script, midnight); err != nil {
			t.Fatal(err)
		}
		verifyTally(t, s, midnight)
		end, err := s.Drain()
		if err != nil {
			t.Fatal(err)
		}
		verifyTally(t, s, end)
	})
}

// verifyTally checks the ledger against the scheduler's own tally at at.
func verifyTally(t interface {
	Helper()
	Fatal(...any)
	Fatalf(string, ...any)
}, s *Scheduler, at time.Time) {
	t.Helper()
	if err := s.Ledger.Check(); err != nil {
		t.Fatal(err)
	}
	if s.used > s.capacity || s.used < 0 {
		t.Fatalf("pool over-committed: %d used of %d", s.used, s.capacity)
	}
	var used ledger.GPUSeconds
	for _, team := range s.teams {
		a, err := s.Ledger.TenantAccount(team.Name, day0, at)
		if err != nil {
			t.Fatal(err)
		}
		used += a.Alloc
	}
	c, err := s.Ledger.ClusterAccount(day0, at)
	if err != nil {
		t.Fatal(err)
	}
	sched := s.Scheduled(at)
	if !near(used, sched) || !near(c.Allocated, sched) {
		t.Fatalf("at %s: teams used %v GPU·s, cluster allocated %v, the loop scheduled %v", at, used, c.Allocated, sched)
	}
}

func near(a, b ledger.GPUSeconds) bool {
	return math.Abs(float64(a-b)) <= 1e-9*math.Max(1, math.Abs(float64(b)))
}

// TestRestartChangesNothing: swapping the ledger for the one read back from
// its snapshot at midnight gives the same final accounts as never stopping.
func TestRestartChangesNothing(t *testing.T) {
	midnight := day0.Add(24 * time.Hour)
	var reports [2]string
	for i, restart := range []bool{false, true} {
		s, err := NewScheduler(day0, 16, Teams(), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(Script(), midnight); err != nil {
			t.Fatal(err)
		}
		if restart {
			path := filepath.Join(t.TempDir(), "ledger.snap")
			if err := s.Ledger.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			if s.Ledger, err = ledger.ReadFile(path); err != nil {
				t.Fatal(err)
			}
		}
		end, err := s.Drain()
		if err != nil {
			t.Fatal(err)
		}
		verifyTally(t, s, end)
		reports[i] = s.Report(day0, end)
	}
	if reports[0] != reports[1] {
		t.Fatalf("restart changed the accounts:\n%s\nwithout restart:\n%s", reports[1], reports[0])
	}
}
