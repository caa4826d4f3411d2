package proxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/server"
)

const testDomain = "www.pub.example"

// testPage names the origin host placeholder ORIGIN, replaced by the test
// origin's host:port when served.
const testPage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title>` +
	`<link rel="stylesheet" href="http://ORIGIN/s.css"></head><body><a href="//ORIGIN/a">a</a>` +
	`<img src="/i.png" srcset="ORIGIN/i.png 2x"><div id="top"></div></body></html>`

// testConfig is a validated configuration for an origin at originURL, with
// one slot matching every path and the auction on.
func testConfig(t *testing.T, originURL string, mutate ...func(*config.Config)) *config.Config {
	t.Helper()
	c := config.Defaults()
	c.Publisher.Domain = testDomain
	c.Publisher.OriginURL = originURL
	c.Auction.Enabled = true
	c.Auction.Provider = config.AuctionProviderStatic
	c.Auction.TimeoutMS = 2000
	c.CreativeOpportunities.Slots = []config.Slot{{ID: "top", PagePatterns: []string{"/**"}, Formats: [][]int{{728, 90}}, GAMUnitPath: "/1/top"}}
	c.Auction.StaticBids = []config.StaticBid{{SlotID: "top", HbPb: "1.50", HbBidder: "example", W: 728, H: 90, HbAdid: "a1", Adm: "<div>ad</div>"}}
	// Generous, because test origins encode whole corpus pages per request
	// and -race on a loaded machine slows that past 2 s; the timeout tests
	// set their own short values.
	c.Publisher.OriginIdleTimeout = config.Duration{Duration: 15 * time.Second}
	c.Publisher.OriginHeaderTimeout = config.Duration{Duration: 15 * time.Second}
	for _, m := range mutate {
		m(c)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("test config invalid: %v", err)
	}
	return c
}

// env is one test setup: an origin, the guest in front of it, and the
// guest's log lines.
type env struct {
	origin *httptest.Server
	front  *httptest.Server
	guest  *Guest
	logs   *observedLogs
	host   string // the origin's host:port
}

// observedLogs are a guest's log lines, kept in memory, with a hook that
// wakes the tests waiting for access lines: a test waits on the line
// being written, not on a clock.
type observedLogs struct {
	*observer.ObservedLogs
	mu   sync.Mutex
	wake chan struct{} // closed, and replaced, when an access line is written
}

// newObservedLogger is a logger at level whose lines are kept in logs;
// each hook also sees every line, after logs has it.
func newObservedLogger(level zapcore.Level, hooks ...func(zapcore.Entry) error) (*zap.Logger, *observedLogs) {
	core, kept := observer.New(level)
	logs := &observedLogs{ObservedLogs: kept, wake: make(chan struct{})}
	return zap.New(zapcore.RegisterHooks(core, append([]func(zapcore.Entry) error{logs.hook}, hooks...)...)), logs
}

// hook runs after the observer core has kept the line (zapcore.RegisterHooks
// writes the wrapped core first).
func (l *observedLogs) hook(e zapcore.Entry) error {
	if e.Message == "access" {
		l.mu.Lock()
		close(l.wake)
		l.wake = make(chan struct{})
		l.mu.Unlock()
	}
	return nil
}

// waitAccess returns the access lines once there are at least n; the
// timeout only bounds a test whose line never comes.
func (l *observedLogs) waitAccess(t *testing.T, n int) []observer.LoggedEntry {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		l.mu.Lock()
		wake := l.wake // taken before counting, so a line written between is not missed
		l.mu.Unlock()
		if lines := l.FilterMessage("access").All(); len(lines) >= n {
			return lines
		}
		select {
		case <-wake:
		case <-timeout.C:
			t.Fatalf("access log line %d never written (have %d)", n, l.FilterMessage("access").Len())
		}
	}
}

func newEnv(t *testing.T, h http.Handler, mutate ...func(*config.Config)) *env {
	t.Helper()
	verifyNoLeaks(t)
	e := &env{}
	e.origin = httptest.NewServer(h)
	t.Cleanup(e.origin.Close)
	u, _ := url.Parse(e.origin.URL)
	e.host = u.Host
	cfg := testConfig(t, e.origin.URL, mutate...)
	logger, logs := newObservedLogger(zap.InfoLevel)
	e.logs = logs
	g, err := New(cfg, Options{Logger: logger, Bundle: []byte("bundle"), FlushLatency: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	e.guest = g
	t.Cleanup(g.Close)
	// The whole data path, built as the daemon builds it.
	front, err := server.ClientHandler(cfg, g)
	if err != nil {
		t.Fatal(err)
	}
	e.front = httptest.NewServer(front)
	t.Cleanup(e.front.Close)
	return e
}

// page returns the test page naming this origin.
func (e *env) page() string { return strings.ReplaceAll(testPage, "ORIGIN", e.host) }

// client never decodes: tests look at the bytes on the wire.
var client = &http.Client{Transport: &http.Transport{DisableCompression: true}}

type reqOpt func(*http.Request)

func header(k, v string) reqOpt { return func(r *http.Request) { r.Header.Set(k, v) } }

var navigate = header("Sec-Fetch-Dest", "document")

func (e *env) get(t *testing.T, path string, opts ...reqOpt) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.front.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = testDomain
	for _, o := range opts {
		o(req)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// midBody orders an origin's mid-body failure after the response's
// headers: the origin's handler calls wait after sending its first part,
// and wait returns once the headers have reached the client, so the guest
// has committed to the response when the failure comes.
type midBody struct {
	t       *testing.T
	headers chan struct{}
	once    sync.Once
}

func newMidBody(t *testing.T) *midBody { return &midBody{t: t, headers: make(chan struct{})} }

func (m *midBody) wait(r *http.Request) {
	select {
	case <-m.headers:
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
		m.t.Errorf("the response's headers never reached the client")
	}
}

// get requests path from e, lets wait return once the headers arrived, and
// reads the body.
func (m *midBody) get(e *env, path string, opts ...reqOpt) (*http.Response, error) {
	defer m.once.Do(func() { close(m.headers) })
	req, err := http.NewRequest(http.MethodGet, e.front.URL+path, nil)
	if err != nil {
		m.t.Fatal(err)
	}
	req.Host = testDomain
	for _, o := range opts {
		o(req)
	}
	resp, err := client.Do(req)
	m.once.Do(func() { close(m.headers) })
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	return resp, err
}

// mustGet is get for responses that must arrive whole.
func (e *env) mustGet(t *testing.T, path string, opts ...reqOpt) (*http.Response, []byte) {
	t.Helper()
	resp, body, err := e.get(t, path, opts...)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp, body
}

func encode(t testing.TB, c compress.Coding, s []byte) []byte {
	t.Helper()
	b, err := compress.Encode(c, s, originOpts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// originOpts are the test origins' encoder settings.
var originOpts = compress.Options{GzipLevel: 6, BrotliQuality: 5, BrotliWindow: 22}

func decode(t testing.TB, c compress.Coding, s []byte) []byte {
	t.Helper()
	r, err := compress.NewReader(c, bytes.NewReader(s), 1<<30)
	if err != nil {
		t.Fatalf("decode %s: %v", c, err)
	}
	defer r.Close()
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decode %s: %v", c, err)
	}
	return out
}

// serveCoded answers with body encoded as the coding the request prefers
// among prefer, ties going to the earlier one, like a negotiating origin.
func serveCoded(body func() []byte, prefer ...compress.Coding) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := compress.ParseAcceptEncoding(r.Header.Values("Accept-Encoding")).Choose(prefer...)
		b := body()
		if c != compress.Identity {
			b, _ = compress.Encode(c, b, originOpts)
			w.Header().Set("Content-Encoding", string(c))
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b)
	}
}

// accessLine returns the fields of the n-th access log line (1-based); the
// line is written when the handler returns, which may be just after the
// client has read the last byte, so it is waited for.
func (e *env) accessLine(t *testing.T, n int) map[string]any {
	t.Helper()
	return e.logs.waitAccess(t, n)[n-1].ContextMap()
}

func newFront(t *testing.T, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s.URL
}
