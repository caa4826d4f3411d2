//go:build !(linux || darwin || freebsd)

package measure

import "time"

const cpuClock = "unavailable"

// threadCPU is not available on this platform: CPU columns read 0.
func threadCPU() (time.Duration, bool) { return 0, false }
