package daemon

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/metrics"
)

// TestAdminListenerHasTimeouts: the admin server had a read-header
// timeout and nothing else, so idle keep-alive connections (20 of 20 after
// 150 s) and slow senders stayed open for ever. Every bound is set now,
// none longer than the client listener's default.
func TestAdminListenerHasTimeouts(t *testing.T) {
	s := NewAdmin(metrics.New(), nil, zap.NewNop())
	client := config.Defaults().Server
	for _, b := range []struct {
		name        string
		got, client time.Duration
	}{
		{"read header", s.ReadHeaderTimeout, client.ReadHeaderTimeout.Duration},
		{"read", s.ReadTimeout, client.ReadTimeout.Duration},
		{"write", s.WriteTimeout, client.WriteTimeout.Duration},
		{"idle", s.IdleTimeout, client.IdleTimeout.Duration},
	} {
		if b.got <= 0 || b.got > b.client {
			t.Errorf("admin %s timeout %v, want set and at most the client listener's %v", b.name, b.got, b.client)
		}
	}
	if s.MaxHeaderBytes <= 0 || s.MaxHeaderBytes > client.MaxHeaderBytes {
		t.Errorf("admin MaxHeaderBytes %d, want set and at most the client listener's %d", s.MaxHeaderBytes, client.MaxHeaderBytes)
	}
}

// TestAdminClosesIdleAndSlowConnections: over real loopback, with the
// admin limits scaled down, an idle keep-alive connection, a client that
// never finishes its headers and one whose headers are too large are each
// closed by the server.
func TestAdminClosesIdleAndSlowConnections(t *testing.T) {
	// net/http keeps a refused connection's goroutine for 500 ms after the
	// 431, so that the client reads the answer before the reset.
	defer goleak.VerifyNone(t, goleak.IgnoreAnyFunction("net/http.(*conn).closeWriteAndWait"))
	l := limits{readHeader: 200 * time.Millisecond, read: 300 * time.Millisecond,
		write: time.Second, idle: 300 * time.Millisecond, maxHeaderBytes: 1 << 10}
	s := newAdminServer(adminRoutes(metrics.New(), nil), zap.NewNop(), l)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(ln) }()
	defer func() { _ = s.Close(); <-done }()
	get := "GET /healthz HTTP/1.1\r\nHost: admin\r\n"
	tests := []struct {
		name   string
		send   string
		status int // 0: no answer
		bound  time.Duration
	}{
		{"idle keep-alive", get + "\r\n", http.StatusOK, l.idle},
		{"unfinished headers", get, 0, l.readHeader},
		{"large headers", get + "X-Big: " + strings.Repeat("a", 8<<10) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// A hard stop far past every bound, so that a connection left
			// open fails the test instead of hanging it.
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			start := time.Now()
			if _, err := io.WriteString(c, tt.send); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			if tt.status != 0 {
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tt.status {
					t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
				}
			}
			if _, err := br.ReadByte(); err != io.EOF {
				t.Fatalf("connection not closed by the server: %v", err)
			}
			if took := time.Since(start); took < tt.bound {
				t.Errorf("closed after %v, before its %v bound", took, tt.bound)
			}
		})
	}
}
