//go:build !(linux || darwin || freebsd)

package rewrite

import "time"

// threadCPU is not available here: the ratios of BenchmarkCorpus read NaN.
func threadCPU() time.Duration { return 0 }
