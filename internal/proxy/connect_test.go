package proxy

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
)

// connectEnv is a guest in front of originURL with the given connect and
// header timeouts, on the daemon's own origin transport; tune adjusts that
// transport (a test CA).
func connectEnv(t *testing.T, originURL string, connect, header time.Duration, tune func(*http.Transport)) (*Guest, string, *observedLogs) {
	t.Helper()
	cfg := testConfig(t, originURL, func(c *config.Config) {
		c.Publisher.OriginConnectTimeout = config.Duration{Duration: connect}
		c.Publisher.OriginHeaderTimeout = config.Duration{Duration: header}
	})
	tr := newOriginTransport(cfg)
	if tune != nil {
		tune(tr)
	}
	logger, logs := newObservedLogger(zap.InfoLevel)
	g, err := New(cfg, Options{Logger: logger, Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g, newFront(t, g), logs
}

// A TLS handshake that never completes is a failure to connect, bounded by
// origin_connect_timeout like the TCP connect: 502 origin_unreachable, the
// row of that setting in docs/behaviour.md's Limits table, not the 504 of
// origin_header_timeout, which would send the operator to the wrong
// setting. The origin accepts TCP (the kernel completes the connection)
// and never answers the ClientHello.
func TestTLSHandshakeTimeoutIsUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The header timeout is long: only the handshake's may fire.
	g, front, logs := connectEnv(t, "https://"+ln.Addr().String(), 300*time.Millisecond, time.Minute, nil)
	start := time.Now()
	resp, err := client.Get(front + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "could not be reached") {
		t.Fatalf("status %d body %q, want 502 could not be reached", resp.StatusCode, body)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Fatalf("answered after %s, before the connect timeout: not a handshake timeout", took)
	}
	logs.waitAccess(t, 1)
	if n := g.Metrics().Failures(reasonUnreachable.String()); n != 1 {
		t.Fatalf("origin_unreachable counted %d times, want 1", n)
	}
	if n := g.Metrics().Failures(reasonHeaderTimeout.String()); n != 0 {
		t.Fatalf("origin_header_timeout counted %d times, want 0", n)
	}
	if line := logs.FilterMessage("access").All()[0].ContextMap(); !strings.Contains(line["error"].(string), "TLS handshake timeout") {
		t.Fatalf("access line error %q: the test did not time out the handshake", line["error"])
	}
}

// Over the same TLS transport, a timeout once the connection is up is the
// origin's headers': 504 origin_header_timeout.
func TestTLSOriginHeaderTimeoutIs504(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	// The connect timeout is long, so that a handshake slowed by -race on
	// a loaded machine still completes: only the header timeout may fire.
	g, front, logs := connectEnv(t, srv.URL, time.Minute, 300*time.Millisecond, func(tr *http.Transport) {
		tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	})
	resp, err := client.Get(front + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("status %d, want 504", resp.StatusCode)
	}
	logs.waitAccess(t, 1)
	if n := g.Metrics().Failures(reasonHeaderTimeout.String()); n != 1 {
		t.Fatalf("origin_header_timeout counted %d times, want 1", n)
	}
}
