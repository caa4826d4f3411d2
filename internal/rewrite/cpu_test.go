package rewrite

import (
	"time"

	"github.com/ssatd/ssatd/internal/cputime"
)

// threadCPU is the CPU time consumed so far by the calling OS thread, which
// the caller keeps with runtime.LockOSThread; 0 where the clock cannot be
// read, so the benchmarks' CPU ratios read NaN there.
func threadCPU() time.Duration {
	d, _ := cputime.Thread()
	return d
}
