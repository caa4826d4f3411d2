package cputime

import (
	"runtime"
	"testing"
	"time"
)

// A thread that spins for a while has used CPU time, and one that sleeps
// has used almost none: the clock is the thread's, not the wall's.
func TestThreadCountsWorkNotSleep(t *testing.T) {
	if Clock == "unavailable" {
		t.Skip("no thread CPU clock on this platform")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, ok := Thread()
	if !ok {
		t.Fatal("thread clock not readable")
	}
	// Spin until the clock shows 20ms of work, with a wall-clock cap: on a
	// loaded machine 30ms of wall time can be far less CPU, so the test
	// waits for the work rather than for the time.
	c1 := c0
	for end := time.Now().Add(5 * time.Second); c1-c0 < 20*time.Millisecond && time.Now().Before(end); {
		c1, _ = Thread()
	}
	if spun := c1 - c0; spun < 20*time.Millisecond {
		t.Errorf("5s of spinning counted %v of CPU", spun)
	}
	time.Sleep(50 * time.Millisecond)
	c2, _ := Thread()
	if slept := c2 - c1; slept > 10*time.Millisecond {
		t.Errorf("50ms of sleep counted %v of CPU", slept)
	}
}
