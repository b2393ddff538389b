// Command astraea runs the trace-driven simulation of a multi-tenant GPU
// cluster under ASTRAEA and, optionally, other policies, and prints the
// fairness and efficiency figures of each.
//
// With no flags it runs the reference simulation on the embedded synthetic
// workload (calibrated to the Venus cluster; no download needed):
//
//	go run ./simulate/cmd/astraea
//
// On the Venus and Philly two-week snapshots:
//
//	go run ./simulate/cmd/astraea -trace venus_2week_snapshot.csv \
//	    -quota venus_2week_vc_quota_official.csv -nodes 100
//	go run ./simulate/cmd/astraea -trace philly_2week_snapshot.csv \
//	    -quota requested -nodes 210
//
// Its subcommands are listed by "astraea help"; "astraea help COMMAND" or
// "astraea COMMAND -h" prints a command's flags. With no subcommand, or
// with a flag first, astraea runs simulate, whose flags are:
//
//	-trace FILE        trace (Venus, Philly, Pollux, artifact or generic CSV; .gz read transparently)
//	-quota Q           FILE (tenant weights), "requested" (∝ Σ GPUs requested) or "equal"
//	-nodes N           nodes in the cluster (100)
//	-gpus-per-node N   GPUs per node (8)
//	-lease D           lease length (900s)
//	-interval D        scheduling interval (10s)
//	-checkpoint D      checkpoint time at an unrenewed lease end (10s)
//	-coldstart D       cold start of a resumed job (30s)
//	-policy LIST       comma-separated policies, or "all" (astraea)
//	-seed N            seed of the synthetic workload (1)
//	-jobs N            jobs of the synthetic workload (5200)
//	-json              print JSON instead of tables
//	-out DIR           write per-job, per-tenant and utilization CSVs and SVG figures
//	-quiet             no progress line
//	-lenient           skip bad trace rows (and report how many and why)
//	-overhead          also run without overheads to report preemption overhead (true)
//	-metrics MODE      fairness mode of the reported ρ: eq16 (as the policy) or eq8
//	-check             check invariants periodically during the run
//	-parallel N        policies simulated at once (0: as many as processors)
//
// Output goes to stdout; the progress line, shown only when stderr is a
// terminal, goes to stderr.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
)

func main() {
	// A run is sequential, so the command uses as many processors as it
	// simulates policies at once (-parallel): one for a single policy. A
	// processor more would only host the garbage collector's idle workers,
	// whose coordination across CPUs (wake-ups, preemption signals, TLB
	// shootdowns) costs system time without making a run faster.
	// GOMAXPROCS in the environment wins. A command calls procs as soon as
	// it has read the flags, before it reads anything else.
	procs := func(n int) {
		if os.Getenv("GOMAXPROCS") == "" {
			runtime.GOMAXPROCS(n)
		}
	}
	switch err := dispatch(commands(), os.Args[1:], os.Stdout, os.Stderr, procs); {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage): // printed with a hint to the usage
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "astraea:", err)
		os.Exit(1)
	}
}
