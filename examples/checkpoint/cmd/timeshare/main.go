//go:build unix

// Command timeshare runs a few toy training jobs on fewer "GPU slots" than
// jobs, time-sharing them with real leases: at every lease end a job is
// renewed in place if nobody waits, else it gets a checkpoint signal,
// flushes its last complete snapshot, exits, and a waiting job starts or is
// restored from its own snapshot. It uses the lease package's Table and
// Coordinator with real processes (checkpoint.Procs) and, at the end,
// checks every model against an uninterrupted run, bit for bit.
//
// The jobs are this same program re-executed in "train" mode
// (checkpoint.TrainerMain), so a single `go run` is enough:
//
//	go run ./examples/checkpoint/cmd/timeshare -jobs 3 -slots 1 -lease 100ms
//	go run ./examples/checkpoint/cmd/timeshare -min-runtime 250ms   # see the guard renew jobs
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/astraea-sched/astraea/examples/checkpoint"
	"github.com/astraea-sched/astraea/lease"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "train" {
		os.Exit(checkpoint.TrainerMain(os.Args[2:], os.Stdout, os.Stderr))
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "timeshare:", err)
		os.Exit(1)
	}
}

func run() error {
	nJobs := flag.Int("jobs", 3, "number of training jobs")
	slots := flag.Int("slots", 1, "GPU slots (one job each)")
	iters := flag.Uint64("iters", 3000, "iterations per job")
	pace := flag.Duration("pace", 100*time.Microsecond, "compute time per iteration")
	leaseLen := flag.Duration("lease", 100*time.Millisecond, "lease length")
	grace := flag.Duration("grace", 2*time.Second, "deadline for a preempted job to release its slot")
	minRun := flag.Duration("min-runtime", 0, "minimum runtime guard against preemption thrash")
	dir := flag.String("dir", "", "directory for snapshots (default: a new temporary directory)")
	flag.Parse()
	if *nJobs < 1 || *slots < 1 {
		return fmt.Errorf("-jobs and -slots must be >= 1")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if *dir == "" {
		if *dir, err = os.MkdirTemp("", "timeshare-"); err != nil {
			return err
		}
		defer os.RemoveAll(*dir)
	}

	seeds := map[lease.JobID]uint64{}
	var queue []lease.JobID
	for i := range *nJobs {
		id := lease.JobID(fmt.Sprintf("job-%d", i+1))
		seeds[id] = uint64(i + 1)
		queue = append(queue, id)
	}
	state := func(id lease.JobID) string { return filepath.Join(*dir, string(id)+".snap") }
	procs := &checkpoint.Procs{Command: func(id lease.JobID) *exec.Cmd {
		return exec.Command(self, "train", "-state", state(id), "-iters", strconv.FormatUint(*iters, 10),
			"-seed", strconv.FormatUint(seeds[id], 10), "-pace", pace.String())
	}}
	tb, err := lease.NewTable(lease.Config{Lease: *leaseLen, MinRuntime: *minRun})
	if err != nil {
		return err
	}
	co, err := lease.NewCoordinator(tb, procs, lease.CoordinatorConfig{Grace: *grace})
	if err != nil {
		return err
	}
	t0 := time.Now()
	for _, id := range queue {
		if err := tb.Submit(t0, id); err != nil {
			return err
		}
	}

	var running []lease.JobID
	done := 0
	boundary := func(p lease.Plan) error {
		out, err := co.Boundary(time.Now(), p)
		for _, d := range out.Decisions {
			line := fmt.Sprintf("%8.3fs  %-6s %s", d.At.Sub(t0).Seconds(), d.Job, d.Action)
			switch d.Action {
			case lease.Preempted:
				last, _ := procs.Progress(d.Job)
				line += fmt.Sprintf(" at iteration %d, released after %v", last, d.At.Sub(out.At).Round(time.Millisecond))
				queue = append(queue, d.Job)
				running = remove(running, d.Job)
			case lease.Started, lease.Restored:
				running = append(running, d.Job)
				queue = remove(queue, d.Job)
				if d.Action == lease.Restored {
					line += fmt.Sprintf(" cold start %v", d.ColdStart.Round(time.Millisecond))
				}
			case lease.Renewed:
				if d.Reason == lease.ReasonGuarded {
					line += " (" + d.Reason.String() + ": " + d.Detail + ")"
				}
			case lease.Deferred:
				line += " (" + d.Reason.String() + ")"
			}
			fmt.Println(line)
		}
		return err
	}

	for done < *nJobs {
		now := time.Now()
		// Jobs that completed mid-lease release their slot at once.
		for _, id := range append([]lease.JobID(nil), running...) {
			if last, exited := procs.Progress(id); exited {
				if err := tb.Finish(now, id, lease.Completed); err != nil {
					return err
				}
				fmt.Printf("%8.3fs  %-6s completed at iteration %d\n", now.Sub(t0).Seconds(), id, last)
				running = remove(running, id)
				done++
			}
		}
		var p lease.Plan
		free := *slots - len(running)
		for _, id := range tb.Expired(now) {
			if len(queue) > free {
				p.Preempt = append(p.Preempt, lease.Grant{Job: id, GPUs: 1})
				free++
			} else {
				p.Renew = append(p.Renew, id)
			}
		}
		for _, id := range queue {
			if free == 0 {
				break
			}
			p.Start = append(p.Start, lease.Grant{Job: id, GPUs: 1})
			free--
		}
		if len(p.Preempt)+len(p.Start) > 0 || len(p.Renew) > 0 {
			if err := boundary(p); err != nil {
				return err
			}
			continue
		}
		time.Sleep(time.Millisecond)
	}

	fmt.Println()
	total := tb.Totals(time.Now())
	ok := true
	for id := range tb.Jobs() {
		in, _ := tb.Info(id)
		got, _, err := checkpoint.ReadFile(state(id))
		if err != nil {
			return err
		}
		want := checkpoint.Train(seeds[id], *iters)
		same := got.Iter == want.Iter
		for i := range got.Params {
			same = same && math.Float64bits(got.Params[i]) == math.Float64bits(want.Params[i])
		}
		ok = ok && same
		u := in.Usage
		fmt.Printf("%-6s %d processes, held %v: progress %v, checkpoint %v, cold start %v, lost %v; equals uninterrupted run: %v\n",
			id, len(procs.Segments(id)), u.Held.Round(time.Millisecond), u.Progress.Round(time.Millisecond),
			u.Checkpoint.Round(time.Millisecond), u.ColdStart.Round(time.Millisecond), u.Lost.Round(time.Millisecond), same)
	}
	fmt.Printf("overhead %.1f%% of held GPU time\n", 100*float64(total.Overhead())/float64(total.Held))
	if !ok {
		return fmt.Errorf("a model differs from its uninterrupted run")
	}
	return nil
}

func remove(ids []lease.JobID, id lease.JobID) []lease.JobID {
	out := ids[:0]
	for _, x := range ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}
