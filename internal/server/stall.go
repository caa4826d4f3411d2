// Package server holds the client-facing HTTP server's own protections,
// the ones that are not about pages or compression.
package server

import (
	"net/http"
	"time"
)

// WriteDeadline gives every write (and flush) to the client at most d to
// complete. http.Server's WriteTimeout bounds the whole response, which
// would cut off a large page to a slow but progressing client; a per-write
// deadline only cuts off a client that stopped reading, so it cannot hold
// a connection and a goroutine forever.
func WriteDeadline(next http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: d}
		if r.ProtoMajor == 2 {
			dw.meter, dw.stall = meterOf(r.Context()), min(streamStallTimeout, d)
		}
		next.ServeHTTP(dw, r)
	})
}

type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
	// meter is an HTTP/2 stream's connection socket: a write that waits
	// stall on the client's window resets the stream (h2hold.go).
	meter *connMeter
	stall time.Duration
}

func (w *deadlineWriter) arm() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.d)) }

// watch bounds the wait of one write on an HTTP/2 client's window; the
// stream is reset as its passed write deadline resets it.
func (w *deadlineWriter) watch() (stop func()) {
	if w.meter == nil {
		return func() {}
	}
	return watchStall(w.meter, w.stall, func() { _ = w.rc.SetWriteDeadline(time.Now().Add(-time.Second)) })
}

func (w *deadlineWriter) WriteHeader(status int) {
	w.arm()
	w.ResponseWriter.WriteHeader(status)
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	w.arm()
	defer w.watch()()
	return w.ResponseWriter.Write(p)
}

func (w *deadlineWriter) Flush() { _ = w.FlushError() }

func (w *deadlineWriter) FlushError() error {
	w.arm()
	defer w.watch()()
	return w.rc.Flush()
}

func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
