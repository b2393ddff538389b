// Package trace reads GPU-cluster job traces and generates the simulator's
// default synthetic workload.
//
// A trace is a stream of [Job] values in non-decreasing submit order,
// consumed through the [Source] interface.
//
// # Reading traces
//
//   - [Open] and [NewReader] return a [Reader] for the Helios/Venus per-job
//     table, the Helios-derived Philly tables, the Pollux Philly table, the
//     ASTRAEA authors' artifact format and a documented generic CSV; the
//     layout is selected from the header row and gzip is read transparently.
//
//   - Bad rows are a [*RowError] naming file, line and column, matchable with
//     errors.Is against the sentinels ([ErrNumber], [ErrTime], [ErrGPUs],
//     [ErrDuplicateID], [ErrOutOfOrder], ...). With [Options].Lenient the
//     reader skips them and counts them by reason in [Reader.Skipped].
//
//   - [FromJobs] replays a slice and [Until] cuts a trace at a submit time
//     (for prefixes of a trace).
//
// # Quotas
//
//   - [ReadQuotas] reads tenant weights from a CSV table (official VC sizes,
//     share tables, node counts).
//   - [RequestedQuotas] weighs tenants by their summed GPU requests (the
//     paper's rule for Philly); [EqualQuotas] weighs them equally.
//
// # Synthetic workload
//
//   - [Synthetic] generates a deterministic, seeded workload calibrated to
//     the Venus cluster: the runtime distribution published for Venus, and
//     GPU demands, tenant skew, diurnal arrivals and final states measured
//     from the Venus two-week snapshot. [DefaultSynthetic] is the
//     configuration of the simulator's reference run and [SyntheticQuotas]
//     its tenant quotas.
package trace
