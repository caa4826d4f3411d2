package server

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"time"
)

// What one HTTP/2 connection may hold. A client can keep a stream's
// response from being sent at no cost to itself, by never opening its
// flow-control window (SETTINGS_INITIAL_WINDOW_SIZE = 0), while the
// request holds a place among the requests (and pages) in progress: RFC
// 9113 §10.5 names flow control as a way to hold server state. Three
// bounds keep that from taking the places of other clients: the streams
// of one connection (streamsPerConnection), a stream that waits on the
// client's window (streamStallTimeout), and one client's share of the
// places (internal/proxy, clientshare.go).

// streamsPerConnection is the SETTINGS_MAX_CONCURRENT_STREAMS the
// client listener advertises (RFC 9113 §5.1.2): a quarter of the requests
// in progress (server.max_requests_in_progress), between 8 and 100, so
// that one connection holds well under the daemon's places; a browser
// queues its requests past it and sends them as streams end. RFC 9113
// §6.5.2 recommends at least 100, the most this gives (with 400 places or
// more, 7 cores and up by default): below that the daemon's places, not
// parallelism, are what the limit protects. Go's server refuses a stream
// over it with RST_STREAM. It is set when the listener starts, like the
// other settings of the client http.Server.
func streamsPerConnection(requestBound int) int {
	return min(max(requestBound/4, 8), 100)
}

// A client that stops reading its socket, while one of its streams has a
// window open, keeps the connection's writes waiting on the socket: the
// stall bound does not count that time (a slow network looks the same),
// and a stream's write deadline cannot end a stream whose RST_STREAM waits
// behind those writes, so every stream of the connection, and its places,
// stayed held for as long as the client kept the connection open. The
// client listener's HTTP2Config.WriteByteTimeout (handler.go), set to
// server.write_timeout, closes a connection whose socket has taken no byte
// for that long, as the per-write deadline does for HTTP/1.

// streamStallTimeout is how long a write to an HTTP/2 stream may wait on
// the client's flow-control window before the stream is reset, as for a
// client that stopped reading (server.write_timeout, which stays the bound
// when it is shorter). Only the time the connection's socket spends not
// writing counts: a slow network, where frames wait for the socket, is
// bounded by server.write_timeout alone. A browser opens megabytes of
// window and keeps it open as it reads, so a stream of a reading client
// does not wait on it; one that does, for this long, is being held.
const streamStallTimeout = 5 * time.Second

// connMeter counts how long a connection's socket spends writing.
type connMeter struct {
	mu      sync.Mutex
	writing int           // Write calls under way
	since   time.Time     // when the current busy stretch began
	busy    time.Duration // the busy time before it
}

// busyAt is the socket's total writing time up to now.
func (m *connMeter) busyAt(now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.busy
	if m.writing > 0 {
		b += now.Sub(m.since)
	}
	return b
}

func (m *connMeter) begin() {
	m.mu.Lock()
	if m.writing == 0 {
		m.since = time.Now()
	}
	m.writing++
	m.mu.Unlock()
}

func (m *connMeter) end() {
	m.mu.Lock()
	if m.writing--; m.writing == 0 {
		m.busy += time.Since(m.since)
	}
	m.mu.Unlock()
}

// meteredConn is the TCP connection under TLS, with its writes timed.
type meteredConn struct {
	net.Conn
	meter *connMeter
}

func newMeteredConn(c net.Conn) *meteredConn { return &meteredConn{Conn: c, meter: &connMeter{}} }

func (c *meteredConn) Write(p []byte) (int, error) {
	c.meter.begin()
	defer c.meter.end()
	return c.Conn.Write(p)
}

// NetConn is the connection below, for ResetOnAbort's reset.
func (c *meteredConn) NetConn() net.Conn { return c.Conn }

type meterKey struct{}

// connContext is the http.Server's ConnContext: the framing guard's state
// of an HTTP/1 connection, and the socket meter of a TLS one, which its
// HTTP/2 streams' handlers read (meterOf).
func connContext(ctx context.Context, c net.Conn) context.Context {
	ctx = framingContext(ctx, c)
	if tc, ok := c.(*tls.Conn); ok {
		if mc, ok := tc.NetConn().(*meteredConn); ok {
			ctx = context.WithValue(ctx, meterKey{}, mc.meter)
		}
	}
	return ctx
}

func meterOf(ctx context.Context) *connMeter {
	m, _ := ctx.Value(meterKey{}).(*connMeter)
	return m
}

// stallWatch resets a stream whose write has waited limit on the client's
// window: the time since start less the socket's busy time in between.
type stallWatch struct {
	mu      sync.Mutex
	t       *time.Timer
	stopped bool
}

// watchStall watches one write to an HTTP/2 stream; reset ends the
// stream. The returned func ends the watch when the write returns.
func watchStall(m *connMeter, limit time.Duration, reset func()) (stop func()) {
	start := time.Now()
	busy0 := m.busyAt(start)
	w := &stallWatch{}
	w.mu.Lock()
	w.t = time.AfterFunc(limit, func() {
		w.mu.Lock()
		if w.stopped {
			w.mu.Unlock()
			return
		}
		now := time.Now()
		if waited := now.Sub(start) - (m.busyAt(now) - busy0); waited < limit {
			w.t.Reset(limit - waited)
			w.mu.Unlock()
			return
		}
		w.stopped = true
		w.mu.Unlock()
		reset()
	})
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		w.stopped = true
		w.t.Stop()
		w.mu.Unlock()
	}
}
