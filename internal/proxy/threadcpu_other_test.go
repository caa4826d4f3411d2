//go:build !(linux || darwin || freebsd)

package proxy

import "time"

// threadCPU is not available here: the ratios of BenchmarkCodecFloor read NaN.
func threadCPU() time.Duration { return 0 }
