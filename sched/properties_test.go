package sched

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"pgregory.net/rapid"
)

// scenario is a small random round: a cluster with running jobs (some of
// them expiring, hence candidates), pending jobs, accounts and options.
type scenario struct {
	cl    *placement.Cluster
	in    Input
	opts  Options
	other []string // running jobs that are not candidates
}

var rewards = []struct {
	name string
	r    Reward
}{
	{"neg-rho", NegJobRho},
	{"new-job-first", NewJobFirst},
	{"smallest-new-first", SmallestNewFirst},
	{"long-job-credit", WeightedSum(Term{1, NegJobRho}, Term{1, LongJobCredit(0.25, 4)})},
	{"urgent-then-new", Lexicographic(UrgentFirst, NewJobFirst)},
	{"mixed-lengths", mixedLengths},
}

// mixedLengths gives rewards of 1, 2 and 5 components in one round, whose
// first components tie often: the ranks then hang on later components,
// missing ones counting as 0, which a round keeps in separate arrays.
func mixedLengths(c *Candidate, job ledger.Account) Score {
	x := float64(c.Demand % 2)
	switch c.Leases % 3 {
	case 0:
		return ScoreOf(x)
	case 1:
		return ScoreOf(x, 0-float64(job.Rho))
	default:
		return ScoreOf(x, 0, float64(c.Demand%3), 0, -1)
	}
}

func genScenario(t *rapid.T) scenario {
	nNodes := rapid.IntRange(1, 4).Draw(t, "nodes")
	per := rapid.SampledFrom([]int{2, 4, 8}).Draw(t, "gpusPerNode")
	nodes := make([]placement.Node, nNodes)
	for i := range nodes {
		nodes[i] = placement.Node{ID: fmt.Sprintf("n%d", i), GPUs: per}
	}
	var popts []placement.Option
	if rapid.Bool().Draw(t, "spread") {
		popts = append(popts, placement.AllowSpread())
	}
	cl, err := placement.NewCluster(nodes, popts...)
	if err != nil {
		t.Fatal(err)
	}
	acc := newAccounts()
	nTen := rapid.IntRange(1, 4).Draw(t, "tenants")
	for k := 0; k < nTen; k++ {
		fair := ledger.GPUSeconds(rapid.SampledFrom([]float64{0, 3600, 7200, 14400}).Draw(t, "fair"))
		alloc := ledger.GPUSeconds(900 * rapid.IntRange(0, 16).Draw(t, "alloc"))
		acc.tenant(ledger.TenantID(fmt.Sprintf("T%d", k)), alloc, fair, float64(nNodes*per)/float64(nTen))
	}
	rhos := []ledger.Rho{0, 0.25, 0.5, 1, ledger.Rho(math.Inf(1))}
	var cands []Candidate
	var other []string
	nJobs := rapid.IntRange(0, 20).Draw(t, "jobs")
	for j := 0; j < nJobs; j++ {
		id := ledger.JobID(fmt.Sprintf("j%02d", j))
		c := Candidate{
			Job:    id,
			Tenant: ledger.TenantID(fmt.Sprintf("T%d", rapid.IntRange(0, nTen-1).Draw(t, "tenant"))),
			Demand: ledger.GPUs(rapid.IntRange(1, 2*per).Draw(t, "demand")),
			Submit: t0.Add(time.Duration(rapid.IntRange(0, 2).Draw(t, "submit")) * time.Second),
			Leases: rapid.IntRange(0, 3).Draw(t, "leases"),
			Urgent: rapid.Bool().Draw(t, "urgent"),
		}
		acc.job(id, rapid.SampledFrom(rhos).Draw(t, "rho"))
		if rapid.Bool().Draw(t, "running") {
			if q, err := cl.Place(int(c.Demand)); err == nil {
				if err := cl.Allocate(string(id), q); err != nil {
					t.Fatal(err)
				}
				if !rapid.Bool().Draw(t, "expiring") {
					other = append(other, string(id))
					continue
				}
				c.Running, c.Placement = true, q
				c.Leases = max(c.Leases, 1)
			}
		}
		cands = append(cands, c)
	}
	rw := rewards[rapid.IntRange(0, len(rewards)-1).Draw(t, "reward")]
	return scenario{
		cl:    cl,
		other: other,
		in:    Input{Accounts: acc, Candidates: cands, Lease: lease, Placer: cl},
		opts: Options{
			Reward:           rw.r,
			NoBackfill:       rapid.Bool().Draw(t, "noBackfill"),
			AdvanceFairShare: rapid.Bool().Draw(t, "advanceFairShare"),
			PreCredit:        preCredits[rapid.IntRange(0, len(preCredits)-1).Draw(t, "preCredit")],
		},
	}
}

// preCredits are the pre-credit hooks the properties run under: the
// default, none, and half a lease.
var preCredits = []PreCredit{nil, NoCredit, func(d ledger.GPUs, lease time.Duration) ledger.GPUSeconds {
	return LeaseCredit(d, lease) / 2
}}

// run runs the round on a clone of the scenario's cluster.
func (s scenario) run(t *rapid.T, cands []Candidate, wrap func(*placement.Cluster) placement.Placer) (Result, *placement.Cluster, []Step) {
	cl := s.cl.Clone()
	in := s.in
	in.Candidates = cands
	in.Placer = cl
	if wrap != nil {
		in.Placer = wrap(cl)
	}
	res, err := Round(in, s.opts)
	if err != nil {
		t.Fatalf("round: %v", err)
	}
	if err := cl.Check(); err != nil {
		t.Fatalf("cluster invariant: %v", err)
	}
	// Again with a Trace, which turns off the backfill stage's bulk
	// decisions (every step is reported): the same round.
	traced := s.cl.Clone()
	in.Placer = traced
	if wrap != nil {
		in.Placer = wrap(traced)
	}
	var steps []Step
	opts := s.opts
	opts.Trace = func(st Step) { steps = append(steps, st) }
	tres, err := Round(in, opts)
	if err != nil {
		t.Fatalf("traced round: %v", err)
	}
	if !reflect.DeepEqual(res, tres) || !reflect.DeepEqual(allocations(cl), allocations(traced)) {
		t.Fatalf("round differs with a Trace\n without %+v\n with    %+v", res, tres)
	}
	return res, cl, steps
}

// matchesReference runs the scenario's round and the reference round, each
// on its own clone of the cluster, fails unless they return the same
// result and leave the same allocations, and returns the result.
func (s scenario) matchesReference(t *rapid.T) Result {
	got, gotCl, _ := s.run(t, s.in.Candidates, nil)
	ref := s.cl.Clone()
	in := s.in
	in.Placer = ref
	want := reference(t, in, s.opts)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round differs from the reference\n got  %+v\n want %+v", got, want)
	}
	if !reflect.DeepEqual(allocations(gotCl), allocations(ref)) {
		t.Fatalf("cluster differs from the reference")
	}
	return got
}

func TestPropertyRoundMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		got := s.matchesReference(t)
		// The round on the cluster itself takes its optimistic looks with
		// PlaceWithout. The same round with the optimistic view as a copy
		// (ClonePlacer), or by temporary releases (a Placer with neither),
		// decides the same.
		cloned, _, _ := s.run(t, s.in.Candidates, func(c *placement.Cluster) placement.Placer { return clonerPlacer{opaquePlacer{c}, c} })
		if !reflect.DeepEqual(got.Grants, cloned.Grants) || !reflect.DeepEqual(got.Released, cloned.Released) {
			t.Fatalf("a cloning placer decides differently\n got  %+v\n want %+v", cloned.Grants, got.Grants)
		}
		opaque, opaqueCl, _ := s.run(t, s.in.Candidates, func(c *placement.Cluster) placement.Placer { return opaquePlacer{c} })
		if !reflect.DeepEqual(got.Grants, opaque.Grants) || !reflect.DeepEqual(got.Released, opaque.Released) {
			t.Fatalf("opaque placer decides differently\n got  %+v\n want %+v", opaque.Grants, got.Grants)
		}
		// The one-call look gives the very same result as temporary
		// releases, reasons included, and leaves the same cluster.
		without, withoutCl, _ := s.run(t, s.in.Candidates, func(c *placement.Cluster) placement.Placer { return withoutPlacerOnly{opaquePlacer{c}, c} })
		if !reflect.DeepEqual(opaque, without) {
			t.Fatalf("PlaceWithout decides differently\n got  %+v\n want %+v", without, opaque)
		}
		if !reflect.DeepEqual(allocations(opaqueCl), allocations(withoutCl)) {
			t.Fatalf("PlaceWithout leaves a different cluster")
		}
	})
}

func allocations(c *placement.Cluster) map[string]placement.Placement {
	m := map[string]placement.Placement{}
	for id, p := range c.Allocations() {
		m[id] = p
	}
	return m
}

func TestPropertyRoundInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		res, cl, steps := s.run(t, s.in.Candidates, nil)
		byJob := map[ledger.JobID]Candidate{}
		for _, c := range s.in.Candidates {
			byJob[c.Job] = c
		}

		// Gang, renewal in place, and the placer holds exactly the grants.
		used := map[gpuKey]string{}
		for _, id := range s.other {
			p, ok := cl.Allocation(id)
			if !ok {
				t.Fatalf("running job %s that was not a candidate lost its GPUs", id)
			}
			for _, sl := range p.Slots {
				for _, g := range sl.GPUs {
					used[gpuKey{sl.Node, g}] = id
				}
			}
		}
		for _, g := range res.Grants {
			c := byJob[g.Job]
			if g.Placement.GPUs() != int(c.Demand) || g.Demand != c.Demand {
				t.Fatalf("grant %s has %d GPUs, demand %d", g.Job, g.Placement.GPUs(), c.Demand)
			}
			if g.Kind == Renewed && (!c.Running || !samePlacement(g.Placement, c.Placement)) {
				t.Fatalf("renewed %s moved: %+v vs %+v", g.Job, g.Placement, c.Placement)
			}
			if c.Running && g.Kind == New && !slices.ContainsFunc(res.Released, func(r Release) bool { return r.Job == g.Job && r.By != "" }) {
				t.Fatalf("running %s got new GPUs without being preempted", g.Job)
			}
			for _, sl := range g.Placement.Slots {
				for _, gpu := range sl.GPUs {
					k := gpuKey{sl.Node, gpu}
					if prev, dup := used[k]; dup {
						t.Fatalf("GPU %v granted to %s and held by %s", k, g.Job, prev)
					}
					used[k] = string(g.Job)
				}
			}
			if p, ok := cl.Allocation(string(g.Job)); !ok || !samePlacement(p, g.Placement) {
				t.Fatalf("placer does not hold grant %s", g.Job)
			}
		}
		if held := cl.Capacity() - cl.Free(); held != len(used) {
			t.Fatalf("placer holds %d GPUs, grants and other running jobs %d", held, len(used))
		}
		// Every candidate is granted or waits, exactly once; every expiring
		// job that was not renewed is released.
		if len(res.Grants)+len(res.Waiting) != len(s.in.Candidates) {
			t.Fatalf("%d grants + %d waiting != %d candidates", len(res.Grants), len(res.Waiting), len(s.in.Candidates))
		}
		for _, c := range s.in.Candidates {
			if !c.Running {
				continue
			}
			renewed := slices.ContainsFunc(res.Grants, func(g Grant) bool { return g.Job == c.Job && g.Kind == Renewed })
			released := slices.ContainsFunc(res.Released, func(r Release) bool { return r.Job == c.Job })
			if renewed == released {
				t.Fatalf("expiring %s: renewed %v, released %v", c.Job, renewed, released)
			}
		}
		// Work conservation: with backfill, no waiting candidate fits. Without,
		// every waiting job's tenant left play, or the cluster was full.
		outOfPlay := map[ledger.TenantID]bool{}
		for _, tr := range res.Tenants {
			outOfPlay[tr.ID] = tr.OutOfPlay
		}
		for _, w := range res.Waiting {
			if !s.opts.NoBackfill && cl.Fits(int(w.Demand)) {
				t.Fatalf("%s waits (%v) but fits", w.Job, w.Reason)
			}
			if s.opts.NoBackfill && !outOfPlay[w.Tenant] && w.Reason.Code != ClusterFull && w.Reason.Code != Preempted {
				t.Fatalf("%s waits (%v) although its tenant is in play", w.Job, w.Reason)
			}
		}
		// Phase 1: each fair-stage decision is by the first tenant in play;
		// Phase 2: each tenant's picks come in non-increasing reward.
		inPlay := map[ledger.TenantID]*TenantState{}
		left := map[ledger.TenantID]int{}
		for _, tr := range res.Tenants {
			inPlay[tr.ID] = &TenantState{ID: tr.ID, Start: tr.Start, Account: tr.Start}
		}
		for _, c := range s.in.Candidates {
			left[c.Tenant]++
		}
		last := map[ledger.TenantID]Score{}
		for _, st := range steps {
			if st.Stage != Fair {
				continue
			}
			for id, ts := range inPlay {
				if ByRho(ts, &st.Tenant) < 0 {
					t.Fatalf("step %d served %s (ρ %v) while %s (ρ %v) was in play", st.N, st.Tenant.ID, st.Tenant.Account.Rho, id, ts.Account.Rho)
				}
			}
			if prev, ok := last[st.Tenant.ID]; ok && st.Reward.Compare(prev) > 0 {
				t.Fatalf("tenant %s picked reward %v after %v", st.Tenant.ID, st.Reward, prev)
			}
			last[st.Tenant.ID] = st.Reward
			if st.Granted {
				ts := inPlay[st.Tenant.ID]
				credit := LeaseCredit
				if s.opts.PreCredit != nil {
					credit = s.opts.PreCredit
				}
				ts.Account.Alloc += credit(st.Job.Demand, lease)
				ts.Account.Rho = ledger.Ratio(ts.Account.Alloc, ts.Account.FairShare)
				if ts.Account.Rho != st.Grant.TenantRhoAfter {
					t.Fatalf("pre-credited ρ %v, grant says %v", ts.Account.Rho, st.Grant.TenantRhoAfter)
				}
				if left[st.Tenant.ID]--; left[st.Tenant.ID] == 0 {
					delete(inPlay, st.Tenant.ID)
				}
			} else {
				if !st.OutOfPlay {
					t.Fatalf("fair-stage failure without leaving play: %+v", st)
				}
				delete(inPlay, st.Tenant.ID)
			}
		}
	})
}

func TestPropertyDeterministicAndOrderFree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		a, _, _ := s.run(t, s.in.Candidates, nil)
		b, _, _ := s.run(t, s.in.Candidates, nil)
		if !reflect.DeepEqual(a, b) {
			t.Fatal("two runs on the same input differ")
		}
		perm := rapid.Permutation(s.in.Candidates).Draw(t, "order")
		c, _, _ := s.run(t, perm, nil)
		if !reflect.DeepEqual(a.Grants, c.Grants) {
			t.Fatalf("candidate order changed the grants\n %+v\n %+v", a.Grants, c.Grants)
		}
		sortW := func(ws []Wait) []Wait {
			ws = slices.Clone(ws)
			slices.SortFunc(ws, func(x, y Wait) int { return cmp.Compare(x.Job, y.Job) })
			return ws
		}
		if !reflect.DeepEqual(sortW(a.Waiting), sortW(c.Waiting)) {
			t.Fatal("candidate order changed the reasons")
		}
	})
}

// Rounds in sequence, as a lease coordinator would run them: the jobs granted
// in one round are running and expiring in the next (renewed jobs keep their
// GPUs, migrated ones hold their new GPUs), waiting jobs stay pending, and
// the accounts grow by what was granted. The placer stays consistent and
// every round keeps the per-round invariants.
func TestPropertyConsecutiveRounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		cl := s.cl
		acc := s.in.Accounts.(*accounts)
		cands := s.in.Candidates
		for round := range 3 {
			in := s.in
			in.Candidates = cands
			in.Placer = cl
			res, err := Round(in, s.opts)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			if err := cl.Check(); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			byJob := map[ledger.JobID]Candidate{}
			for _, c := range cands {
				byJob[c.Job] = c
			}
			var next []Candidate
			for _, g := range res.Grants {
				c := byJob[g.Job]
				if g.Kind == Renewed && !samePlacement(g.Placement, c.Placement) {
					t.Fatalf("round %d: %s renewed elsewhere", round, g.Job)
				}
				if p, ok := cl.Allocation(string(g.Job)); !ok || !samePlacement(p, g.Placement) {
					t.Fatalf("round %d: %s not held as granted", round, g.Job)
				}
				a := acc.tenants[g.Tenant]
				acc.tenant(g.Tenant, a.Alloc+ledger.GPUSeconds(float64(g.Demand)*lease.Seconds()), a.FairShare+ledger.GPUSeconds(acc.rates[g.Tenant]*lease.Seconds()), acc.rates[g.Tenant])
				c.Running, c.Placement, c.Leases = true, g.Placement, c.Leases+1
				next = append(next, c)
			}
			for _, w := range res.Waiting {
				if _, ok := cl.Allocation(string(w.Job)); ok {
					t.Fatalf("round %d: waiting %s holds GPUs", round, w.Job)
				}
				c := byJob[w.Job]
				c.Running, c.Placement = false, placement.Placement{}
				next = append(next, c)
			}
			cands = next
		}
	})
}

// A Rounder reused across unrelated rounds, some of them rejected, decides
// exactly as a fresh Round: no state leaks from one round into the next.
func TestPropertyRounderReuse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var x Rounder
		for i := range rapid.IntRange(1, 4).Draw(t, "rounds") {
			s := genScenario(t)
			if rapid.Bool().Draw(t, "rejected") {
				in := s.in
				in.Placer = s.cl.Clone()
				in.Candidates = append(slices.Clone(in.Candidates), Candidate{Job: "", Tenant: "T0", Demand: 1})
				if _, err := x.Round(in, s.opts); err == nil {
					t.Fatalf("round %d: a candidate without id accepted", i)
				}
			}
			want, wcl, _ := s.run(t, s.in.Candidates, nil)
			got, cl := s.reuse(t, &x, i)
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("round %d: reused Rounder differs from Round\n %+v\n %+v", i, want, got)
			}
			if !reflect.DeepEqual(allocations(wcl), allocations(cl)) {
				t.Fatalf("round %d: reused Rounder left the placer otherwise", i)
			}
		}
	})
}

// TestPropertyLargeDemandsMatchReference runs rounds whose demands reach
// 2¹⁶ GPUs and beyond, which a heap entry does not hold (candEntry keeps a
// demand below 2¹⁶ and reads a larger one from the candidate), on nodes of
// that size (a larger demand spans nodes): Round must still agree with the
// reference exactly.
func TestPropertyLargeDemandsMatchReference(t *testing.T) {
	const big = 1 << 16
	rapid.Check(t, func(t *rapid.T) {
		nNodes := rapid.IntRange(1, 3).Draw(t, "nodes")
		nodes := make([]placement.Node, nNodes)
		for i := range nodes {
			nodes[i] = placement.Node{ID: fmt.Sprintf("n%d", i), GPUs: big}
		}
		cl, err := placement.NewCluster(nodes)
		if err != nil {
			t.Fatal(err)
		}
		acc := newAccounts()
		nTen := rapid.IntRange(1, 3).Draw(t, "tenants")
		for k := range nTen {
			alloc := ledger.GPUSeconds(900 * rapid.IntRange(0, 16).Draw(t, "alloc"))
			acc.tenant(ledger.TenantID(fmt.Sprintf("T%d", k)), alloc, 7200, 1)
		}
		var cands []Candidate
		for j := range rapid.IntRange(0, 6).Draw(t, "jobs") {
			id, ten := drawJobTenant(t, j, nTen)
			c := Candidate{
				Job:    id,
				Tenant: ten,
				Demand: ledger.GPUs(rapid.SampledFrom([]int{1, 3, big - 1, big, big + 2, 2 * big}).Draw(t, "demand")),
				Submit: t0.Add(time.Duration(rapid.IntRange(0, 2).Draw(t, "submit")) * time.Second),
			}
			acc.job(id, ledger.Rho(rapid.IntRange(0, 3).Draw(t, "rho"))/2)
			if rapid.Bool().Draw(t, "running") {
				if q, err := cl.Place(int(c.Demand)); err == nil {
					if err := cl.Allocate(string(id), q); err != nil {
						t.Fatal(err)
					}
					c.Running, c.Placement, c.Leases = true, q, 1
				}
			}
			cands = append(cands, c)
		}
		s := scenario{cl: cl, in: Input{Accounts: acc, Candidates: cands, Lease: lease, Placer: cl},
			opts: Options{NoBackfill: rapid.Bool().Draw(t, "noBackfill")}}
		s.matchesReference(t)
	})
}

// missingAccounts is an accounts that knows every job but one, and
// batchAccounts the same looked up through JobAccountsAppender (one by
// one, as the interface's contract states).
type missingAccounts struct {
	*accounts
	missing ledger.JobID
}

func (m missingAccounts) JobAccount(id ledger.JobID) (ledger.Account, bool) {
	if id == m.missing {
		return ledger.Account{}, false
	}
	return m.accounts.JobAccount(id)
}

type batchAccounts struct{ missingAccounts }

func (b batchAccounts) AppendJobAccounts(dst []ledger.Account, ids []ledger.JobID) ([]ledger.Account, bool) {
	for _, id := range ids {
		a, ok := b.JobAccount(id)
		if !ok {
			return dst, false
		}
		dst = append(dst, a)
	}
	return dst, true
}

// A round that reads job accounts through JobAccountsAppender decides as one
// that asks JobAccount for each, and fails the same way on a job without an
// account (same candidate named).
func TestPropertyBatchAccountsDecideAlike(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		m := missingAccounts{accounts: s.in.Accounts.(*accounts)}
		if n := len(s.in.Candidates); n > 0 && rapid.Bool().Draw(t, "a job without account") {
			m.missing = s.in.Candidates[rapid.IntRange(0, n-1).Draw(t, "missing")].Job
		}
		round := func(x *Rounder, acc Accounts) (Result, map[string]placement.Placement, error) {
			in := s.in
			in.Accounts = acc
			cl := s.cl.Clone()
			in.Placer = cl
			res, err := x.Round(in, s.opts)
			return res, allocations(cl), err
		}
		var plain, batch Rounder
		want, wantCl, wantErr := round(&plain, m)
		round(&batch, batchAccounts{m}) // the second round reuses its buffers
		got, gotCl, gotErr := round(&batch, batchAccounts{m})
		if !reflect.DeepEqual(gotErr, wantErr) {
			t.Fatalf("error through a batch %v, one by one %v", gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotCl, wantCl) {
			t.Fatalf("a batch decides differently\n got  %+v\n want %+v", got, want)
		}
	})
}

// Plan returns what Round returns and leaves the cluster as it found it:
// the same allocations, the same answer to every placement, and a next
// round that decides as on a cluster the plan never touched.
func TestPropertyPlanDecidesAsRoundAndLeavesThePlacer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := genScenario(t)
		want, _, _ := s.run(t, s.in.Candidates, nil)
		cl := s.cl.Clone()
		in := s.in
		in.Placer = cl
		var x Rounder
		got, err := x.Plan(in, s.opts)
		if err != nil {
			t.Fatalf("plan: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("plan differs from the round\n got  %+v\n want %+v", got, want)
		}
		if err := cl.Check(); err != nil {
			t.Fatalf("cluster invariant after the plan: %v", err)
		}
		if !reflect.DeepEqual(allocations(cl), allocations(s.cl)) {
			t.Fatalf("the plan left allocations %v, want %v", allocations(cl), allocations(s.cl))
		}
		for d := 1; d <= s.cl.Capacity()+1; d++ {
			p, perr := cl.Place(d)
			q, qerr := s.cl.Place(d)
			if !p.Equal(q) || fmt.Sprint(perr) != fmt.Sprint(qerr) {
				t.Fatalf("after the plan Place(%d) = %v, %v; before, %v, %v", d, p, perr, q, qerr)
			}
		}
		again, err := x.Round(in, s.opts)
		if err != nil {
			t.Fatalf("round after the plan: %v", err)
		}
		if !reflect.DeepEqual(again, want) {
			t.Fatalf("round after the plan differs\n got  %+v\n want %+v", again, want)
		}
	})
}
