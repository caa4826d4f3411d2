package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The whole page that replaces an origin's 206 is a response like any
// other: its hop-by-hop headers (RFC 9110 §7.6.1: Connection, the fields
// Connection lists, Keep-Alive, Proxy-Connection, Upgrade) end at the guest.
// Read from the raw client connection, so that nothing between the guest
// and the test drops them.
func TestRangeRefetchDropsHopByHopHeaders(t *testing.T) {
	page := "<html><head><title>t</title></head><body>" + strings.Repeat("p", 500) + "</body></html>"
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Connection", "X-Hop-Secret, X-Other-Hop")
		h.Set("X-Hop-Secret", "origin-only")
		h.Set("X-Other-Hop", "origin-only")
		h.Set("Keep-Alive", "timeout=5, max=100")
		h.Set("Proxy-Connection", "keep-alive")
		h.Set("Upgrade", "h2c")
		h.Set("X-End-To-End", "kept")
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(page))
	}))
	for _, tt := range []struct {
		name  string
		extra string
	}{
		{"ranged, fetched again", "Range: bytes=0-39\r\n"},
		{"not ranged", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", e.front.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			req := "GET /page HTTP/1.1\r\nHost: " + testDomain + "\r\nAccept-Encoding: identity\r\n" + tt.extra + "Connection: close\r\n\r\n"
			if _, err := io.WriteString(conn, req); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || !strings.HasSuffix(string(body), "</body></html>") {
				t.Fatalf("status %d, %d bytes, %v: want the whole page, 200", resp.StatusCode, len(body), err)
			}
			for _, k := range []string{"X-Hop-Secret", "X-Other-Hop", "Keep-Alive", "Proxy-Connection", "Upgrade"} {
				if v := resp.Header.Values(k); len(v) > 0 {
					t.Errorf("hop-by-hop %s: %q reached the client", k, v)
				}
			}
			for _, v := range resp.Header.Values("Connection") {
				if !strings.EqualFold(strings.TrimSpace(v), "close") {
					t.Errorf("Connection: %q reached the client", v)
				}
			}
			if resp.Header.Get("X-End-To-End") != "kept" {
				t.Errorf("end-to-end header lost: %v", resp.Header)
			}
		})
	}
}
