// Package lease implements ASTRAEA's leases: the per-job lease state machine
// and the renewal coordinator that runs one lease boundary.
//
// Long training jobs run in fixed-length leases (the paper uses 900 s). At a
// lease end the scheduler either renews a job in place — it keeps its GPUs
// and pays no cold start — or preempts it: the job gets a checkpoint signal,
// flushes its last complete in-memory snapshot to disk ("last store") and
// releases its GPUs; later it is restored from that snapshot, paying a cold
// start. A job that finishes mid-lease releases its GPUs at once and is not
// billed to its lease end. All releases of a boundary complete before any
// newly selected job starts, so the books never show GPUs free that a
// process still holds.
//
// # State machine
//
// [Table] holds the jobs and applies events at explicit times:
//
//	pending ─Start→ running ─Renew→ running
//	running ─Checkpoint→ checkpointing ─Release→ suspended ─Restore→ restoring ─(cold start)→ running
//	any non-terminal ─Finish→ completed | failed | cancelled
//
// GPUs are held, and billed through the optional [Billing] hook (which
// *ledger.Ledger satisfies), while running, checkpointing and restoring.
// Each job's held time is split in a [Usage] into useful Progress and
// overhead (Checkpoint, ColdStart, Lost work, Spread), with Progress + Overhead ==
// Held exactly. An illegal event returns an *[Error] matching
// [ErrInvalidTransition] (or another sentinel) that names the job, its state
// and the attempted transition; the table is left unchanged.
//
// # Minimum runtime guard
//
// Preemption thrash — a job restored only to be preempted again before it
// did useful work — is a common complaint about fair-share batch schedulers.
// With [Config].MinRuntime set, a job that has run less than that since its
// last start or the end of its last cold start cannot be checkpointed
// ([ErrGuarded]). [Table.Guarded] lets a scheduler leave such jobs out of
// its preemption candidates; if a boundary plan still asks to preempt one,
// the [Coordinator] renews it instead, reports the decision with
// [ReasonGuarded], and defers as many of the plan's new starts (last
// first) as needed so that the GPUs it keeps are not given away twice.
//
// # Coordinator and side effects
//
// [Coordinator.Boundary] runs one lease boundary from a [Plan]: renew,
// signal, wait for releases until a deadline (past it the last flushed
// snapshot stands and the progress since is lost), then start and restore.
// Side effects go through [Effects]; [Sim] is a deterministic virtual-time
// implementation with configurable checkpoint time, cold-start time and
// iteration length. The examples/checkpoint program implements Effects with
// real processes and POSIX signals.
//
// # Progress model
//
// [Progress] is the per-job arithmetic of [Sim] as a small value: progress
// at one second per second while running (or at a lower rate, fixed for a
// holding stretch, for a job placed so that it runs slower: a gang spread
// over more nodes than it needs, [Progress.SetRate]), cold starts, renewal
// checkpoints, the partial iteration lost at a release (or everything since
// the last durable snapshot when the flush misses its deadline), and the
// completion time these imply. Its [Progress.Usage] splits held time into
// progress and overhead like the [Table]'s. The simulator (package
// simulate) keeps one Progress in each job's record and takes every
// progress, release and completion time from it.
package lease
