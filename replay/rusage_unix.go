//go:build unix

package replay

import (
	"runtime"
	"syscall"
	"time"
)

// usage is the process's CPU time so far and its peak resident memory.
type usage struct {
	user, system time.Duration
	maxRSS       int64 // bytes
	ok           bool
}

func processUsage() usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return usage{}
	}
	rss := int64(ru.Maxrss) * 1024 // kilobytes on Linux and the BSDs
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		rss = int64(ru.Maxrss) // bytes
	}
	return usage{user: time.Duration(ru.Utime.Nano()), system: time.Duration(ru.Stime.Nano()), maxRSS: rss, ok: true}
}
