package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"pgregory.net/rapid"
)

// want is the whole output of the example. interns waited since 03:00 with
// nothing (ρ 0) and is served first, twice: after i0 its pre-credited ρ is
// 0.33, still the lowest. prod (ρ 1) comes next; its 8-GPU gang p1 does not
// fit in the 4 GPUs left, so p2 takes them. research, which used twice what
// it was owed, gets nothing this cycle.
const want = `
One scheduling cycle at 06:00 on 16 free GPUs (plugin "astraea", pre-credit 1h0m0s per allocation)

Accounts at the session's open (Eq. 8, GPU-hours since 00:00):
  queue research weight 1: used  48.0 of  24.0 owed, ρ 2.0000
  queue prod     weight 2: used  48.0 of  48.0 owed, ρ 1.0000
  queue interns  weight 1: used   0.0 of  12.0 owed, ρ 0.0000

The cycle (first queue in QueueOrder, its first job in JobOrder):
  1. queue interns  (ρ 0.0000) → job i0 (ρ 0.0000, 4 GPUs): allocated, 12 GPUs free
  2. queue interns  (ρ 0.3333) → job i1 (ρ 1.0000, 8 GPUs): allocated, 4 GPUs free
  3. queue prod     (ρ 1.0000) → job p1 (ρ 0.0000, 8 GPUs): gang of 8 does not fit in 4 free GPUs, skipped
  4. queue prod     (ρ 1.0000) → job p2 (ρ 1.0000, 4 GPUs): allocated, 0 GPUs free
  5. queue research (ρ 2.0000) → job r1 (ρ 0.0000, 8 GPUs): gang of 8 does not fit in 0 free GPUs, skipped
  6. queue research (ρ 2.0000) → job r2 (ρ 1.0000, 4 GPUs): gang of 4 does not fit in 0 free GPUs, skipped

Allocation order: [i0 i1 p2]
`

func TestOutput(t *testing.T) {
	var b strings.Builder
	if err := run(&b); err != nil {
		t.Fatal(err)
	}
	w := strings.TrimPrefix(want, "\n")
	if got := b.String(); got != w {
		t.Fatalf("output changed:\n%s\nwant:\n%s", got, w)
	}
}

// world is a random cluster state built through the plugin's handlers.
type world struct {
	plugin *Plugin
	queues []Queue
	jobs   []Job // every job the scheduler knows, plus one the ledger does not
	now    time.Time
}

// drawWorld builds a random history: queues with unique UIDs (creation
// times may tie), jobs submitted, started, stopped and finished at
// non-decreasing whole-minute times on a 16-GPU cluster, then a session
// opened with a few allocations (so pre-credits are in play).
func drawWorld(t *rapid.T) *world {
	l, err := ledger.New(ledger.Config{Mode: rapid.SampledFrom([]ledger.Mode{ledger.DemandAware, ledger.QuotaShare}).Draw(t, "mode"), Capacity: 16, Start: day0})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{plugin: NewPlugin(l, time.Duration(rapid.IntRange(0, 120).Draw(t, "horizon minutes"))*time.Minute)}
	p := w.plugin
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	nq := rapid.IntRange(1, 4).Draw(t, "queues")
	for i := range nq {
		q := Queue{
			UID:     fmt.Sprintf("u%d", i),
			Name:    ledger.TenantID(fmt.Sprintf("q%d", i)),
			Weight:  float64(rapid.IntRange(1, 3).Draw(t, "weight")),
			Created: day0.Add(time.Duration(rapid.IntRange(0, 2).Draw(t, "queue created")) * time.Minute),
		}
		must(p.OnQueueAdd(day0, q))
		w.queues = append(w.queues, q)
	}
	now := day0
	free := ledger.GPUs(16)
	running := map[ledger.JobID]bool{}
	done := map[ledger.JobID]bool{}
	steps := rapid.IntRange(0, 25).Draw(t, "steps")
	for range steps {
		now = now.Add(time.Duration(rapid.IntRange(0, 90).Draw(t, "gap minutes")) * time.Minute)
		switch rapid.IntRange(0, 3).Draw(t, "action") {
		case 0: // a new job
			j := Job{
				UID:     ledger.JobID(fmt.Sprintf("j%d", len(w.jobs))),
				Queue:   rapid.SampledFrom(w.queues).Draw(t, "queue").Name,
				GPUs:    ledger.GPUs(rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(t, "gpus")),
				Created: now,
			}
			must(p.OnJobAdd(now, j))
			w.jobs = append(w.jobs, j)
		case 1: // start a pending job that fits
			for _, j := range w.jobs {
				if !running[j.UID] && !done[j.UID] && j.GPUs <= free {
					must(p.OnAllocate(now, j))
					running[j.UID], free = true, free-j.GPUs
					break
				}
			}
		case 2: // stop a running job
			for _, j := range w.jobs {
				if running[j.UID] {
					must(p.OnDeallocate(now, j))
					running[j.UID], free = false, free+j.GPUs
					break
				}
			}
		case 3: // finish an active job
			if len(w.jobs) > 0 {
				j := rapid.SampledFrom(w.jobs).Draw(t, "finish")
				if !done[j.UID] {
					must(p.OnJobDone(now, j, ledger.Completed))
					if running[j.UID] {
						free += j.GPUs
					}
					running[j.UID], done[j.UID] = false, true
				}
			}
		}
		must(l.Check())
	}
	w.now = now.Add(time.Duration(rapid.IntRange(0, 60).Draw(t, "to session")) * time.Minute)
	must(p.OnSessionOpen(w.now))
	for _, j := range w.jobs {
		if !running[j.UID] && !done[j.UID] && j.GPUs <= free && rapid.Bool().Draw(t, "allocate in session") {
			must(p.OnAllocate(w.now, j))
			running[j.UID], free = true, free-j.GPUs
		}
	}
	w.jobs = append(w.jobs, Job{UID: "unknown", Queue: w.queues[0].Name, GPUs: 1, Created: day0})
	return w
}

// TestOrdersAreTotal: QueueOrder and JobOrder answer -1, 0 or +1; swapping
// the arguments negates the answer; 0 only for the same UID; sorting by
// them gives a sequence whose every pair is in order (so the orders are
// transitive); and asking again gives the same answers.
func TestOrdersAreTotal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := drawWorld(t)
		p := w.plugin
		checkOrder(t, "QueueOrder", w.queues, p.QueueOrder, func(q Queue) string { return q.UID })
		checkOrder(t, "JobOrder", w.jobs, p.JobOrder, func(j Job) string { return string(j.UID) })
	})
}

func checkOrder[T any](t *rapid.T, name string, xs []T, order func(a, b T) int, uid func(T) string) {
	for _, a := range xs {
		for _, b := range xs {
			ab, ba := order(a, b), order(b, a)
			if ab < -1 || ab > 1 {
				t.Fatalf("%s(%s, %s) = %d, want -1, 0 or +1", name, uid(a), uid(b), ab)
			}
			if ab != -ba {
				t.Fatalf("%s not antisymmetric: (%s, %s) = %d, reversed %d", name, uid(a), uid(b), ab, ba)
			}
			if (ab == 0) != (uid(a) == uid(b)) {
				t.Fatalf("%s(%s, %s) = %d: 0 must mean the same UID", name, uid(a), uid(b), ab)
			}
			if again := order(a, b); again != ab {
				t.Fatalf("%s(%s, %s) = %d, then %d", name, uid(a), uid(b), ab, again)
			}
		}
	}
	sorted := slices.Clone(xs)
	slices.SortFunc(sorted, order)
	for i := range sorted {
		for k := i + 1; k < len(sorted); k++ {
			if order(sorted[i], sorted[k]) >= 0 {
				t.Fatalf("%s not transitive: %s sorted before %s", name, uid(sorted[i]), uid(sorted[k]))
			}
		}
	}
}

// TestCycleDeterministic: the same history gives the same cycle, step for
// step, whatever order the pending jobs and queues are handed over in.
func TestCycleDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		perm := func(n int, label string) []int {
			idx := make([]int, n)
			for i := range idx {
				idx[i] = i
			}
			for i := n - 1; i > 0; i-- {
				k := rapid.IntRange(0, i).Draw(t, label)
				idx[i], idx[k] = idx[k], idx[i]
			}
			return idx
		}
		var runs [2][]Step
		for r := range runs {
			l, err := ledger.New(ledger.Config{Capacity: 16, Start: day0})
			if err != nil {
				t.Fatal(err)
			}
			p := NewPlugin(l, time.Hour)
			pending, err := Morning(p)
			if err != nil {
				t.Fatal(err)
			}
			queues := Queues()
			if r == 1 {
				var pj []Job
				for _, i := range perm(len(pending), "job perm") {
					pj = append(pj, pending[i])
				}
				var pq []Queue
				for _, i := range perm(len(queues), "queue perm") {
					pq = append(pq, queues[i])
				}
				pending, queues = pj, pq
			}
			runs[r], err = Cycle(p, at(6), queues, pending, 16)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Check(); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(runs[0], runs[1]) {
			t.Fatalf("cycles differ:\n%v\n%v", runs[0], runs[1])
		}
	})
}

// TestCycleNeverOvercommits: Σ allocated gangs never exceed the free GPUs,
// every allocated job is running in the ledger afterwards, and a skipped job
// is one whose gang did not fit at its turn.
func TestCycleNeverOvercommits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := drawWorld(t)
		p := w.plugin
		p.OnSessionClose()
		var pending []Job
		for _, j := range w.jobs {
			if info, ok := p.Ledger().Job(j.UID); ok && info.Active && !info.Running {
				pending = append(pending, j)
			}
		}
		free := ledger.GPUs(rapid.IntRange(0, 16).Draw(t, "free"))
		steps, err := Cycle(p, w.now, w.queues, pending, free)
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) != len(pending) {
			t.Fatalf("%d steps for %d pending jobs", len(steps), len(pending))
		}
		left := free
		for _, st := range steps {
			if st.Allocated {
				left -= st.Job.GPUs
				if info, _ := p.Ledger().Job(st.Job.UID); !info.Running {
					t.Fatalf("%s allocated but not running in the ledger", st.Job.UID)
				}
			} else if st.Job.GPUs <= left {
				t.Fatalf("%s skipped with %d GPUs free for a gang of %d", st.Job.UID, left, st.Job.GPUs)
			}
			if left < 0 || st.Free != left {
				t.Fatalf("free GPUs %d after %s, want %d ≥ 0", st.Free, st.Job.UID, left)
			}
		}
		if err := p.Ledger().Check(); err != nil {
			t.Fatal(err)
		}
	})
}
