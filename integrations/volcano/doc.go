// Package volcano is a Volcano scheduler plugin, named "astraea", that
// orders queues and jobs by ASTRAEA's long-term GPU-time fairness.
//
// A Volcano Queue is a tenant of the ledger, with the queue's weight; a
// PodGroup that requests GPUs (nvidia.com/gpu unless configured otherwise)
// is a job whose gang demand is the GPUs of its tasks. The plugin adds
//
//   - a QueueOrderFn: the queue with the lowest ρ = received ÷ owed GPU
//     time first; within a session every gang allocated to a queue
//     pre-credits it with demand × lease, so the next pick already sees it
//     served, as ASTRAEA's round does;
//   - a JobOrderFn: inside a queue, jobs that never ran first, then the
//     lowest job ρ, then the earlier created, then Volcano's job id;
//   - event handlers that keep the pre-credit in step with the session's
//     tentative allocations.
//
// The ledger outlives sessions in a Builder. It is never driven by the
// allocate and deallocate events alone, which a discarded statement or a
// failed binding undoes: at every session open it is reconciled with what
// the session shows, by the rules documented on the unexported reconcile
// and in docs/volcano.md of the repository. A gang counts as running when
// all its live tasks are bound to nodes.
//
// The plugin's arguments are described by the Arg* constants and parsed by
// ParseArguments; cmd/vc-scheduler is Volcano's scheduler with the plugin
// compiled in, and config/volcano-scheduler.conf enables it.
package volcano
