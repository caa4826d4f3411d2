package server

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestTLS12CBCSuitesRefused: the client listener served TLS 1.2 with
// Go's default suites, CBC with SHA-1 among them. A real client that
// offers only suites outside Mozilla's "intermediate" profile is refused
// at the handshake; one that offers a profile suite gets that suite, and
// TLS 1.3 is served as Go serves it.
func TestTLS12CBCSuitesRefused(t *testing.T) {
	checkLeaks(t)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer origin.Close()
	f := newTLSFront(t, origin.URL)
	tests := []struct {
		name    string
		version uint16
		suite   uint16 // 0: the client's defaults (TLS 1.3)
		served  bool
	}{
		{"ECDHE-ECDSA-AES128-SHA", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, false},
		{"ECDHE-ECDSA-AES256-SHA", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, false},
		{"ECDHE-ECDSA-AES128-SHA256", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256, false},
		{"ECDHE-ECDSA-AES128-GCM-SHA256", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, true},
		{"ECDHE-ECDSA-AES256-GCM-SHA384", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, true},
		{"ECDHE-ECDSA-CHACHA20-POLY1305", tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, true},
		{"TLS 1.3", tls.VersionTLS13, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &tls.Config{RootCAs: f.roots, ServerName: "localhost", MinVersion: tt.version, MaxVersion: tt.version}
			if tt.suite != 0 {
				cfg.CipherSuites = []uint16{tt.suite}
			}
			d := &net.Dialer{Timeout: 5 * time.Second}
			c, err := tls.DialWithDialer(d, "tcp", f.addr, cfg)
			if !tt.served {
				if err == nil {
					cs := c.ConnectionState()
					c.Close()
					t.Fatalf("handshake with only %s succeeded (%s)", tt.name, tls.CipherSuiteName(cs.CipherSuite))
				}
				return
			}
			if err != nil {
				t.Fatalf("handshake with %s: %v", tt.name, err)
			}
			defer c.Close()
			cs := c.ConnectionState()
			if cs.Version != tt.version || (tt.suite != 0 && cs.CipherSuite != tt.suite) {
				t.Fatalf("got %s %s", tls.VersionName(cs.Version), tls.CipherSuiteName(cs.CipherSuite))
			}
		})
	}
}
