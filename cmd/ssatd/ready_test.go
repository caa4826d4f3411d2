package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
)

// TestReadyzAndTheOrigin: by default /readyz stays 200 while the origin is
// down (an outage shared by every replica must not empty the load
// balancer); with server.ready_requires_origin it answers 503 naming the
// origin, and 200 again once the origin accepts connections.
func TestReadyzAndTheOrigin(t *testing.T) {
	// A port that refuses connections: listened on, then closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	up := newTestOrigin(t).srv.URL
	conf := func(origin string, requires bool) string {
		return fmt.Sprintf(`
[server]
drain_period = "0s"
ready_requires_origin = %v

[publisher]
domain = "localhost"
origin_url = %q
origin_connect_timeout = "2s"
`, requires, origin)
	}
	tests := []struct {
		name       string
		origin     string
		requires   bool
		wantStatus int
		wantBody   string
	}{
		{"origin down, default", down, false, http.StatusOK, "ready\n"},
		{"origin down, ready_requires_origin", down, true, http.StatusServiceUnavailable, "not ready: origin unreachable"},
		{"origin up, ready_requires_origin", up, true, http.StatusOK, "ready\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := startDaemonWith(t, conf(tt.origin, tt.requires), zaptest.NewLogger(t))
			d.waitLogged(t, "ssatd started", 1) // ready from before this line
			status, _, body := get(t, newTestClient(t), "http://"+d.adminAddr+"/readyz", "")
			if status != tt.wantStatus || !strings.HasPrefix(body, tt.wantBody) {
				t.Errorf("/readyz = %d %q, want %d %q", status, body, tt.wantStatus, tt.wantBody)
			}
		})
	}
}
