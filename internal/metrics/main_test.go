package metrics

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests run a real auction over loopback (withAuction): nothing of it
// may outlive the test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
