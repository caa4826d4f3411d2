package proxy

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test must leave no goroutine behind: requests, pipelines, auctions
// and idle-timeout timers all end with their request.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
