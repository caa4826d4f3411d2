package auction

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test must leave no goroutine behind: endpoint calls, their
// connections and the auction's own goroutines end with the auction.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
