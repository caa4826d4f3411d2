package proxy

import (
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// Every test must leave no goroutine behind: requests, pipelines, auctions
// and idle-timeout timers all end with their request. Each test checks its
// own (verifyNoLeaks, which newEnv calls), so a leak names the test that
// made it; the package-wide check catches a test that does not.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// verifyNoLeaks checks, when t has finished and the cleanups registered
// after this call have run, that no goroutine started since is still
// running. Call it before creating servers, so that their Close runs first;
// calls after the first in the same test do nothing.
func verifyNoLeaks(t *testing.T) {
	t.Helper()
	if _, dup := leakChecked.LoadOrStore(t, true); dup {
		return
	}
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		leakChecked.Delete(t)
		goleak.VerifyNone(t, opt)
	})
}

// leakChecked holds the tests whose leak check is registered.
var leakChecked sync.Map
