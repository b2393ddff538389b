//go:build unix

// Command trainer is a toy training job that cooperates with lease
// preemption the way ASTRAEA's modified DL library does.
//
// It trains a linear regression by deterministic SGD. After every iteration
// it updates an in-memory snapshot of the complete training state. On
// SIGTERM or SIGUSR1 it immediately flushes the last complete snapshot to
// disk (atomically), stops after the iteration in flight if that ends within
// -grace (then flushes that newer snapshot too), and exits 0. Started again
// with the same -state file it resumes from the snapshot. SIGKILL loses
// everything since the last flush; the file is never torn.
//
// It reports on stdout, one line per event:
//
//	ready K     loaded the snapshot of iteration K (0: fresh start)
//	iter K      completed iteration K
//	flushed K   wrote the snapshot of iteration K to disk
//	done N      completed all N iterations and wrote the final snapshot
//
// Usage:
//
//	trainer -state job.snap -iters 3000 -seed 1 -pace 50us -grace 1s [-stall-at K]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/astraea-sched/astraea/examples/checkpoint"
)

func main() {
	state := flag.String("state", "", "snapshot file (required)")
	iters := flag.Uint64("iters", 1000, "iterations to train")
	seed := flag.Uint64("seed", 1, "data seed")
	pace := flag.Duration("pace", 0, "simulated compute time per iteration (busy, like compute)")
	grace := flag.Duration("grace", time.Second, "how long a signalled job waits for the iteration in flight")
	stallAt := flag.Uint64("stall-at", 0, "if > 0, the iteration after this one never ends (a hung iteration, to demonstrate the deadline)")
	flag.Parse()
	if *state == "" {
		fmt.Fprintln(os.Stderr, "trainer: -state is required")
		os.Exit(2)
	}
	if err := run(*state, *iters, *seed, *pace, *grace, *stallAt); err != nil {
		fmt.Fprintln(os.Stderr, "trainer:", err)
		os.Exit(1)
	}
}

type job struct {
	path string
	out  *bufio.Writer

	outMu sync.Mutex
	mu    sync.Mutex
	last  checkpoint.Snapshot // the last complete iteration, in memory

	diskMu  sync.Mutex
	written uint64 // iteration of the newest snapshot on disk
	hasDisk bool
}

func (j *job) say(format string, a ...any) {
	j.outMu.Lock()
	defer j.outMu.Unlock()
	fmt.Fprintf(j.out, format+"\n", a...)
	j.out.Flush()
}

func (j *job) latest() checkpoint.Snapshot {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.last
}

// flush writes s unless a snapshot at least as new is already on disk, so
// concurrent flushes never replace a newer file with an older one.
func (j *job) flush(s checkpoint.Snapshot) error {
	j.diskMu.Lock()
	defer j.diskMu.Unlock()
	if j.hasDisk && s.Iter <= j.written {
		return nil
	}
	if err := checkpoint.WriteFile(j.path, s); err != nil {
		return err
	}
	j.written, j.hasDisk = s.Iter, true
	j.say("flushed %d", s.Iter)
	return nil
}

func run(path string, iters, seed uint64, pace, grace time.Duration, stallAt uint64) error {
	j := &job{path: path, out: bufio.NewWriter(os.Stdout)}
	s, ok, err := checkpoint.ReadFile(path)
	if err != nil {
		return err
	}
	if !ok {
		s = checkpoint.Snapshot{Seed: seed}
	} else {
		if s.Seed != seed {
			return fmt.Errorf("%s holds seed %d, not %d", path, s.Seed, seed)
		}
		j.written, j.hasDisk = s.Iter, true
	}
	j.last = s

	var stop atomic.Bool
	loopDone := make(chan struct{})
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGUSR1)
	go func() {
		<-sig
		// No new iteration starts after the signal.
		stop.Store(true)
		// Last store: flush the newest complete snapshot at once...
		if err := j.flush(j.latest()); err != nil {
			fmt.Fprintln(os.Stderr, "trainer:", err)
			os.Exit(1)
		}
		// ...while the iteration in flight finishes, if it can in time.
		select {
		case <-loopDone:
		case <-time.After(grace):
		}
		if err := j.flush(j.latest()); err != nil {
			fmt.Fprintln(os.Stderr, "trainer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}()

	j.say("ready %d", s.Iter)
	t := checkpoint.NewTrainer(seed)
	for s.Iter < iters && !stop.Load() {
		if stallAt > 0 && s.Iter == stallAt {
			select {} // this iteration never completes
		}
		s = t.Step(s)
		spin(pace) // the rest of a real iteration's compute
		j.mu.Lock()
		j.last = s
		j.mu.Unlock()
		j.say("iter %d", s.Iter)
	}
	close(loopDone)
	if s.Iter < iters {
		select {} // stopped by a signal: the handler flushes and exits
	}
	signal.Stop(sig)
	if err := j.flush(s); err != nil {
		return err
	}
	j.say("done %d", s.Iter)
	return nil
}

// spin busy-waits for d: sleeping would round tiny iterations up to the
// timer resolution.
func spin(d time.Duration) {
	if d <= 0 {
		return
	}
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}
