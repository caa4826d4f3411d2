package ssatdtest

import (
	"context"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

// The check finds a goroutine with the server's label, and only that
// server's: not one of another server, nor one without labels.
func TestLeakCheckFindsOnlyItsServersGoroutines(t *testing.T) {
	stop := make(chan struct{})
	started := make(chan struct{}, 3)
	for _, id := range []string{"901", "9012"} {
		pprof.Do(context.Background(), pprof.Labels(goroutineLabel, id, "other", "x"), func(context.Context) {
			go func() { started <- struct{}{}; <-stop }()
		})
	}
	go func() { started <- struct{}{}; <-stop }()
	for range 3 {
		<-started
	}
	err := waitForGoroutines("901", 20*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "1 still running") || !strings.Contains(err.Error(), "TestLeakCheckFindsOnlyItsServersGoroutines") {
		t.Errorf("a labelled goroutine left running: %v", err)
	}
	if err := waitForGoroutines("903", 20*time.Millisecond); err != nil {
		t.Errorf("goroutines of other servers or of none were counted: %v", err)
	}
	close(stop)
	if err := waitForGoroutines("901", leakWait); err != nil {
		t.Errorf("after they ended: %v", err)
	}
}
