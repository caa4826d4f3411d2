//go:build linux || darwin || freebsd

package proxy

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time consumed so far by the calling OS thread, which
// the caller keeps with runtime.LockOSThread (0 if the clock fails).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
