package tsjs_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/openrtb"
	"github.com/ssatd/ssatd/internal/proxy"
	"github.com/ssatd/ssatd/internal/server"
)

// The family's tests run it as the daemon does: behind the guest's route
// table (internal/proxy) and the client server, over loopback HTTP, with
// the access lines read from the guest's log. The setup is a small copy
// of internal/proxy's test environment, which its package-internal tests
// cannot share.

// Every test must leave no goroutine behind: callbacks and their auctions
// end with their request.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testDomain = "www.pub.example"

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
	for _, m := range mutate {
		m(c)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("test config invalid: %v", err)
	}
	return c
}

// htmlPage serves a page naming the host it was asked for, with the div
// of the slot "top".
var htmlPage = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html")
	_, _ = io.WriteString(w, `<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title>`+
		`<link rel="stylesheet" href="http://`+r.Host+`/s.css"></head><body><div id="top"></div></body></html>`)
})

// env is one test setup: an origin, the guest in front of it, and the
// guest's log lines.
type env struct {
	front *httptest.Server
	guest *proxy.Guest
	logs  *observedLogs
}

// observedLogs are a guest's log lines, kept in memory; wake is closed,
// and replaced, when an access line is written, so a test waits on the
// line, not on a clock.
type observedLogs struct {
	*observer.ObservedLogs
	mu   sync.Mutex
	wake chan struct{}
}

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
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
	origin := httptest.NewServer(h)
	t.Cleanup(origin.Close)
	cfg := testConfig(t, origin.URL, mutate...)
	core, kept := observer.New(zap.InfoLevel)
	logs := &observedLogs{ObservedLogs: kept, wake: make(chan struct{})}
	logger := zap.New(zapcore.RegisterHooks(core, logs.hook))
	g, err := proxy.New(cfg, proxy.Options{Logger: logger, Bundle: []byte("bundle"), FlushLatency: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	// The whole data path, built as the daemon builds it.
	front, err := server.ClientHandler(cfg, g)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{front: httptest.NewServer(front), guest: g, logs: logs}
	t.Cleanup(e.front.Close)
	return e
}

// client never decodes: tests look at the bytes on the wire.
var client = &http.Client{Transport: &http.Transport{DisableCompression: true}}

type reqOpt func(*http.Request)

func header(k, v string) reqOpt { return func(r *http.Request) { r.Header.Set(k, v) } }

var navigate = header("Sec-Fetch-Dest", "document")

// mustGet requests path from e as the client of testDomain and reads the
// whole response.
func (e *env) mustGet(t *testing.T, path string, opts ...reqOpt) (*http.Response, []byte) {
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
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp, body
}

// accessLine returns the fields of the n-th access log line (1-based),
// waiting for it: it is written when the handler returns, which may be
// just after the client has read the last byte.
func (e *env) accessLine(t *testing.T, n int) map[string]any {
	t.Helper()
	return e.logs.waitAccess(t, n)[n-1].ContextMap()
}

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

// bidEndpoint is a loopback OpenRTB endpoint that records the requests it
// received.
type bidEndpoint struct {
	*httptest.Server
	mu       sync.Mutex
	requests []openrtb.BidRequest
}

func newBidEndpoint(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, br openrtb.BidRequest)) *bidEndpoint {
	t.Helper()
	e := &bidEndpoint{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var br openrtb.BidRequest
		_ = json.NewDecoder(r.Body).Decode(&br)
		e.mu.Lock()
		e.requests = append(e.requests, br)
		e.mu.Unlock()
		answer(w, r, br)
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *bidEndpoint) received() []openrtb.BidRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]openrtb.BidRequest(nil), e.requests...)
}

// bidOn answers one bid per imp, at price, for seat.
func bidOn(seat, price string) func(http.ResponseWriter, *http.Request, openrtb.BidRequest) {
	return func(w http.ResponseWriter, r *http.Request, br openrtb.BidRequest) {
		resp := openrtb.BidResponse{ID: br.ID, Cur: "USD", SeatBid: []openrtb.SeatBid{{Seat: seat}}}
		for _, imp := range br.Imp {
			resp.SeatBid[0].Bid = append(resp.SeatBid[0].Bid, openrtb.Bid{ID: seat + "-" + imp.ID, ImpID: imp.ID,
				Price: json.Number(price), AdM: "<div>" + seat + "</div>", W: 728, H: 90})
		}
		_ = json.NewEncoder(w).Encode(resp)
	}
}

// hang answers only when the request is cancelled (or after a long time).
func hang(w http.ResponseWriter, r *http.Request, _ openrtb.BidRequest) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

func withOpenRTB(timeoutMS int, eps ...*bidEndpoint) func(*config.Config) {
	return func(c *config.Config) {
		c.Auction.Provider = config.AuctionProviderOpenRTB
		c.Auction.TimeoutMS = timeoutMS
		c.Auction.OpenRTB = nil
		for i, e := range eps {
			c.Auction.OpenRTB = append(c.Auction.OpenRTB, config.OpenRTBEndpoint{
				Name: []string{"first", "second"}[i], URL: e.URL + "/openrtb2/auction", AccountID: "1001"})
		}
	}
}
