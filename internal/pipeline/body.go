package pipeline

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// RawLimitError is the "Limits" (docs/behaviour.md) raw limit being crossed while the body is read.
type RawLimitError struct {
	limit int64
}

func (e *RawLimitError) Error() string {
	return fmt.Sprintf("origin body exceeds max_origin_response_bytes (%d bytes)", e.limit)
}

// Body is a response body as the origin sends it, read under the raw
// limit and the idle timeout: the page's source, and a pass-through
// response's body.
type Body interface {
	io.ReadCloser
	// Count is the raw bytes read so far.
	Count() int64
	// ReadErr is the first read error other than io.EOF, nil if none: why
	// a copy of the body stopped, if it did.
	ReadErr() error
}

// NewBody reads rc under limit (0: none) and calls onIdle (serving
// cancels the origin request) when one Read waits longer than idle (0 or
// a nil onIdle: never).
func NewBody(rc io.ReadCloser, limit int64, idle time.Duration, onIdle func()) Body {
	return &originBody{rc: rc, limit: limit, idle: idle, onIdle: onIdle}
}

// originBody wraps the origin response body. It counts raw bytes against
// the "Limits" (docs/behaviour.md) limit (limit 0: no limit) and calls
// onIdle, which cancels the origin request, when one Read waits longer
// than idle: the "gap between body bytes" is timed only while the guest is
// actually waiting for the origin, never while it is blocked on a slow
// client.
type originBody struct {
	rc     io.ReadCloser
	n      int64
	limit  int64
	idle   time.Duration
	onIdle func()
	err    error
	// readErr is the first error of the origin body other than io.EOF:
	// why ReverseProxy's copy of a pass-through body stopped, if it did.
	readErr error

	mu    sync.Mutex
	timer *time.Timer
	// cpu, for a page's body, is its CPU clock, paused while a read
	// waits for the origin.
	cpu *pageCPU
}

// ReadErr is the first error of the body other than io.EOF.
func (b *originBody) ReadErr() error { return b.readErr }

func (b *originBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.limit > 0 {
		// Read at most one byte past the limit: enough to know it was
		// crossed, while a body of exactly the limit passes.
		if room := b.limit - b.n + 1; int64(len(p)) > room {
			p = p[:room]
		}
	}
	paused := b.cpu.pause()
	b.arm()
	n, err := b.rc.Read(p)
	b.disarm()
	if paused {
		b.cpu.resume()
	}
	if err != nil && err != io.EOF && b.readErr == nil {
		b.readErr = err
	}
	b.n += int64(n)
	if b.limit > 0 && b.n > b.limit {
		over := int(b.n - b.limit)
		b.n = b.limit
		b.err = &RawLimitError{limit: b.limit}
		return n - over, b.err
	}
	return n, err
}

func (b *originBody) arm() {
	if b.idle <= 0 || b.onIdle == nil {
		return
	}
	b.mu.Lock()
	if b.timer == nil {
		b.timer = time.AfterFunc(b.idle, b.onIdle)
	} else {
		b.timer.Reset(b.idle)
	}
	b.mu.Unlock()
}

func (b *originBody) disarm() {
	if b.timer == nil {
		return
	}
	b.mu.Lock()
	b.timer.Stop()
	b.mu.Unlock()
}

// Count returns the raw bytes read so far.
func (b *originBody) Count() int64 { return b.n }

func (b *originBody) Close() error {
	b.disarm()
	return b.rc.Close()
}
