package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"go.uber.org/zap/zaptest"
	"google.golang.org/protobuf/proto"

	"github.com/ssatd/ssatd/internal/config"
)

// otlpReceiver is an in-process OTLP/HTTP traces endpoint: it decodes each
// export's protobuf and keeps the spans.
type otlpReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
	attrs map[string]string // resource attributes seen
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	rc := &otlpReceiver{attrs: map[string]string{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || err != nil || proto.Unmarshal(body, &req) != nil {
			t.Errorf("receiver: %s %s (%s), %d bytes: not an OTLP protobuf export", r.Method, r.URL.Path, r.Header.Get("Content-Type"), len(body))
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		for _, rs := range req.GetResourceSpans() {
			for _, kv := range rs.GetResource().GetAttributes() {
				rc.attrs[kv.GetKey()] = kv.GetValue().GetStringValue()
			}
			for _, ss := range rs.GetScopeSpans() {
				rc.spans = append(rc.spans, ss.GetSpans()...)
			}
		}
		rc.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// spanAttr is a span attribute's value as text ("" when absent).
func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.GetAttributes() {
		if kv.GetKey() != key {
			continue
		}
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			return v.StringValue
		case *commonpb.AnyValue_IntValue:
			return fmt.Sprint(v.IntValue)
		case *commonpb.AnyValue_BoolValue:
			return fmt.Sprint(v.BoolValue)
		}
	}
	return ""
}

// headerLog records one header of every request a test server gets.
type headerLog struct {
	mu   sync.Mutex
	seen []string
}

func (h *headerLog) add(v string) { h.mu.Lock(); h.seen = append(h.seen, v); h.mu.Unlock() }
func (h *headerLog) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

// tracedPage runs a daemon with tracing to rc, an origin and two OpenRTB
// endpoints, "fast" (bids at once) and "slow" (never answers within its
// 150ms timeout), serves /page once with traceparent sent, stops the
// daemon (which flushes the spans) and returns what the origin and the
// endpoints were sent.
func tracedPage(t *testing.T, rc *otlpReceiver, trustedProxies, traceparent string) (origin, fast, slow []string) {
	t.Helper()
	var originTP, fastTP, slowTP headerLog
	originSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		originTP.add(r.Header.Get("Traceparent"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><html><head><title>t</title></head><body><div id="top"></div></body></html>`)
	}))
	defer originSrv.Close()
	fastSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fastTP.add(r.Header.Get("Traceparent"))
		_, _ = io.WriteString(w, `{"id":"r","seatbid":[{"seat":"s","bid":[{"id":"a","impid":"top","price":1,"adm":"x"}]}]}`)
	}))
	defer fastSrv.Close()
	slowSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slowTP.add(r.Header.Get("Traceparent"))
		// Once the body is read, net/http watches the connection and
		// cancels the context when ssatd's endpoint timeout closes it.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer slowSrv.Close()

	path := writeConfig(t, fmt.Sprintf(`
[server]
drain_period = "0s"
trusted_proxies = [%s]

[publisher]
domain = "localhost"
origin_url = %q

[auction]
enabled = true
provider = "openrtb"
timeout_ms = 2000

[[auction.openrtb]]
name = "fast"
url = %q
timeout_ms = 2000

[[auction.openrtb]]
name = "slow"
url = %q
timeout_ms = 150

[[creative_opportunities.slot]]
id = "top"
page_patterns = ["/**"]
formats = [[728, 90]]

[tracing]
endpoint = %q
service_name = "ssatd-test"
`, trustedProxies, originSrv.URL, fastSrv.URL+"/openrtb2/auction", slowSrv.URL+"/openrtb2/auction", rc.srv.URL))
	cfg, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDaemon(cfg, zaptest.NewLogger(t))
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
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {})) // the handler logged to this test
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

	c := newTestClient(t)
	req, _ := http.NewRequest(http.MethodGet, "http://"+ls.client.Addr().String()+"/page", nil)
	req.Host = "localhost"
	req.Header.Set("Accept", "text/html")
	req.Header.Set("Traceparent", traceparent)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte("</html>")) {
		t.Fatalf("/page = %d:\n%s", resp.StatusCode, body)
	}
	c.Transport.(*http.Transport).CloseIdleConnections()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	d.stopTracing() // after run: every request span has ended
	return originTP.all(), fastTP.all(), slowTP.all()
}

const sentTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
const sentParent = "00f067aa0ba902b7"

// TestTracingSpanTreeForAPageWithASlowEndpoint: with [tracing] on, a page
// from a trusted proxy continues the proxy's trace: the request span, its
// origin fetch, page gate wait, rewrite, edge compression and auction, and
// under the auction one span per endpoint
// with its outcome, the slow one a timeout that lasted its timeout. The
// origin and both endpoints get traceparents of the spans that called
// them.
func TestTracingSpanTreeForAPageWithASlowEndpoint(t *testing.T) {
	rc := newOTLPReceiver(t)
	originTP, fastTP, slowTP := tracedPage(t, rc, `"127.0.0.1/32"`, "00-"+sentTraceID+"-"+sentParent+"-01")

	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.attrs["service.name"] != "ssatd-test" {
		t.Errorf("resource service.name = %q, want ssatd-test", rc.attrs["service.name"])
	}
	byName := map[string][]*tracepb.Span{}
	byID := map[string]*tracepb.Span{}
	for _, s := range rc.spans {
		byName[s.GetName()] = append(byName[s.GetName()], s)
		byID[hex.EncodeToString(s.GetSpanId())] = s
		if id := hex.EncodeToString(s.GetTraceId()); id != sentTraceID {
			t.Errorf("span %q in trace %s, want the trusted proxy's %s", s.GetName(), id, sentTraceID)
		}
	}
	one := func(name string) *tracepb.Span {
		if len(byName[name]) != 1 {
			t.Fatalf("%d %q spans, want 1; spans: %v", len(byName[name]), name, names(rc.spans))
		}
		return byName[name][0]
	}
	parentOf := func(s *tracepb.Span) string { return hex.EncodeToString(s.GetParentSpanId()) }
	reqSpan, originSpan, auctionSpan := one("ssatd.request"), one("origin fetch"), one("auction")
	if parentOf(reqSpan) != sentParent || reqSpan.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("request span parent %s kind %v, want the proxy's span %s, server", parentOf(reqSpan), reqSpan.GetKind(), sentParent)
	}
	reqID := hex.EncodeToString(reqSpan.GetSpanId())
	gateSpan, rewriteSpan, edgeSpan := one("page gate wait"), one("rewrite"), one("edge compression")
	if n := spanAttr(rewriteSpan, "ssatd.origin_body_bytes"); n == "" || n == "0" {
		t.Errorf("rewrite span origin_body_bytes = %q, want the page's size", n)
	}
	if c := spanAttr(edgeSpan, "ssatd.edge.coding"); c != "identity" {
		t.Errorf("edge span coding = %q, want identity (the client accepts no coding)", c)
	}
	for _, s := range []*tracepb.Span{originSpan, auctionSpan, gateSpan, rewriteSpan, edgeSpan} {
		if parentOf(s) != reqID {
			t.Errorf("%q has parent %s, want the request span %s", s.GetName(), parentOf(s), reqID)
		}
	}
	for key, want := range map[string]string{"ssatd.route": "pipeline", "ssatd.outcome": "ok", "ssatd.auction": "partial"} {
		if got := spanAttr(reqSpan, key); got != want {
			t.Errorf("request span %s = %q, want %q", key, got, want)
		}
	}
	endpoints := map[string]*tracepb.Span{}
	for _, s := range byName["auction endpoint"] {
		endpoints[spanAttr(s, "ssatd.endpoint")] = s
		if parentOf(s) != hex.EncodeToString(auctionSpan.GetSpanId()) {
			t.Errorf("endpoint span %s is not a child of the auction span", spanAttr(s, "ssatd.endpoint"))
		}
	}
	fast, slow := endpoints["fast"], endpoints["slow"]
	if fast == nil || slow == nil || len(endpoints) != 2 {
		t.Fatalf("endpoint spans %v, want fast and slow", names(byName["auction endpoint"]))
	}
	if spanAttr(fast, "ssatd.endpoint.outcome") != "bids" || spanAttr(fast, "ssatd.endpoint.bids") != "1" {
		t.Errorf("fast endpoint span: outcome %q bids %q, want bids, 1", spanAttr(fast, "ssatd.endpoint.outcome"), spanAttr(fast, "ssatd.endpoint.bids"))
	}
	if spanAttr(slow, "ssatd.endpoint.outcome") != "timeout" || slow.GetStatus().GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("slow endpoint span: outcome %q status %v, want a timeout marked as an error", spanAttr(slow, "ssatd.endpoint.outcome"), slow.GetStatus())
	}
	if d := time.Duration(slow.GetEndTimeUnixNano() - slow.GetStartTimeUnixNano()); d < 150*time.Millisecond {
		t.Errorf("slow endpoint span lasted %v, less than its 150ms timeout", d)
	}
	// Each outgoing request carries the traceparent of the span that sent it.
	for _, c := range []struct {
		who  string
		seen []string
		span *tracepb.Span
	}{{"origin", originTP, originSpan}, {"fast", fastTP, fast}, {"slow", slowTP, slow}} {
		want := "00-" + sentTraceID + "-" + hex.EncodeToString(c.span.GetSpanId()) + "-01"
		if len(c.seen) != 1 || c.seen[0] != want {
			t.Errorf("%s was sent traceparent %q, want %q", c.who, c.seen, want)
		}
	}
}

// TestTracingIgnoresTraceparentFromUntrustedPeers: without the client in
// trusted_proxies, its traceparent starts nothing and reaches no one: the
// trace is ssatd's own, and the origin gets ssatd's traceparent.
func TestTracingIgnoresTraceparentFromUntrustedPeers(t *testing.T) {
	rc := newOTLPReceiver(t)
	originTP, _, _ := tracedPage(t, rc, "", "00-"+sentTraceID+"-"+sentParent+"-01")
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.spans) == 0 {
		t.Fatal("no spans received")
	}
	for _, s := range rc.spans {
		if hex.EncodeToString(s.GetTraceId()) == sentTraceID {
			t.Errorf("span %q continues the untrusted client's trace", s.GetName())
		}
		if s.GetName() == "ssatd.request" && len(s.GetParentSpanId()) != 0 {
			t.Errorf("the request span has a parent, %x", s.GetParentSpanId())
		}
	}
	if len(originTP) != 1 || strings.Contains(originTP[0], sentTraceID) || !strings.HasPrefix(originTP[0], "00-") {
		t.Errorf("origin got traceparent %q, want ssatd's own", originTP)
	}
}

func names(spans []*tracepb.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.GetName()+"/"+spanAttr(s, "ssatd.endpoint"))
	}
	return out
}

// TestTracingEndpointQueryRefusedNamingHeaders: the OTLP/HTTP exporter
// sends to the endpoint's scheme, host and path only, so an
// ?api_key= in tracing.endpoint (or in the OTEL_EXPORTER_OTLP_*
// endpoint variables) never reached the collector while config check
// showed it masked as if it were used. It is refused, naming
// OTEL_EXPORTER_OTLP_HEADERS, where the credential belongs.
func TestTracingEndpointQueryRefusedNamingHeaders(t *testing.T) {
	const conf = `
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
[publisher]
domain = "www.pub.example"
origin_url = "http://127.0.0.1:9"
`
	for _, tc := range []struct {
		name, key string
		endpoint  string // tracing.endpoint, "" for none
		environ   []string
	}{
		{"tracing.endpoint", "tracing.endpoint", "http://127.0.0.1:4318/v1/traces?api_key=SECRET", nil},
		{"tracing.endpoint fragment", "tracing.endpoint", "http://127.0.0.1:4318/#SECRET", nil},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT", "", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318?api_key=SECRET"}},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "", []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:4318/v1/traces?api_key=SECRET"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := conf
			if tc.endpoint != "" {
				text += fmt.Sprintf("[tracing]\nendpoint = %q\n", tc.endpoint)
			}
			path := writeConfig(t, text)
			for _, args := range [][]string{{"config", "check", "-config", path}, {"serve", "-config", path}} {
				got := invoke(t, args, tc.environ)
				if got.code != 1 || !strings.Contains(got.stderr, tc.key) || !strings.Contains(got.stderr, "OTEL_EXPORTER_OTLP_HEADERS") ||
					strings.Contains(got.stderr+got.stdout, "SECRET") {
					t.Errorf("%s: exit %d\n%s%s\nwant 1, naming %s and OTEL_EXPORTER_OTLP_HEADERS, without the secret", args[0], got.code, got.stdout, got.stderr, tc.key)
				}
			}
		})
	}
	// A plain endpoint in the variables is still taken.
	if got := invoke(t, []string{"config", "check", "-config", writeConfig(t, conf)}, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318/"}); got.code != 0 {
		t.Errorf("a plain endpoint variable: exit %d\n%s", got.code, got.stderr)
	}
}

// TestTracingEndpointProblemsNeverEchoTheSecret: an endpoint that does
// not parse or has no http(s) scheme was refused with the value quoted
// whole (`parse "http://u:SECRET@…/%zz"`, `got "collector:4318/v1/traces?api_key=SECRET"`),
// and an OTEL_EXPORTER_OTLP_* endpoint with credentials, or one that does
// not parse, was accepted: the exporter dropped the credentials, or
// printed the value to stderr itself and sent to https://localhost:4318.
// Each is refused by config check and serve, naming the key, never
// repeating the secret.
func TestTracingEndpointProblemsNeverEchoTheSecret(t *testing.T) {
	const conf = `
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
[publisher]
domain = "www.pub.example"
origin_url = "http://127.0.0.1:9"
`
	for _, tc := range []struct {
		name, key, value string
		headers          bool // the message names OTEL_EXPORTER_OTLP_HEADERS
	}{
		{"endpoint not parsed", "tracing.endpoint", "http://u:SECRET@127.0.0.1:4318/%zz", false},
		{"endpoint without scheme", "tracing.endpoint", "127.0.0.1:4318/v1/traces?api_key=SECRET", false},
		{"endpoint bad port", "tracing.endpoint", "http://collector:SECRET/v1/traces", false},
		{"variable with credentials", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://u:SECRET@127.0.0.1:4318", true},
		{"traces variable with credentials", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://u:SECRET@127.0.0.1:4318/v1/traces", true},
		{"variable not parsed", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://u:SECRET@127.0.0.1:4318/%zz", false},
		{"variable without scheme", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "127.0.0.1:4318/v1/traces?api_key=SECRET", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, environ := conf, []string{tc.key + "=" + tc.value}
			if tc.key == "tracing.endpoint" {
				text += fmt.Sprintf("[tracing]\nendpoint = %q\n", tc.value)
				environ = nil
			}
			path := writeConfig(t, text)
			for _, args := range [][]string{{"config", "check", "-config", path}, {"serve", "-config", path}} {
				got := invoke(t, args, environ)
				if got.code != 1 || !strings.Contains(got.stderr, tc.key) || strings.Contains(got.stderr+got.stdout, "SECRET") ||
					tc.headers && !strings.Contains(got.stderr, "OTEL_EXPORTER_OTLP_HEADERS") {
					t.Errorf("%s: exit %d\n%s%s\nwant 1, naming %s (and OTEL_EXPORTER_OTLP_HEADERS: %v), without the secret", args[0], got.code, got.stdout, got.stderr, tc.key, tc.headers)
				}
			}
		})
	}
}

// TestTracingHeadersProblemsNeverEchoTheSecret: an OTEL_EXPORTER_OTLP_HEADERS
// (or _TRACES_HEADERS) pair the exporter cannot read was accepted, and
// the exporter dropped it, so the collector got no key, and printed the
// pair or its value to stderr itself ("input"="api-keySECRET",
// "value"="SECRET%zz"). Each is refused by config check and serve,
// naming the variable and the pair's place, never the secret; a good
// value, with a trailing comma, is taken.
func TestTracingHeadersProblemsNeverEchoTheSecret(t *testing.T) {
	conf := writeConfig(t, `
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
[publisher]
domain = "www.pub.example"
origin_url = "http://127.0.0.1:9"
[tracing]
endpoint = "http://127.0.0.1:4318"
`)
	for _, tc := range []struct{ name, env string }{
		{"no equals sign", "OTEL_EXPORTER_OTLP_HEADERS=api-keySECRET"},
		{"bad escape", "OTEL_EXPORTER_OTLP_HEADERS=x-tenant=a,api-key=SECRET%zz"},
		{"name not a token", "OTEL_EXPORTER_OTLP_TRACES_HEADERS=api key=SECRET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, _, _ := strings.Cut(tc.env, "=")
			for _, args := range [][]string{{"config", "check", "-config", conf}, {"serve", "-config", conf}} {
				got := invoke(t, args, []string{tc.env})
				if got.code != 1 || !strings.Contains(got.stderr, key) || strings.Contains(got.stderr+got.stdout, "SECRET") {
					t.Errorf("%s: exit %d\n%s%s\nwant 1, naming %s, without the secret", args[0], got.code, got.stdout, got.stderr, key)
				}
			}
		})
	}
	got := invoke(t, []string{"config", "check", "-config", conf}, []string{"OTEL_EXPORTER_OTLP_HEADERS=api-key=S%2C1, x-tenant = a ,"})
	if got.code != 0 {
		t.Errorf("a good headers variable: exit %d\n%s", got.code, got.stderr)
	}
}
