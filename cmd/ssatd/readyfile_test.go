package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/devcert"
)

// serve -ready-file names the ports the system chose for :0, both accept
// at once, and the file is gone when the process has exited.
func TestServeReadyFileOverAProcess(t *testing.T) {
	o := newTestOrigin(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ssatd.toml")
	writeFile(t, cfg, `[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
drain_period = "0s"
[publisher]
domain = "127.0.0.1"
origin_url = "`+o.srv.URL+`"
`)
	ready := filepath.Join(dir, "ready.json")
	p := startProcess(t, "serve", "-config", cfg, "-ready-file", ready)
	p.waitLine(t, "ready file written")
	var info struct {
		Client    string `json:"client"`
		Admin     string `json:"admin"`
		ClientURL string `json:"client_url"`
		AdminURL  string `json:"admin_url"`
		PID       int    `json:"pid"`
	}
	data, err := os.ReadFile(ready)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &info); err != nil {
		t.Fatalf("%v in %s", err, data)
	}
	if info.PID != p.cmd.Process.Pid || strings.HasSuffix(info.Client, ":0") || strings.HasSuffix(info.Admin, ":0") ||
		info.ClientURL != "http://"+info.Client || info.AdminURL != "http://"+info.Admin {
		t.Fatalf("ready file %s", data)
	}
	// The page's links name the port the system chose, as the guest
	// keeps only a configured port.
	for url, want := range map[string]string{info.AdminURL + "/readyz": "ready\n", info.ClientURL + "/page": `href="http://` + info.Client + `/next?a=1"`} {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %q, want %s in it", url, resp.StatusCode, body, want)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
	if _, err := os.Stat(ready); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ready file left after exit: %v", err)
	}
}

// TestReadyFileNamesHTTPSForATLSListener: with server.tls_cert_file the
// ready file's client_url is https, so curl "$(jq -r .client_url)" (as
// docs/testing.md does) reaches the page; the admin listener has no TLS
// and stays http. It failed when client_url was always http, which a TLS
// listener answers with 400.
func TestReadyFileNamesHTTPSForATLSListener(t *testing.T) {
	o := newTestOrigin(t)
	dir := t.TempDir()
	pair, _, err := devcert.Write(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(writeConfig(t, fmt.Sprintf(`
[server]
drain_period = "0s"
tls_cert_file = %q
tls_key_file = %q
[publisher]
domain = "127.0.0.1"
origin_url = %q
`, pair.Cert, pair.Key, o.srv.URL)), nil)
	if err != nil {
		t.Fatal(err)
	}
	written := make(chan struct{})
	var once sync.Once
	log := zaptest.NewLogger(t).WithOptions(zap.Hooks(func(e zapcore.Entry) error {
		if e.Message == "ready file written" {
			once.Do(func() { close(written) })
		}
		return nil
	}))
	d, err := newDaemon(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	d.readyFile = filepath.Join(dir, "ready.json")
	var ls listeners
	for _, l := range []*net.Listener{&ls.client, &ls.admin} {
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
	select {
	case <-written:
	case <-time.After(10 * time.Second):
		t.Fatal("no ready file written")
	}
	data, err := os.ReadFile(d.readyFile)
	if err != nil {
		t.Fatal(err)
	}
	var info readyInfo
	if err := json.Unmarshal(data, &info); err != nil {
		t.Fatalf("%v in %s", err, data)
	}
	if info.ClientURL != "https://"+info.Client || info.AdminURL != "http://"+info.Admin {
		t.Errorf("ready file %s: want client_url https://%s, admin_url http://%s", data, info.Client, info.Admin)
	}
	caPEM, err := os.ReadFile(pair.CACert)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for url, want := range map[string]string{info.ClientURL + "/page": "<html", info.AdminURL + "/healthz": ""} {
		resp, err := client.Get(url)
		if err != nil {
			t.Errorf("%s: %v", url, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %q, want 200 with %q", url, resp.StatusCode, body, want)
		}
	}
}

// A ready file that cannot be written stops serve before it serves.
func TestServeReadyFileUnwritable(t *testing.T) {
	o := newTestOrigin(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ssatd.toml")
	writeFile(t, cfg, "[server]\nlisten = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n[publisher]\ndomain = \"127.0.0.1\"\norigin_url = \""+o.srv.URL+"\"\n")
	p := startProcess(t, "serve", "-config", cfg, "-ready-file", filepath.Join(dir, "missing", "ready.json"))
	line := p.waitLine(t, "-ready-file")
	if !strings.Contains(line, "no such file") {
		t.Errorf("error line %s", line)
	}
	var ee *exec.ExitError
	if err := p.wait(); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit %v, want status 1", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// addrListener is a net.Listener that only reports an address: what
// writeReadyFile reads of a listener.
type addrListener struct {
	net.Listener
	addr net.Addr
}

func (l addrListener) Addr() net.Addr { return l.addr }

// TestReadyFileNamesALoopbackURLForAWildcardListener: with listen =
// ":8443" (every address, which Go reports as [::]) and a dev-cert
// certificate, client_url was "https://[::]:8443", which names no host
// of the certificate (curl --cacert refused it: "no alternative
// certificate subject name matches target host name '::'") and which
// browsers do not open. A wildcard listener is named by the loopback
// address of its family, which the certificate names; the client and
// admin fields keep the address as bound.
func TestReadyFileNamesALoopbackURLForAWildcardListener(t *testing.T) {
	dir := t.TempDir()
	pair, _, err := devcert.Write(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := tls.LoadX509KeyPair(pair.Cert, pair.Key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(leaf.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ bound, client, admin string }{
		{"[::]:8443", "https://[::1]:8443", "http://[::1]:8443"},
		{"0.0.0.0:8443", "https://127.0.0.1:8443", "http://127.0.0.1:8443"},
		{"127.0.0.1:8443", "https://127.0.0.1:8443", "http://127.0.0.1:8443"},
		{"[::1]:8443", "https://[::1]:8443", "http://[::1]:8443"},
		{"192.0.2.7:8443", "https://192.0.2.7:8443", "http://192.0.2.7:8443"},
	} {
		t.Run(tc.bound, func(t *testing.T) {
			addr, err := net.ResolveTCPAddr("tcp", tc.bound)
			if err != nil {
				t.Fatal(err)
			}
			cfg := &config.Config{}
			cfg.Server.TLSCertificate = &leaf
			d := &daemon{cfg: cfg, log: zap.NewNop(), readyFile: filepath.Join(t.TempDir(), "ready.json")}
			l := addrListener{addr: addr}
			if err := d.writeReadyFile(&listeners{client: l, admin: l}); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(d.readyFile)
			if err != nil {
				t.Fatal(err)
			}
			var info readyInfo
			if err := json.Unmarshal(data, &info); err != nil {
				t.Fatalf("%v in %s", err, data)
			}
			if info.ClientURL != tc.client || info.AdminURL != tc.admin || info.Client != addr.String() || info.Admin != addr.String() {
				t.Errorf("ready file %s: want client_url %s, admin_url %s, client and admin %s", data, tc.client, tc.admin, addr)
			}
			host, _, _ := net.SplitHostPort(strings.TrimPrefix(info.ClientURL, "https://"))
			if ip := net.ParseIP(host); ip.IsLoopback() {
				if err := cert.VerifyHostname(host); err != nil {
					t.Errorf("client_url %s: the dev-cert certificate does not name it: %v", info.ClientURL, err)
				}
			}
		})
	}
}
