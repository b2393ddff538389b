package astraea_test

import (
	"fmt"
	"time"

	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/astraea"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// Tenant b's sixteen 1-GPU jobs, started a minute apart, fill two 8-GPU
// nodes; their leases end one at a time. Tenant a's 16-GPU job never fits
// what one lease end frees, so the paper's round sends a out of play at
// every tick and renews b's job: the gang waits for b's jobs to end. With
// ReserveAfter, once the gang has been a's blocked pick for ten minutes
// the policy drains both nodes for it (b's jobs are not renewed) and the
// gang starts within a lease.
func ExampleOptions_reserveAfter() {
	t0 := time.Date(2020, 9, 7, 0, 0, 0, 0, time.UTC)
	var jobs []trace.Job
	for i := range 16 {
		jobs = append(jobs, trace.Job{ID: fmt.Sprintf("b%02d", i), Tenant: "b", GPUs: 1,
			Submit: t0.Add(time.Duration(i) * time.Minute), Duration: 3 * time.Hour})
	}
	jobs = append(jobs, trace.Job{ID: "gang", Tenant: "a", GPUs: 16, Submit: t0.Add(20 * time.Minute), Duration: time.Hour})
	cfg := simulate.DefaultConfig(2, 8, map[string]float64{"a": 1, "b": 1})
	for _, after := range []time.Duration{0, 10 * time.Minute} {
		o := astraea.DefaultOptions()
		o.ReserveAfter = after
		p, err := astraea.New(o)
		if err != nil {
			panic(err)
		}
		res, err := simulate.Run(cfg, trace.FromJobs(jobs), p)
		if err != nil {
			panic(err)
		}
		for _, j := range res.Run.Jobs {
			if j.ID == "gang" {
				fmt.Printf("ReserveAfter %v: the gang waits %v\n", after, j.FirstStart.Sub(j.Submit))
			}
		}
	}
	// Output:
	// ReserveAfter 0s: the gang waits 2h57m0s
	// ReserveAfter 10m0s: the gang waits 25m10s
}
