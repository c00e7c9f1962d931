package eval

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time the calling OS thread has used (user and
// system); the workers lock their goroutine to a thread, so differences
// are the goroutine's own work, whatever else the machine runs.
func threadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
