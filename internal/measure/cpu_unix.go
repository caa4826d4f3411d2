//go:build linux || darwin || freebsd

package measure

import (
	"time"

	"golang.org/x/sys/unix"
)

// cpuClock names how CPU time is measured, for the report.
const cpuClock = "CLOCK_THREAD_CPUTIME_ID"

// threadCPU is the CPU time consumed so far by the calling OS thread. The
// caller must hold runtime.LockOSThread for two readings to describe the
// same thread.
func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
