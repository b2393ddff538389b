package lease_test

import (
	"math"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/lease"
	"github.com/astraea-sched/astraea/ledger"
)

var _ lease.Billing = (*ledger.Ledger)(nil)

// With a ledger as the billing hook, a job's Alloc is its GPUs times the
// time it held them — checkpoint and cold start included, nothing after a
// mid-lease completion.
func TestLedgerBillsHeldTime(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	l, err := ledger.New(ledger.Config{Capacity: 16, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := lease.NewTable(lease.Config{Lease: 900 * time.Second, Billing: l})
	sim, _ := lease.NewSim(lease.SimConfig{Checkpoint: 10 * time.Second, ColdStart: 30 * time.Second, Iteration: 7 * time.Second})
	co, _ := lease.NewCoordinator(tb, sim, lease.CoordinatorConfig{Grace: time.Minute})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(l.AddTenant(t0, "A", 1))
	must(l.AddTenant(t0, "B", 1))
	for _, j := range []struct {
		id     lease.JobID
		tenant ledger.TenantID
		work   time.Duration
	}{{"A1", "A", 2000 * time.Second}, {"A2", "A", 500 * time.Second}, {"B1", "B", 3000 * time.Second}} {
		must(l.Submit(t0, j.id, j.tenant, 8, 1))
		must(tb.Submit(t0, j.id))
		must(sim.Add(j.id, j.work))
	}
	_, err = co.Boundary(t0, lease.Plan{Start: []lease.Grant{{Job: "A1", GPUs: 8}, {Job: "A2", GPUs: 8}}})
	must(err)
	// A2 completes mid-lease.
	end, _ := sim.CompletesAt("A2")
	must(tb.Finish(end, "A2", lease.Completed))
	must(l.Finish(end, "A2", ledger.Completed))
	// Lease end: A1 preempted for B1; later A1 restored.
	out, err := co.Boundary(t0.Add(900*time.Second), lease.Plan{Preempt: []lease.Grant{{Job: "A1", GPUs: 8}}, Start: []lease.Grant{{Job: "B1", GPUs: 8}}})
	must(err)
	out, err = co.Boundary(out.StartAt.Add(900*time.Second), lease.Plan{Preempt: []lease.Grant{{Job: "B1", GPUs: 8}}, Start: []lease.Grant{{Job: "A1", GPUs: 8}}})
	must(err)
	end, _ = sim.CompletesAt("A1")
	must(tb.Finish(end, "A1", lease.Completed))
	must(l.Finish(end, "A1", ledger.Completed))
	must(l.Advance(end))

	for _, id := range []lease.JobID{"A1", "A2", "B1"} {
		in, err := tb.InfoAt(end, id)
		must(err)
		acct, err := l.JobAccount(id, t0, end)
		must(err)
		want := 8 * in.Usage.Held.Seconds()
		if math.Abs(float64(acct.Alloc)-want) > 1e-6*want {
			t.Errorf("%s: ledger Alloc %v GPU·s, lease held %v × 8 GPUs = %v", id, acct.Alloc, in.Usage.Held, want)
		}
	}
	a2, _ := tb.Info("A2")
	if a2.Usage.Held != 500*time.Second {
		t.Errorf("A2 held %v, want 500s: a job finishing mid-lease is not billed to its lease end", a2.Usage.Held)
	}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
}
