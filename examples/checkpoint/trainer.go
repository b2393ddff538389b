//go:build unix

package checkpoint

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// TrainerMain is the toy training job's main function (cmd/trainer, and the
// "train" mode of cmd/timeshare). It trains by deterministic SGD, keeps an
// in-memory snapshot after every iteration and cooperates with preemption:
//
//   - On SIGTERM or SIGUSR1 it starts no new iteration, flushes the last
//     complete snapshot to the -state file at once (atomically, [WriteFile]),
//     lets the iteration in flight finish if it does within -grace and then
//     flushes that one too, and exits the process with status 0.
//   - Started again with the same -state file it resumes from the snapshot.
//   - SIGKILL loses the progress since the last flush, never the file. With
//     -flush-every D it also flushes the newest snapshot every D while it
//     trains, which bounds that loss to D of progress (plus the iteration
//     in flight and one flush).
//   - A -state file whose directory it cannot write is an error at start,
//     before the first iteration, not at the first flush.
//
// It reports on stdout, one line per event:
//
//	ready K     loaded the snapshot of iteration K (0: fresh start)
//	iter K      completed iteration K
//	flushed K   wrote the snapshot of iteration K to disk
//	done N      completed all N iterations and wrote the final snapshot
//
// Flags: -state FILE (required), -iters N, -seed S, -pace D (busy compute
// per iteration), -grace D, -flush-every D (0: flush only when signalled
// and at the end), -stall-at K (iteration K+1 never ends: a hung
// iteration, to demonstrate the coordinator's deadline). It returns the
// process exit status: 0 done, 1 error, 2 usage.
func TrainerMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("trainer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	state := fs.String("state", "", "snapshot file (required)")
	iters := fs.Uint64("iters", 1000, "iterations to train")
	seed := fs.Uint64("seed", 1, "data seed")
	pace := fs.Duration("pace", 0, "simulated compute time per iteration (busy, like compute)")
	grace := fs.Duration("grace", time.Second, "how long a signalled job waits for the iteration in flight")
	flushEvery := fs.Duration("flush-every", 0, "also flush the newest snapshot this often while training, bounding what a SIGKILL loses (0: only when signalled and at the end)")
	stallAt := fs.Uint64("stall-at", 0, "if > 0, the iteration after this one never ends (a hung iteration, to demonstrate the deadline)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *state == "" {
		fmt.Fprintln(stderr, "trainer: -state is required")
		return 2
	}
	if *flushEvery < 0 {
		fmt.Fprintf(stderr, "trainer: -flush-every must be ≥ 0 (got %v)\n", *flushEvery)
		return 2
	}
	if err := writable(*state); err != nil {
		fmt.Fprintf(stderr, "trainer: -state %s: %v\n", *state, err)
		return 1
	}
	if err := runTrainer(stdout, stderr, *state, *iters, *seed, *pace, *grace, *flushEvery, *stallAt); err != nil {
		fmt.Fprintln(stderr, "trainer:", err)
		return 1
	}
	return 0
}

type trainerJob struct {
	path string
	out  *bufio.Writer

	outMu sync.Mutex
	mu    sync.Mutex
	last  Snapshot // the last complete iteration, in memory

	diskMu  sync.Mutex
	written uint64 // iteration of the newest snapshot on disk
	hasDisk bool
}

func (j *trainerJob) say(format string, a ...any) {
	j.outMu.Lock()
	defer j.outMu.Unlock()
	fmt.Fprintf(j.out, format+"\n", a...)
	j.out.Flush()
}

func (j *trainerJob) latest() Snapshot {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.last
}

// flush writes s unless a snapshot at least as new is already on disk, so
// concurrent flushes never replace a newer file with an older one.
func (j *trainerJob) flush(s Snapshot) error {
	j.diskMu.Lock()
	defer j.diskMu.Unlock()
	if j.hasDisk && s.Iter <= j.written {
		return nil
	}
	if err := WriteFile(j.path, s); err != nil {
		return err
	}
	j.written, j.hasDisk = s.Iter, true
	j.say("flushed %d", s.Iter)
	return nil
}

// writable proves that a snapshot can be written at path: WriteFile makes a
// temporary file beside it and renames it over path, so the directory must
// take a new file.
func writable(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".probe-")
	if err != nil {
		return fmt.Errorf("its directory is not writable: %w", err)
	}
	name := f.Name()
	err = f.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	return err
}

func runTrainer(stdout io.Writer, stderr io.Writer, path string, iters, seed uint64, pace, grace, flushEvery time.Duration, stallAt uint64) error {
	j := &trainerJob{path: path, out: bufio.NewWriter(stdout)}
	s, ok, err := ReadFile(path)
	if err != nil {
		return err
	}
	if !ok {
		s = Snapshot{Seed: seed}
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
			fmt.Fprintln(stderr, "trainer:", err)
			os.Exit(1)
		}
		// ...while the iteration in flight finishes, if it can in time.
		select {
		case <-loopDone:
		case <-time.After(grace):
		}
		if err := j.flush(j.latest()); err != nil {
			fmt.Fprintln(stderr, "trainer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}()

	if flushEvery > 0 {
		// Periodic flushes run beside the training, so an iteration never
		// waits for the disk; flush skips a snapshot already on disk.
		tick := time.NewTicker(flushEvery)
		defer tick.Stop()
		go func() {
			for {
				select {
				case <-tick.C:
					if err := j.flush(j.latest()); err != nil {
						fmt.Fprintln(stderr, "trainer:", err)
						os.Exit(1)
					}
				case <-loopDone:
					return
				}
			}
		}()
	}
	j.say("ready %d", s.Iter)
	t := NewTrainer(seed)
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
	// The handler stays until the final snapshot is on disk: a signal
	// before that must still flush it (the default action would end the
	// process with the last iterations lost).
	if err := j.flush(s); err != nil {
		return err
	}
	signal.Stop(sig)
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
