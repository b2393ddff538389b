//go:build unix

// Command trainer is a toy training job that cooperates with lease
// preemption the way ASTRAEA's modified DL library does: it keeps an
// in-memory snapshot after every iteration, flushes the last complete one
// to disk atomically on SIGTERM or SIGUSR1 and exits, and resumes from it
// when started again. See checkpoint.TrainerMain for the flags and the
// lines it prints.
//
// Usage:
//
//	trainer -state job.snap -iters 3000 -seed 1 -pace 50us -grace 1s [-stall-at K]
package main

import (
	"os"

	"github.com/astraea-sched/astraea/examples/checkpoint"
)

func main() {
	os.Exit(checkpoint.TrainerMain(os.Args[1:], os.Stdout, os.Stderr))
}
