//go:build unix

package placement

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time used so far by the whole process (user +
// system, all threads). Benchmarks report it per operation beside the wall
// time, which is unreliable on a loaded machine.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
