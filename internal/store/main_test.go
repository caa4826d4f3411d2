package store

import (
	"testing"

	"go.uber.org/goleak"
)

// No goroutine outlives the tests: a closed store stops its connections,
// and a test's redis-server and its reader end with the test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
