package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/proxy"
)

// truncatingOrigin promises 100,000 bytes of HTML and dies after 3,000,
// once cut is called: the tests call it when the response has reached the
// client, so that the page fails after its status line went out.
func truncatingOrigin(t *testing.T) (s *httptest.Server, cut func()) {
	t.Helper()
	cutting := make(chan struct{})
	var once sync.Once
	cut = func() { once.Do(func() { close(cutting) }) }
	s = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", "100000")
		w.Write([]byte("<html><head></head><body>" + strings.Repeat("x", 3000)))
		w.(http.Flusher).Flush()
		select {
		case <-cutting:
		case <-r.Context().Done():
			return
		}
		conn, _, _ := http.NewResponseController(w).Hijack()
		conn.Close()
	}))
	t.Cleanup(s.Close)
	t.Cleanup(cut) // before Close, which waits for the handler
	return s, cut
}

// clientPath is the daemon's client-facing data path in front of a guest
// for origin.
func clientPath(t *testing.T, origin string) *httptest.Server {
	t.Helper()
	cfg := config.Defaults()
	cfg.Publisher.Domain = "www.pub.example"
	cfg.Publisher.OriginURL = origin
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	g, err := proxy.New(cfg, proxy.Options{Logger: zap.NewNop(), Bundle: []byte("b")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	h, err := ClientHandler(cfg, g)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewUnstartedServer(h)
	s.Config.ErrorLog = nil
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// An HTTP/1.0 client gets an unframed body, which ends with the connection:
// a page cut off by a failing origin must end with a reset, not with the
// clean close that marks a complete body.
func TestTruncatedPageResetsHTTP10Connection(t *testing.T) {
	origin, cut := truncatingOrigin(t)
	front := clientPath(t, origin.URL)
	conn, err := net.Dial("tcp", strings.TrimPrefix(front.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	conn.Write([]byte("GET / HTTP/1.0\r\nHost: www.pub.example\r\n\r\n"))
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	t.Logf("status line %q", status)
	if err != nil || !strings.HasPrefix(status, "HTTP/1.0 200") {
		t.Fatalf("status line %q, %v", status, err)
	}
	cut()
	_, err = io.Copy(io.Discard, br)
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the truncated page ended with %v, want a connection reset (ECONNRESET)", err)
	}
}

// An HTTP/1.1 client still sees the truncation as an error (a chunked body
// without its last chunk, or a reset).
func TestTruncatedPageIsErrorOverHTTP11(t *testing.T) {
	origin, cut := truncatingOrigin(t)
	front := clientPath(t, origin.URL)
	resp, err := http.Get(front.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	cut()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil {
		t.Fatalf("a truncated page read as complete (%d bytes)", n)
	}
	if resp.ProtoMajor != 1 || resp.ProtoMinor != 1 || len(resp.TransferEncoding) == 0 {
		t.Fatalf("response %s, Transfer-Encoding %v", resp.Proto, resp.TransferEncoding)
	}
}
