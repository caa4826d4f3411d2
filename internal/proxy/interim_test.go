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

// An origin's 103 Early Hints reached HTTP/1.0 clients: through nginx's
// default proxy_http_version 1.0 the browser got the 103 as the final
// response, ssatd's real status line in its body, and a hang. RFC 9110
// §15.2 forbids any 1xx to an HTTP/1.0 client; an HTTP/1.1 client still
// gets the hint. Read from the raw connection, where a 1xx cannot hide.
func TestEarlyHintsNotSentToHTTP10Client(t *testing.T) {
	var e *env
	e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Link", "<http://"+e.host+"/early.css>; rel=preload; as=style")
		w.WriteHeader(http.StatusEarlyHints)
		h.Del("Link")
		if r.URL.Path == "/page" {
			h.Set("Content-Type", "text/html")
			w.Write([]byte("<html><head></head><body>page</body></html>"))
			return
		}
		h.Set("Content-Type", "text/css")
		w.Write([]byte("body{}"))
	}))
	for _, tc := range []struct {
		proto, path string
		interim     bool
	}{
		{"HTTP/1.0", "/page", false},
		{"HTTP/1.0", "/s.css", false},
		{"HTTP/1.1", "/page", true},
		{"HTTP/1.1", "/s.css", true},
	} {
		t.Run(tc.proto+tc.path, func(t *testing.T) {
			lines := rawExchange(t, e.front.Listener.Addr().String(),
				"GET "+tc.path+" "+tc.proto+"\r\nHost: "+testDomain+"\r\nSec-Fetch-Dest: document\r\nConnection: close\r\n\r\n")
			var statuses []string
			for _, l := range lines {
				if strings.HasPrefix(l, "HTTP/1.") {
					statuses = append(statuses, l)
				}
			}
			want := []string{tc.proto + " 200 OK"}
			if tc.interim {
				want = []string{"HTTP/1.1 103 Early Hints", "HTTP/1.1 200 OK"}
			}
			if strings.Join(statuses, "|") != strings.Join(want, "|") {
				t.Fatalf("status lines %q, want %q; response:\n%s", statuses, want, strings.Join(lines, "\n"))
			}
		})
	}
}

// rawExchange writes req on a new connection to addr and returns every
// line the server sends until it closes the connection.
func rawExchange(t *testing.T, addr, req string) []string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Bounds a server that never closes: the read fails instead of the test hanging.
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	var lines []string
	s := bufio.NewScanner(c)
	for s.Scan() {
		lines = append(lines, strings.TrimSuffix(s.Text(), "\r"))
	}
	if err := s.Err(); err != nil {
		t.Fatalf("reading the response: %v (so far %q)", err, lines)
	}
	return lines
}
