//go:build unix

package trace

import (
	"syscall"
	"time"
)

// cpuTime is the process's user + system CPU time, so that benchmarks can
// report CPU per operation on a busy machine, where wall time misleads.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
