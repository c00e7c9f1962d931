//go:build !linux

package eval

import "time"

// threadCPU is not available on this system: speed is by wall time only.
func threadCPU() (time.Duration, bool) { return 0, false }
