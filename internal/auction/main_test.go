package auction

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test must leave no goroutine behind: endpoint calls, their
// connections and the auction's own goroutines end with the auction. Each
// test checks its own (verifyNoLeaks), so a leak names the test that made
// it; the package-wide check catches a test that forgot to.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// verifyNoLeaks checks, when t and everything it cleans up have finished,
// that no goroutine started during t is still running. Call it first in a
// test, so that its check runs after every other cleanup.
func verifyNoLeaks(t *testing.T) {
	t.Helper()
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}
