package proptest_test

import (
	"fmt"
	"time"

	"github.com/astraea-sched/astraea/examples/proptest"
	"github.com/astraea-sched/astraea/ledger"
)

// Two tenants of equal weight share 8 GPUs. Team a's first job takes the
// whole cluster; when it ends, b, which has received nothing, goes before
// a's second job although a queued first: the ledger's ρ decides.
func ExampleRun() {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	run, err := proptest.NewRun(t0, 8, time.Minute, map[ledger.TenantID]float64{"a": 1, "b": 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	arrivals := [][]proptest.Job{
		{{ID: "a1", Tenant: "a", GPUs: 8, Steps: 2}, {ID: "a2", Tenant: "a", GPUs: 8, Steps: 1}, {ID: "b1", Tenant: "b", GPUs: 8, Steps: 1}},
		nil,
		nil,
	}
	for _, step := range arrivals {
		started, err := run.StepWith(proptest.LowestRho{}, step)
		if err != nil {
			fmt.Println(err)
			return
		}
		v := run.Ledger.View(run.Now())
		a, _ := v.TenantAccount("a")
		b, _ := v.TenantAccount("b")
		fmt.Printf("%v: started %v; ρ a %v, b %v\n", run.Now().Sub(t0), ids(started), a.Rho, b.Rho)
	}
	// Output:
	// 0s: started [a1]; ρ a 1.0000, b 1.0000
	// 1m0s: started []; ρ a 2.0000, b 0.0000
	// 2m0s: started [b1]; ρ a 2.0000, b 0.0000
}

func ids(js []proptest.Job) []ledger.JobID {
	out := []ledger.JobID{}
	for _, j := range js {
		out = append(out, j.ID)
	}
	return out
}
