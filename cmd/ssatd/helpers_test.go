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

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/metrics"
	"github.com/ssatd/ssatd/internal/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
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
