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
// the same state file it resumes from the snapshot. A SIGKILL loses the
// progress since the last flush, never the file.
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
