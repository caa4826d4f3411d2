package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"

	"github.com/ssatd/ssatd/internal/bundle"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/metrics"
	"github.com/ssatd/ssatd/internal/testutil"
)

const (
	slowFirst  = "first half of a slow body; "
	slowSecond = "second half, sent after shutdown began"
)

// testOrigin is the publisher origin behind the daemon under test.
type testOrigin struct {
	srv  *httptest.Server
	host string // host:port, as it appears in absolute links

	slowStarted chan struct{} // closed once /slow has flushed its first half
	release     chan struct{} // closed by the test to let /slow finish
	releaseOnce sync.Once
}

func (o *testOrigin) releaseSlow() { o.releaseOnce.Do(func() { close(o.release) }) }

// page is the HTML served at /page; it links to the origin host absolutely
// and protocol-relatively, so both rewrite forms are exercised.
func (o *testOrigin) page() string {
	return `<!doctype html><html><head><title>t</title></head><body>` +
		`<a href="http://` + o.host + `/next?a=1">next</a><img src="//` + o.host + `/i.png">` +
		`</body></html>`
}

func newTestOrigin(t *testing.T) *testOrigin {
	t.Helper()
	o := &testOrigin{slowStarted: make(chan struct{}), release: make(chan struct{})}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, o.page())
		case "/slow":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, slowFirst)
			w.(http.Flusher).Flush()
			close(o.slowStarted)
			select {
			case <-o.release:
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Second):
			}
			_, _ = io.WriteString(w, slowSecond)
		default:
			// A status and body the daemon never produces itself, so a
			// response that carries them certainly came from here. Its
			// type is outside publisher.rewrite_content_types: the answer
			// is passed through.
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("X-Served-By", "test-origin")
			w.WriteHeader(http.StatusTeapot)
			_, _ = fmt.Fprintf(w, "origin answered %s", r.URL.Path)
		}
	}))
	o.host = strings.TrimPrefix(o.srv.URL, "http://")
	// Cleanups run last-in first-out: release /slow before Close waits for it.
	t.Cleanup(o.srv.Close)
	t.Cleanup(o.releaseSlow)
	return o
}

// runningDaemon is a daemon serving on loopback listeners the test created.
type runningDaemon struct {
	clientAddr, adminAddr string
	cancel                context.CancelFunc
	done                  chan error // receives run's result once
	metrics               *metrics.Set
	logged                chan string // the message of every log entry, in order
}

// waitLogged waits until the daemon has logged n entries with message msg,
// counting from the last call. The guest counts a request's metrics before
// it writes its access line, so after waitLogged(t, "access", n) the n
// requests are in /metrics: no polling.
func (d *runningDaemon) waitLogged(t *testing.T, msg string, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for n > 0 {
		select {
		case m := <-d.logged:
			if m == msg {
				n--
			}
		case <-timeout:
			t.Fatalf("timed out waiting for %d more %q log entries", n, msg)
		}
	}
}

func startDaemon(t *testing.T, originURL string) *runningDaemon {
	t.Helper()
	return startDaemonWith(t, fmt.Sprintf(`
[server]
drain_period = "0s"
shutdown_timeout = "10s"

[publisher]
domain = "localhost"
origin_url = %q
`, originURL), zaptest.NewLogger(t))
}

// startDaemonWith runs a daemon with the configuration text conf.
func startDaemonWith(t *testing.T, conf string, log *zap.Logger) *runningDaemon {
	t.Helper()
	cfg, err := config.Load(writeConfig(t, conf), nil)
	if err != nil {
		t.Fatal(err)
	}
	logged := make(chan string, 1024)
	log = log.WithOptions(zap.Hooks(func(e zapcore.Entry) error {
		select {
		case logged <- e.Message:
		default:
			t.Errorf("more than %d log entries unread: %q dropped", cap(logged), e.Message)
		}
		return nil
	}))
	d, err := newDaemon(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	client, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		client.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rd := &runningDaemon{
		clientAddr: client.Addr().String(),
		adminAddr:  admin.Addr().String(),
		cancel:     cancel,
		done:       make(chan error, 1),
		metrics:    d.metrics,
		logged:     logged,
	}
	go func() { rd.done <- d.run(ctx, &listeners{client: client, admin: admin}) }()
	t.Cleanup(func() {
		// Make sure run has returned before the test (and its logger) ends.
		cancel()
		select {
		case <-rd.done:
		case <-time.After(15 * time.Second):
			t.Error("daemon did not stop")
		}
	})
	return rd
}

func newTestClient(t *testing.T) *http.Client {
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{
		Transport: tr,
		Timeout:   10 * time.Second,
		// The origin's responses must be seen as they are, not followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func get(t *testing.T, c *http.Client, url, host string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	req.Header.Set("Accept", "text/html")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", url, err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

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

// logLine finds the first JSON log line whose message contains msg.
func logLine(logs, msg string) (map[string]any, bool) {
	sc := bufio.NewScanner(strings.NewReader(logs))
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		if s, _ := m["msg"].(string); strings.Contains(s, msg) {
			return m, true
		}
	}
	return nil, false
}

// servedCommand is `ssatd serve` running in-process through run, as main
// runs it, with the ports it reported in its startup log line.
type servedCommand struct {
	clientAddr, adminAddr string
	path                  string // the configuration file
	stderr                *testutil.LockedBuffer
	cancel                context.CancelFunc // what SIGTERM does
	done                  chan int           // receives the exit code once
}

func startServeCommand(t *testing.T, configText string) *servedCommand {
	t.Helper()
	path := writeConfig(t, configText)
	ctx, cancel := context.WithCancel(context.Background())
	sc := &servedCommand{path: path, stderr: &testutil.LockedBuffer{}, cancel: cancel, done: make(chan int, 1)}
	go func() { sc.done <- run(ctx, []string{"serve", "-config", path}, io.Discard, sc.stderr, nil) }()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-sc.done:
			sc.done <- code
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop")
		}
	})
	started := sc.waitLog(t, "ssatd started")
	sc.clientAddr, _ = started["listen"].(string)
	sc.adminAddr, _ = started["admin_listen"].(string)
	if sc.clientAddr == "" || sc.adminAddr == "" || sc.clientAddr == sc.adminAddr {
		t.Fatalf("startup line has listen %q and admin_listen %q", sc.clientAddr, sc.adminAddr)
	}
	return sc
}

// waitLog waits for serve to log a line whose message contains msg and
// returns it, checking after every write to stderr.
func (sc *servedCommand) waitLog(t *testing.T, msg string) map[string]any {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		logs, next := sc.stderr.Next()
		if m, ok := logLine(logs, msg); ok {
			return m
		}
		select {
		case <-next:
		case code := <-sc.done:
			sc.done <- code
			t.Fatalf("serve exited with %d before logging %q:\n%s", code, msg, sc.stderr.String())
		case <-timeout:
			t.Fatalf("serve did not log %q:\n%s", msg, logs)
		}
	}
}

// exitCode waits for serve to return.
func (sc *servedCommand) exitCode(t *testing.T) int {
	t.Helper()
	select {
	case code := <-sc.done:
		sc.done <- code // leave it for the cleanup
		return code
	case <-time.After(10 * time.Second):
		t.Fatalf("serve did not return after cancellation:\n%s", sc.stderr.String())
		return -1
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

// lastLogLine decodes the last line that serve logged.
func lastLogLine(t *testing.T, logs string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("last log line %q: %v", lines[len(lines)-1], err)
	}
	return m
}

// TestShutdownFailsReadinessBeforeClosingTheListener catches a shutdown that
// closes the client listener at the moment /readyz starts failing, which
// leaves a load balancer no time to stop sending new requests.
func TestShutdownFailsReadinessBeforeClosingTheListener(t *testing.T) {
	origin := newTestOrigin(t)
	// Long enough that the checks below finish well within it on a loaded
	// machine; the test waits for all of it.
	const drain = 3 * time.Second
	sc := startServeCommand(t, fmt.Sprintf(`
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
drain_period = %q
shutdown_timeout = "5s"

[publisher]
domain = "localhost"
origin_url = %q
`, drain, origin.srv.URL))
	c := newTestClient(t)
	stopped := time.Now()
	sc.cancel()
	// Readiness fails before shutdown logs that it has begun.
	sc.waitLog(t, "shutting down")
	if status, _, _ := get(t, c, "http://"+sc.adminAddr+"/readyz", ""); status != http.StatusServiceUnavailable {
		t.Errorf("/readyz after shutdown began = %d, want 503", status)
	}
	// A new connection, as a load balancer that has not yet seen the
	// failing readiness would open, is still served.
	c.Transport.(*http.Transport).CloseIdleConnections()
	status, _, body := get(t, c, "http://"+sc.clientAddr+"/during-drain", "localhost")
	if status != http.StatusTeapot || body != "origin answered /during-drain" {
		t.Errorf("request during the drain period = %d %q, want the origin's answer", status, body)
	}
	if elapsed := time.Since(stopped); elapsed >= drain {
		t.Fatalf("the checks took %s, longer than the drain period; the test proves nothing", elapsed)
	}
	if status, _, _ := get(t, c, "http://"+sc.adminAddr+"/healthz", ""); status != http.StatusOK {
		t.Errorf("/healthz during the drain = %d, want 200: liveness must hold while readiness fails", status)
	}
	if code := sc.exitCode(t); code != 0 {
		t.Errorf("exit code = %d, want 0\n%s", code, sc.stderr.String())
	}
	if elapsed := time.Since(stopped); elapsed < drain {
		t.Errorf("serve returned %s after the stop, before drain_period %s was over", elapsed, drain)
	}
	line, ok := logLine(sc.stderr.String(), "shutting down")
	if !ok || line["drain_period"] != "3s" || line["shutdown_timeout"] != "5s" {
		t.Errorf("shutdown line = %v, want drain_period \"3s\" and shutdown_timeout \"5s\" with their units", line)
	}
	c.Transport.(*http.Transport).CloseIdleConnections()
	assertRefused(t, "client", sc.clientAddr)
}

// TestShutdownPastTimeoutCutsOffAndExitsZero catches a serve that exits 1
// when a response outlasts shutdown_timeout: the stop was asked for, so the
// cut-off is logged with a count and the exit status stays 0. The client
// must still see the cut response as incomplete.
func TestShutdownPastTimeoutCutsOffAndExitsZero(t *testing.T) {
	origin := newTestOrigin(t)
	sc := startServeCommand(t, fmt.Sprintf(`
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
drain_period = "0s"
shutdown_timeout = "300ms"

[publisher]
domain = "localhost"
origin_url = %q
`, origin.srv.URL))
	c := newTestClient(t)
	req, err := http.NewRequest(http.MethodGet, "http://"+sc.clientAddr+"/slow", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "localhost"
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, len(slowFirst))
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatalf("first half: %v", err)
	}

	sc.cancel()
	if code := sc.exitCode(t); code != 0 {
		t.Errorf("exit code = %d, want 0 when responses outlast shutdown_timeout\n%s", code, sc.stderr.String())
	}
	if rest, err := io.ReadAll(resp.Body); err == nil {
		t.Errorf("the cut response read as complete: %q", string(first)+string(rest))
	}
	logs := sc.stderr.String()
	cut, ok := logLine(logs, "cut off")
	if !ok || cut["level"] != "warn" || cut["in_flight"] != 1.0 || cut["shutdown_timeout"] != "300ms" {
		t.Errorf("cut-off line = %v, want a warning with in_flight 1 and shutdown_timeout \"300ms\"\n%s", cut, logs)
	}
	if last := lastLogLine(t, logs); last["msg"] != "stopped" {
		t.Errorf("last log line = %v, want \"stopped\"", last)
	}
}

// assertRefused checks that nothing listens on addr any more.
func assertRefused(t *testing.T, name, addr string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		conn.Close()
		t.Errorf("%s port %s still accepts connections after shutdown", name, addr)
		return
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dialling the %s port %s after shutdown: %v, want connection refused", name, addr, err)
	}
}

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
