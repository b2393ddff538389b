// Command workedexample replays the worked example of the ASTRAEA paper
// (section 11, "one round end to end") and prints the round step by step:
// the tenant Phase 1 picks, the job Phase 2 picks and its reward, where
// consolidated placement puts it, the tenant's pre-credited ρ, and why B1
// waits.
//
// The cluster has 2 nodes of 8 GPUs; tenants A and B have equal weight, so a
// quota of 8 GPUs each under Eq. 16. The history below is replayed into a
// real ledger over [0 s, 9000 s) so that, at the round, A has received
// 54,000 GPU·s of the 72,000 it was owed (ρ 0.75) and B 72,000 of 72,000
// (ρ 1.00), and the three waiting jobs have ρ_job 0.50 (A1), 0.80 (A2) and
// 0.40 (B1), as in the paper:
//
//	A0 (4 GPUs)  runs [0, 4500), completes        18,000 GPU·s
//	A2 (4 GPUs)  runs [0, 5400) and [6300, 8100)  28,800 of 36,000 owed
//	A1 (8 GPUs)  submitted 5400, runs [5400, 6300)  7,200 of 14,400 owed
//	B0 (8 GPUs)  runs [0, 8000), completes        64,000 GPU·s
//	B1 (8 GPUs)  submitted 5000, runs [8000, 9000)  8,000 of 20,000 owed
//
// Run it with:
//
//	go run ./examples/workedexample
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/sched"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "workedexample:", err)
		os.Exit(1)
	}
}

// history replays the example's past into a ledger and returns it at 9000 s.
func history(t0 time.Time) (*ledger.Ledger, error) {
	l, err := ledger.New(ledger.Config{Mode: ledger.QuotaShare, Capacity: 16, Start: t0})
	if err != nil {
		return nil, err
	}
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	steps := []func() error{
		func() error { return l.AddTenant(at(0), "A", 1) },
		func() error { return l.AddTenant(at(0), "B", 1) },
		func() error { return l.Submit(at(0), "A0", "A", 4, 1) },
		func() error { return l.Submit(at(0), "A2", "A", 4, 1) },
		func() error { return l.Submit(at(0), "B0", "B", 8, 1) },
		func() error { return l.Start(at(0), "A0") },
		func() error { return l.Start(at(0), "A2") },
		func() error { return l.Start(at(0), "B0") },
		func() error { return l.Finish(at(4500), "A0", ledger.Completed) },
		func() error { return l.Submit(at(5000), "B1", "B", 8, 1) },
		func() error { return l.Stop(at(5400), "A2") },
		func() error { return l.Submit(at(5400), "A1", "A", 8, 1) },
		func() error { return l.Start(at(5400), "A1") },
		func() error { return l.Stop(at(6300), "A1") },
		func() error { return l.Start(at(6300), "A2") },
		func() error { return l.Finish(at(8000), "B0", ledger.Completed) },
		func() error { return l.Start(at(8000), "B1") },
		func() error { return l.Stop(at(8100), "A2") },
		func() error { return l.Stop(at(9000), "B1") },
		func() error { return l.Advance(at(9000)) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
		if err := l.Check(); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// run prints the example to w.
func run(w io.Writer) error {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0.Add(9000 * time.Second)
	const lease = 900 * time.Second

	l, err := history(t0)
	if err != nil {
		return err
	}
	view := l.View(now)

	fmt.Fprintln(w, "ASTRAEA worked example (paper §11): 2 nodes × 8 GPUs, tenants A and B of equal weight, lease 900 s")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Accounts at 9000 s (Eq. 16, quota 8 GPUs each):")
	for _, id := range []ledger.TenantID{"A", "B"} {
		a, _ := view.TenantAccount(id)
		fmt.Fprintf(w, "  tenant %s: received %6.0f of %6.0f GPU·s owed, ρ_tenant %.2f\n", id, a.Alloc, a.FairShare, a.Rho)
	}
	jobs := []sched.Candidate{
		{Job: "A1", Tenant: "A", Demand: 8, Submit: t0.Add(5400 * time.Second), Leases: 1},
		{Job: "A2", Tenant: "A", Demand: 4, Submit: t0, Leases: 2},
		{Job: "B1", Tenant: "B", Demand: 8, Submit: t0.Add(5000 * time.Second), Leases: 1},
	}
	for _, c := range jobs {
		a, _ := view.JobAccount(c.Job)
		fmt.Fprintf(w, "  job %s (tenant %s): demand %d GPUs, received %5.0f of %5.0f GPU·s owed, ρ_job %.2f\n", c.Job, c.Tenant, c.Demand, a.Alloc, a.FairShare, a.Rho)
	}

	cluster, err := placement.NewCluster([]placement.Node{{ID: "node-1", GPUs: 8}, {ID: "node-2", GPUs: 8}})
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The round (Phase 1: lowest ρ_tenant; Phase 2: highest reward = −ρ_job):")
	res, err := sched.Round(sched.Input{Accounts: view, Candidates: jobs, Lease: lease, Placer: cluster}, sched.Options{
		Trace: func(s sched.Step) {
			fmt.Fprintf(w, "step %d (%s stage): tenant %s (ρ %.2f) → job %s (reward %v)\n",
				s.N, s.Stage, s.Tenant.ID, s.Tenant.Account.Rho, s.Job.Job, s.Reward)
			if !s.Granted {
				fmt.Fprintf(w, "  %s %s", s.Job.Job, s.Reason)
				if s.OutOfPlay {
					fmt.Fprintf(w, "; tenant %s leaves play for this round", s.Tenant.ID)
				}
				fmt.Fprintln(w)
				return
			}
			g := s.Grant
			fmt.Fprintf(w, "  %s placed on %s (%s lease)\n", g.Job, where(g.Placement), g.Kind)
			fmt.Fprintf(w, "  pre-credit %d GPUs × %.0f s = %.0f GPU·s: ρ_%s %.2f → %.2f\n",
				g.Demand, lease.Seconds(), float64(g.Demand)*lease.Seconds(), g.Tenant, g.TenantRhoBefore, g.TenantRhoAfter)
		},
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Granted %d leases; %d of 16 GPUs free.\n", len(res.Grants), cluster.Free())
	for _, wt := range res.Waiting {
		fmt.Fprintf(w, "Why does %s wait? It %s.\n", wt.Job, wt.Reason)
	}
	fmt.Fprintln(w, "A gang is never split, so B1 cannot start on the 4 free GPUs. At the next lease")
	fmt.Fprintln(w, "boundary A's account has grown and B's has not, so B is likely to be served first.")
	return nil
}

// where formats a placement as "node-1 GPUs 0-7, node-2 GPUs 0-3".
func where(p placement.Placement) string {
	parts := make([]string, 0, len(p.Slots))
	for _, s := range p.Slots {
		parts = append(parts, fmt.Sprintf("%s GPUs %s", s.Node, span(s.GPUs)))
	}
	return strings.Join(parts, ", ")
}

// span formats ascending GPU indices, collapsing runs: [0 1 2 5] → "0-2,5".
func span(gs []int) string {
	var b strings.Builder
	for i := 0; i < len(gs); {
		j := i
		for j+1 < len(gs) && gs[j+1] == gs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", gs[i], gs[j])
		} else {
			fmt.Fprintf(&b, "%d", gs[i])
		}
		i = j + 1
	}
	return b.String()
}
