package trace_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/astraea-sched/astraea/simulate/trace"
)

// The generic layout: tenant, job, GPUs, submit time, duration, and an
// optional final state and weight.
func ExampleNewReader() {
	in := `tenant,job,gpus,submit,duration,state
team-a,a1,8,2024-03-01 08:00:00,3600,COMPLETED
team-b,b1,2,2024-03-01 08:00:30,15m,FAILED
`
	r, _ := trace.NewReader(strings.NewReader(in), trace.Options{Name: "jobs.csv"})
	for {
		j, err := r.Next()
		if err == io.EOF {
			break
		}
		fmt.Println(j.ID, j.Tenant, j.GPUs, j.Submit.Format("15:04:05"), j.Duration, j.State)
	}
	fmt.Println(r.Format())
	// Output:
	// a1 team-a 8 08:00:00 1h0m0s COMPLETED
	// b1 team-b 2 08:00:30 15m0s FAILED
	// generic
}

// A bad row stops a strict reader with an error naming file, line and
// column; a lenient reader skips it and reports why.
func ExampleOptions_lenient() {
	in := `job_id,user,vc,gpu_num,cpu_num,state,submit_time,duration
1,u1,vcA,8,1,COMPLETED,2020-09-07 00:00:19,453
2,u1,vcA,0,1,COMPLETED,2020-09-07 00:01:00,60
3,u2,vcB,1,1,FAILED,2020-09-07 00:02:00,10
`
	r, _ := trace.NewReader(strings.NewReader(in), trace.Options{Name: "venus.csv"})
	_, err := trace.ReadAll(r)
	fmt.Println(err)
	fmt.Println(errors.Is(err, trace.ErrGPUs))

	r, _ = trace.NewReader(strings.NewReader(in), trace.Options{Name: "venus.csv", Lenient: true})
	jobs, _ := trace.ReadAll(r)
	fmt.Println(len(jobs), "jobs,", r.Skipped().Rows, "skipped:", r.Skipped().ByReason)
	// Output:
	// trace: venus.csv:3: column gpu_num: GPU demand must be positive ("0")
	// true
	// 2 jobs, 1 skipped: map[GPU demand must be positive:1]
}

// The synthetic workload is deterministic: the same config always yields
// the same jobs.
func ExampleSynthetic() {
	src := trace.Synthetic(trace.DefaultSynthetic())
	for range 3 {
		j, _ := src.Next()
		fmt.Println(j.ID, j.Tenant, j.GPUs, j.Submit.Format("2006-01-02 15:04:05"), j.Duration, j.State)
	}
	// Output:
	// syn-000001 vcYVn 1 2020-09-07 00:03:52 27h46m53s COMPLETED
	// syn-000002 vcEwI 1 2020-09-07 00:07:22 2m38s COMPLETED
	// syn-000003 vcEwI 1 2020-09-07 00:13:19 1m43s COMPLETED
}
