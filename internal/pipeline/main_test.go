package pipeline

import (
	"testing"

	"go.uber.org/goleak"
)

// A Job's goroutines (the latency timer, the idle timer) end with it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
