package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/proxy"
)

// TestH2PrefaceRefused catches "PRI * HTTP/2.0" over an HTTP/1.1
// connection being forwarded to the origin (as "PRI /%2A"): the whole
// client data path, guest included, must answer it with 505 and close.
func TestH2PrefaceRefused(t *testing.T) {
	var originHits atomic.Int32
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		originHits.Add(1)
	}))
	defer origin.Close()
	cfg := config.Defaults()
	cfg.Publisher.Domain = "www.pub.example"
	cfg.Publisher.OriginURL = origin.URL
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	g, err := proxy.New(cfg, proxy.Options{Bundle: []byte("bundle")})
	if err != nil {
		t.Fatal(err)
	}
	h, err := ClientHandler(cfg, g)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(cfg, h, nil)
	go Serve(srv, l)
	defer srv.Close()

	for _, tt := range []struct {
		name, request string
		status        int
	}{
		{"h2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", http.StatusHTTPVersionNotSupported},
		{"asterisk-form GET", "GET * HTTP/1.1\r\nHost: www.pub.example\r\n\r\n", http.StatusBadRequest},
	} {
		status, closed := rawExchange(t, l.Addr().String(), tt.request)
		if status != tt.status || !closed {
			t.Errorf("%s: status %d (connection closed %v), want %d and a close", tt.name, status, closed, tt.status)
		}
	}
	if n := originHits.Load(); n != 0 {
		t.Errorf("the refused requests reached the origin %d times", n)
	}
	// An ordinary request on the same path still reaches the origin.
	req, _ := http.NewRequest(http.MethodGet, "http://"+l.Addr().String()+"/x", nil)
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if originHits.Load() != 1 {
		t.Errorf("an ordinary GET reached the origin %d times, want 1", originHits.Load())
	}
}

// rawExchange sends one raw request and reports the response status and
// whether the server closed the connection after it (so that the rest of
// the preface, "SM\r\n\r\n", is never read as a request).
func rawExchange(t *testing.T, addr, request string) (status int, closed bool) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response to %q: %v", request, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_, err = br.ReadByte()
	return resp.StatusCode, err == io.EOF
}
