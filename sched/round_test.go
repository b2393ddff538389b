package sched

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const lease = 900 * time.Second

// workedExample is the round of the paper's section 11: two nodes of 8 GPUs,
// tenants A and B of equal weight, A at 54,000 / 72,000 and B at
// 72,000 / 72,000; A1 (8 GPUs, ρ 0.50), A2 (4, 0.80), B1 (8, 0.40).
func workedExample(tb testing.TB) (*placement.Cluster, Input) {
	cl := cluster(tb, 2, 8)
	acc := newAccounts()
	acc.tenant("A", 54000, 72000, 8)
	acc.tenant("B", 72000, 72000, 8)
	acc.job("A1", 0.5)
	acc.job("A2", 0.8)
	acc.job("B1", 0.4)
	return cl, Input{
		Accounts: acc,
		Lease:    lease,
		Placer:   cl,
		Candidates: []Candidate{
			{Job: "A1", Tenant: "A", Demand: 8, Submit: t0},
			{Job: "A2", Tenant: "A", Demand: 4, Submit: t0},
			{Job: "B1", Tenant: "B", Demand: 8, Submit: t0},
		},
	}
}

func near(a, b ledger.Rho) bool { return math.Abs(float64(a-b)) < 1e-12 }

func TestWorkedExampleSection11(t *testing.T) {
	for _, noBackfill := range []bool{false, true} {
		cl, in := workedExample(t)
		var steps []Step
		res, err := Round(in, Options{NoBackfill: noBackfill, Trace: func(s Step) { steps = append(steps, s) }})
		if err != nil {
			t.Fatal(err)
		}
		verifyCluster(t, cl)
		if len(res.Grants) != 2 {
			t.Fatalf("grants = %+v, want A1 and A2", res.Grants)
		}
		a1, a2 := res.Grants[0], res.Grants[1]
		if a1.Job != "A1" || a1.Kind != New || !samePlacement(a1.Placement, placement.Placement{Slots: []placement.Slot{slot("node-1", 0, 1, 2, 3, 4, 5, 6, 7)}}) {
			t.Errorf("first grant = %+v, want A1 on all of node-1", a1)
		}
		if a2.Job != "A2" || a2.Kind != New || len(a2.Placement.Slots) != 1 || a2.Placement.Slots[0].Node != "node-2" || a2.Placement.GPUs() != 4 {
			t.Errorf("second grant = %+v, want A2 on 4 GPUs of node-2", a2)
		}
		if !near(a1.TenantRhoBefore, 0.75) || !near(a1.TenantRhoAfter, 0.85) || !near(a2.TenantRhoAfter, 0.90) {
			t.Errorf("A's ρ: %v → %v → %v, want 0.75 → 0.85 → 0.90", a1.TenantRhoBefore, a1.TenantRhoAfter, a2.TenantRhoAfter)
		}
		if a1.Reward.Compare(ScoreOf(-0.5)) != 0 || a2.Reward.Compare(ScoreOf(-0.8)) != 0 {
			t.Errorf("rewards %v, %v, want -0.5, -0.8", a1.Reward, a2.Reward)
		}
		why, ok := res.Why("B1")
		want := Reason{Code: NoFit, Need: 8, LargestFree: 4, FreeTotal: 4}
		if !ok || why != want {
			t.Errorf("B1 waits because %+v, want %+v", why, want)
		}
		if got := why.String(); got != "does not fit: needs 8 GPUs, largest free block 4 (4 free in total)" {
			t.Errorf("B1 reason text %q", got)
		}
		b := res.Tenants[1]
		if b.ID != "B" || !b.OutOfPlay || b.Blocked != "B1" || b.Reason != want || b.Grants != 0 || b.Waiting != 1 {
			t.Errorf("tenant B = %+v", b)
		}
		a := res.Tenants[0]
		if a.ID != "A" || a.OutOfPlay || a.Grants != 2 || a.GPUs != 12 || a.Waiting != 0 || a.Reason != (Reason{}) || a.End.Alloc != 64800 || !near(a.End.Rho, 0.9) {
			t.Errorf("tenant A = %+v", a)
		}
		// Steps: A picks A1, A picks A2, B picks B1 and leaves play, and
		// with backfill B1 is tried once more.
		wantSteps := []string{"A/A1", "A/A2", "B/B1"}
		if !noBackfill {
			wantSteps = append(wantSteps, "B/B1")
		}
		var got []string
		for _, s := range steps {
			got = append(got, string(s.Tenant.ID)+"/"+string(s.Job.Job))
		}
		if !slices.Equal(got, wantSteps) {
			t.Errorf("steps %v, want %v", got, wantSteps)
		}
		if !steps[2].OutOfPlay || steps[2].Granted {
			t.Errorf("B's step = %+v, want out of play", steps[2])
		}
		if p, ok := cl.Allocation("A1"); !ok || !samePlacement(p, a1.Placement) {
			t.Errorf("A1 not allocated in the cluster as granted")
		}
		if cl.Free() != 4 {
			t.Errorf("free after the round = %d, want 4", cl.Free())
		}
	}
}

// The paper's continuation: 900 s later A1 expires (A2 has completed), B is
// now the lowest ρ; B1 takes the free node, and A1 is renewed in place.
func TestRenewalInPlaceAndPreemption(t *testing.T) {
	type want struct {
		grants   []string // job:kind
		released []string // job:by
	}
	tests := map[string]struct {
		free  int // GPUs of node-2 held by another running job that is not expiring
		want  want
		check func(t *testing.T, res Result)
	}{
		"B1 takes the free node and A1 is renewed in place": {
			free: 8,
			want: want{grants: []string{"B1:new", "A1:renewed"}},
		},
		"B1 preempts A1 when only A1's GPUs could host it": {
			free: 0,
			want: want{grants: []string{"B1:new"}, released: []string{"A1:B1"}},
			check: func(t *testing.T, res Result) {
				if !slices.Equal(res.Grants[0].Preempts, []ledger.JobID{"A1"}) {
					t.Errorf("B1 preempts %v, want [A1]", res.Grants[0].Preempts)
				}
				why, _ := res.Why("A1")
				if why.Code != Preempted || why.By != "B1" || res.Waiting[0].PreemptedBy != "B1" {
					t.Errorf("A1 waits with %+v, want preempted by B1", res.Waiting[0])
				}
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cl := cluster(t, 2, 8)
			a1 := placement.Placement{Slots: []placement.Slot{slot("node-1", 0, 1, 2, 3, 4, 5, 6, 7)}}
			if err := cl.Allocate("A1", a1); err != nil {
				t.Fatal(err)
			}
			if tc.free == 0 {
				if err := cl.Allocate("X", placement.Placement{Slots: []placement.Slot{slot("node-2", 0, 1, 2, 3, 4, 5, 6, 7)}}); err != nil {
					t.Fatal(err)
				}
			}
			acc := newAccounts()
			acc.tenant("A", 64800, 79200, 8) // ρ 0.818
			acc.tenant("B", 54000, 79200, 8) // ρ 0.682: B goes first
			acc.job("A1", 0.6)
			acc.job("B1", 0.4)
			in := Input{Accounts: acc, Lease: lease, Placer: cl, Candidates: []Candidate{
				{Job: "A1", Tenant: "A", Demand: 8, Submit: t0, Running: true, Placement: a1, Leases: 1},
				{Job: "B1", Tenant: "B", Demand: 8, Submit: t0},
			}}
			res, err := Round(in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			verifyCluster(t, cl)
			var grants, released []string
			for _, g := range res.Grants {
				grants = append(grants, string(g.Job)+":"+g.Kind.String())
				if g.Kind == Renewed && !samePlacement(g.Placement, a1) {
					t.Errorf("renewed A1 moved to %+v", g.Placement)
				}
			}
			for _, r := range res.Released {
				released = append(released, string(r.Job)+":"+string(r.By))
			}
			if !slices.Equal(grants, tc.want.grants) || !slices.Equal(released, tc.want.released) {
				t.Errorf("grants %v released %v, want %v %v", grants, released, tc.want.grants, tc.want.released)
			}
			if _, held := cl.Allocation("A1"); held != slices.Contains(grants, "A1:renewed") {
				t.Errorf("A1 held = %v after the round", held)
			}
			if tc.check != nil {
				tc.check(t, res)
			}
		})
	}
}

func TestExpiringJobsNotRenewedAreReleased(t *testing.T) {
	cl := cluster(t, 1, 8)
	p := placement.Placement{Slots: []placement.Slot{slot("node-1", 0, 1, 2, 3)}}
	if err := cl.Allocate("E", p); err != nil {
		t.Fatal(err)
	}
	acc := newAccounts()
	acc.tenant("A", 0, 100, 1)
	acc.tenant("B", 100, 100, 1)
	acc.job("N", 0)
	acc.job("E", 1)
	acc.job("M", 0.5)
	in := Input{Accounts: acc, Lease: lease, Placer: cl, Candidates: []Candidate{
		{Job: "E", Tenant: "B", Demand: 4, Running: true, Placement: p, Leases: 3},
		{Job: "N", Tenant: "A", Demand: 8},
		{Job: "M", Tenant: "A", Demand: 2},
	}}
	// A's N needs all 8 GPUs and preempts E; then no GPU is left, so M and
	// E (not tried again) wait.
	res, err := Round(in, Options{NoBackfill: true})
	if err != nil {
		t.Fatal(err)
	}
	verifyCluster(t, cl)
	if len(res.Grants) != 1 || res.Grants[0].Job != "N" || !slices.Equal(res.Grants[0].Preempts, []ledger.JobID{"E"}) {
		t.Fatalf("grants %+v", res.Grants)
	}
	if len(res.Released) != 1 || res.Released[0].Job != "E" || res.Released[0].By != "N" || res.Released[0].Reason.Code != Preempted {
		t.Fatalf("released %+v", res.Released)
	}
	if why, _ := res.Why("E"); why.Code != Preempted || why.By != "N" {
		t.Errorf("E waits because %v", why)
	}
	if why, _ := res.Why("M"); why.Code != ClusterFull || why.String() != "cluster full: no free GPU left" {
		t.Errorf("M waits because %v", why)
	}
	for _, tr := range res.Tenants {
		if tr.OutOfPlay || tr.Reason.Code != ClusterFull || tr.Waiting != 1 {
			t.Errorf("tenant %+v, want in play with one job waiting for a full cluster", tr)
		}
	}
	if _, held := cl.Allocation("E"); held {
		t.Error("E still holds GPUs")
	}
}

func TestOutOfPlayWithoutBackfill(t *testing.T) {
	cl := cluster(t, 1, 8)
	acc := newAccounts()
	acc.tenant("A", 0, 100, 1)
	acc.job("big", 0)
	acc.job("small", 0.5)
	in := Input{Accounts: acc, Lease: lease, Placer: cl, Candidates: []Candidate{
		{Job: "big", Tenant: "A", Demand: 9},
		{Job: "small", Tenant: "A", Demand: 1},
	}}
	res, err := Round(in, Options{NoBackfill: true})
	if err != nil {
		t.Fatal(err)
	}
	why, _ := res.Why("small")
	if why.Code != OutOfPlay || why.By != "big" || why.Need != 9 || why.LargestFree != 8 {
		t.Fatalf("small waits because %+v", why)
	}
	if got := why.String(); got != "tenant out of play: ranked below big, which does not fit: needs 9 GPUs, largest free block 8 (8 free in total)" {
		t.Errorf("text %q", got)
	}
	// With backfill (the default), small runs.
	cl2 := cluster(t, 1, 8)
	in.Placer = cl2
	res, err = Round(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Grants) != 1 || res.Grants[0].Job != "small" || res.Grants[0].Stage != Backfill {
		t.Fatalf("grants %+v", res.Grants)
	}
}

func TestAdvanceFairShare(t *testing.T) {
	_, in := workedExample(t)
	res, err := Round(in, Options{AdvanceFairShare: true})
	if err != nil {
		t.Fatal(err)
	}
	// Fair shares advance by 8 × 900 = 7,200 for both tenants: A starts at
	// 54,000 / 79,200, then 61,200 / 79,200 and 64,800 / 79,200.
	a := res.Tenants[0]
	if a.Start.FairShare != 79200 || !near(a.Start.Rho, 54000.0/79200) || !near(a.End.Rho, 64800.0/79200) {
		t.Fatalf("A = %+v", a)
	}
	in.Accounts = plainAccounts{in.Accounts.(*accounts)}
	_, err = Round(in, Options{AdvanceFairShare: true})
	if !errors.Is(err, ErrNoFairRate) {
		t.Fatalf("without a fair rate: %v", err)
	}
	// The fault is the accounts', no candidate's.
	var e *Error
	if !errors.As(err, &e) || e.Index != -1 {
		t.Fatalf("without a fair rate: %#v, want an *Error with Index -1", err)
	}
}

func TestRejectedInputLeavesPlacerUnchanged(t *testing.T) {
	held := placement.Placement{Slots: []placement.Slot{slot("node-1", 0, 1)}}
	tests := map[string]struct {
		mutate func(in *Input)
		want   error
	}{
		"nil accounts":                   {func(in *Input) { in.Accounts = nil }, ErrInvalidInput},
		"nil placer":                     {func(in *Input) { in.Placer = nil }, ErrInvalidInput},
		"zero lease":                     {func(in *Input) { in.Lease = 0 }, ErrInvalidInput},
		"zero demand":                    {func(in *Input) { in.Candidates[2].Demand = 0 }, ErrInvalidCandidate},
		"empty job id":                   {func(in *Input) { in.Candidates[2].Job = "" }, ErrInvalidCandidate},
		"empty tenant":                   {func(in *Input) { in.Candidates[2].Tenant = "" }, ErrInvalidCandidate},
		"duplicate job":                  {func(in *Input) { in.Candidates[2].Job = "A1" }, ErrDuplicateJob},
		"unknown tenant":                 {func(in *Input) { in.Candidates[2].Tenant = "Z" }, ErrUnknownTenant},
		"unknown job":                    {func(in *Input) { in.Candidates[2].Job = "Q" }, ErrUnknownJob},
		"running without its GPUs":       {func(in *Input) { in.Candidates[0].Running = true }, ErrInvalidCandidate},
		"running elsewhere than claimed": {func(in *Input) { in.Candidates[3].Placement.Slots[0].GPUs = []int{2, 3} }, ErrInvalidCandidate},
		"pending but holding GPUs":       {func(in *Input) { in.Candidates[3].Running = false }, ErrInvalidCandidate},
		"running not held by placer": {func(in *Input) {
			in.Candidates[2].Running = true
			in.Candidates[2].Demand = 2
			in.Candidates[2].Placement = placement.Placement{Slots: []placement.Slot{slot("node-2", 0, 1)}}
		}, ErrInvalidCandidate},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cl, in := workedExample(t)
			in.Accounts.(*accounts).job("R", 1)
			if err := cl.Allocate("R", held); err != nil {
				t.Fatal(err)
			}
			in.Candidates = append(in.Candidates, Candidate{Job: "R", Tenant: "B", Demand: 2, Running: true, Placement: placement.Placement{Slots: []placement.Slot{slot("node-1", 0, 1)}}})
			tc.mutate(&in)
			_, err := Round(in, Options{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			var e *Error
			if tc.want != ErrInvalidInput && (!errors.As(err, &e) || e.Index < 0) {
				t.Fatalf("err %v does not name the candidate", err)
			}
			if p, ok := cl.Allocation("R"); !ok || !samePlacement(p, held) || cl.Free() != 14 {
				t.Fatal("placer changed by a rejected round")
			}
		})
	}
}

// failingPlacer fails its Allocate call number n+1 (and only that one).
type failingPlacer struct {
	*placement.Cluster
	n int
}

func (f *failingPlacer) Allocate(id string, p placement.Placement) error {
	f.n--
	if f.n == -1 {
		return errors.New("disk on fire")
	}
	return f.Cluster.Allocate(id, p)
}

func TestPlacerFailureIsUndone(t *testing.T) {
	cl := cluster(t, 4, 8)
	acc := newAccounts()
	acc.tenant("A", 0, 100, 1)
	var cands []Candidate
	for _, j := range []ledger.JobID{"j1", "j2", "j3"} {
		acc.job(j, 0)
		cands = append(cands, Candidate{Job: j, Tenant: "A", Demand: 4})
	}
	fp := &failingPlacer{Cluster: cl, n: 2}
	_, err := Round(Input{Accounts: acc, Lease: lease, Placer: fp, Candidates: cands}, Options{})
	if !errors.Is(err, ErrPlacer) {
		t.Fatalf("err = %v", err)
	}
	if cl.Free() != 32 {
		t.Fatalf("free = %d after a failed round, want 32", cl.Free())
	}
	verifyCluster(t, cl)
}

func TestHooks(t *testing.T) {
	_, in := workedExample(t)
	// Tenant order by descending id serves B first; B1 takes node-1.
	res, err := Round(in, Options{TenantOrder: func(a, b *TenantState) int { return cmp.Compare(b.ID, a.ID) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Grants[0].Job != "B1" {
		t.Fatalf("first grant %v", res.Grants[0].Job)
	}
	// A reward preferring small jobs picks A2 first.
	_, in = workedExample(t)
	res, err = Round(in, Options{Reward: func(c *Candidate, _ ledger.Account) Score { return ScoreOf(-float64(c.Demand)) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Grants[0].Job != "A2" {
		t.Fatalf("first grant %v", res.Grants[0].Job)
	}
	// A tie-break that says "equal" for everything still orders by id.
	_, in = workedExample(t)
	in.Accounts.(*accounts).job("A2", 0.5)
	res, err = Round(in, Options{TieBreak: func(a, b *Candidate) int { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Grants[0].Job != "A1" {
		t.Fatalf("first grant %v", res.Grants[0].Job)
	}
}

func TestRewards(t *testing.T) {
	inf := ledger.Rho(math.Inf(1))
	tests := map[string]struct {
		reward Reward
		c      Candidate
		rho    ledger.Rho
		want   Score
	}{
		"−ρ_job":                                         {NegJobRho, Candidate{}, 0.5, ScoreOf(-0.5)},
		"−ρ_job of +Inf is −Inf":                         {NegJobRho, Candidate{}, inf, ScoreOf(math.Inf(-1))},
		"new job first ranks a fresh job":                {NewJobFirst, Candidate{}, 1, ScoreOf(1, -1)},
		"new job first: a suspended job":                 {NewJobFirst, Candidate{Leases: 2}, 0.2, ScoreOf(0, -0.2)},
		"new job first: a running job":                   {NewJobFirst, Candidate{Running: true}, 0.2, ScoreOf(0, -0.2)},
		"smallest new first: a fresh 4-GPU job":          {SmallestNewFirst, Candidate{Demand: 4}, 0.5, ScoreOf(1, -4, -0.5)},
		"smallest new first: a job that ran":             {SmallestNewFirst, Candidate{Demand: 4, Leases: 1}, 0.5, ScoreOf(0, 0, -0.5)},
		"urgent":                                         {UrgentFirst, Candidate{Urgent: true}, 0, ScoreOf(1)},
		"not urgent":                                     {UrgentFirst, Candidate{}, 0, ScoreOf(0)},
		"long-job credit counts leases":                  {LongJobCredit(0.1, 5), Candidate{Leases: 3}, 0, ScoreOf(0.30000000000000004)},
		"long-job credit is capped":                      {LongJobCredit(0.1, 5), Candidate{Leases: 30}, 0, ScoreOf(0.5)},
		"weighted sum":                                   {WeightedSum(Term{1, NegJobRho}, Term{0.5, LongJobCredit(1, 4)}), Candidate{Leases: 2}, 0.25, ScoreOf(0.75)},
		"long-job credit with a cap of 0 is nothing":     {LongJobCredit(0.1, 0), Candidate{Leases: 3}, 0, ScoreOf(0)},
		"long-job credit with a negative cap is nothing": {LongJobCredit(0.1, -2), Candidate{Leases: 3}, 0, ScoreOf(0)},
		"long-job credit of negative leases is nothing":  {LongJobCredit(0.1, 5), Candidate{Leases: -3}, 0, ScoreOf(0)},
		"long-job credit below the cap is per lease":     {LongJobCredit(2, 5), Candidate{Leases: 4}, 0, ScoreOf(8)},
		"weighted sum of 4-component terms":              {WeightedSum(Term{2, Lexicographic(UrgentFirst, NewJobFirst, NegJobRho)}, Term{1, NewJobFirst}, Term{5, nil}), Candidate{Urgent: true}, 0.5, ScoreOf(3, 1.5, -1, -1)},
		"weighted sum is as long as its longest term":    {WeightedSum(Term{1, UrgentFirst}, Term{-1, NewJobFirst}), Candidate{Leases: 1}, 0.25, ScoreOf(0, 0.25)},
		"lexicographic concatenates":                     {Lexicographic(UrgentFirst, NewJobFirst), Candidate{Urgent: true}, 0.5, ScoreOf(1, 1, -0.5)},
		"lexicographic equals NewJobFirst":               {Lexicographic(NeverRan, NegJobRho), Candidate{Leases: 1}, 0.5, ScoreOf(0, -0.5)},
		"lexicographic truncates":                        {Lexicographic(UrgentFirst, UrgentFirst, UrgentFirst, NewJobFirst), Candidate{}, 0.5, ScoreOf(0, 0, 0, 1)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := tc.reward(&tc.c, ledger.Account{Rho: tc.rho})
			if got.Compare(tc.want) != 0 || got.Len() != tc.want.Len() {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestScoreCompare(t *testing.T) {
	tests := map[string]struct {
		a, b Score
		want int
	}{
		"higher first component wins":  {ScoreOf(1, -5), ScoreOf(0, 5), 1},
		"second component breaks ties": {ScoreOf(1, -0.5), ScoreOf(1, -0.2), -1},
		"missing components are zero":  {ScoreOf(1), ScoreOf(1, 0), 0},
		"−Inf is below every number":   {ScoreOf(math.Inf(-1)), ScoreOf(-1e308), -1},
		"NaN is below −Inf":            {ScoreOf(math.NaN()), ScoreOf(math.Inf(-1)), -1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.a.Compare(tc.b); got != tc.want {
				t.Fatalf("Compare = %d, want %d", got, tc.want)
			}
			if got := tc.b.Compare(tc.a); got != -tc.want {
				t.Fatalf("reverse Compare = %d, want %d", got, -tc.want)
			}
		})
	}
	if s := ScoreOf(1, -0.5).String(); s != "[1 -0.5]" {
		t.Errorf("String %q", s)
	}
	if s := ScoreOf(-0.5).String(); s != "-0.5" {
		t.Errorf("String %q", s)
	}
	if s := ScoreOf(1, 2, 3, 4, 5); s.Len() != MaxScoreLen || s.At(4) != 0 || s.At(3) != 4 {
		t.Errorf("ScoreOf truncation %v", s)
	}
}

func TestEmptyRound(t *testing.T) {
	cl := cluster(t, 1, 8)
	res, err := Round(Input{Accounts: newAccounts(), Lease: lease, Placer: cl}, Options{})
	if err != nil || len(res.Grants)+len(res.Waiting)+len(res.Released)+len(res.Tenants) != 0 {
		t.Fatalf("empty round: %+v, %v", res, err)
	}
}

// TestFailedDemandsAroundTheMemoBoundary: demands below 64 GPUs are
// remembered in a bit set, larger ones in a map. On 128 GPUs with 66 held,
// every demand from 63 up fails, and each of its later candidates waits
// for the same reason; the one 1-GPU job is granted.
func TestFailedDemandsAroundTheMemoBoundary(t *testing.T) {
	cl := cluster(t, 2, 64)
	used := placement.Placement{Slots: []placement.Slot{{Node: "node-1", GPUs: make([]int, 64)}, slot("node-2", 0, 1)}}
	for i := range used.Slots[0].GPUs {
		used.Slots[0].GPUs[i] = i
	}
	if err := cl.Allocate("other", used); err != nil {
		t.Fatal(err)
	}
	acc := newAccounts()
	acc.tenant("a", 0, 1000, 1)
	var cands []Candidate
	for i, d := range []ledger.GPUs{63, 64, 65, 63, 64, 65, 1} {
		id := ledger.JobID(fmt.Sprintf("j%d", i))
		acc.job(id, 0)
		cands = append(cands, Candidate{Job: id, Tenant: "a", Demand: d, Submit: t0.Add(time.Duration(i) * time.Second)})
	}
	var tried []ledger.JobID
	res, err := Round(Input{Accounts: acc, Lease: lease, Placer: cl, Candidates: cands},
		Options{Trace: func(s Step) { tried = append(tried, s.Job.Job) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Grants) != 1 || res.Grants[0].Job != "j6" {
		t.Fatalf("grants %+v, want j6's alone", res.Grants)
	}
	for _, w := range res.Waiting {
		if w.Reason.Code != NoFit || w.Reason.Need != int(w.Demand) || w.Reason.FreeTotal != 62 {
			t.Errorf("%s (%d GPUs) waits: %v", w.Job, w.Demand, w.Reason)
		}
	}
	if len(res.Waiting) != 6 || len(tried) != 8 { // j0 twice: the fair stage's pick, then backfill
		t.Fatalf("waiting %d, steps %v", len(res.Waiting), tried)
	}
	verifyCluster(t, cl)
}

func TestPlacerFailureAfterPreemptionIsUndone(t *testing.T) {
	cl := cluster(t, 1, 8)
	e := placement.Placement{Slots: []placement.Slot{slot("node-1", 0, 1, 2, 3, 4, 5, 6, 7)}}
	if err := cl.Allocate("E", e); err != nil {
		t.Fatal(err)
	}
	acc := newAccounts()
	acc.tenant("A", 0, 100, 1)
	acc.tenant("B", 100, 100, 1)
	acc.job("N", 0)
	acc.job("E", 1)
	fp := &failingPlacer{Cluster: cl, n: 0} // N's allocation fails after E was released for it
	_, err := Round(Input{Accounts: acc, Lease: lease, Placer: fp, Candidates: []Candidate{
		{Job: "E", Tenant: "B", Demand: 8, Running: true, Placement: e, Leases: 1},
		{Job: "N", Tenant: "A", Demand: 8},
	}}, Options{})
	if !errors.Is(err, ErrPlacer) {
		t.Fatalf("err = %v", err)
	}
	if p, ok := cl.Allocation("E"); !ok || !samePlacement(p, e) {
		t.Fatal("E was not restored after the failed round")
	}
	if _, ok := cl.Allocation("N"); ok {
		t.Fatal("N holds GPUs after the failed round")
	}
	verifyCluster(t, cl)
}

func TestDefaultTieBreakPrefersEarlierSubmission(t *testing.T) {
	_, in := workedExample(t)
	acc := in.Accounts.(*accounts)
	acc.job("A1", 0.5)
	acc.job("A2", 0.5)
	in.Candidates[0].Submit = t0.Add(time.Minute) // A1 later than A2
	res, err := Round(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Grants[0].Job != "A2" {
		t.Fatalf("first grant %s, want A2 (equal reward, submitted earlier)", res.Grants[0].Job)
	}
}

// Every duplicate is found, with the earlier candidate it repeats, and no
// distinct id is taken for one: candidate i ≥ 3000 repeats i − 3000, and
// the list up to i holds no other duplicate.
func TestIDSetFindsEveryDuplicate(t *testing.T) {
	var cands []Candidate
	for i := range 5000 {
		cands = append(cands, Candidate{Job: ledger.JobID(fmt.Sprintf("job-%d", i))})
	}
	var s idSet
	if i, j := firstDuplicateOf(&s, cands); i != -1 || j != -1 {
		t.Fatalf("distinct ids, yet candidate %d duplicates %d", i, j)
	}
	for i := 3000; i < len(cands); i++ {
		own := cands[i].Job
		cands[i].Job = cands[i-3000].Job
		if got, j := firstDuplicateOf(&s, cands[:i+1]); got != i || j != i-3000 {
			t.Fatalf("candidate %d (%s): duplicate %d of %d, want %d of %d", i, cands[i].Job, got, j, i, i-3000)
		}
		cands[i].Job = own
	}
}

// Job accounts are read when Phase 1 first reaches a tenant: a job without an
// account fails the round (undone) when it is reached, and is not looked up
// at all when the cluster fills before its tenant's turn.
func TestJobAccountsAreReadWhenTheTenantIsReached(t *testing.T) {
	build := func() (*placement.Cluster, Input) {
		cl := cluster(t, 1, 8)
		acc := newAccounts()
		acc.tenant("A", 0, 100, 1)
		acc.tenant("B", 50, 100, 1)
		acc.job("a", 0)
		return cl, Input{Accounts: acc, Lease: lease, Placer: cl, Candidates: []Candidate{
			{Job: "a", Tenant: "A", Demand: 8},
			{Job: "ghost", Tenant: "B", Demand: 1}, // no account
		}}
	}
	cl, in := build()
	res, err := Round(in, Options{})
	if err != nil {
		t.Fatalf("B is never reached (A fills the cluster), yet: %v", err)
	}
	if why, _ := res.Why("ghost"); why.Code != ClusterFull {
		t.Fatalf("ghost waits because %v", why)
	}
	verifyCluster(t, cl)

	cl, in = build()
	in.Candidates[0].Demand = 4 // now B is reached
	_, err = Round(in, Options{})
	var e *Error
	if !errors.Is(err, ErrUnknownJob) || !errors.As(err, &e) || e.Job != "ghost" {
		t.Fatalf("err = %v, want ErrUnknownJob naming ghost", err)
	}
	if cl.Free() != 8 {
		t.Fatalf("free = %d after a rejected round, want 8", cl.Free())
	}
}

// skewedAppender looks job accounts up through JobAccountsAppender, then
// lets skew change the answer (as an implementation at fault might), and
// keeps the ids it was asked for.
type skewedAppender struct {
	*accounts
	skew func([]ledger.Account) ([]ledger.Account, bool)
	ids  *[]ledger.JobID
}

func (s skewedAppender) AppendJobAccounts(dst []ledger.Account, ids []ledger.JobID) ([]ledger.Account, bool) {
	*s.ids = slices.Clone(ids)
	for _, id := range ids {
		a, _ := s.JobAccount(id)
		dst = append(dst, a)
	}
	return s.skew(dst)
}

// An AppendJobAccounts that answers other than its interface states (too
// many or too few accounts, or false with no unknown job before its end)
// fails the round with ErrInvalidInput, undone, rather than a panic, a
// decision on made-up accounts or an unknown job it did not name; false
// after some accounts names the next candidate as unknown. The Rounder
// then runs a sound round as a fresh one does.
func TestJobAccountsAppenderAtFault(t *testing.T) {
	for _, c := range []struct {
		name string
		skew func([]ledger.Account) ([]ledger.Account, bool)
		err  error
		job  int // ErrUnknownJob: the index of the id named in those asked
	}{
		{"ok with an account too few", func(a []ledger.Account) ([]ledger.Account, bool) { return a[:len(a)-1], true }, ErrInvalidInput, -1},
		{"ok with an account too many", func(a []ledger.Account) ([]ledger.Account, bool) { return append(a, a[0]), true }, ErrInvalidInput, -1},
		{"ok with none", func(a []ledger.Account) ([]ledger.Account, bool) { return a[:0], true }, ErrInvalidInput, -1},
		{"false with every account", func(a []ledger.Account) ([]ledger.Account, bool) { return a, false }, ErrInvalidInput, -1},
		{"false with an account too many", func(a []ledger.Account) ([]ledger.Account, bool) { return append(a, a[0]), false }, ErrInvalidInput, -1},
		{"false after the first account", func(a []ledger.Account) ([]ledger.Account, bool) { return a[:1], false }, ErrUnknownJob, 1},
		{"false before any", func(a []ledger.Account) ([]ledger.Account, bool) { return a[:0], false }, ErrUnknownJob, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var x Rounder
			cl, in := workedExample(t)
			var asked []ledger.JobID
			in.Accounts = skewedAppender{accounts: in.Accounts.(*accounts), skew: c.skew, ids: &asked}
			_, err := x.Round(in, Options{})
			var e *Error
			if !errors.Is(err, c.err) || !errors.As(err, &e) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if c.err == ErrUnknownJob && (len(asked) < 2 || e.Job != asked[c.job]) {
				t.Fatalf("err = %v, want it to name the job after the accounts returned, of %v", err, asked)
			}
			if c.err == ErrInvalidInput && (e.Index != -1 || e.Job != "") {
				t.Fatalf("err = %#v, want it to name no candidate (Index -1)", e)
			}
			if cl.Free() != 16 {
				t.Fatalf("free = %d after a rejected round, want 16", cl.Free())
			}
			cl, in = workedExample(t)
			got, err := x.Round(in, Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, in = workedExample(t)
			if want, _ := Round(in, Options{}); !reflect.DeepEqual(got, want) {
				t.Fatalf("after the rejected round: %+v, a fresh round %+v", got, want)
			}
			verifyCluster(t, cl)
		})
	}
}

// A Rounder that read job accounts through JobAccountsAppender keeps none
// of the ids it asked for after the round, accepted or rejected.
func TestRounderKeepsNoBatchIDs(t *testing.T) {
	for _, ok := range []bool{true, false} {
		var x Rounder
		_, in := workedExample(t)
		var asked []ledger.JobID
		in.Accounts = skewedAppender{accounts: in.Accounts.(*accounts), ids: &asked,
			skew: func(a []ledger.Account) ([]ledger.Account, bool) { return a, ok }}
		if _, err := x.Round(in, Options{}); (err == nil) != ok || len(asked) == 0 {
			t.Fatalf("ok %v: err %v, ids asked %v", ok, err, asked)
		}
		ids := x.r.batchIDs[:cap(x.r.batchIDs)]
		if len(ids) == 0 || slices.ContainsFunc(ids, func(id ledger.JobID) bool { return id != "" }) {
			t.Fatalf("ok %v: the Rounder keeps %q", ok, ids)
		}
	}
}

// A Rounder whose input is rejected before the round starts (a bad
// candidate, an unknown tenant, a duplicate) keeps none of it either: not
// its Accounts, Placer or candidates. The rejected input is larger than the
// round before, whose buffers it outgrows.
func TestRejectedInputLeavesRounderEmpty(t *testing.T) {
	for _, bad := range []struct {
		name string
		edit func(c *Candidate)
	}{
		{"an empty job id", func(c *Candidate) { c.Job = "" }},
		{"an unknown tenant", func(c *Candidate) { c.Tenant = "nobody" }},
		{"a duplicate", func(c *Candidate) { c.Job = "A1" }},
	} {
		var x Rounder
		_, in := workedExample(t)
		if _, err := x.Round(in, Options{}); err != nil {
			t.Fatal(err)
		}
		_, in = workedExample(t)
		var asked []ledger.JobID
		in.Accounts = skewedAppender{accounts: in.Accounts.(*accounts), ids: &asked,
			skew: func(a []ledger.Account) ([]ledger.Account, bool) { return a, true }}
		for i := range 8 {
			in.Candidates = append(in.Candidates, Candidate{Job: ledger.JobID(fmt.Sprintf("more-%d", i)), Tenant: "B", Demand: 1, Submit: t0})
		}
		bad.edit(&in.Candidates[len(in.Candidates)-1])
		if _, err := x.Round(in, Options{}); err == nil {
			t.Fatalf("%s: accepted", bad.name)
		}
		r := &x.r
		if r.accounts != nil || r.batch != nil || r.p != nil || r.in != nil || r.ids.names != nil {
			t.Fatalf("%s: the Rounder keeps the rejected input (accounts %v, placer %v, %d candidates)", bad.name, r.accounts, r.p, len(r.in))
		}
	}
}

// The docs of cand and candEntry state their sizes, which decide the
// memory a large round's largest arrays take: a change of layout must
// update them.
func TestCandSize(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("the sizes pinned here are those of 64-bit platforms")
	}
	if got := unsafe.Sizeof(cand{}); got != 24 {
		t.Fatalf("cand is %d bytes, its doc says 24", got)
	}
	if got := unsafe.Sizeof(candEntry{}); got != 48 {
		t.Fatalf("candEntry is %d bytes, its doc says 48", got)
	}
}

// shareGPU finds a common GPU of two lists of one node, on nodes of up to
// 64 GPUs (a bit set) and larger ones (every pair).
func TestShareGPU(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b []int
		want bool
	}{
		{"no GPUs", nil, nil, false},
		{"one list empty", []int{0, 1}, nil, false},
		{"disjoint", []int{0, 2, 4}, []int{1, 3, 5}, false},
		{"one in common", []int{0, 2, 4}, []int{5, 4}, true},
		{"the last bit", []int{63}, []int{1, 63}, true},
		{"beyond 64 in a", []int{64, 100}, []int{1, 100}, true},
		{"beyond 64 in a, disjoint", []int{64, 100}, []int{1, 63, 65}, false},
		{"beyond 64 in b only", []int{1, 2}, []int{64, 2}, true},
		{"beyond 64 in b, disjoint", []int{1, 2}, []int{66, 3}, false},
	} {
		if got := shareGPU(c.a, c.b); got != c.want {
			t.Errorf("%s: shareGPU(%v, %v) = %v, want %v", c.name, c.a, c.b, got, c.want)
		}
		if got := shareGPU(c.b, c.a); got != c.want {
			t.Errorf("%s, swapped: shareGPU(%v, %v) = %v, want %v", c.name, c.b, c.a, got, c.want)
		}
	}
}

// A Rounder whose round looked for room among the expiring jobs (the
// optimistic look, which indexes their slots) keeps none of their node ids
// and GPU lists after the round.
func TestRounderKeepsNoOwnerSlots(t *testing.T) {
	var x Rounder
	cl, in := smallRound(t)
	res, err := x.Round(in, Options{Reward: NewJobFirst})
	if err != nil {
		t.Fatal(err)
	}
	if cap(x.r.owners) == 0 {
		t.Fatal("the round made no optimistic look: the test shows nothing")
	}
	if err := undoSmall(cl, res); err != nil {
		t.Fatal(err)
	}
	if len(x.r.owners) > 0 || slices.ContainsFunc(x.r.owners[:cap(x.r.owners)], func(o ownerSlot) bool { return o.node != "" || o.gpus != nil }) {
		t.Fatalf("the Rounder keeps %+v", x.r.owners[:cap(x.r.owners)])
	}
}

// A Rounder reuses its array of grants without clearing it first, and its
// heap entries come from one array taken in parts: after each round,
// accepted or failed, no entry past the round's grants and no heap entry
// holds anything, even when the round made fewer grants than the one
// before.
func TestRounderKeepsNoStaleGrantsOrEntries(t *testing.T) {
	var x Rounder
	round := func(jobs int, gpus int, unknown bool) (Result, error) {
		cl := cluster(t, 4, 8)
		acc := newAccounts()
		acc.tenant("A", 100, 1000, 8)
		acc.tenant("B", 200, 1000, 8)
		var cands []Candidate
		for i := range jobs {
			id := ledger.JobID(fmt.Sprintf("j%02d", i))
			if !unknown || i != jobs-1 {
				acc.job(id, ledger.Rho(float64(i)/10))
			}
			cands = append(cands, Candidate{Job: id, Tenant: ledger.TenantID("AB"[i%2 : i%2+1]), Demand: ledger.GPUs(gpus), Submit: t0})
		}
		return x.Round(Input{Accounts: acc, Candidates: cands, Lease: lease, Placer: cl}, Options{})
	}
	stale := func(what string, n int) {
		t.Helper()
		if gs := x.r.grants[n:cap(x.r.grants)]; slices.ContainsFunc(gs, func(g Grant) bool { return !reflect.ValueOf(g).IsZero() }) {
			t.Fatalf("%s: the Rounder keeps grants past the %d made: %+v", what, n, gs)
		}
		if es := x.r.heaps[:cap(x.r.heaps)]; slices.ContainsFunc(es, func(e candEntry) bool { return e != candEntry{} }) {
			t.Fatalf("%s: the Rounder keeps heap entries %+v", what, es)
		}
	}
	for _, c := range []struct {
		name    string
		jobs    int
		gpus    int
		unknown bool
		grants  int
	}{
		{"thirty-two grants", 40, 1, false, 32},
		{"four grants", 10, 8, false, 4},
		{"sixteen grants", 20, 2, false, 16},
		{"a failed round", 20, 1, true, 0},
		{"two grants", 3, 16, false, 2},
	} {
		res, err := round(c.jobs, c.gpus, c.unknown)
		if (err != nil) != c.unknown || len(res.Grants) != c.grants {
			t.Fatalf("%s: %d grants, err %v", c.name, len(res.Grants), err)
		}
		stale(c.name, len(res.Grants))
	}
}

// copyCounter is a Cluster that counts the copies a round takes of it.
type copyCounter struct {
	*placement.Cluster
	copies *int
}

func (c copyCounter) Clone() *placement.Cluster { *c.copies++; return c.Cluster.Clone() }

// A round on a Cluster looks among the expiring jobs with PlaceWithout,
// and copies the cluster for its optimistic view only once its looks have
// marked as many slots as the cluster has nodes. Tenant A's new jobs come
// before B's expiring E1 and E2, each on a node of 4 GPUs; jobs O hold the
// other nodes.
func TestOptimisticLooksCopyAClusterOnlyWhenMany(t *testing.T) {
	for _, tc := range []struct {
		name    string
		nodes   int
		pending []Candidate
		copies  int
		granted []ledger.JobID
	}{
		// P1 looks, marking the slots of E1 and E2 (2 < 4 nodes), and takes
		// half of E1's node; E1, preempted, looks again (3 < 4) and takes
		// E2's node, E2 let go.
		{"few marks", 4, []Candidate{{Job: "P1", Tenant: "A", Demand: 2, Submit: t0}}, 0, []ledger.JobID{"P1", "E1"}},
		// The same on 2 nodes: E1's look finds 2 slots marked and copies.
		{"many marks", 2, []Candidate{{Job: "P1", Tenant: "A", Demand: 2, Submit: t0}}, 1, []ledger.JobID{"P1", "E1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := cluster(t, tc.nodes, 4)
			e1, _ := cl.Place(4)
			must(t, cl.Allocate("E1", e1))
			e2, _ := cl.Place(4)
			must(t, cl.Allocate("E2", e2))
			for i := 2; i < tc.nodes; i++ {
				o, _ := cl.Place(4)
				must(t, cl.Allocate(fmt.Sprint("O", i), o))
			}
			acc := newAccounts()
			acc.tenant("A", 0, 3600, 4)
			acc.tenant("B", 3600, 3600, 4)
			acc.job("E1", 2)
			acc.job("E2", 2)
			cands := []Candidate{
				{Job: "E1", Tenant: "B", Demand: 4, Running: true, Placement: e1, Leases: 1},
				{Job: "E2", Tenant: "B", Demand: 4, Running: true, Placement: e2, Leases: 1},
			}
			for _, c := range tc.pending {
				acc.job(c.Job, 0)
				cands = append(cands, c)
			}
			copies := 0
			res, err := Round(Input{Accounts: acc, Candidates: cands, Lease: lease, Placer: copyCounter{cl, &copies}}, Options{Reward: NewJobFirst})
			if err != nil {
				t.Fatal(err)
			}
			var granted []ledger.JobID
			for _, g := range res.Grants {
				if g.Kind == New {
					granted = append(granted, g.Job)
				}
			}
			if !slices.Equal(granted, tc.granted) || copies != tc.copies {
				t.Fatalf("new grants %v with %d copies, want %v with %d", granted, copies, tc.granted, tc.copies)
			}
		})
	}
}
