package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/bundle"
)

func TestDaemonServesAndShutsDownGracefully(t *testing.T) {
	origin := newTestOrigin(t)
	d := startDaemon(t, origin.srv.URL)
	c := newTestClient(t)
	_, clientPort, _ := net.SplitHostPort(d.clientAddr)
	bundleTag := `<script src="/static/tsjs=tsjs-unified.min.js?v=` + bundle.Hash(bundle.JS()) + `" id="trustedserver-js"></script>`

	t.Run("client port proxies and rewrites the page", func(t *testing.T) {
		tests := []struct {
			name       string
			host       string // Host header the client sends
			linkedHost string // host the origin's links must point to
		}{
			// The port is the test's own listener's, which no setting names.
			{name: "configured domain on a port nothing names", host: "localhost:" + clientPort, linkedHost: "localhost"},
			{name: "foreign host falls back to the domain", host: "evil.example:" + clientPort, linkedHost: "localhost"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				status, hdr, body := get(t, c, "http://"+d.clientAddr+"/page", tt.host)
				if status != http.StatusOK {
					t.Fatalf("status = %d, want 200; body: %s", status, body)
				}
				if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
					t.Errorf("Content-Type = %q, want text/html", ct)
				}
				want := `<!doctype html><html><head>` + bundleTag + `<title>t</title></head><body>` +
					`<a href="http://` + tt.linkedHost + `/next?a=1">next</a><img src="//` + tt.linkedHost + `/i.png">` +
					`</body></html>`
				if body != want {
					t.Errorf("body mismatch\n got: %s\nwant: %s", body, want)
				}
				if strings.Contains(body, origin.host) {
					t.Errorf("body still names the origin host %s", origin.host)
				}
			})
		}
	})

	t.Run("client port forwards admin paths to the origin", func(t *testing.T) {
		for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
			t.Run(path, func(t *testing.T) {
				status, hdr, body := get(t, c, "http://"+d.clientAddr+path, "localhost:"+clientPort)
				if status != http.StatusTeapot || body != "origin answered "+path || hdr.Get("X-Served-By") != "test-origin" {
					t.Errorf("got %d %q (X-Served-By %q), want the origin's 418 %q",
						status, body, hdr.Get("X-Served-By"), "origin answered "+path)
				}
			})
		}
	})

	t.Run("admin port", func(t *testing.T) {
		tests := []struct {
			path       string
			wantStatus int
			wantBody   string // substring
		}{
			{"/healthz", http.StatusOK, "ok"},
			{"/readyz", http.StatusOK, "ready"},
			{"/metrics", http.StatusOK, "# TYPE ssatd_requests_total counter"},
			{"/metrics", http.StatusOK, "# TYPE go_goroutines gauge"},
			{"/metrics", http.StatusOK, "# TYPE process_cpu_seconds_total counter"},
			// The admin port never proxies to the origin.
			{"/page", http.StatusNotFound, ""},
		}
		for _, tt := range tests {
			t.Run(tt.path, func(t *testing.T) {
				status, hdr, body := get(t, c, "http://"+d.adminAddr+tt.path, "")
				if status != tt.wantStatus {
					t.Errorf("status = %d, want %d; body: %s", status, tt.wantStatus, body)
				}
				if !strings.Contains(body, tt.wantBody) {
					t.Errorf("body lacks %q:\n%s", tt.wantBody, body)
				}
				if strings.Contains(body, "origin answered") || hdr.Get("X-Served-By") != "" {
					t.Errorf("admin %s was answered by the origin", tt.path)
				}
			})
		}
	})

	t.Run("metrics count the requests by route", func(t *testing.T) {
		// Two HTML pages went through the pipeline and three plain-text
		// answers were passed through. A request is counted when its
		// handler returns, which may be just after the client has read
		// the body; its access line comes after that.
		d.waitLogged(t, "access", 5)
		want := []string{
			`ssatd_requests_total{eligible="false",mode="mirror",outcome="ok",route="pipeline",status_class="2xx"} 2` + "\n",
			`ssatd_requests_total{eligible="false",mode="mirror",outcome="ok",route="pass-through",status_class="4xx"} 3` + "\n",
		}
		_, _, body := get(t, c, "http://"+d.adminAddr+"/metrics", "")
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("metrics lack %q:\n%s", w, body)
			}
		}
	})

	t.Run("graceful shutdown finishes an in-flight response", func(t *testing.T) {
		resp, err := c.Get("http://" + d.clientAddr + "/slow")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		first := make([]byte, len(slowFirst))
		if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != slowFirst {
			t.Fatalf("first half = %q, %v; want %q (the response must stream)", first, err, slowFirst)
		}
		select {
		case <-origin.slowStarted:
		case <-time.After(5 * time.Second):
			t.Fatal("the origin never reported sending the first half")
		}

		d.cancel()
		// /readyz fails as soon as shutdown starts, before it logs so; the
		// admin listener stays up while client responses drain.
		d.waitLogged(t, "shutting down", 1)
		if status, _, _ := get(t, c, "http://"+d.adminAddr+"/readyz", ""); status != http.StatusServiceUnavailable {
			t.Errorf("/readyz while draining = %d, want 503", status)
		}
		select {
		case err := <-d.done:
			t.Fatalf("run returned %v while a response was still in flight", err)
		default:
		}
		origin.releaseSlow()

		rest, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("reading the rest of the body: %v", err)
		}
		if got := string(first) + string(rest); got != slowFirst+slowSecond {
			t.Errorf("body = %q, want %q", got, slowFirst+slowSecond)
		}
		select {
		case err := <-d.done:
			if err != nil {
				t.Errorf("run returned %v, want nil", err)
			}
			d.done <- err // leave it for the cleanup
		case <-time.After(10 * time.Second):
			t.Fatal("run did not return after the last response finished")
		}
		c.Transport.(*http.Transport).CloseIdleConnections()
		assertRefused(t, "client", d.clientAddr)
		assertRefused(t, "admin", d.adminAddr)
	})
}

func TestServeListenFailures(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name, listen, admin string
		wantKey, notKey     string
	}{
		{name: "client address in use", listen: busy.Addr().String(), admin: "127.0.0.1:0",
			wantKey: "server.listen", notKey: "server.admin_listen"},
		{name: "admin address in use", listen: "127.0.0.1:0", admin: busy.Addr().String(),
			wantKey: "server.admin_listen", notKey: "server.listen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, fmt.Sprintf(`
[server]
listen = %q
admin_listen = %q

[publisher]
domain = "localhost"
origin_url = "http://127.0.0.1:1"
`, tt.listen, tt.admin))
			// Bounded, in case the daemon wrongly starts serving.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var stdout, stderr strings.Builder
			code := run(ctx, []string{"serve", "-config", path}, &stdout, &stderr, nil)
			if code != 1 {
				t.Fatalf("exit code = %d, want 1\nstderr: %s", code, stderr.String())
			}
			msg := stderr.String()
			if !strings.Contains(msg, tt.wantKey) || !strings.Contains(msg, busy.Addr().String()) {
				t.Errorf("stderr does not name %s and %s:\n%s", tt.wantKey, busy.Addr(), msg)
			}
			if strings.Contains(msg, tt.notKey) {
				t.Errorf("stderr blames %s too:\n%s", tt.notKey, msg)
			}
		})
	}
}

func TestServeSetupErrors(t *testing.T) {
	valid := writeConfig(t, "[server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n"+
		"[publisher]\ndomain = \"localhost\"\norigin_url = \"http://127.0.0.1:1\"\n")
	invalid := writeConfig(t, "[publisher]\ndomain = \"localhost\"\n[compression]\ngzip_level = 0\n")
	tests := []struct {
		name       string
		args       []string
		environ    []string
		wantCode   int
		wantStderr []string
	}{
		{name: "invalid configuration", args: []string{"-config", invalid}, wantCode: 1,
			wantStderr: []string{"2 problem(s)", "publisher.origin_url", "compression.gzip_level"}},
		{name: "no configuration at all", wantCode: 1, wantStderr: []string{"(environment only)", "publisher.domain",
			"pass -config FILE or set SSATD_CONFIG"}},
		{name: "bad log format", args: []string{"-config", valid}, environ: []string{"SSATD_LOG_FORMAT=xml"},
			wantCode: 1, wantStderr: []string{"SSATD_LOG_FORMAT"}},
		{name: "bad log level", args: []string{"-config", valid}, environ: []string{"SSATD_LOG_LEVEL=loud"},
			wantCode: 1, wantStderr: []string{"SSATD_LOG_LEVEL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := invoke(t, append([]string{"serve"}, tt.args...), tt.environ)
			if got.code != tt.wantCode {
				t.Fatalf("exit code = %d, want %d\nstderr: %s", got.code, tt.wantCode, got.stderr)
			}
			for _, s := range tt.wantStderr {
				if !strings.Contains(got.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, got.stderr)
				}
			}
		})
	}
}

// TestServeCommand runs the daemon through the command line, learning its
// ports from the startup log line, and stops it by cancelling the context
// as SIGTERM would.
func TestServeCommand(t *testing.T) {
	origin := newTestOrigin(t)
	sc := startServeCommand(t, fmt.Sprintf(`
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
drain_period = "0s"

[publisher]
domain = "localhost"
origin_url = %q

[debug]
diagnostics_headers = true
`, origin.srv.URL))
	if w, ok := logLine(sc.stderr.String(), "debug.diagnostics_headers"); !ok || w["level"] != "warn" {
		t.Errorf("no warn-level log line for debug.diagnostics_headers:\n%s", sc.stderr.String())
	}

	c := newTestClient(t)
	if status, _, body := get(t, c, "http://"+sc.adminAddr+"/readyz", ""); status != http.StatusOK {
		t.Errorf("admin /readyz = %d %q, want 200", status, body)
	}
	if status, _, body := get(t, c, "http://"+sc.clientAddr+"/healthz", "localhost"); status != http.StatusTeapot || body != "origin answered /healthz" {
		t.Errorf("client /healthz = %d %q, want it forwarded to the origin", status, body)
	}

	sc.cancel()
	if code := sc.exitCode(t); code != 0 {
		t.Errorf("exit code = %d, want 0 after cancellation\n%s", code, sc.stderr.String())
	}
	logs := sc.stderr.String()
	if _, ok := logLine(logs, "shutting down"); !ok {
		t.Errorf("no shutdown log line:\n%s", logs)
	}
	if last := lastLogLine(t, logs); last["msg"] != "stopped" || last["level"] != "info" {
		t.Errorf("last log line = %v, want the info line \"stopped\"", last)
	}
	c.Transport.(*http.Transport).CloseIdleConnections()
	assertRefused(t, "client", sc.clientAddr)
	assertRefused(t, "admin", sc.adminAddr)
}
