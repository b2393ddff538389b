package baselines

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/astraea-sched/astraea/ledger"
	"github.com/astraea-sched/astraea/placement"
	"github.com/astraea-sched/astraea/simulate"
)

// benchState builds a tick of realistic size: the Venus configuration of the
// comparison (100 nodes × 8 GPUs, 15 tenants), the cluster full of running
// jobs and `pending` jobs waiting, with an Eq. 16 ledger an hour old.
func benchState(b *testing.B, pending int) *simulate.State {
	b.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	nodes := make([]placement.Node, 100)
	for i := range nodes {
		nodes[i] = placement.Node{ID: fmt.Sprintf("node-%03d", i), GPUs: 8}
	}
	cl, err := placement.NewCluster(nodes)
	if err != nil {
		b.Fatal(err)
	}
	quotas := make(map[string]float64)
	l, err := ledger.New(ledger.Config{Mode: ledger.QuotaShare, Capacity: 800, Start: t0})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 15 {
		t := fmt.Sprintf("vc%02d", i)
		quotas[t] = 1.0 / 15
		if err := l.AddTenant(t0, ledger.TenantID(t), 1); err != nil {
			b.Fatal(err)
		}
	}
	sizes := []int{1, 1, 1, 2, 4, 8, 8, 16}
	s := &simulate.State{Now: t0.Add(time.Hour), Interval: 10 * time.Second, Lease: 900 * time.Second,
		Cluster: cl, Quotas: quotas, Capacity: 800}
	n := 0
	mk := func() *simulate.JobState {
		n++
		j := job(fmt.Sprintf("j%05d", n), fmt.Sprintf("vc%02d", r.IntN(15)), sizes[r.IntN(len(sizes))], r.IntN(3600), 60+r.IntN(36000))
		return &simulate.JobState{Job: j, Remaining: j.Duration}
	}
	for cl.Free() > 0 {
		js := mk()
		pl, err := cl.Place(js.Job.GPUs)
		if err != nil {
			continue
		}
		if err := cl.Allocate(js.Job.ID, pl); err != nil {
			b.Fatal(err)
		}
		js.Status, js.Placement, js.Ran = simulate.Running, pl, true
		js.LastStart = js.Job.Submit
		js.Attained = s.Now.Sub(js.LastStart)
		js.LeaseEnd = s.Now // every lease ends now: the most work for Themis
		if err := l.Submit(t0, ledger.JobID(js.Job.ID), ledger.TenantID(js.Job.Tenant), ledger.GPUs(js.Job.GPUs), 1); err != nil {
			b.Fatal(err)
		}
		if err := l.Start(t0, ledger.JobID(js.Job.ID)); err != nil {
			b.Fatal(err)
		}
		s.Running = append(s.Running, js)
	}
	for range pending {
		js := mk()
		if err := l.Submit(t0, ledger.JobID(js.Job.ID), ledger.TenantID(js.Job.Tenant), ledger.GPUs(js.Job.GPUs), 1); err != nil {
			b.Fatal(err)
		}
		s.Pending = append(s.Pending, js)
	}
	sortStates(s.Running)
	sortStates(s.Pending)
	s.Accounts = l.View(s.Now)
	return s
}

func sortStates(xs []*simulate.JobState) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && simulate.CompareJobs(xs[j], xs[j-1]) < 0; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// BenchmarkSchedule measures one tick of every policy on a full 800-GPU
// cluster with 1,000 waiting jobs. Each iteration builds a fresh policy, so
// stateful policies pay their first-tick cost (Gandiva_fair reslices).
func BenchmarkSchedule(b *testing.B) {
	s := benchState(b, 1000)
	for _, e := range All() {
		b.Run(e.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := e.New()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Schedule(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
