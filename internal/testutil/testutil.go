// Package testutil holds the few helpers that tests in several packages
// share. It is imported by tests only.
package testutil

import (
	"strings"
	"sync"
)

// LockedBuffer is an io.Writer that a running command and the test share:
// the test reads what the command writes while it runs, and waits for the
// next write with Next instead of polling.
type LockedBuffer struct {
	mu    sync.Mutex
	buf   strings.Builder
	wrote chan struct{} // closed by the next Write; nil until Next asks
}

func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wrote != nil {
		close(b.wrote)
		b.wrote = nil
	}
	return b.buf.Write(p)
}

func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Next returns what has been written so far and a channel that the next
// Write closes. A test checks the text, and if what it waits for is not
// there yet, waits on the channel (beside its own timeout).
func (b *LockedBuffer) Next() (string, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wrote == nil {
		b.wrote = make(chan struct{})
	}
	return b.buf.String(), b.wrote
}
