package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/telemetry"
	"github.com/ssatd/ssatd/internal/testutil"
)

// TestTracingSpansSurviveInvalidUTF8Paths: a client's path with a byte
// that is not UTF-8 (GET /x%ff) or of 8 KB, between ordinary requests,
// costs no span: every request's span reaches a real OTLP/HTTP receiver,
// with the bad path as valid UTF-8 within telemetry.MaxTextBytes, and
// every log line is valid UTF-8 with the path bounded alike. It failed
// when url.path carried the raw 0xff: the exporter could not marshal the
// batch and dropped every span in it.
func TestTracingSpansSurviveInvalidUTF8Paths(t *testing.T) {
	rc := newOTLPReceiver(t)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "ok")
	}))
	defer origin.Close()
	logs := &testutil.LockedBuffer{}
	addr, stop := runTracedDaemon(t, fmt.Sprintf(`
[server]
drain_period = "0s"
[publisher]
domain = "localhost"
origin_url = %q
[tracing]
endpoint = %q
`, origin.URL, rc.srv.URL), logs)

	long := "/" + strings.Repeat("a", 8<<10)
	bad := []string{"/x%ff", "/%ff%fe/%e2%82", long}
	var sent []string
	c := newTestClient(t)
	for i := range 24 {
		paths := []string{fmt.Sprintf("/ok/%d", i), bad[i%len(bad)]}
		for _, p := range paths {
			status, _, _ := get(t, c, "http://"+addr+p, "localhost")
			if status != http.StatusOK {
				t.Fatalf("%.40s: %d", p, status)
			}
			sent = append(sent, p)
		}
	}
	c.Transport.(*http.Transport).CloseIdleConnections()
	stop() // flushes the spans

	want := map[string]int{}
	for _, p := range sent {
		want[telemetry.Text(pathOf(t, p))]++
	}
	rc.mu.Lock()
	got := map[string]int{}
	for _, s := range rc.spans {
		if s.GetName() == "ssatd.request" {
			got[spanAttr(s, "url.path")]++
		}
	}
	rc.mu.Unlock()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("request spans by url.path:\n%.600v\nwant\n%.600v", got, want)
	}
	if got[telemetry.Text(long)] == 0 || len(telemetry.Text(long)) > telemetry.MaxTextBytes+len("…") || got["/x\uFFFD"] == 0 {
		t.Errorf("the bad paths' spans: %d for /x\\uFFFD, %d for the cut long path", got["/x\uFFFD"], got[telemetry.Text(long)])
	}
	accessPaths := 0
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if !utf8.ValidString(line) || json.Unmarshal([]byte(line), &m) != nil {
			t.Fatalf("log line not valid UTF-8 JSON: %.200q", line)
		}
		if p, ok := m["path"].(string); ok && m["msg"] == "access" {
			accessPaths++
			if len(p) > telemetry.MaxTextBytes+len("…") {
				t.Errorf("access line path of %d bytes, want at most %d", len(p), telemetry.MaxTextBytes)
			}
		}
	}
	if accessPaths != len(sent) {
		t.Errorf("%d access lines with a path, want %d", accessPaths, len(sent))
	}
}

// pathOf is the path the server decodes from the request target p.
func pathOf(t *testing.T, p string) string {
	req, err := http.NewRequest(http.MethodGet, "http://x"+p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req.URL.Path
}

// runTracedDaemon runs a daemon with conf, tracing on, logging JSON into
// logs; stop ends it and sends the spans still buffered.
func runTracedDaemon(t *testing.T, conf string, logs *testutil.LockedBuffer) (addr string, stop func()) {
	t.Helper()
	cfg, err := config.Load(writeConfig(t, conf), nil)
	if err != nil {
		t.Fatal(err)
	}
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(logs), zap.DebugLevel))
	d, err := newDaemon(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := startTracing(context.Background(), &cfg.Tracing, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	})
	d.useTracing(tr)
	ls := &listeners{}
	for _, l := range []*net.Listener{&ls.client, &ls.admin} {
		if *l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.run(ctx, ls) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		d.stopTracing() // after run: every request span has ended
	}
	t.Cleanup(stop)
	return ls.client.Addr().String(), stop
}
