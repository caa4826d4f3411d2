//go:build !(linux || darwin || freebsd)

// Package cputime reads the CPU time of the calling OS thread: the measure
// behind `ssatd measure` and the daemon's guest CPU figures.
package cputime

import "time"

// Clock says that thread CPU time is not available on this platform.
const Clock = "unavailable"

// Thread is not available on this platform: it always reports ok=false.
func Thread() (d time.Duration, ok bool) { return 0, false }
