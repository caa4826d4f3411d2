package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/devcert"
)

// TestTLSKeysValidated: each TLS key's problem names that key, and a
// good pair is loaded by Validate.
func TestTLSKeysValidated(t *testing.T) {
	a, _, err := devcert.Write(t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := devcert.Write(t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(t.TempDir(), "x.pem")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	missing := filepath.Join(t.TempDir(), "missing.pem")
	tests := []struct {
		name              string
		cert, key, redir  string
		listen            string
		wantKey, wantText string
	}{
		{"cert without key", a.Cert, "", "", "", "server.tls_key_file", "must be set"},
		{"key without cert", "", a.Key, "", "", "server.tls_cert_file", "must be set"},
		{"missing cert file", missing, a.Key, "", "", "server.tls_cert_file", "no such file"},
		{"missing key file", a.Cert, missing, "", "", "server.tls_key_file", "no such file"},
		{"not PEM", notPEM, a.Key, "", "", "server.tls_cert_file", "with server.tls_key_file"},
		{"key of another certificate", a.Cert, b.Key, "", "", "server.tls_cert_file", "private key does not match"},
		{"redirect without TLS", "", "", ":8080", ":8443", "server.http_redirect_listen", "needs server.tls_cert_file"},
		{"redirect on the TLS port", a.Cert, a.Key, "127.0.0.1:8443", ":8443", "server.http_redirect_listen", "same port as server.listen"},
		{"redirect not an address", a.Cert, a.Key, "8080", ":8443", "server.http_redirect_listen", "host:port"},
	}
	for _, tt := range tests {
		c := valid()
		c.Server.TLSCertFile, c.Server.TLSKeyFile, c.Server.HTTPRedirectListen = tt.cert, tt.key, tt.redir
		if tt.listen != "" {
			c.Server.Listen = tt.listen
		}
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.wantKey) || !strings.Contains(err.Error(), tt.wantText) {
			t.Errorf("%s: %v; want a problem naming %s (%q)", tt.name, err, tt.wantKey, tt.wantText)
		}
	}
	c := valid()
	c.Server.Listen, c.Server.TLSCertFile, c.Server.TLSKeyFile, c.Server.HTTPRedirectListen = ":8443", a.Cert, a.Key, ":8080"
	if err := c.Validate(); err != nil || !c.Server.TLS() {
		t.Fatalf("a good pair: %v, TLS %v", err, c.Server.TLS())
	}
}
