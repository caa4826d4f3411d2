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

// TestTLSRedirectPortValidated: server.tls_redirect_port is a TCP port,
// or 0 for server.listen's, and only means something with the redirect
// listener; each problem names the key. A good one decodes from the file
// and from the environment.
func TestTLSRedirectPortValidated(t *testing.T) {
	a, _, err := devcert.Write(t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		port     int
		redir    string
		wantText string // "" when valid
	}{
		{"default", 0, ":8080", ""},
		{"a mapped port", 8443, ":8080", ""},
		{"443", 443, ":8080", ""},
		{"negative", -1, ":8080", "is not a TCP port"},
		{"past 65535", 65536, ":8080", "is not a TCP port"},
		{"without the redirect listener", 8443, "", "needs server.http_redirect_listen"},
	}
	for _, tt := range tests {
		c := valid()
		c.Server.Listen, c.Server.TLSCertFile, c.Server.TLSKeyFile = ":443", a.Cert, a.Key
		c.Server.HTTPRedirectListen, c.Server.TLSRedirectPort = tt.redir, tt.port
		err := c.Validate()
		if tt.wantText == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "server.tls_redirect_port") || !strings.Contains(err.Error(), tt.wantText) {
			t.Errorf("%s: %v; want a problem naming server.tls_redirect_port (%q)", tt.name, err, tt.wantText)
		}
	}
	file := writeFile(t, `
[server]
listen = ":443"
tls_cert_file = "`+a.Cert+`"
tls_key_file = "`+a.Key+`"
http_redirect_listen = ":80"
tls_redirect_port = 8443

[publisher]
domain = "www.example.com"
origin_url = "https://origin.example.com"
`)
	for _, env := range [][]string{nil, {"SSATD_SERVER_TLS_REDIRECT_PORT=9443"}} {
		c, err := Load(file, env)
		want := 8443
		if env != nil {
			want = 9443
		}
		if err != nil {
			t.Fatalf("env %q: %v", env, err)
		}
		if c.Server.TLSRedirectPort != want {
			t.Errorf("env %q: tls_redirect_port %d, want %d", env, c.Server.TLSRedirectPort, want)
		}
	}
}
