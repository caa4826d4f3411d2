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
	for end := time.Now().Add(30 * time.Millisecond); time.Now().Before(end); {
	}
	c1, _ := Thread()
	if spun := c1 - c0; spun < 10*time.Millisecond {
		t.Errorf("30ms of spinning counted %v of CPU", spun)
	}
	time.Sleep(50 * time.Millisecond)
	c2, _ := Thread()
	if slept := c2 - c1; slept > 10*time.Millisecond {
		t.Errorf("50ms of sleep counted %v of CPU", slept)
	}
}
