//go:build unix

package ledger

import "syscall"

// cpuNanos is the process's user+system CPU time, so that benchmarks on a
// busy machine can report CPU cost per op beside wall time.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
