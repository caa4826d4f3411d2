//go:build linux || darwin || freebsd

// Package cputime reads the CPU time of the calling OS thread: the measure
// behind `ssatd measure` and the daemon's guest CPU figures.
package cputime

import (
	"time"

	"golang.org/x/sys/unix"
)

// Clock names how CPU time is measured, for reports.
const Clock = "CLOCK_THREAD_CPUTIME_ID"

// Thread is the CPU time consumed so far by the calling OS thread. The
// caller must hold runtime.LockOSThread for two readings to describe the
// same thread; ok is false where the clock cannot be read.
func Thread() (d time.Duration, ok bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
