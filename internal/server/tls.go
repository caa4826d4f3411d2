package server

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// ServeTLS serves s on l over TLS with cert, as browsers reach Fastly:
// HTTP/2 when the client offers it in ALPN ("h2", RFC 9113 §3.2), else
// HTTP/1.1 (Fastly serves TLS clients HTTP/2 by default,
// https://www.fastly.com/blog/http2-now-general-availability, and
// HTTP/1.1 to the others,
// https://docs.fastly.com/en/guides/enabling-http3-for-fastly-services).
//
// The handshake is done here, before net/http sees the connection, so
// that an HTTP/1.x connection can be handed on under the framing guard
// (see refuseFaultyFraming) and an HTTP/2 one as the *tls.Conn net/http
// needs to serve HTTP/2 itself. HTTP/2 needs no guard: its framing is its
// own and it forbids Transfer-Encoding (RFC 9113 §8.2.2).
func ServeTLS(s *http.Server, l net.Listener, cert *tls.Certificate) error {
	return ServeTLSFunc(s, l, func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return cert, nil })
}

// ServeTLSFunc is ServeTLS with the certificate asked of cert at each
// handshake, so that a reloaded certificate serves new connections.
func ServeTLSFunc(s *http.Server, l net.Listener, cert func(*tls.ClientHelloInfo) (*tls.Certificate, error)) error {
	cfg := &tls.Config{
		GetCertificate: cert,
		NextProtos:     []string{"h2", "http/1.1"},
		MinVersion:     tls.VersionTLS12,
		CipherSuites:   intermediateSuites,
	}
	// With "h2" in its TLSConfig, net/http configures its HTTP/2 server
	// for the *tls.Conn connections the listener returns.
	s.TLSConfig = cfg.Clone()
	return s.Serve(newTLSListener(l, cfg, s))
}

// intermediateSuites are the TLS 1.2 suites of Mozilla's "intermediate"
// profile (https://wiki.mozilla.org/Security/Server_Side_TLS, "Intermediate
// compatibility"): ECDHE with AES-GCM or ChaCha20-Poly1305, forward secret
// and AEAD only, which also keeps every suite off HTTP/2's list of
// prohibited ones (RFC 9113 Appendix A). The profile's DHE suites are left
// out because Go implements none. Go's defaults add the CBC suites with
// SHA-1 MACs. TLS 1.3 suites are not configurable in Go and are served as
// Go serves them, which is what the profile asks for TLS 1.3.
var intermediateSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// tlsListener accepts TCP connections, completes their TLS handshakes
// concurrently (a slow client holds up only its own connection, for at
// most the handshake timeout) and returns them ready to serve.
type tlsListener struct {
	inner   net.Listener
	config  *tls.Config
	timeout time.Duration
	limit   int64
	server  *http.Server

	ready  chan net.Conn
	failed chan error
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	once   sync.Once
	wg     sync.WaitGroup
}

func newTLSListener(l net.Listener, cfg *tls.Config, s *http.Server) *tlsListener {
	ctx, cancel := context.WithCancel(context.Background())
	tl := &tlsListener{
		inner: l, config: cfg, timeout: handshakeTimeout(s), limit: headerLimit(s), server: s,
		ready: make(chan net.Conn), failed: make(chan error), ctx: ctx, cancel: cancel,
	}
	tl.wg.Add(1)
	go tl.acceptLoop()
	return tl
}

// handshakeTimeout is net/http's own bound on a TLS handshake: the
// shortest of the server's read-header, read and write timeouts.
func handshakeTimeout(s *http.Server) time.Duration {
	var d time.Duration
	for _, t := range []time.Duration{s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout} {
		if t > 0 && (d == 0 || t < d) {
			d = t
		}
	}
	if d == 0 {
		d = 10 * time.Second
	}
	return d
}

func (l *tlsListener) acceptLoop() {
	defer l.wg.Done()
	for {
		c, err := l.inner.Accept()
		if err != nil {
			select {
			case l.failed <- err: // net/http retries temporary errors
			case <-l.ctx.Done():
				return
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		l.wg.Add(1)
		go l.handshake(c)
	}
}

func (l *tlsListener) handshake(c net.Conn) {
	defer l.wg.Done()
	// The socket is metered for the HTTP/2 stall bound (h2hold.go).
	tc := tls.Server(newMeteredConn(c), l.config)
	ctx, cancel := context.WithTimeout(l.ctx, l.timeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		if l.server.ErrorLog != nil {
			l.server.ErrorLog.Printf("http: TLS handshake error from %s: %v", c.RemoteAddr(), err)
		}
		_ = c.Close()
		return
	}
	var conn net.Conn = tc
	if tc.ConnectionState().NegotiatedProtocol != "h2" {
		conn = tlsFramingConn{framingConn: newFramingConn(tc, l.limit), tc: tc}
	}
	select {
	case l.ready <- conn:
	case <-l.ctx.Done():
		_ = conn.Close()
	}
}

func (l *tlsListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case err := <-l.failed:
		return nil, err
	case <-l.ctx.Done():
		return nil, net.ErrClosed
	}
}

// Close stops accepting, ends the handshakes under way and waits for
// their goroutines.
func (l *tlsListener) Close() error {
	var err error
	l.once.Do(func() {
		l.cancel()
		err = l.inner.Close()
		l.wg.Wait()
	})
	return err
}

func (l *tlsListener) Addr() net.Addr { return l.inner.Addr() }
