package proxy

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/server"
)

const testAsset = "console.log('asset');\n"

// pagesLimit is max_concurrent_pages = 1 with the given queue timeout.
func pagesLimit(wait time.Duration) func(*config.Config) {
	return func(c *config.Config) {
		c.Server.MaxConcurrentPages = 1
		c.Server.PageQueueTimeout = config.Duration{Duration: wait}
	}
}

// heldOrigin serves /held as the test page's head, then the rest once
// release is closed (or never, if the request ends first); /page as the
// whole page; and /asset.js as a pass-through script.
type heldOrigin struct {
	page    func() string
	release chan struct{}
}

func (o *heldOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/asset.js":
		w.Header().Set("Content-Type", "application/wasm") // outside publisher.rewrite_content_types: pass-through
		_, _ = io.WriteString(w, testAsset)
		return
	case "/page":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, o.page())
		return
	}
	head, tail, _ := strings.Cut(o.page(), "<body>")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = io.WriteString(w, head+"<body>")
	w.(http.Flusher).Flush()
	select {
	case <-o.release:
		_, _ = io.WriteString(w, tail)
	case <-r.Context().Done():
	}
}

// newHeldEnv is newEnv with a heldOrigin.
func newHeldEnv(t *testing.T, mutate ...func(*config.Config)) (*env, *heldOrigin) {
	t.Helper()
	o := &heldOrigin{release: make(chan struct{})}
	e := newEnv(t, o, mutate...)
	o.page = e.page
	return e, o
}

// startHeld starts a navigation to /held and returns once its headers have
// arrived, which is after its page took the one slot. The response is
// read whole in the background and delivered on the channel.
func (e *env) startHeld(t *testing.T) <-chan heldResult {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.front.URL+"/held", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = testDomain
	navigate(req)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("held page: %v", err)
	}
	done := make(chan heldResult, 1)
	go func() {
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		done <- heldResult{status: resp.StatusCode, body: body, err: err}
	}()
	return done
}

type heldResult struct {
	status int
	body   []byte
	err    error
}

func TestOverloadedPageGets503AfterQueueTimeoutWhilePassThroughIsServed(t *testing.T) {
	const wait = 200 * time.Millisecond
	e, o := newHeldEnv(t, pagesLimit(wait))
	held := e.startHeld(t)

	tests := []struct {
		name         string
		opts         []reqOpt
		cacheControl string
	}{
		// Error responses to eligible requests keep the private cache
		// policy (docs/behaviour.md, "Eligible pages").
		{"eligible", []reqOpt{navigate}, "private, max-age=0"},
		{"not eligible", []reqOpt{header("Accept", "*/*")}, "no-store"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			resp, body := e.mustGet(t, "/page", tc.opts...)
			waited := time.Since(start)
			if resp.StatusCode != http.StatusServiceUnavailable {
				t.Fatalf("status %d, want 503; body %q", resp.StatusCode, body)
			}
			if got := resp.Header.Get("Retry-After"); got != "1" {
				t.Errorf("Retry-After %q, want \"1\"", got)
			}
			if got := resp.Header.Get("Cache-Control"); got != tc.cacheControl {
				t.Errorf("Cache-Control %q, want %q", got, tc.cacheControl)
			}
			if !strings.HasPrefix(string(body), "503 Service Unavailable: ") {
				t.Errorf("body %q", body)
			}
			if waited < wait {
				t.Errorf("answered after %s, before the queue timeout of %s", waited, wait)
			}
			if n := e.guest.Metrics().Failures(reasonOverloaded.String()); n != int64(i+1) {
				t.Errorf("overloaded count %d, want %d", n, i+1)
			}
		})
	}

	// A pass-through response does not wait for a page slot. (A document
	// navigation takes its page place before the origin fetch: the asset
	// is asked for as a browser asks for a script.)
	resp, body := e.mustGet(t, "/asset.js", header("Sec-Fetch-Dest", "script"))
	if resp.StatusCode != http.StatusOK || string(body) != testAsset {
		t.Fatalf("asset while pages are full: status %d, body %q", resp.StatusCode, body)
	}

	close(o.release)
	r := <-held
	if r.err != nil || r.status != http.StatusOK || !strings.Contains(string(r.body), "</html>") {
		t.Fatalf("held page: status %d, err %v, body %q", r.status, r.err, r.body)
	}
	for _, l := range e.logs.FilterMessage("access").All() {
		m := l.ContextMap()
		if m["path"] == "/page" && (m["reason"] != reasonOverloaded.String() || m["outcome"] != outcomeError || m["status"] != int64(503)) {
			t.Errorf("access line of a refused page: %v", m)
		}
	}
	if n := e.logs.FilterMessage("origin request failed").Len(); n != 0 {
		t.Errorf("%d warnings for refused pages; their access lines are enough", n)
	}
	// The slot is free again.
	resp, body = e.mustGet(t, "/page", navigate)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `id="trustedserver-js"`) {
		t.Fatalf("page after the slot was freed: status %d, body %q", resp.StatusCode, body)
	}
}

func TestQueuedPageIsServedWhenASlotFreesWithinTheTimeout(t *testing.T) {
	e, o := newHeldEnv(t, pagesLimit(5*time.Second))
	held := e.startHeld(t)
	// The held page ends only once the queued page is waiting for its slot.
	queued, stop := make(chan struct{}), make(chan struct{})
	var releasedFirst atomic.Bool
	e.guest.pages.waiting = func() { close(queued) }
	go func() {
		select {
		case <-queued:
			releasedFirst.Store(true)
		case <-stop:
		}
		close(o.release)
	}()
	resp, body := e.mustGet(t, "/page", navigate)
	close(stop)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `id="trustedserver-js"`) {
		t.Fatalf("queued page: status %d, body %q", resp.StatusCode, body)
	}
	if !releasedFirst.Load() {
		t.Errorf("the page was served before the held page freed its slot")
	}
	if r := <-held; r.err != nil || r.status != http.StatusOK {
		t.Fatalf("held page: status %d, err %v", r.status, r.err)
	}
	if n := e.guest.Metrics().Failures(reasonOverloaded.String()); n != 0 {
		t.Errorf("overloaded count %d, want 0", n)
	}
}

func TestClientLeavingWhileQueuedIsNotCountedAsOverload(t *testing.T) {
	e, o := newHeldEnv(t, pagesLimit(5*time.Second))
	held := e.startHeld(t)
	// The client gives up once its page is waiting for the slot.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.guest.pages.waiting = cancel
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.front.URL+"/page", nil)
	req.Host = testDomain
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("status %d, want the client to give up first", resp.StatusCode)
	}
	m := e.accessLine(t, 1) // the queued request ends first
	if m["path"] != "/page" || m["reason"] != reasonClientGone.String() {
		t.Errorf("access line %v, want /page with reason %s", m, reasonClientGone.String())
	}
	if n := e.guest.Metrics().Failures(reasonOverloaded.String()); n != 0 {
		t.Errorf("overloaded count %d, want 0", n)
	}
	close(o.release)
	if r := <-held; r.err != nil || r.status != http.StatusOK {
		t.Fatalf("held page: status %d, err %v", r.status, r.err)
	}
}

// TestPageSlotIsReleasedOnEveryEnd ends a page each way a page can end,
// with max_concurrent_pages = 1 and no queue, then checks that the slot is
// free: the next page is served. goleak (TestMain) checks that nothing
// waits on a slot forever.
func TestPageSlotIsReleasedOnEveryEnd(t *testing.T) {
	tests := []struct {
		name   string
		reason string // in the page's access line
		// run ends one page through e.
		run func(t *testing.T, e *env)
	}{
		{"normal end", "", func(t *testing.T, e *env) {
			if resp, _ := e.mustGet(t, "/page", navigate); resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
		}},
		{"origin abort", reasonOriginFailed.String(), func(t *testing.T, e *env) {
			// The body fails inside the first buffer, before anything is
			// sent: a 502 rather than an aborted 200.
			if resp, _, err := e.get(t, "/abort", navigate); err != nil || resp.StatusCode != http.StatusBadGateway {
				t.Fatalf("an origin body cut off early: err %v, want a 502", err)
			}
		}},
		{"client leaves", reasonClientGone.String(), func(t *testing.T, e *env) {
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.front.URL+"/held", nil)
			req.Host = testDomain
			navigate(req)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			cancel()
			resp.Body.Close()
		}},
		{"pipeline panic", reasonPipelinePanic.String(), func(t *testing.T, e *env) {
			// The panic comes before the first body byte: a 500.
			if resp, _, err := e.get(t, "/panic", navigate); err != nil || resp.StatusCode != http.StatusInternalServerError {
				t.Fatalf("a page whose pipeline panicked: err %v, want a 500", err)
			}
		}},
		{"handler panic", reasonClientGone.String(), func(t *testing.T, e *env) {
			if _, _, err := e.get(t, "/page", navigate, header("X-Test-Panic", "1")); err == nil {
				t.Fatal("a response whose writer panicked came out whole")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newPanicEnv(t, pagesLimit(0))
			tc.run(t, e)
			if got, _ := e.accessLine(t, 1)["reason"].(string); got != tc.reason {
				t.Errorf("reason %q, want %q", got, tc.reason)
			}
			if n := e.guest.pages.inUse(); n != 0 {
				t.Fatalf("%d page slots still taken after the page ended", n)
			}
			resp, body := e.mustGet(t, "/page", navigate)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "</html>") {
				t.Fatalf("next page: status %d, body %q", resp.StatusCode, body)
			}
		})
	}
}

// newPanicEnv is newHeldEnv whose origin also serves /abort (cut off
// mid-body) and /panic (a body whose Read panics in the pipeline), and
// whose front panics on the first body write of a request carrying
// X-Test-Panic, as a faulty layer in front of the guest would.
func newPanicEnv(t *testing.T, mutate ...func(*config.Config)) (*env, *heldOrigin) {
	t.Helper()
	o := &heldOrigin{release: make(chan struct{})}
	e := &env{}
	e.origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/abort" && r.URL.Path != "/panic" {
			o.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, e.page()[:40])
		w.(http.Flusher).Flush()
		if r.URL.Path == "/abort" {
			panic(http.ErrAbortHandler) // closes the connection mid-body
		}
		_, _ = io.WriteString(w, e.page()[40:])
	}))
	t.Cleanup(e.origin.Close)
	e.host = strings.TrimPrefix(e.origin.URL, "http://")
	o.page = e.page
	cfg := testConfig(t, e.origin.URL, mutate...)
	logger, logs := newObservedLogger(zap.InfoLevel)
	e.logs = logs
	g, err := New(cfg, Options{Logger: logger, Bundle: []byte("bundle"), FlushLatency: 10 * time.Millisecond,
		Transport: panicTransport{http.DefaultTransport.(*http.Transport).Clone()}})
	if err != nil {
		t.Fatal(err)
	}
	e.guest = g
	t.Cleanup(g.Close)
	front, err := server.ClientHandler(cfg, g)
	if err != nil {
		t.Fatal(err)
	}
	e.front = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Test-Panic") != "" {
			w = &panicWriter{ResponseWriter: w}
		}
		front.ServeHTTP(w, r)
	}))
	e.front.Config.ErrorLog = log.New(io.Discard, "", 0) // the panic is expected
	e.front.Start()
	t.Cleanup(e.front.Close)
	return e, o
}

// panicTransport makes the body of /panic panic when read, which happens
// in the pipeline goroutine (an identity body is not read before).
type panicTransport struct{ *http.Transport }

func (p panicTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := p.Transport.RoundTrip(r)
	if err == nil && r.URL.Path == "/panic" {
		resp.Body = &panicBody{ReadCloser: resp.Body}
	}
	return resp, err
}

type panicBody struct{ io.ReadCloser }

func (b *panicBody) Read([]byte) (int, error) { panic("test: origin body read panicked") }

// panicWriter panics on the first body write.
type panicWriter struct {
	http.ResponseWriter
	once sync.Once
}

func (w *panicWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { panic(errors.New("test: response writer panicked")) })
	return w.ResponseWriter.Write(p)
}

func (w *panicWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func TestPageSlotIsReleasedExactlyOnce(t *testing.T) {
	g := newPageGate(2, 0)
	a, err := g.admit(context.Background(), g.deadline(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.admit(context.Background(), g.deadline(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := g.admit(context.Background(), g.deadline(0)); err == nil {
		t.Fatal("a third page was admitted to two slots")
	}
	a.release()
	a.release() // a second release must not free the other page's slot
	if n := g.inUse(); n != 1 {
		t.Fatalf("%d slots in use after releasing one of two twice, want 1", n)
	}
}

// inUse reports how many slots are taken.
func (g *pageGate) inUse() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.taken
}
