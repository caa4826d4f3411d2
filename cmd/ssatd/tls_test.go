package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/devcert"
)

// TestServeHTTPSWithHTTP2AndRedirect runs serve's daemon with a
// certificate from `ssatd dev-cert`: browsers' HTTP/2 over TLS reaches
// the origin, the guest sees the request as https, and the plain
// redirect listener answers 308 to the https URL.
func TestServeHTTPSWithHTTP2AndRedirect(t *testing.T) {
	dir := t.TempDir()
	got := invoke(t, []string{"dev-cert", "-dir", dir}, nil)
	if got.code != 0 || !strings.Contains(got.stdout, "created a local CA") || !strings.Contains(got.stdout, "tls_cert_file") {
		t.Fatalf("dev-cert: exit %d\n%s%s", got.code, got.stdout, got.stderr)
	}
	if again := invoke(t, []string{"dev-cert", "-dir", dir}, nil); again.code != 0 || !strings.Contains(again.stdout, "reused the local CA") {
		t.Fatalf("second dev-cert: exit %d\n%s", again.code, again.stdout)
	}
	proto := make(chan string, 1)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto <- r.Header.Get("X-Forwarded-Proto")
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "from the origin")
	}))
	defer origin.Close()
	cfg, err := config.Load(writeConfig(t, fmt.Sprintf(`
[server]
drain_period = "0s"
tls_cert_file = %q
tls_key_file = %q
http_redirect_listen = "127.0.0.1:0"

[publisher]
domain = "localhost"
origin_url = %q
`, filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"), origin.URL)), nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDaemon(cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	var ls listeners
	for _, l := range []*net.Listener{&ls.client, &ls.admin, &ls.redirect} {
		if *l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.run(ctx, &ls) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()

	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	_, port, _ := net.SplitHostPort(ls.client.Addr().String())
	resp, err := client.Get("https://localhost:" + port + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusOK || string(body) != "from the origin" {
		t.Errorf("over TLS: %s %d %q, want HTTP/2 200 from the origin", resp.Proto, resp.StatusCode, body)
	}
	if p := <-proto; p != "" && p != "https" {
		t.Errorf("the origin was told the client's scheme is %q", p)
	}
	resp, err = client.Get("http://" + ls.redirect.Addr().String() + "/a?b=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := "https://127.0.0.1:" + port + "/a?b=1"
	if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
		t.Errorf("redirect listener: %d Location %q, want 308 %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
}

// TestRedirectNamesThePortClientsUse: behind a port mapping (docker -p
// 8443:443 -p 8080:80) the HTTPS listener's own port is not the one
// clients reach it on; server.tls_redirect_port names that one, keeping
// the request's host name, and 443 is left out as the default port of
// https. Without the key the redirect names the listener's port. It
// failed when serve built the redirect from the listener's port alone.
func TestRedirectNamesThePortClientsUse(t *testing.T) {
	pair, _, err := devcert.Write(t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		port string // tls_redirect_port, "" for none
		want string // Location, with LISTENER for the HTTPS listener's port
	}{
		{"8443", "https://www.pub.example:8443/a?b=1"},
		{"443", "https://www.pub.example/a?b=1"},
		{"", "https://www.pub.example:LISTENER/a?b=1"},
	} {
		t.Run("tls_redirect_port="+tt.port, func(t *testing.T) {
			key := ""
			if tt.port != "" {
				key = "tls_redirect_port = " + tt.port
			}
			cfg, err := config.Load(writeConfig(t, fmt.Sprintf(`
[server]
drain_period = "0s"
tls_cert_file = %q
tls_key_file = %q
http_redirect_listen = "127.0.0.1:0"
%s

[publisher]
domain = "www.pub.example"
origin_url = "http://127.0.0.1:9"
`, pair.Cert, pair.Key, key)), nil)
			if err != nil {
				t.Fatal(err)
			}
			d, err := newDaemon(cfg, zaptest.NewLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			var ls listeners
			for _, l := range []*net.Listener{&ls.client, &ls.admin, &ls.redirect} {
				if *l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- d.run(ctx, &ls) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("run: %v", err)
				}
			}()
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			req, _ := http.NewRequest(http.MethodGet, "http://"+ls.redirect.Addr().String()+"/a?b=1", nil)
			req.Host = "www.pub.example:8080" // the mapped plain port the client used
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			_, listener, _ := net.SplitHostPort(ls.client.Addr().String())
			want := strings.Replace(tt.want, "LISTENER", listener, 1)
			if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
				t.Errorf("%d Location %q, want 308 %q", resp.StatusCode, resp.Header.Get("Location"), want)
			}
		})
	}
}
