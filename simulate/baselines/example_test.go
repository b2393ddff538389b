package baselines_test

import (
	"fmt"
	"time"

	"github.com/astraea-sched/astraea/simulate"
	"github.com/astraea-sched/astraea/simulate/baselines"
	"github.com/astraea-sched/astraea/simulate/trace"
)

// The table a command walks for "-policy all": names and fresh constructors.
func ExampleAll() {
	for _, e := range baselines.All() {
		fmt.Println(e.Name)
	}
	// Output:
	// fifo
	// yarn-cs
	// hived
	// allox
	// tiresias-l
	// themis
	// gandiva-fair
}

// Run YARN-CS on one 8-GPU node shared half and half: tenant a cannot use
// b's idle half, so its second job waits for the first.
func ExampleNewYARNCS() {
	start := time.Date(2020, 9, 7, 0, 0, 0, 0, time.UTC)
	src := trace.FromJobs([]trace.Job{
		{ID: "a1", Tenant: "a", GPUs: 4, Submit: start, Duration: time.Hour},
		{ID: "a2", Tenant: "a", GPUs: 4, Submit: start, Duration: time.Hour},
	})
	cfg := simulate.DefaultConfig(1, 8, map[string]float64{"a": 1, "b": 1})
	res, err := simulate.Run(cfg, src, baselines.NewYARNCS(baselines.YARNConfig{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, j := range res.Run.Jobs {
		fmt.Printf("%s started after %v\n", j.ID, j.FirstStart.Sub(start))
	}
	// Output:
	// a1 started after 0s
	// a2 started after 1h0m0s
}
