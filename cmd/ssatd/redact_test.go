package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// TestConfigCheckMasksEndpointURLQuery catches issue 18's
// "url = \"https://pbs.example/openrtb2/auction?key=SECRET\"" printed as it
// is by config check, in the effective settings and in a problem.
func TestConfigCheckMasksEndpointURLQuery(t *testing.T) {
	conf := strings.Replace(openrtbConfig, "URL", "https://pbs.example/openrtb2/auction?key=SECRETKEY&account=4711", 1)
	got := invoke(t, []string{"config", "check", "-config", writeConfig(t, conf)}, nil)
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	if strings.Contains(got.stdout+got.stderr, "SECRETKEY") || strings.Contains(got.stdout, "4711") ||
		!strings.Contains(got.stdout, "auction?key=xxxxx&account=xxxxx") {
		t.Errorf("the query values are not masked:\n%s", got.stdout)
	}
	bad := strings.Replace(openrtbConfig, "URL", "ftp://pbs.example/openrtb2/auction?key=SECRETKEY", 1)
	got = invoke(t, []string{"config", "check", "-config", writeConfig(t, bad)}, nil)
	if got.code != 1 || !strings.Contains(got.stderr, "auction.openrtb[0].url") || strings.Contains(got.stderr, "SECRETKEY") {
		t.Errorf("exit %d, stderr %q; want 1 naming the key, the query value masked", got.code, got.stderr)
	}
}

// lineWatcher collects log output and closes seen once a line contains
// want.
type lineWatcher struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestLogLinesMaskEndpointURLQuery catches an endpoint URL's query value
// reaching a log line: the HTTP client's error for an endpoint that cannot
// be reached quotes the whole URL.
func TestLogLinesMaskEndpointURLQuery(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><html><head></head><body><div id="top"></div></body></html>`)
	}))
	defer origin.Close()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close() // connections to it are refused

	w := &lineWatcher{want: "auction endpoint answered badly", seen: make(chan struct{})}
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(w), zapcore.DebugLevel))
	d := startDaemonWith(t, `
[server]
drain_period = "0s"

[publisher]
domain = "localhost"
origin_url = "`+origin.URL+`"

[auction]
enabled = true
provider = "openrtb"
timeout_ms = 5000

[[auction.openrtb]]
name = "pbs"
url = "http://`+deadAddr+`/openrtb2/auction?key=SECRETKEY"

[[creative_opportunities.slot]]
id = "top"
page_patterns = ["/**"]
`, log)
	req, _ := http.NewRequest(http.MethodGet, "http://"+d.clientAddr+"/page?q=1", nil)
	req.Header.Set("Sec-Fetch-Dest", "document")
	resp, err := newTestClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	select {
	case <-w.seen:
	case <-time.After(10 * time.Second):
		t.Fatalf("no auction failure line; logs:\n%s", w.String())
	}
	logs := w.String()
	if strings.Contains(logs, "SECRETKEY") {
		t.Errorf("a log line carries the endpoint URL's query value:\n%s", logs)
	}
	if !strings.Contains(logs, "auction?key=xxxxx") {
		t.Errorf("the failure line does not show the masked URL:\n%s", logs)
	}
}
