package sched_test

import (
	"fmt"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/sched"
)

// table is a hand-built accounting: any type with these two lookups can feed
// a round (ledger.View is the usual one).
type table struct {
	tenants map[ledger.TenantID]ledger.Account
	jobs    map[ledger.JobID]ledger.Account
}

func (t table) TenantAccount(id ledger.TenantID) (ledger.Account, bool) {
	a, ok := t.tenants[id]
	return a, ok
}

func (t table) JobAccount(id ledger.JobID) (ledger.Account, bool) {
	a, ok := t.jobs[id]
	return a, ok
}

func acct(alloc, fair ledger.GPUSeconds) ledger.Account {
	return ledger.Account{Alloc: alloc, FairShare: fair, Rho: ledger.Ratio(alloc, fair)}
}

// The paper's worked example (section 11): A is owed more than B, so A is
// served first, twice; B1 needs 8 GPUs and only 4 are left.
func ExampleRound() {
	accounts := table{
		tenants: map[ledger.TenantID]ledger.Account{"A": acct(54000, 72000), "B": acct(72000, 72000)},
		jobs:    map[ledger.JobID]ledger.Account{"A1": acct(500, 1000), "A2": acct(800, 1000), "B1": acct(400, 1000)},
	}
	cluster, _ := placement.NewCluster([]placement.Node{{ID: "node-1", GPUs: 8}, {ID: "node-2", GPUs: 8}})
	res, err := sched.Round(sched.Input{
		Accounts: accounts,
		Lease:    900 * time.Second,
		Placer:   cluster,
		Candidates: []sched.Candidate{
			{Job: "A1", Tenant: "A", Demand: 8},
			{Job: "A2", Tenant: "A", Demand: 4},
			{Job: "B1", Tenant: "B", Demand: 8},
		},
	}, sched.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, g := range res.Grants {
		fmt.Printf("%s on %v: ρ_%s %v → %v\n", g.Job, g.Placement.Slots, g.Tenant, g.TenantRhoBefore, g.TenantRhoAfter)
	}
	why, _ := res.Why("B1")
	fmt.Println("B1 waits:", why)
	// Output:
	// A1 on [{node-1 [0 1 2 3 4 5 6 7]}]: ρ_A 0.7500 → 0.8500
	// A2 on [{node-2 [0 1 2 3]}]: ρ_A 0.8500 → 0.9000
	// B1 waits: does not fit: needs 8 GPUs, largest free block 4 (4 free in total)
}

// preemptionRound is a round on one node of 8 GPUs held by tenant A's
// job "old", whose lease ends, with tenant B's new job "new" waiting for
// them; B has received nothing yet.
func preemptionRound() (*placement.Cluster, sched.Input) {
	cluster, _ := placement.NewCluster([]placement.Node{{ID: "node-1", GPUs: 8}})
	old := placement.Placement{Slots: []placement.Slot{{Node: "node-1", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}}}
	_ = cluster.Allocate("old", old) // running since the last round
	accounts := table{
		tenants: map[ledger.TenantID]ledger.Account{"A": acct(7200, 7200), "B": acct(0, 7200)},
		jobs:    map[ledger.JobID]ledger.Account{"old": acct(7200, 7200), "new": acct(0, 0)},
	}
	return cluster, sched.Input{
		Accounts: accounts,
		Lease:    900 * time.Second,
		Placer:   cluster,
		Candidates: []sched.Candidate{
			{Job: "old", Tenant: "A", Demand: 8, Running: true, Placement: old, Leases: 1},
			{Job: "new", Tenant: "B", Demand: 8},
		},
	}
}

// A running job whose lease ends is a candidate too: selected again, it is
// renewed on exactly its GPUs; here the lower-ρ tenant's new job needs them,
// so the expiring job is preempted and must be checkpointed.
func ExampleRound_preemption() {
	_, in := preemptionRound()
	res, _ := sched.Round(in, sched.Options{Reward: sched.NewJobFirst})
	g := res.Grants[0]
	fmt.Printf("%s gets a %s lease, preempting %v\n", g.Job, g.Kind, g.Preempts)
	for _, r := range res.Released {
		fmt.Println("release", r.Job, "for", r.By)
	}
	// Output:
	// new gets a new lease, preempting [old]
	// release old for new
}

// Plan decides the round of ExampleRound_preemption on the live cluster
// and leaves the cluster as it was, for a scheduler that applies the
// decisions itself: after the plan the old job still holds its GPUs.
func ExampleRounder_Plan() {
	cluster, in := preemptionRound()
	var x sched.Rounder
	res, err := x.Plan(in, sched.Options{Reward: sched.NewJobFirst})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, g := range res.Grants {
		fmt.Printf("plan: %s on %v, preempting %v\n", g.Job, g.Placement.Slots, g.Preempts)
	}
	held, _ := cluster.Allocation("old")
	fmt.Println("old still holds", held.Slots, "until the plan is applied")
	// Output:
	// plan: new on [{node-1 [0 1 2 3 4 5 6 7]}], preempting [old]
	// old still holds [{node-1 [0 1 2 3 4 5 6 7]}] until the plan is applied
}

// A scheduler that runs a round every few seconds keeps one Rounder, whose
// working memory serves every round, and keeps what it needs of each
// Result before the next round reuses it. The round allocates its grants
// on the Placer, so the cluster carries them to the next tick; a running
// job whose lease ends comes back as a candidate with its placement.
func ExampleRounder() {
	cluster, _ := placement.NewCluster([]placement.Node{{ID: "node-1", GPUs: 8}})
	var x sched.Rounder
	type lease struct {
		p      placement.Placement // the placer's, not the Rounder's memory: it outlives a Result
		leases int
	}
	running := map[ledger.JobID]lease{} // what the scheduler keeps between ticks
	tick := func(n int, accounts table, cands []sched.Candidate) {
		for i := range cands {
			if l, ok := running[cands[i].Job]; ok {
				cands[i].Running, cands[i].Placement, cands[i].Leases = true, l.p, l.leases
			}
		}
		res, err := x.Round(sched.Input{Accounts: accounts, Lease: 900 * time.Second, Placer: cluster, Candidates: cands}, sched.Options{})
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, r := range res.Released {
			delete(running, r.Job)
			fmt.Printf("tick %d: %s released: %v\n", n, r.Job, r.Reason)
		}
		for _, g := range res.Grants {
			running[g.Job] = lease{p: g.Placement, leases: running[g.Job].leases + 1}
			fmt.Printf("tick %d: %s gets a %s lease on %v\n", n, g.Job, g.Kind, g.Placement.Slots)
		}
		for _, w := range res.Waiting {
			fmt.Printf("tick %d: %s waits: %v\n", n, w.Job, w.Reason)
		}
	}
	// A is owed more than B: its job runs first.
	tick(1, table{
		tenants: map[ledger.TenantID]ledger.Account{"A": acct(0, 7200), "B": acct(3600, 7200)},
		jobs:    map[ledger.JobID]ledger.Account{"A1": acct(0, 0), "B1": acct(0, 0)},
	}, []sched.Candidate{{Job: "A1", Tenant: "A", Demand: 8}, {Job: "B1", Tenant: "B", Demand: 8}})
	// A lease later A has had its share and B has waited: A1's lease ends
	// and B1 takes its GPUs.
	tick(2, table{
		tenants: map[ledger.TenantID]ledger.Account{"A": acct(7200, 8100), "B": acct(3600, 8100)},
		jobs:    map[ledger.JobID]ledger.Account{"A1": acct(7200, 7200), "B1": acct(0, 7200)},
	}, []sched.Candidate{{Job: "A1", Tenant: "A", Demand: 8}, {Job: "B1", Tenant: "B", Demand: 8}})
	// Output:
	// tick 1: A1 gets a new lease on [{node-1 [0 1 2 3 4 5 6 7]}]
	// tick 1: B1 waits: cluster full: no free GPU left
	// tick 2: A1 released: preempted by B1
	// tick 2: B1 gets a new lease on [{node-1 [0 1 2 3 4 5 6 7]}]
	// tick 2: A1 waits: preempted by B1
}

// Rewards compose: urgent jobs first, then jobs that never ran, then −ρ_job.
func ExampleLexicographic() {
	reward := sched.Lexicographic(sched.UrgentFirst, sched.NewJobFirst)
	fresh := sched.Candidate{Job: "fresh"}
	urgent := sched.Candidate{Job: "urgent", Urgent: true, Leases: 3}
	fmt.Println(reward(&fresh, acct(0, 100)))
	fmt.Println(reward(&urgent, acct(90, 100)))
	// Output:
	// [0 1 0]
	// [1 0 -0.9]
}

// A weighted sum gives long-running jobs a bounded credit on top of −ρ_job.
func ExampleWeightedSum() {
	reward := sched.WeightedSum(
		sched.Term{Weight: 1, Reward: sched.NegJobRho},
		sched.Term{Weight: 1, Reward: sched.LongJobCredit(0.05, 10)},
	)
	long := sched.Candidate{Job: "long", Leases: 40}
	fmt.Println(reward(&long, acct(80, 100)))
	// Output:
	// -0.3
}

// One 8-GPU node runs tenant B's eight 1-GPU jobs, whose leases end one a
// minute; tenant A, owed more, waits with an 8-GPU gang that never fits what
// one lease end frees, so every round sends A out of play and renews B's
// job. A Reserver holds the node once the gang has been A's blocked pick
// for two minutes: B's jobs there are not renewed, and the gang is granted
// as soon as the node is empty.
func ExampleReserver() {
	accounts := table{
		tenants: map[ledger.TenantID]ledger.Account{"A": acct(0, 1000), "B": acct(2000, 1000)},
		jobs:    map[ledger.JobID]ledger.Account{"gang": acct(0, 1000)},
	}
	cluster, _ := placement.NewCluster([]placement.Node{{ID: "node-1", GPUs: 8}})
	running := map[ledger.JobID]placement.Placement{}
	for i := range 8 {
		id := ledger.JobID(fmt.Sprint("b", i))
		p := placement.Placement{Slots: []placement.Slot{{Node: "node-1", GPUs: []int{i}}}}
		_ = cluster.Allocate(string(id), p)
		running[id] = p
		accounts.jobs[id] = acct(2000, 1000)
	}
	rv := sched.Reserver{After: 2 * time.Minute}
	var x sched.Rounder
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for m := range 20 {
		cands := []sched.Candidate{{Job: "gang", Tenant: "A", Demand: 8}}
		b := ledger.JobID(fmt.Sprint("b", m%8))
		if p, ok := running[b]; ok { // its lease ends now
			cands = append(cands, sched.Candidate{Job: b, Tenant: "B", Demand: 1, Running: true, Placement: p, Leases: 1})
		}
		_, held := rv.Held()
		res, err := rv.Round(&x, t0.Add(time.Duration(m)*time.Minute), sched.Input{Accounts: accounts, Lease: 900 * time.Second, Placer: cluster, Candidates: cands}, sched.Options{})
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, r := range res.Released {
			delete(running, r.Job)
			fmt.Printf("minute %d: %s released: %v\n", m, r.Job, r.Reason)
		}
		if h, ok := rv.Held(); ok && !held {
			fmt.Printf("minute %d: %v held for %s\n", m, h.Nodes, h.Job)
		}
		if len(res.Grants) > 0 && res.Grants[0].Job == "gang" {
			fmt.Printf("minute %d: gang granted (%v) on %v\n", m, res.Grants[0].Stage, res.Grants[0].Placement.Slots)
			return
		}
	}
	// Output:
	// minute 2: [node-1] held for gang
	// minute 3: b3 released: its nodes are held for gang
	// minute 4: b4 released: its nodes are held for gang
	// minute 5: b5 released: its nodes are held for gang
	// minute 6: b6 released: its nodes are held for gang
	// minute 7: b7 released: its nodes are held for gang
	// minute 8: b0 released: its nodes are held for gang
	// minute 9: b1 released: its nodes are held for gang
	// minute 10: b2 released: its nodes are held for gang
	// minute 11: gang granted (reserved) on [{node-1 [0 1 2 3 4 5 6 7]}]
}

// Phase 1 walks a tree of tenants with Options.Parent. On 8 GPUs, ai's
// teams vision and nlp share ai's half of a 16-GPU quota; vision ran 8
// GPUs for an hour, so ai as a whole has received its share (ρ 1) while
// ops has received nothing. Flat, nlp (ρ 0) and ops (ρ 0) tie and nlp
// wins by name; the tree serves ops first, because at the top level ops
// is owed more than ai.
func ExampleOptions_parent() {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	hour := start.Add(time.Hour)
	l, _ := ledger.New(ledger.Config{Mode: ledger.QuotaShare, Capacity: 16, Start: start})
	for _, err := range []error{
		l.AddTenant(start, "ai", 1),
		l.AddTenant(start, "ops", 1),
		l.AddTenantUnder(start, "vision", "ai", 1),
		l.AddTenantUnder(start, "nlp", "ai", 1),
		l.Submit(start, "v0", "vision", 8, 1),
		l.Start(start, "v0"),
		l.Finish(hour, "v0", ledger.Completed),
		l.Submit(hour, "n1", "nlp", 8, 1),
		l.Submit(hour, "o1", "ops", 8, 1),
	} {
		if err != nil {
			panic(err)
		}
	}
	view := l.View(hour)
	for _, parent := range []func(ledger.TenantID) (ledger.TenantID, bool){nil, view.TenantParent} {
		cluster, _ := placement.NewCluster([]placement.Node{{ID: "node-1", GPUs: 8}})
		res, err := sched.Round(sched.Input{
			Accounts: view,
			Lease:    900 * time.Second,
			Placer:   cluster,
			Candidates: []sched.Candidate{
				{Job: "n1", Tenant: "nlp", Demand: 8, Submit: hour},
				{Job: "o1", Tenant: "ops", Demand: 8, Submit: hour},
			},
		}, sched.Options{Parent: parent})
		if err != nil {
			panic(err)
		}
		fmt.Printf("tree %v: %s granted; subtrees %v\n", parent != nil, res.Grants[0].Job, res.Subtrees)
	}
	// Output:
	// tree false: n1 granted; subtrees []
	// tree true: o1 granted; subtrees [ai (level 1) in play]
}

// A Queue keeps waiting jobs between rounds and hands a round only those it
// can reach. Here one tenant has five 4-GPU jobs waiting, all of which ran
// before, on two 8-GPU nodes of which one holds a job to the end of its
// lease: the room is two gangs of 4, so the round sees the three owed the
// most (lowest ρ_job), not all five, and grants the same as it would
// over all of them.
func ExampleQueue() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, _ := ledger.New(ledger.Config{Capacity: 16, Start: start})
	_ = l.AddTenant(start, "A", 1)
	q := sched.NewQueue(sched.NeverRanFirst())
	for i := range 5 {
		id := ledger.JobID(fmt.Sprint("job-", i))
		_ = l.Submit(start, id, "A", 4, 1)
		_ = l.Start(start, id)
		_ = q.Add(sched.Candidate{Job: id, Tenant: "A", Demand: 4, Submit: start, Leases: 1})
	}
	// They stop one after another, job-1 first: it received the least.
	for k, id := range []ledger.JobID{"job-1", "job-3", "job-4", "job-2", "job-0"} {
		_ = l.Stop(start.Add(time.Duration(10*(k+1))*time.Second), id)
	}
	now := start.Add(time.Hour)
	_ = l.Advance(now)
	cluster, _ := placement.NewCluster([]placement.Node{{ID: "node-1", GPUs: 8}, {ID: "node-2", GPUs: 8}})
	_, _ = cluster.Assign("other", 8)

	var room placement.Room
	_ = cluster.RoomWithout(&room, nil) // no lease ends now
	cands, err := q.Append(nil, l.View(now), now, func(d ledger.GPUs) int { return room.Gangs(int(d)) })
	if err != nil {
		fmt.Println(err)
		return
	}
	res, _ := sched.Round(sched.Input{Accounts: l.View(now), Candidates: cands, Lease: 900 * time.Second, Placer: cluster},
		sched.Options{Reward: sched.NewJobFirst})
	fmt.Println("the round sees", len(cands), "of", q.Len())
	for _, g := range res.Grants {
		fmt.Println("granted", g.Job)
	}
	// Output:
	// the round sees 3 of 5
	// granted job-1
	// granted job-3
}
