package server

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// net/http deletes Transfer-Encoding from HTTP/1.0 requests without a
// trace (r.TransferEncoding stays empty) and frames the body by
// Content-Length, so a handler cannot see that a request carried it. RFC
// 9112 §6.1 says a server that receives an HTTP/1.0 message with
// Transfer-Encoding MUST treat its framing as faulty, even with a
// Content-Length, and close the connection after it: a front proxy that
// honoured the Transfer-Encoding would read the rest of the stream
// differently, and the bytes after the Content-Length body would become a
// second, smuggled request. So the raw header bytes are read here, on the
// connection, as net/http reads them: framingConn follows the request
// stream (each header block, then its Content-Length body) and marks the
// first request whose framing it refuses; refuseFaultyFraming, the
// outermost handler, answers that request instead of serving it.
//
// The scan keeps a few counters per connection, whatever the size of the
// headers or bodies, and looks at header bytes only: bodies are skipped by
// their Content-Length.

// framingFault is why a request's framing is refused.
type framingFault int32

const (
	faultNone framingFault = iota
	// Transfer-Encoding in any request (RFC 9112 §6.1), whatever its value
	// or version, and also spelled with whitespace before the colon.
	faultTransferEncoding
	// A line starting with whitespace continues the previous field
	// (obs-fold). RFC 9112 §5.2 lets a server refuse it with 400; net/http
	// would join it to the field above, which another parser may not do.
	faultObsFold
	// A Content-Length that is not one decimal number, or two that differ
	// (RFC 9112 §6.3 item 5): net/http refuses these too.
	faultContentLength
	// A header block longer than net/http reads before it answers 431.
	faultTooLarge
)

func (f framingFault) answer() (int, string) {
	switch f {
	case faultTransferEncoding:
		// 411, as the guest answers a chunked upload it is handed; here for
		// every version, HTTP/1.0 included (RFC 9112 §6.1).
		return http.StatusLengthRequired, "411 Length Required: request bodies must carry a Content-Length; Transfer-Encoding is not accepted (RFC 9112 §6.1)\n"
	case faultObsFold:
		return http.StatusBadRequest, "obsolete line folding in the request header is not accepted (RFC 9112 §5.2)\n"
	case faultTooLarge:
		return http.StatusRequestHeaderFieldsTooLarge, "request header too large\n"
	default:
		return http.StatusBadRequest, "invalid Content-Length (RFC 9112 §6.3)\n"
	}
}

type framingKey struct{}

// framingContext is the http.Server's ConnContext: it hands a guarded
// connection's state to the handler of each request read from it.
func framingContext(ctx context.Context, c net.Conn) context.Context {
	if fc, ok := c.(interface{ framing() *framingConn }); ok {
		return context.WithValue(ctx, framingKey{}, fc.framing())
	}
	return ctx
}

// refuseFaultyFraming answers the request that framingConn marked, with
// Connection: close, so the bytes after it are never read as a request.
// It must be the outermost handler, since it counts the requests of each
// connection. HTTP/2 connections are not guarded: HTTP/2 has its own
// framing and forbids Transfer-Encoding (RFC 9113 §8.2.2).
func refuseFaultyFraming(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fc, ok := r.Context().Value(framingKey{}).(*framingConn); ok && r.ProtoMajor == 1 {
			if f := fc.nextRequest(); f != faultNone {
				refuseAndLinger(w, f)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// A refused connection is closed after at most lingerTime, or once the
// client has sent lingerBytes more.
const (
	lingerTime  = 500 * time.Millisecond
	lingerBytes = 64 << 10
)

// refuseAndLinger answers a refused request and closes its connection in
// a way that lets the answer arrive. The client is usually still sending
// (the smuggled request, a body): closing a socket with unread bytes
// sends a TCP reset, which can destroy the answer before the client reads
// it. So the write side is shut first (the client reads the answer, then
// its end), and what the client sends meanwhile is read and dropped for a
// bounded time, as net/http does for a request body it refuses
// (closeWriteAndWait). None of it is read as a request.
func refuseAndLinger(w http.ResponseWriter, f framingFault) {
	status, msg := f.answer()
	w.Header().Set("Content-Length", strconv.Itoa(len(msg)))
	refuse(w, status, msg)
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	conn, _, err := rc.Hijack()
	if err != nil {
		return // net/http closes the connection (Connection: close)
	}
	defer conn.Close()
	if cw, ok := conn.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_ = conn.SetReadDeadline(time.Now().Add(lingerTime))
	_, _ = io.CopyN(io.Discard, conn, lingerBytes)
}

// guardListener wraps every accepted connection in a framingConn.
type guardListener struct {
	net.Listener
	limit int64
}

// guard makes l's connections follow their request framing. limit is the
// most header bytes net/http reads for one request before it answers 431
// (MaxHeaderBytes plus its 4 KiB of bufio slack).
func guard(l net.Listener, s *http.Server) net.Listener {
	return &guardListener{Listener: l, limit: headerLimit(s)}
}

func headerLimit(s *http.Server) int64 {
	mh := s.MaxHeaderBytes
	if mh <= 0 {
		mh = http.DefaultMaxHeaderBytes
	}
	return int64(mh) + 4096
}

func (l *guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newFramingConn(c, l.limit), nil
}

func newFramingConn(c net.Conn, limit int64) *framingConn {
	fc := &framingConn{Conn: c, scan: newScanner(limit)}
	fc.bad.Store(-1)
	return fc
}

// framingConn is a connection whose reads go through the framing scanner.
// net/http reads one request at a time (its background read included), so
// Read is never called concurrently; the handler of each request reads
// bad from the serving goroutine.
type framingConn struct {
	net.Conn
	scan   scanner
	bad    atomic.Int64 // ordinal of the first refused request, or -1
	fault  atomic.Int32 // its framingFault
	served atomic.Int64 // requests handed to the handler so far
}

func (c *framingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.bad.Load() < 0 {
		if f := c.scan.feed(p[:n]); f != faultNone {
			c.fault.Store(int32(f))
			c.bad.Store(c.scan.requests)
		}
	}
	return n, err
}

// nextRequest counts one request handed to the handler and says whether
// its framing is refused. Every header block that net/http parses becomes
// one handler call on this connection, in order, or the connection ends:
// the answers net/http gives itself (400, 417, 431, 501) close it, and
// its OPTIONS * handler is turned off (see New).
func (c *framingConn) nextRequest() framingFault {
	n := c.served.Add(1) - 1
	if b := c.bad.Load(); b >= 0 && n >= b {
		return framingFault(c.fault.Load())
	}
	return faultNone
}

// NetConn is the wrapped connection (ResetOnAbort resets the TCP socket
// under it).
func (c *framingConn) NetConn() net.Conn { return c.Conn }

// CloseWrite lets net/http half-close before it closes, so that the
// answer to a refused request is not lost to a reset while the client
// still sends (net/http's closeWriteAndWait).
func (c *framingConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *framingConn) framing() *framingConn { return c }

// tlsFramingConn is a framingConn over TLS. Its ConnectionState makes
// net/http set Request.TLS, which it does itself only for a *tls.Conn.
type tlsFramingConn struct {
	*framingConn
	tc *tls.Conn
}

func (c tlsFramingConn) ConnectionState() tls.ConnectionState { return c.tc.ConnectionState() }
