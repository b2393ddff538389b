package sched

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"pgregory.net/rapid"
)

// fallingAccounts are hand-built accounts that declare WaitingRhoFalls.
type fallingAccounts struct{ *accounts }

func (fallingAccounts) WaitingRhoFalls() bool { return true }

func acct(alloc, fair float64) ledger.Account {
	return ledger.Account{Alloc: ledger.GPUSeconds(alloc), FairShare: ledger.GPUSeconds(fair), Rho: ledger.Ratio(ledger.GPUSeconds(alloc), ledger.GPUSeconds(fair))}
}

func queued1(id string, leases int) Candidate {
	return Candidate{Job: ledger.JobID(id), Tenant: "A", Demand: 1, Submit: t0, Leases: leases}
}

func appended(t *testing.T, q *Queue, acc Accounts, at time.Time, room int) []string {
	t.Helper()
	cs, err := q.Append(nil, acc, at, func(ledger.GPUs) int { return room })
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cs {
		ids = append(ids, string(c.Job))
	}
	slices.Sort(ids)
	return ids
}

// With room for one grant, a group hands the round its two best: every
// job that never ran first, then the lowest ρ_job. Worked by hand: at
// t0+100 s, j1 has ρ 0.1, j2 0.2, j3 0.5, j4 0.9 (all ran); with n1, a
// new job, the two best are n1 and j1.
func TestQueueHandsTheFirstOfEachGroup(t *testing.T) {
	at := t0.Add(100 * time.Second)
	acc := fallingAccounts{newAccounts()}
	for id, a := range map[ledger.JobID]ledger.Account{
		"j1": acct(10, 100), "j2": acct(20, 100), "j3": acct(50, 100), "j4": acct(90, 100), "n1": acct(0, 100),
	} {
		acc.jobs[id] = a
	}
	q := NewQueue(NeverRanFirst())
	for _, c := range []Candidate{queued1("j3", 1), queued1("j1", 2), queued1("j4", 1), queued1("j2", 1)} {
		if err := q.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	if got := appended(t, q, acc, at, 1); !slices.Equal(got, []string{"j1", "j2"}) {
		t.Fatalf("room 1, ran jobs only: %v, want j1 j2", got)
	}
	if err := q.Add(queued1("n1", 0)); err != nil {
		t.Fatal(err)
	}
	if got := appended(t, q, acc, at, 1); !slices.Equal(got, []string{"j1", "n1"}) {
		t.Fatalf("room 1 with a new job: %v, want j1 n1", got)
	}
	if got := appended(t, q, acc, at, 0); !slices.Equal(got, []string{"n1"}) {
		t.Fatalf("room 0: %v, want n1 (the pick its tenant stops at)", got)
	}
	if got := appended(t, q, acc, at, 4); len(got) != 5 {
		t.Fatalf("room 4: %v, want all five", got)
	}
	// 100 s later j2's account is as it was (it waits), but j1 was owed
	// more: now 10/300. The bounds of the others still place them below
	// j1, except j2, whose lower bound 20/200 reaches j1's upper one.
	later := at.Add(100 * time.Second)
	acc.jobs["j1"], acc.jobs["j2"], acc.jobs["j3"], acc.jobs["j4"] = acct(10, 300), acct(20, 100), acct(50, 100), acct(90, 100)
	if got := appended(t, q, acc, later, 1); !slices.Equal(got, []string{"j1", "n1"}) {
		t.Fatalf("later: %v, want j1 n1", got)
	}
	// Without the declaration, every job.
	if got := appended(t, q, acc.accounts, later, 1); len(got) != 5 {
		t.Fatalf("undeclared accounts: %v, want all five", got)
	}
}

// countingAccounts count the job accounts read.
type countingAccounts struct {
	fallingAccounts
	reads int
}

func (c *countingAccounts) JobAccount(id ledger.JobID) (ledger.Account, bool) {
	c.reads++
	return c.fallingAccounts.JobAccount(id)
}

// A round reads only the jobs whose bounds reach the cut. Worked by hand:
// read at t0 with ρ_job 0.1, 0.2, 0.5 and 0.9 (owed 100 GPU·s each), one
// second later a 1-GPU job's ρ_job is at least its Alloc / 101, so with
// room for the single best only j1 (10/101 ≤ 0.1) can be it.
func TestQueueReadsOnlyNearTheCut(t *testing.T) {
	acc := &countingAccounts{fallingAccounts: fallingAccounts{newAccounts()}}
	q := NewQueue(RhoOrder{})
	for i, a := range []ledger.Account{acct(10, 100), acct(20, 100), acct(50, 100), acct(90, 100)} {
		id := ledger.JobID(fmt.Sprint("j", i+1))
		acc.jobs[id] = a
		if err := q.Add(queued1(string(id), 1)); err != nil {
			t.Fatal(err)
		}
	}
	if got := appended(t, q, acc, t0, 0); !slices.Equal(got, []string{"j1"}) || acc.reads != 4 {
		t.Fatalf("first round: %v after %d reads, want j1 after 4", got, acc.reads)
	}
	acc.reads = 0
	acc.jobs["j1"] = acct(10, 101)
	if got := appended(t, q, acc, t0.Add(time.Second), 0); !slices.Equal(got, []string{"j1"}) || acc.reads != 1 {
		t.Fatalf("a second later: %v after %d reads, want j1 after 1", got, acc.reads)
	}
}

// Equal ρ_job is broken by the tie-break (earlier submission), then by id.
func TestQueueBreaksTiesAsTheRound(t *testing.T) {
	acc := fallingAccounts{newAccounts()}
	q := NewQueue(RhoOrder{})
	for i, id := range []string{"z", "y", "x"} { // z submitted first
		c := queued1(id, 1)
		c.Submit = t0.Add(time.Duration(i) * time.Second)
		acc.jobs[c.Job] = acct(10, 100)
		if err := q.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	if got := appended(t, q, acc, t0.Add(time.Minute), 1); !slices.Equal(got, []string{"y", "z"}) {
		t.Fatalf("%v, want the two submitted first, z and y", got)
	}
}

// An unknown job read in one batch (a ledger View) is named in the error.
func TestQueueNamesAnUnknownJob(t *testing.T) {
	l, err := ledger.New(ledger.Config{Capacity: 8, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	q := NewQueue(RhoOrder{})
	for _, id := range []string{"a", "b"} {
		if err := q.Add(queued1(id, 1)); err != nil {
			t.Fatal(err)
		}
	}
	_, err = q.Append(nil, l.View(t0), t0, func(ledger.GPUs) int { return 0 })
	if !errors.Is(err, ErrUnknownJob) || !strings.Contains(err.Error(), `"a"`) && !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("error %v, want ErrUnknownJob naming a or b", err)
	}
}

// fallingAppender is a skewedAppender that declares WaitingRhoFalls.
type fallingAppender struct{ skewedAppender }

func (fallingAppender) WaitingRhoFalls() bool { return true }

// An AppendJobAccounts at fault fails the queue's read as it fails a
// round's: too many or too few accounts, or false after all of them.
func TestQueueAppenderAtFault(t *testing.T) {
	for name, skew := range map[string]func([]ledger.Account) ([]ledger.Account, bool){
		"one too many":  func(a []ledger.Account) ([]ledger.Account, bool) { return append(a, ledger.Account{}), true },
		"one too few":   func(a []ledger.Account) ([]ledger.Account, bool) { return a[:len(a)-1], true },
		"false, all in": func(a []ledger.Account) ([]ledger.Account, bool) { return a, false },
	} {
		acc := fallingAccounts{newAccounts()}
		q := NewQueue(RhoOrder{})
		for _, id := range []string{"a", "b"} {
			acc.jobs[ledger.JobID(id)] = acct(1, 10)
			if err := q.Add(queued1(id, 1)); err != nil {
				t.Fatal(err)
			}
		}
		var ids []ledger.JobID
		faulty := fallingAppender{skewedAppender{accounts: acc.accounts, skew: skew, ids: &ids}}
		if _, err := q.Append(nil, faulty, t0, func(ledger.GPUs) int { return 0 }); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: %v, want ErrInvalidInput", name, err)
		}
	}
}

// The accounts a queue read stand until time moves on or ForgetAccounts
// drops them (after a ledger Reset, which breaks the bound).
func TestQueueForgetAccounts(t *testing.T) {
	acc := fallingAccounts{newAccounts()}
	q := NewQueue(RhoOrder{})
	for i, a := range []ledger.Account{acct(10, 100), acct(20, 100), acct(30, 100)} {
		id := ledger.JobID(fmt.Sprint("j", i))
		acc.jobs[id] = a
		if err := q.Add(queued1(string(id), 1)); err != nil {
			t.Fatal(err)
		}
	}
	if got := appended(t, q, acc, t0, 0); !slices.Equal(got, []string{"j0"}) {
		t.Fatalf("%v, want j0", got)
	}
	acc.jobs["j2"] = acct(0, 100) // as after a Reset: lower than read
	if got := appended(t, q, acc, t0, 0); !slices.Equal(got, []string{"j0"}) {
		t.Fatalf("same instant, accounts kept: %v, want j0", got)
	}
	q.ForgetAccounts()
	if got := appended(t, q, acc, t0, 0); !slices.Equal(got, []string{"j2"}) {
		t.Fatalf("accounts forgotten: %v, want j2", got)
	}
}

// Bad input is refused with a typed error and changes nothing.
func TestQueueRefusesBadInput(t *testing.T) {
	q := NewQueue(RhoOrder{})
	if err := q.Add(queued1("a", 0)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c    Candidate
		want error
	}{
		{queued1("a", 1), ErrDuplicateJob},
		{Candidate{Job: "b", Tenant: "A", Demand: 1, Running: true}, ErrInvalidCandidate},
		{Candidate{Job: "", Tenant: "A", Demand: 1}, ErrInvalidCandidate},
		{Candidate{Job: "b", Tenant: "", Demand: 1}, ErrInvalidCandidate},
		{Candidate{Job: "b", Tenant: "A", Demand: 0}, ErrInvalidCandidate},
	} {
		if err := q.Add(tc.c); !errors.Is(err, tc.want) {
			t.Errorf("Add(%+v) = %v, want %v", tc.c, err, tc.want)
		}
	}
	if q.Len() != 1 {
		t.Fatalf("Len %d after refused adds, want 1", q.Len())
	}
	acc := fallingAccounts{newAccounts()}
	if _, err := q.Append(nil, acc, t0, func(ledger.GPUs) int { return 0 }); err != nil {
		t.Fatalf("a group no larger than its cut reads nothing: %v", err)
	}
	if err := q.Add(queued1("b", 1)); err != nil {
		t.Fatal(err)
	}
	dst := []Candidate{queued1("x", 0)}
	got, err := q.Append(dst, acc, t0, func(ledger.GPUs) int { return 0 })
	if !errors.Is(err, ErrUnknownJob) || len(got) != 1 {
		t.Fatalf("unknown accounts: %v, %d candidates, want ErrUnknownJob and dst as it was", err, len(got))
	}
	if _, err := q.Append(nil, acc, t0.Add(-time.Second), func(ledger.GPUs) int { return 9 }); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("a round before the last: %v, want ErrInvalidInput", err)
	}
	if !q.Remove("a") || q.Remove("a") || q.Len() != 1 {
		t.Fatalf("Remove: Len %d", q.Len())
	}
}

// TestPropertyQueueRoundsMatchFullRounds runs rounds over random tenants
// and jobs on a real ledger and cluster, time moving on between them, and
// gives each round twice: over every waiting candidate, and over what a
// Queue kept across the rounds hands it, bounded by the cluster's Room.
// Grants and releases must be the same, for each shipped reward with its
// declared order, with and without backfill and pre-credit.
func TestPropertyQueueRoundsMatchFullRounds(t *testing.T) {
	type rewardOrder struct {
		name   string
		reward Reward
		order  RhoOrder
	}
	rewards := []rewardOrder{
		{"negrho", NegJobRho, RhoOrder{}},
		{"newfirst", NewJobFirst, NeverRanFirst()},
		{"smallest", SmallestNewFirst, NeverRanFirst()},
	}
	rapid.Check(t, func(t *rapid.T) {
		ro := rapid.SampledFrom(rewards).Draw(t, "reward")
		opts := Options{Reward: ro.reward, NoBackfill: rapid.Bool().Draw(t, "noBackfill")}
		if rapid.Bool().Draw(t, "noCredit") {
			opts.PreCredit = NoCredit
		}
		mode := rapid.SampledFrom([]placement.Mode{placement.Strict, placement.FewestNodes, placement.FirstFit}).Draw(t, "mode")
		gpn := rapid.SampledFrom([]int{2, 4, 8}).Draw(t, "gpusPerNode")
		nodes := rapid.IntRange(1, 3).Draw(t, "nodes")
		ns := make([]placement.Node, nodes)
		for i := range ns {
			ns[i] = placement.Node{ID: fmt.Sprintf("n%d", i), GPUs: gpn}
		}
		cl, err := placement.NewCluster(ns, placement.WithMode(mode))
		if err != nil {
			t.Fatal(err)
		}
		l, err := ledger.New(ledger.Config{
			Mode:     rapid.SampledFrom([]ledger.Mode{ledger.QuotaShare, ledger.DemandAware}).Draw(t, "ledgerMode"),
			Capacity: ledger.GPUs(nodes * gpn), Start: t0,
		})
		if err != nil {
			t.Fatal(err)
		}
		tenants := []ledger.TenantID{"A", "B", "C"}[:rapid.IntRange(1, 3).Draw(t, "tenants")]
		for _, tn := range tenants {
			if err := l.AddTenant(t0, tn, float64(rapid.IntRange(1, 3).Draw(t, "weight"))); err != nil {
				t.Fatal(err)
			}
		}
		q := NewQueue(ro.order)
		waiting := map[ledger.JobID]Candidate{}
		running := map[ledger.JobID]Candidate{}
		now := t0
		next := 0
		for round := range rapid.IntRange(1, 25).Draw(t, "rounds") {
			now = now.Add(time.Duration(rapid.IntRange(0, 400).Draw(t, "step")) * time.Second)
			for range rapid.IntRange(0, 6).Draw(t, "submits") {
				c := Candidate{
					Job:    ledger.JobID(fmt.Sprintf("j%03d", next)),
					Tenant: rapid.SampledFrom(tenants).Draw(t, "tenant"),
					Demand: ledger.GPUs(rapid.IntRange(1, gpn+1).Draw(t, "demand")),
					Submit: now,
				}
				next++
				if err := l.Submit(now, c.Job, c.Tenant, c.Demand, 1); err != nil {
					t.Fatal(err)
				}
				waiting[c.Job] = c
				if err := q.Add(c); err != nil {
					t.Fatal(err)
				}
			}
			// Some running jobs finish; the others' leases end now.
			for _, id := range slices.Sorted(maps.Keys(running)) {
				if rapid.IntRange(0, 4).Draw(t, "finish") > 0 {
					continue
				}
				if err := l.Finish(now, id, ledger.Completed); err != nil {
					t.Fatal(err)
				}
				if _, err := cl.Release(string(id)); err != nil {
					t.Fatal(err)
				}
				delete(running, id)
			}
			if err := l.Advance(now); err != nil {
				t.Fatal(err)
			}
			acc := l.View(now)
			var all, expiring []Candidate
			var expIDs []string
			for _, id := range slices.Sorted(maps.Keys(running)) {
				c := running[id]
				expiring = append(expiring, c)
				expIDs = append(expIDs, string(id))
			}
			for _, id := range slices.Sorted(maps.Keys(waiting)) {
				all = append(all, waiting[id])
			}
			var room placement.Room
			if err := cl.RoomWithout(&room, expIDs); err != nil {
				t.Fatal(err)
			}
			short, err := q.Append(nil, acc, now, func(d ledger.GPUs) int { return room.Gangs(int(d)) })
			if err != nil {
				t.Fatal(err)
			}
			full := cl.Clone()
			want, err := Round(Input{Accounts: acc, Candidates: append(all, expiring...), Lease: lease, Placer: full}, opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Round(Input{Accounts: acc, Candidates: append(short, expiring...), Lease: lease, Placer: cl.Clone()}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := decisions(got), decisions(want); !slices.Equal(g, w) {
				t.Fatalf("round %d at %v: over the queue's %d of %d waiting: %v, over all: %v", round, now.Sub(t0), len(short), len(all), g, w)
			}
			// Carry the full round's outcome into the ledger, the cluster
			// and the queue.
			var stop, start []ledger.JobID
			for _, r := range want.Released {
				stop = append(stop, r.Job)
				c := running[r.Job]
				c.Running, c.Placement = false, placement.Placement{}
				delete(running, r.Job)
				waiting[r.Job] = c
				if err := q.Add(c); err != nil {
					t.Fatal(err)
				}
			}
			for _, g := range want.Grants {
				if g.Kind == New {
					start = append(start, g.Job)
					c := waiting[g.Job]
					delete(waiting, g.Job)
					q.Remove(g.Job)
					c.Running, c.Placement = true, g.Placement
					running[g.Job] = c
				}
				c := running[g.Job]
				c.Leases++
				running[g.Job] = c
			}
			if err := l.StopAll(now, stop); err != nil {
				t.Fatal(err)
			}
			if err := l.StartAll(now, start); err != nil {
				t.Fatal(err)
			}
			cl = full
		}
	})
}

// decisions lists a result's grants and releases as text, in order.
func decisions(r Result) []string {
	var out []string
	for _, g := range r.Grants {
		out = append(out, fmt.Sprintf("%s %v %v", g.Job, g.Kind, g.Placement))
	}
	for _, w := range r.Released {
		out = append(out, "release "+string(w.Job))
	}
	return out
}

// nth selects what sorting would put at k, ties, infinities and all.
func TestPropertyNthIsTheSortedElement(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		xs := rapid.SliceOfN(rapid.SampledFrom([]float64{0, 0.5, 1, 1, 2, math.Inf(1)}), 1, 40).Draw(t, "xs")
		k := rapid.IntRange(0, len(xs)-1).Draw(t, "k")
		want := slices.Sorted(slices.Values(xs))[k]
		if got := nth(slices.Clone(xs), k); got != want {
			t.Fatalf("nth(%v, %d) = %v, want %v", xs, k, got, want)
		}
	})
}
