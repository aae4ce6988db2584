//go:build unix

package voting

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time, user and system, this process has
// used: the client's side of a benchmark.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
