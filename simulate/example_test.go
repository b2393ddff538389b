package simulate_test

import (
	"fmt"
	"time"

	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/astraea"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// Two tenants share one 8-GPU node. Tenant "a" submits a long 8-GPU job;
// tenant "b" submits a short one a minute later. At a's first lease end
// (900 s) b is owed more, so a's lease is not renewed: a checkpoints (10 s),
// b runs, and a resumes after a 30 s cold start; each of a's later
// lease ends, renewed in place, costs another 10 s checkpoint but no cold start. Under Eq. 16 each tenant is
// owed half the node, so a, which borrowed b's half, ends with ρ > 1.
func ExampleRun() {
	t0 := time.Date(2020, 9, 7, 0, 0, 0, 0, time.UTC)
	src := trace.FromJobs([]trace.Job{
		{ID: "a-train", Tenant: "a", GPUs: 8, Submit: t0, Duration: time.Hour},
		{ID: "b-eval", Tenant: "b", GPUs: 8, Submit: t0.Add(time.Minute), Duration: 5 * time.Minute},
	})
	cfg := simulate.DefaultConfig(1, 8, map[string]float64{"a": 1, "b": 1})
	p, err := astraea.New(astraea.DefaultOptions())
	if err != nil {
		panic(err)
	}
	res, err := simulate.Run(cfg, src, p)
	if err != nil {
		panic(err)
	}
	for _, j := range res.Run.Jobs {
		fmt.Printf("%s: start +%v, end +%v, preempted %d×, ρ %v\n",
			j.ID, j.FirstStart.Sub(t0), j.End.Sub(t0), j.Preemptions, j.Rho)
	}
	// Output:
	// b-eval: start +15m10s, end +20m10s, preempted 0×, ρ 0.5217
	// a-train: start +0s, end +1h6m10s, preempted 1×, ρ 1.8489
}
