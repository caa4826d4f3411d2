package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/testutil"
)

// reloadConfig makes every path eligible with one slot whose ad unit is
// unit, so a page shows which configuration rewrote it.
func reloadConfig(originURL, unit, extra string) string {
	return fmt.Sprintf(`
[server]
drain_period = "0s"
shutdown_timeout = "10s"
%s
[publisher]
domain = "localhost"
origin_url = %q

[auction]
enabled = true
provider = "static"

[[creative_opportunities.slot]]
id = "top"
page_patterns = ["/**"]
formats = [[728, 90]]
gam_unit_path = %q
`, extra, originURL, unit)
}

// slowPageOrigin serves /page at once and /slow in two halves: the first
// (with the head) when asked, the second (with the body) when released.
type slowPageOrigin struct {
	srv     *httptest.Server
	started chan struct{}
	release chan struct{}
}

func newSlowPageOrigin(t *testing.T) *slowPageOrigin {
	o := &slowPageOrigin{started: make(chan struct{}), release: make(chan struct{})}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><html><head><title>t</title></head>`)
		if r.URL.Path == "/slow" {
			w.(http.Flusher).Flush()
			close(o.started)
			select {
			case <-o.release:
			case <-r.Context().Done():
				return
			}
		}
		_, _ = io.WriteString(w, `<body><div id="top"></div><p>text</p></body></html>`)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// reloadingDaemon runs a daemon whose reloads the test triggers on hup and
// whose results it reads from results.
type reloadingDaemon struct {
	*runningDaemon
	d       *daemon
	path    string
	hup     chan os.Signal
	results chan reloadResult
	logs    *testutil.LockedBuffer
	// redirectAddr is server.http_redirect_listen's address, when set.
	redirectAddr string
}

func startReloadingDaemon(t *testing.T, conf string) *reloadingDaemon {
	t.Helper()
	rd := &reloadingDaemon{path: writeConfig(t, conf), hup: make(chan os.Signal, 1),
		results: make(chan reloadResult, 1), logs: &testutil.LockedBuffer{}}
	cfg, err := config.Load(rd.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(rd.logs), zap.DebugLevel))
	if rd.d, err = newDaemon(cfg, log); err != nil {
		t.Fatal(err)
	}
	rd.d.reloadOn(rd.hup, rd.path, nil)
	rd.d.onReload = func(r reloadResult) { rd.results <- r }
	ls := &listeners{}
	bind := []*net.Listener{&ls.client, &ls.admin}
	if cfg.Server.HTTPRedirectListen != "" {
		bind = append(bind, &ls.redirect)
	}
	for _, l := range bind {
		if *l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	if ls.redirect != nil {
		rd.redirectAddr = ls.redirect.Addr().String()
	}
	ctx, cancel := context.WithCancel(context.Background())
	rd.runningDaemon = &runningDaemon{clientAddr: ls.client.Addr().String(), adminAddr: ls.admin.Addr().String(),
		cancel: cancel, done: make(chan error, 1), metrics: rd.d.metrics}
	go func() { rd.done <- rd.d.run(ctx, ls) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-rd.done:
		case <-time.After(15 * time.Second):
			t.Error("daemon did not stop")
		}
	})
	return rd
}

// reload rewrites the file, signals, and waits for the reload's result.
func (rd *reloadingDaemon) reload(t *testing.T, conf string) reloadResult {
	t.Helper()
	if err := os.WriteFile(rd.path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	rd.hup <- syscall.SIGHUP
	select {
	case r := <-rd.results:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no reload result")
		return ""
	}
}

// TestReloadServesChangedSlotAndFinishesInFlightPage: after SIGHUP a new
// request gets the changed slot, while a page whose origin response began
// before the reload is finished, complete, with the slot it started with.
func TestReloadServesChangedSlotAndFinishesInFlightPage(t *testing.T) {
	origin := newSlowPageOrigin(t)
	rd := startReloadingDaemon(t, reloadConfig(origin.srv.URL, "/1/before", ""))
	c := newTestClient(t)
	base := "http://" + rd.clientAddr
	if _, _, body := get(t, c, base+"/page", "localhost"); !strings.Contains(body, "/1/before") {
		t.Fatalf("before the reload, /page lacks the first slot:\n%s", body)
	}

	type page struct {
		status int
		body   string
	}
	slow := make(chan page, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, base+"/slow", nil)
		req.Host = "localhost"
		req.Header.Set("Accept", "text/html")
		resp, err := c.Do(req)
		if err != nil {
			slow <- page{body: err.Error()}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			b = append(b, "\nread error: "+err.Error()...)
		}
		slow <- page{resp.StatusCode, string(b)}
	}()
	<-origin.started // the old generation is serving /slow

	if r := rd.reload(t, reloadConfig(origin.srv.URL, "/1/after", "")); r != reloadOK {
		t.Fatalf("reload result = %q, want ok\n%s", r, rd.logs.String())
	}
	if _, _, body := get(t, c, base+"/page", "localhost"); !strings.Contains(body, "/1/after") || strings.Contains(body, "/1/before") {
		t.Errorf("after the reload, /page does not carry the new slot:\n%s", body)
	}
	close(origin.release)
	p := <-slow
	if p.status != http.StatusOK || !strings.Contains(p.body, "/1/before") || strings.Contains(p.body, "/1/after") ||
		!strings.HasSuffix(p.body, "</html>") {
		t.Errorf("the page in flight during the reload = %d:\n%s\nwant it complete with the old slot", p.status, p.body)
	}
	if n := sumOf(t, rd.metrics.Gatherer(), "ssatd_config_reloads_total", map[string]string{"result": "ok"}); n != 1 {
		t.Errorf("ssatd_config_reloads_total{result=\"ok\"} = %v, want 1", n)
	}
}

// TestReloadRefusesInvalidFileAndKeepsServing: a file with a problem is
// refused with config check's report, counted as invalid, and the running
// configuration keeps serving.
func TestReloadRefusesInvalidFileAndKeepsServing(t *testing.T) {
	origin := newSlowPageOrigin(t)
	rd := startReloadingDaemon(t, reloadConfig(origin.srv.URL, "/1/before", ""))
	bad := strings.Replace(reloadConfig(origin.srv.URL, "/1/after", ""), `page_patterns = ["/**"]`, `page_patterns = ["no-slash"]`, 1)
	if r := rd.reload(t, bad); r != reloadInvalid {
		t.Fatalf("reload result = %q, want invalid", r)
	}
	line, ok := logLine(rd.logs.String(), "configuration reload refused")
	if !ok || line["level"] != "error" {
		t.Fatalf("no error line for the refused reload:\n%s", rd.logs.String())
	}
	check := invoke(t, []string{"config", "check", "-config", rd.path}, nil)
	if check.code != 1 || line["report"] != check.stderr || !strings.Contains(check.stderr, "page_patterns") {
		t.Errorf("reload report %q\nis not config check's (exit %d) %q", line["report"], check.code, check.stderr)
	}
	c := newTestClient(t)
	if status, _, body := get(t, c, "http://"+rd.clientAddr+"/page", "localhost"); status != http.StatusOK || !strings.Contains(body, "/1/before") {
		t.Errorf("after a refused reload, /page = %d without the running slot:\n%s", status, body)
	}
	g := rd.metrics.Gatherer()
	for result, want := range map[string]float64{"ok": 0, "invalid": 1, "restart_required": 0} {
		if n := sumOf(t, g, "ssatd_config_reloads_total", map[string]string{"result": result}); n != want {
			t.Errorf("ssatd_config_reloads_total{result=%q} = %v, want %v", result, n, want)
		}
	}
}

// TestReloadReportsKeysNeedingRestart: a new listen address and read
// timeout are reported and held, while the rest of the file is served.
func TestReloadReportsKeysNeedingRestart(t *testing.T) {
	origin := newSlowPageOrigin(t)
	rd := startReloadingDaemon(t, reloadConfig(origin.srv.URL, "/1/before", ""))
	next := reloadConfig(origin.srv.URL, "/1/after", "listen = \"127.0.0.1:1\"\nread_timeout = \"7s\"\nwrite_timeout = \"9s\"\n")
	if r := rd.reload(t, next); r != reloadRestartRequired {
		t.Fatalf("reload result = %q, want restart_required", r)
	}
	line, ok := logLine(rd.logs.String(), "until a restart")
	held, _ := line["restart_required"].([]any)
	if !ok || fmt.Sprint(held) != "[server.listen server.read_timeout]" {
		t.Errorf("restart line %v, want server.listen and server.read_timeout named (and not write_timeout)", line)
	}
	cfg := rd.d.config()
	if cfg.Server.Listen != rd.d.cfg.Server.Listen || cfg.Server.ReadTimeout != rd.d.cfg.Server.ReadTimeout ||
		cfg.Server.WriteTimeout.Duration != 9*time.Second {
		t.Errorf("current server config %+v: want listen and read_timeout held, write_timeout 9s", cfg.Server)
	}
	c := newTestClient(t)
	if _, _, body := get(t, c, "http://"+rd.clientAddr+"/page", "localhost"); !strings.Contains(body, "/1/after") {
		t.Errorf("the reloadable part of the file is not served:\n%s", body)
	}
	if n := sumOf(t, rd.metrics.Gatherer(), "ssatd_config_reloads_total", map[string]string{"result": "restart_required"}); n != 1 {
		t.Errorf("ssatd_config_reloads_total{result=\"restart_required\"} = %v, want 1", n)
	}
}

// TestReloadHoldsTheStore: the store is opened once for the process, so a
// reload that changes server.data_dir or [store] says so and keeps the
// running values.
func TestReloadHoldsTheStore(t *testing.T) {
	origin := newSlowPageOrigin(t)
	rd := startReloadingDaemon(t, reloadConfig(origin.srv.URL, "/1/before", ""))
	next := reloadConfig(origin.srv.URL, "/1/after", fmt.Sprintf("data_dir = %q\n", t.TempDir())) + "\n[store]\npool_size = 4\n"
	if r := rd.reload(t, next); r != reloadRestartRequired {
		t.Fatalf("reload result = %q, want restart_required", r)
	}
	line, _ := logLine(rd.logs.String(), "until a restart")
	if held, _ := line["restart_required"].([]any); fmt.Sprint(held) != "[server.data_dir store]" {
		t.Errorf("restart line %v, want server.data_dir and store named", line)
	}
	if cfg := rd.d.config(); cfg.Server.DataDir != "" || cfg.Store.PoolSize != 0 {
		t.Errorf("store settings not held: data_dir %q, store %+v", cfg.Server.DataDir, cfg.Store)
	}
}

// TestServeReloadsOnSIGHUP: `ssatd serve` reloads when the process gets
// a real SIGHUP.
func TestServeReloadsOnSIGHUP(t *testing.T) {
	origin := newSlowPageOrigin(t)
	conf := reloadConfig(origin.srv.URL, "/1/before", "listen = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n")
	sc := startServeCommand(t, conf)
	if err := os.WriteFile(sc.path, []byte(strings.Replace(conf, "/1/before", "/1/after", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	sc.waitLog(t, "configuration reloaded")
	c := newTestClient(t)
	if _, _, body := get(t, c, "http://"+sc.clientAddr+"/page", "localhost"); !strings.Contains(body, "/1/after") {
		t.Errorf("after SIGHUP, /page lacks the new slot:\n%s", body)
	}
}

// TestReloadServesRenewedCertificate: a reload naming new certificate
// files serves the new certificate to new TLS connections, with no
// restart reported.
func TestReloadServesRenewedCertificate(t *testing.T) {
	origin := newSlowPageOrigin(t)
	dirs := [2]string{t.TempDir(), t.TempDir()}
	for _, dir := range dirs {
		if got := invoke(t, []string{"dev-cert", "-dir", dir}, nil); got.code != 0 {
			t.Fatalf("dev-cert: exit %d\n%s", got.code, got.stderr)
		}
	}
	tlsKeys := func(dir string) string {
		return fmt.Sprintf("tls_cert_file = %q\ntls_key_file = %q\n", filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	}
	rd := startReloadingDaemon(t, reloadConfig(origin.srv.URL, "/1/a", tlsKeys(dirs[0])))
	served := func() []byte {
		t.Helper()
		conn, err := tls.Dial("tcp", rd.clientAddr, &tls.Config{InsecureSkipVerify: true}) // the test compares the certificate itself
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Raw
	}
	leaf := func(dir string) []byte {
		t.Helper()
		pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
		if err != nil {
			t.Fatal(err)
		}
		return pair.Certificate[0]
	}
	if !bytes.Equal(served(), leaf(dirs[0])) {
		t.Fatal("before the reload, the first certificate is not served")
	}
	if r := rd.reload(t, reloadConfig(origin.srv.URL, "/1/a", tlsKeys(dirs[1]))); r != reloadOK {
		t.Fatalf("reload result = %q, want ok\n%s", r, rd.logs.String())
	}
	if !bytes.Equal(served(), leaf(dirs[1])) {
		t.Error("after the reload, new connections do not get the renewed certificate")
	}
}

// TestRedirectFollowsReloadedDomain: the HTTP→HTTPS redirect names
// publisher.domain for a request whose Host cannot be used, and after a
// reload that changed the domain it names the new one. It named the
// domain serve started with, while the reload said "configuration
// reloaded".
func TestRedirectFollowsReloadedDomain(t *testing.T) {
	origin := newSlowPageOrigin(t)
	dir := t.TempDir()
	if got := invoke(t, []string{"dev-cert", "-dir", dir}, nil); got.code != 0 {
		t.Fatalf("dev-cert: exit %d\n%s", got.code, got.stderr)
	}
	keys := fmt.Sprintf("tls_cert_file = %q\ntls_key_file = %q\nhttp_redirect_listen = \"127.0.0.1:0\"\n",
		filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	conf := reloadConfig(origin.srv.URL, "/1/a", keys)
	rd := startReloadingDaemon(t, conf)
	_, port, _ := net.SplitHostPort(rd.clientAddr)
	location := func() string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+rd.redirectAddr+"/a?b=1", nil)
		req.Host = "evil.example@x" // not a plain host: the redirect names the domain
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("Location")
	}
	if got, want := location(), "https://localhost:"+port+"/a?b=1"; got != want {
		t.Fatalf("before the reload: Location %q, want %q", got, want)
	}
	next := strings.Replace(conf, `domain = "localhost"`, `domain = "www.after.example"`, 1)
	if r := rd.reload(t, next); r != reloadOK {
		t.Fatalf("reload result = %q, want ok\n%s", r, rd.logs.String())
	}
	if got, want := location(), "https://www.after.example:"+port+"/a?b=1"; got != want {
		t.Errorf("after the reload: Location %q, want %q", got, want)
	}
}
