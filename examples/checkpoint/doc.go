// Package checkpoint is a runnable demonstration of ASTRAEA's preemption
// protocol with real processes: on-demand checkpointing with "last store",
// driven by the lease coordinator through POSIX signals.
//
// The toy job, cmd/trainer, trains a linear regression ([Train], [Step]) by
// deterministic SGD. After every iteration it keeps an in-memory [Snapshot]
// of its complete state. On SIGTERM (or SIGUSR1) it starts no new
// iteration, flushes the last complete snapshot to disk at once —
// atomically, by [WriteFile]: temporary file, fsync, rename, fsync of the
// directory — lets the iteration in flight finish if it can within its
// grace period (then flushes that one too), and exits. Started again with
// the same state file it resumes from the snapshot.
//
// # The crash promise
//
// The state file is always a whole snapshot of some completed iteration,
// old or new, never a torn one. What a stop loses depends on how it comes:
//
//   - SIGTERM or SIGUSR1: at most the iteration in flight — none when that
//     iteration ends within -grace, since its snapshot is flushed too.
//   - SIGKILL, a crash or a power loss: every iteration since the last
//     flush. Without -flush-every the trainer flushes only when signalled
//     and at the end, so that is all the progress of the run (the package
//     tests measured up to about 6,900 iterations of the demo job). With
//     -flush-every D it is at most the progress of D, plus the iteration
//     in flight and the time one flush takes.
//
// A -state path whose directory the trainer cannot write is refused at
// start, before the first iteration.
//
// [Procs] implements lease.Effects with os/exec and syscall: Start and
// Restore launch the trainer and wait until it reports "ready" (the cold
// start), Checkpoint sends SIGTERM, WaitReleased waits for the exit and
// sends SIGKILL when the coordinator's deadline passes.
//
// The package tests build the trainer, preempt it at random (seeded)
// iteration counts many times — SIGKILL included — and check that the
// final model equals an uninterrupted run bit for bit, that a signal
// preemption loses at most the iteration in flight, and that a SIGKILL loses
// exactly the progress since the last flushed snapshot.
//
// Run the trainer by hand:
//
//	go build -o /tmp/trainer ./examples/checkpoint/cmd/trainer
//	/tmp/trainer -state /tmp/job.snap -iters 200000 -pace 100us &
//	kill -TERM %1            # flushes and exits
//	/tmp/trainer -state /tmp/job.snap -iters 200000   # resumes
package checkpoint
