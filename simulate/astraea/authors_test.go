package astraea

import (
	"slices"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// book is a ledger of tenants of equal weight on capacity GPUs, from t0.
func book(t *testing.T, capacity int, tenants ...string) *ledger.Ledger {
	t.Helper()
	l, err := ledger.New(ledger.Config{Mode: ledger.QuotaShare, Capacity: ledger.GPUs(capacity), Start: t0})
	must(t, err)
	for _, x := range tenants {
		must(t, l.AddTenant(t0, ledger.TenantID(x), 1))
	}
	return l
}

func pendingJob(t *testing.T, l *ledger.Ledger, id, tenant string, gpus int, submit time.Time) *simulate.JobState {
	t.Helper()
	must(t, l.Submit(submit, ledger.JobID(id), ledger.TenantID(tenant), ledger.GPUs(gpus), 1))
	return &simulate.JobState{Job: trace.Job{ID: id, Tenant: tenant, GPUs: gpus, Submit: submit, Duration: time.Hour}, Status: simulate.Pending}
}

// runningJob places a job of gpus GPUs on cl and returns it as a running
// job in its first lease, which ends at leaseEnd.
func runningJob(t *testing.T, cl *placement.Cluster, id, tenant string, gpus int, submit, leaseEnd time.Time) *simulate.JobState {
	t.Helper()
	pl, err := cl.Place(gpus)
	must(t, err)
	must(t, cl.Allocate(id, pl))
	return &simulate.JobState{Job: trace.Job{ID: id, Tenant: tenant, GPUs: gpus, Submit: submit, Duration: 10 * time.Hour},
		Status: simulate.Running, Ran: true, Leases: 1, Placement: pl, LeaseEnd: leaseEnd}
}

func grantsOf(t *testing.T, p *Policy, s *simulate.State) []string {
	t.Helper()
	d, err := p.Schedule(s)
	must(t, err)
	var ids []string
	for _, g := range d.Grants {
		ids = append(ids, g.Job)
	}
	return ids
}

func TestWaitFirstAfterServesTheLongestWaitingFirst(t *testing.T) {
	// One node of 8 GPUs. A (8 GPUs) has waited 7 h, B (4 GPUs) 5 h.
	// Smallest-first starts B, and then A does not fit; with the
	// authors' six-hour rule A goes first and fills the node.
	now := t0.Add(7 * time.Hour)
	l := book(t, 8, "x")
	a := pendingJob(t, l, "A", "x", 8, t0)
	b := pendingJob(t, l, "B", "x", 4, t0.Add(2*time.Hour))
	must(t, l.Advance(now))
	cl, err := placement.NewCluster([]placement.Node{{ID: "n0", GPUs: 8}})
	must(t, err)
	state := func() *simulate.State {
		return &simulate.State{Now: now, Lease: 900 * time.Second, Cluster: cl, Pending: []*simulate.JobState{a, b},
			Accounts: l.View(now), Quotas: map[string]float64{"x": 1}, Capacity: 8}
	}
	for _, c := range []struct {
		name  string
		after time.Duration
		want  []string
	}{
		{"smallest first without the rule", 0, []string{"B"}},
		{"the job waiting over six hours first with it", 6 * time.Hour, []string{"A"}},
		{"a threshold neither has reached changes nothing", 8 * time.Hour, []string{"B"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultOptions()
			o.NewJobs, o.WaitFirstAfter = Smallest, c.after
			p, err := New(o)
			must(t, err)
			if got := grantsOf(t, p, state()); !slices.Equal(got, c.want) {
				t.Errorf("granted %v, want %v", got, c.want)
			}
		})
	}
}

// starvedScene is the state of the starved-tenant tests at 2 h: two nodes
// of 8 GPUs, tenants x and y of quota 8. y ran 16 GPUs for the first hour;
// since 1 h x has held xHolds GPUs and y yHolds (none if 0), both on n0,
// y's job expiring now if yExpiring. Each submits one 8-GPU job, and only
// one fits, on n1.
func starvedScene(t *testing.T, xHolds, yHolds int, yExpiring bool) *simulate.State {
	t.Helper()
	now := t0.Add(2 * time.Hour)
	l := book(t, 16, "x", "y")
	must(t, l.Submit(t0, "yold", "y", 16, 1))
	must(t, l.Start(t0, "yold"))
	must(t, l.Finish(t0.Add(time.Hour), "yold", ledger.Completed))
	held := map[string]int{"xr": xHolds}
	if yHolds > 0 {
		held["yr"] = yHolds
	}
	for _, id := range []string{"xr", "yr"} {
		if held[id] > 0 {
			must(t, l.Submit(t0.Add(time.Hour), ledger.JobID(id), ledger.TenantID(id[:1]), ledger.GPUs(held[id]), 1))
			must(t, l.Start(t0.Add(time.Hour), ledger.JobID(id)))
		}
	}
	x1 := pendingJob(t, l, "x1", "x", 8, now.Add(-10*time.Second))
	y1 := pendingJob(t, l, "y1", "y", 8, now.Add(-10*time.Second))
	must(t, l.Advance(now))
	cl, err := placement.NewCluster([]placement.Node{{ID: "n0", GPUs: 8}, {ID: "n1", GPUs: 8}})
	must(t, err)
	s := &simulate.State{Now: now, Lease: 900 * time.Second, Cluster: cl, Pending: []*simulate.JobState{x1, y1},
		Accounts: l.View(now), Quotas: map[string]float64{"x": 0.5, "y": 0.5}, Capacity: 16}
	for _, id := range []string{"xr", "yr"} {
		if held[id] == 0 {
			continue
		}
		end := now.Add(time.Minute)
		if id == "yr" && yExpiring {
			end = now
		}
		js := runningJob(t, cl, id, id[:1], held[id], t0.Add(time.Hour), end)
		s.Running = append(s.Running, js)
		if end.Equal(now) {
			s.Expiring = append(s.Expiring, js)
		}
	}
	return s
}

func TestStarvedBelowServesATenantUnderAFifthOfItsQuotaFirst(t *testing.T) {
	// x holds 2 GPUs (ρ 1/8 at 2 h), y nothing (ρ 1). The ρ order serves
	// x; y holds nothing, under a fifth of its quota, so with the authors'
	// rule y goes first.
	for _, c := range []struct {
		name string
		frac float64
		want []string
	}{
		{"the ρ order without the rule", 0, []string{"x1"}},
		{"the starved tenant first with it", 0.2, []string{"y1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultOptions()
			o.StarvedBelow = c.frac
			p, err := New(o)
			must(t, err)
			if got := grantsOf(t, p, starvedScene(t, 2, 0, false)); !slices.Equal(got, c.want) {
				t.Errorf("granted %v, want %v", got, c.want)
			}
		})
	}
}

// TestStarvedBelowCountsWhatATenantKeeps: the rule's threshold is strict,
// and a tenant's expiring jobs do not count as held (the round decides
// them). With StarvedBelow 0.25 the threshold is 0.25 × 8 = 2 GPUs. x
// holds 4 GPUs (ρ 1/4 at 2 h), y holds 2 (ρ 18/16). Holding exactly 2, y
// is not starved and the ρ order serves x; when its 2 GPUs are an
// expiring job, y holds nothing the round does not decide, is starved, and
// goes first.
func TestStarvedBelowCountsWhatATenantKeeps(t *testing.T) {
	for _, c := range []struct {
		name        string
		expiring    bool
		want, other string
	}{
		{"holding exactly the threshold", false, "x1", "y1"},
		{"holding only an expiring job", true, "y1", "x1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultOptions()
			o.StarvedBelow = 0.25
			p, err := New(o)
			must(t, err)
			if got := grantsOf(t, p, starvedScene(t, 4, 2, c.expiring)); !slices.Contains(got, c.want) || slices.Contains(got, c.other) {
				t.Errorf("granted %v, want %s and not %s", got, c.want, c.other)
			}
		})
	}
}

func TestNoBackfillStopsATenantAtItsFirstJobThatDoesNotFit(t *testing.T) {
	// One node of 8 GPUs, 4 of them held. Tenant x's new jobs in FIFO
	// order: A (8 GPUs, does not fit), then B (2). The backfill stage
	// starts B; without it the round ends when x leaves play.
	now := t0.Add(time.Minute)
	l := book(t, 8, "x", "y")
	must(t, l.Submit(t0, "held", "y", 4, 1))
	must(t, l.Start(t0, "held"))
	a := pendingJob(t, l, "A", "x", 8, t0)
	b := pendingJob(t, l, "B", "x", 2, t0.Add(time.Second))
	must(t, l.Advance(now))
	cl, err := placement.NewCluster([]placement.Node{{ID: "n0", GPUs: 8}})
	must(t, err)
	held := runningJob(t, cl, "held", "y", 4, t0, now.Add(time.Hour))
	for _, c := range []struct {
		name       string
		noBackfill bool
		want       []string
	}{
		{"backfill starts the small job", false, []string{"B"}},
		{"without backfill nothing starts", true, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultOptions()
			o.NoBackfill = c.noBackfill
			p, err := New(o)
			must(t, err)
			s := &simulate.State{Now: now, Lease: 900 * time.Second, Cluster: cl, Pending: []*simulate.JobState{a, b},
				Running: []*simulate.JobState{held}, Accounts: l.View(now), Quotas: map[string]float64{"x": 0.5, "y": 0.5}, Capacity: 8}
			if got := grantsOf(t, p, s); !slices.Equal(got, c.want) {
				t.Errorf("granted %v, want %v", got, c.want)
			}
			if tr := p.Traits(); c.noBackfill && tr.RenewsWhenNothingFits {
				t.Errorf("traits %+v: a round without backfill may let an expiring job lapse", tr)
			}
		})
	}
}

func TestAuthorsOptionsAreChecked(t *testing.T) {
	for _, o := range []Options{{StarvedBelow: -0.1}, {StarvedBelow: 1.5}, {WaitFirstAfter: -time.Second}} {
		o.Accounts = ledger.QuotaShare
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}
