// Package testutil holds the few helpers that tests in several packages
// share. It is imported by tests only.
package testutil

import (
	"strings"
	"sync"
)

// LockedBuffer is an io.Writer that a running command and the test share:
// the test reads what the command writes while it runs.
type LockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
