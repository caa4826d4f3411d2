package auction

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/ssatd/ssatd/internal/openrtb"
	"github.com/ssatd/ssatd/internal/ssat"
)

var testSlots = []ssat.Slot{
	{ID: "top", Formats: [][]int{{728, 90}, {970, 250}}, GAMUnitPath: "/1/top",
		Bidders: map[string]json.RawMessage{"appnexus": json.RawMessage(`{"placementId":13144370}`)}},
	{ID: "side", Formats: [][]int{{300, 250}}, GAMUnitPath: "/1/side"},
}

var testRequest = Request{
	Path: "/news/a", Slots: testSlots,
	PageURL: "https://www.pub.example/news/a?x=1", Domain: "www.pub.example", Secure: true,
	UserAgent: "Mozilla/5.0 (test)", IP: netip.MustParseAddr("203.0.113.7"), Language: "de",
	Consent: "CO5rKAAO5rKAAAHADBENCWEIAKAAAUAAAAYgAAAAAAAA",
}

// endpoint is a loopback bid endpoint that records what it received and
// tracks its connections, so a test can check none is left open.
type endpoint struct {
	*httptest.Server
	mu       sync.Mutex
	bodies   [][]byte
	headers  []http.Header
	conns    map[net.Conn]http.ConnState
	changed  chan struct{} // closed, and replaced, when a connection changes state
	canceled int           // requests whose context ended before the handler did
}

func newEndpoint(t testing.TB, h func(w http.ResponseWriter, r *http.Request)) *endpoint {
	t.Helper()
	e := &endpoint{conns: map[net.Conn]http.ConnState{}, changed: make(chan struct{})}
	e.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.bodies = append(e.bodies, body)
		e.headers = append(e.headers, r.Header.Clone())
		e.mu.Unlock()
		h(w, r)
		if r.Context().Err() != nil {
			e.mu.Lock()
			e.canceled++
			e.mu.Unlock()
		}
	}))
	e.Config.ConnState = func(c net.Conn, s http.ConnState) {
		e.mu.Lock()
		defer e.mu.Unlock()
		close(e.changed)
		e.changed = make(chan struct{})
		if s == http.StateClosed || s == http.StateHijacked {
			delete(e.conns, c)
			return
		}
		e.conns[c] = s
	}
	e.Start()
	t.Cleanup(e.Close)
	return e
}

// openConns is the number of connections the server still holds, and a
// channel closed at the next change.
func (e *endpoint) openConns() (int, <-chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.conns), e.changed
}

func (e *endpoint) calls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.bodies)
}

// answer writes a bid response with one bid per (impid, price, seat).
func answer(bids ...openrtb.Bid) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		resp := openrtb.BidResponse{ID: "r", Cur: "USD"}
		for _, b := range bids {
			seat := b.CrID // the tests carry the seat in crid
			resp.SeatBid = append(resp.SeatBid, openrtb.SeatBid{Seat: seat, Bid: []openrtb.Bid{b}})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
	}
}

func bid(id, imp, price, seat string) openrtb.Bid {
	return openrtb.Bid{ID: id, ImpID: imp, Price: json.Number(price), AdM: "<div>" + id + "</div>", W: 300, H: 250, CrID: seat}
}

type fixture struct {
	p    *OpenRTB
	logs *observer.ObservedLogs
	eps  []*endpoint
}

func newFixture(t *testing.T, o OpenRTBOptions, eps ...*endpoint) *fixture {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	o.Logger = zap.New(core)
	for i, e := range eps {
		if i >= len(o.Endpoints) {
			o.Endpoints = append(o.Endpoints, Endpoint{})
		}
		ep := &o.Endpoints[i]
		if ep.Name == "" {
			ep.Name = fmt.Sprintf("ep%d", i+1)
		}
		ep.URL = e.URL + "/openrtb2/auction"
	}
	f := &fixture{p: NewOpenRTB(o), logs: logs, eps: eps}
	t.Cleanup(func() {
		f.p.Close()
		f.checkNoConnections(t)
	})
	return f
}

// checkNoConnections: once the provider has closed its idle connections,
// no endpoint may still hold one of ours.
func (f *fixture) checkNoConnections(t *testing.T) {
	t.Helper()
	timeout := time.NewTimer(5 * time.Second) // bounds a leak; a closed connection ends the wait at once
	defer timeout.Stop()
	for _, e := range f.eps {
		for n, changed := e.openConns(); n > 0; n, changed = e.openConns() {
			select {
			case <-changed:
			case <-timeout.C:
				t.Errorf("endpoint %s still holds %d connection(s)", e.URL, n)
				return
			}
		}
	}
}

func (f *fixture) run(t *testing.T, timeout time.Duration) (map[string]ssat.Bid, Outcome, time.Duration) {
	t.Helper()
	start := time.Now()
	c := Start(context.Background(), f.p, testRequest, timeout)
	bids, out := c.Wait(context.Background())
	took := time.Since(start)
	c.Stop() // returns once the provider's goroutines have all returned
	return bids, out, took
}

// TestBidRequestGolden checks the OpenRTB request field by field against
// testdata/bidrequest.golden.json, and that nothing of the client's request
// travels as a header.
func TestBidRequestGolden(t *testing.T) {
	verifyNoLeaks(t)
	e := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	f := newFixture(t, OpenRTBOptions{GDPRApplies: true, Endpoints: []Endpoint{{AccountID: "1001", Test: true,
		Headers: map[string]string{"X-Api-Key": "k1"}}}}, e)
	_, _, _ = f.run(t, time.Second)
	if e.calls() != 1 {
		t.Fatalf("%d calls", e.calls())
	}
	var got map[string]any
	if err := json.Unmarshal(e.bodies[0], &got); err != nil {
		t.Fatal(err)
	}
	if id, _ := got["id"].(string); !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id) {
		t.Errorf("id %q is not a fresh random id", got["id"])
	}
	if tmax, _ := got["tmax"].(float64); tmax < 900 || tmax > 1000 {
		t.Errorf("tmax %v, want the time left of a 1s auction", got["tmax"])
	}
	got["id"], got["tmax"] = "<ID>", "<TMAX>"
	data, err := os.ReadFile("testdata/bidrequest.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	for _, d := range diffJSON("", want, got) {
		t.Error(d)
	}

	h := e.headers[0]
	if h.Get("Content-Type") != "application/json" || h.Get("X-Openrtb-Version") != "2.6" || h.Get("X-Api-Key") != "k1" || h.Get("User-Agent") != "ssatd" {
		t.Errorf("headers %v", h)
	}
	var names []string
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	wantNames := []string{"Accept-Encoding", "Content-Length", "Content-Type", "User-Agent", "X-Api-Key", "X-Openrtb-Version"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("request headers %q, want only %q", names, wantNames)
	}
}

// diffJSON lists the paths where got differs from want.
func diffJSON(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %v, want an object", path, got)}
		}
		var out []string
		for k, v := range w {
			out = append(out, diffJSON(path+"."+k, v, g[k])...)
		}
		for k, v := range g {
			if _, ok := w[k]; !ok {
				out = append(out, fmt.Sprintf("%s.%s: unexpected field %v", path, k, v))
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
		}
		var out []string
		for i := range w {
			out = append(out, diffJSON(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
	}
	return nil
}

func TestWinnerAcrossEndpoints(t *testing.T) {
	verifyNoLeaks(t)
	a := newEndpoint(t, answer(
		bid("a-top", "top", "1.50", "alpha"),
		bid("a-side", "side", "0.80", "alpha"),
		bid("a-tie", "side", "0.90", "alpha"),
		openrtb.Bid{ID: "no-adm", ImpID: "top", Price: "9"},
		bid("zero", "top", "0", "alpha"),
		bid("neg", "top", "-1", "alpha"),
		bid("stranger", "nope", "9", "alpha"),
	))
	b := newEndpoint(t, answer(
		bid("b-top", "top", "2.10", "beta"),
		bid("b-tie", "side", "0.90", "beta"), // equal price: the first endpoint's bid stays
	))
	f := newFixture(t, OpenRTBOptions{}, a, b)
	bids, out, _ := f.run(t, 2*time.Second)
	if out != Completed {
		t.Fatalf("outcome %v", out)
	}
	want := map[string]ssat.Bid{
		"top":  {Adm: "<div>b-top</div>", W: 300, H: 250, HbAdid: "b-top", HbBidder: "beta", HbPb: "2.10"},
		"side": {Adm: "<div>a-tie</div>", W: 300, H: 250, HbAdid: "a-tie", HbBidder: "alpha", HbPb: "0.90"},
	}
	if !reflect.DeepEqual(bids, want) {
		t.Errorf("bids\n%+v\nwant\n%+v", bids, want)
	}
	s := f.p.Stats().Snapshot()
	wantIgnored := map[string]int64{IgnoredNoAdm: 1, IgnoredPrice: 2, IgnoredUnknownImpID: 1}
	if !reflect.DeepEqual(s.Ignored, wantIgnored) {
		t.Errorf("ignored %v, want %v", s.Ignored, wantIgnored)
	}
	if a, b := s.Endpoints["ep1"].Won, s.Endpoints["ep2"].Won; !reflect.DeepEqual(a, map[string]int64{"alpha": 1}) ||
		!reflect.DeepEqual(b, map[string]int64{"beta": 1}) {
		t.Errorf("won by seat: ep1 %v, ep2 %v", a, b)
	}
	for _, name := range []string{"ep1", "ep2"} {
		if got := s.Endpoints[name].Outcomes; !reflect.DeepEqual(got, map[OutcomeKey]int64{{EndpointBids, ""}: 1}) {
			t.Errorf("%s outcomes %v", name, got)
		}
	}
}

// Bid w/h missing: the slot's first format is used.
func TestBidSizeFallsBackToFormat(t *testing.T) {
	verifyNoLeaks(t)
	e := newEndpoint(t, answer(openrtb.Bid{ID: "x", ImpID: "top", Price: "1", AdM: "<b>x</b>", CrID: "s"}))
	f := newFixture(t, OpenRTBOptions{}, e)
	bids, _, _ := f.run(t, time.Second)
	if b := bids["top"]; b.W != 728 || b.H != 90 {
		t.Errorf("bid %+v", b)
	}
}

// TestBadAnswers: each bad answer leaves its endpoint without bids, with
// one log line and one counted reason, while a good endpoint beside it
// still wins its slot.
func TestBadAnswers(t *testing.T) {
	verifyNoLeaks(t)
	oversize := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"r","seatbid":[{"seat":"big","bid":[{"id":"x","impid":"side","price":9,"adm":"`)
		_, _ = w.Write(bytes.Repeat([]byte("a"), DefaultMaxBody))
		_, _ = io.WriteString(w, `"}]}]}`)
	}
	slowDrip := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		for i := 0; ; i++ {
			if _, err := io.WriteString(w, `{"id":"r","seatbid":[{"seat":"slow"`[i%10:i%10+1]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	tests := []struct {
		name    string
		h       func(http.ResponseWriter, *http.Request)
		outcome OutcomeKey
		level   string
		page    Outcome // the auction's: partial when the bad endpoint gave no usable answer
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }, OutcomeKey{EndpointError, ReasonStatus}, "warn", Partial},
		{"400", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "bad", 400) }, OutcomeKey{EndpointError, ReasonStatus}, "warn", Partial},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}, OutcomeKey{EndpointError, ReasonStatus}, "warn", Partial},
		{"204", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }, OutcomeKey{EndpointNoBid, ReasonNoContent}, "info", Completed},
		{"invalid json", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{"id":"r","seatbid":[`) }, OutcomeKey{EndpointError, ReasonJSON}, "warn", Partial},
		{"oversize body", oversize, OutcomeKey{EndpointError, ReasonTooLarge}, "warn", Partial},
		{"connection error", func(w http.ResponseWriter, r *http.Request) {
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
		}, OutcomeKey{EndpointError, ReasonConnection}, "warn", Partial},
		{"slow drip", slowDrip, OutcomeKey{EndpointTimeout, ReasonSlowDrip}, "warn", Partial},
		{"no answer in time", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, OutcomeKey{EndpointTimeout, ReasonNoAnswer}, "warn", Partial},
		{"other currency", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"id":"r","cur":"EUR","seatbid":[{"seat":"eu","bid":[{"id":"e","impid":"side","price":5,"adm":"x"}]}]}`)
		}, OutcomeKey{EndpointError, ReasonCurrency}, "warn", Partial},
		{"no usable bid", answer(bid("z", "side", "0", "zero")), OutcomeKey{EndpointNoBid, ReasonEmpty}, "", Completed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verifyNoLeaks(t)
			good := newEndpoint(t, answer(bid("g", "top", "1.00", "good")))
			bad := newEndpoint(t, tt.h)
			timeout := 300 * time.Millisecond
			if tt.name == "oversize body" {
				// Reading past the 1 MiB cap must not race the endpoint's
				// timeout: under -race on a loaded machine 300ms is not
				// always enough to move 1 MiB, which then ends as slow_drip.
				timeout = 2 * time.Second
			}
			f := newFixture(t, OpenRTBOptions{Endpoints: []Endpoint{{Name: "good"}, {Name: "bad", Timeout: timeout}}}, good, bad)
			bids, out, took := f.run(t, 8*time.Second)
			if out != tt.page || len(bids) != 1 || bids["top"].HbBidder != "good" {
				t.Fatalf("outcome %v, bids %+v; want %v with the good endpoint's bid alone", out, bids, tt.page)
			}
			// The slow handlers would hold the auction for 5s or up to its
			// 8s deadline; 3s leaves room for a loaded CI machine.
			if took > 3*time.Second {
				t.Errorf("took %v: the bad endpoint held the auction past its own 300ms timeout", took)
			}
			s := f.p.Stats().Snapshot()
			if got := s.Endpoints["bad"].Outcomes; !reflect.DeepEqual(got, map[OutcomeKey]int64{tt.outcome: 1}) {
				t.Errorf("bad endpoint outcomes %v, want %v once", got, tt.outcome)
			}
			lines := f.logs.FilterField(zap.String("endpoint", "bad")).All()
			wantLines := 1
			if tt.level == "" {
				wantLines = 0
			}
			if len(lines) != wantLines {
				t.Fatalf("%d log lines for the bad endpoint, want %d: %v", len(lines), wantLines, lines)
			}
			if wantLines == 1 && (lines[0].Level.String() != tt.level || lines[0].ContextMap()["reason"] != tt.outcome.Reason) {
				t.Errorf("log line %s %v", lines[0].Level, lines[0].ContextMap())
			}
			if n := len(f.logs.FilterField(zap.String("endpoint", "good")).All()); n != 0 {
				t.Errorf("%d log lines for the good endpoint", n)
			}
		})
	}
}

// TestDeadlineKeepsPartialBids: one endpoint answers, the other is slower
// than the auction deadline. Wait returns at the deadline with the answered
// bids, and the late request is cancelled.
func TestDeadlineKeepsPartialBids(t *testing.T) {
	verifyNoLeaks(t)
	fast := newEndpoint(t, answer(bid("f", "top", "1.00", "fast")))
	released := make(chan struct{})
	slow := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(released)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
			answer(bid("s", "top", "5.00", "slow"))(w, r)
		}
	})
	f := newFixture(t, OpenRTBOptions{}, fast, slow)
	const deadline = 300 * time.Millisecond
	bids, out, took := f.run(t, deadline)
	if out != Partial || len(bids) != 1 || bids["top"].HbBidder != "fast" {
		t.Fatalf("outcome %v, bids %+v; want the fast endpoint's bid, partial", out, bids)
	}
	// Not before the deadline, and far from the slow endpoint's 10s; the
	// slack is for a loaded CI machine.
	if took < deadline-10*time.Millisecond || took > deadline+1500*time.Millisecond {
		t.Errorf("Wait returned after %v, want about the %v deadline", took, deadline)
	}
	select {
	case <-released:
	case <-time.After(2 * time.Second):
		t.Fatal("the late endpoint's request was not cancelled")
	}
	s := f.p.Stats().Snapshot()
	if got := s.Endpoints["ep2"].Outcomes; !reflect.DeepEqual(got, map[OutcomeKey]int64{{EndpointTimeout, ReasonNoAnswer}: 1}) {
		t.Errorf("slow endpoint outcomes %v", got)
	}
	if got := s.Endpoints["ep1"].Won; !reflect.DeepEqual(got, map[string]int64{"fast": 1}) || len(s.Endpoints["ep2"].Won) != 0 {
		t.Errorf("won %v, slow endpoint %v", got, s.Endpoints["ep2"].Won)
	}
}

// A page whose client left cancels the calls: counted as cancelled, not as
// the endpoint's fault. Caught under load: the provider returned before the
// page's Wait, which then reported the auction as completed.
func TestStopCancelsCalls(t *testing.T) {
	verifyNoLeaks(t)
	called := make(chan struct{}, 1)
	slow := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		signal(called)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	f := newFixture(t, OpenRTBOptions{}, slow)
	ctx, cancel := context.WithCancel(context.Background())
	c := Start(ctx, f.p, testRequest, 5*time.Second)
	waitCalled(t, c, called)
	cancel()
	if _, out := c.Wait(ctx); out != Cancelled {
		t.Errorf("outcome %v", out)
	}
	c.Stop()
	if got := f.p.Stats().Snapshot().Endpoints["ep1"].Outcomes; !reflect.DeepEqual(got, map[OutcomeKey]int64{{EndpointCancelled, ""}: 1}) {
		t.Errorf("outcomes %v", got)
	}
}

// signal notes that a handler ran, without ever blocking it: a blocked
// handler would hold the endpoint's Close, and the test, forever.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// waitCalled waits until an endpoint has received c's request; a provider
// that returns first (its request failed on the way) fails the test
// instead of leaving it waiting.
func waitCalled(t *testing.T, c *Call, called chan struct{}) {
	t.Helper()
	select {
	case <-called:
	case <-c.done:
		t.Fatalf("the provider returned before the endpoint received its request: %+v", c.final)
	}
}

// TestCancelledAuctionFinishedBeforeWaitIsCancelled: the page's request
// ends, the provider returns at once, and only then does the page ask for
// the bids. The auction was cancelled, not completed.
func TestCancelledAuctionFinishedBeforeWaitIsCancelled(t *testing.T) {
	verifyNoLeaks(t)
	called := make(chan struct{}, 1)
	slow := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		signal(called)
		<-r.Context().Done()
	})
	f := newFixture(t, OpenRTBOptions{}, slow)
	ctx, cancel := context.WithCancel(context.Background())
	c := Start(ctx, f.p, testRequest, 5*time.Second)
	defer c.Stop()
	waitCalled(t, c, called)
	cancel()
	<-c.done // the provider has returned before the page waits
	if bids, out := c.Wait(ctx); out != Cancelled || len(bids) != 0 {
		t.Errorf("outcome %v with %d bids, want cancelled with none", out, len(bids))
	}
}

// TestStopWaitsForEndpointCalls: when Stop returns, every endpoint call has
// ended and recorded its metric and log line, so that the page's access
// line, written after Stop, is the last word on the page. It failed when
// Stop only cancelled: the cancelled call was counted a moment later.
func TestStopWaitsForEndpointCalls(t *testing.T) {
	verifyNoLeaks(t)
	called1, called2 := make(chan struct{}, 1), make(chan struct{}, 1)
	hang := func(called chan struct{}) func(w http.ResponseWriter, r *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			signal(called)
			<-r.Context().Done()
		}
	}
	f := newFixture(t, OpenRTBOptions{}, newEndpoint(t, hang(called1)), newEndpoint(t, hang(called2)))
	c := Start(context.Background(), f.p, testRequest, 10*time.Second)
	waitCalled(t, c, called1)
	waitCalled(t, c, called2)
	c.Stop()
	s := f.p.Stats().Snapshot()
	for _, name := range []string{"ep1", "ep2"} {
		if got := s.Endpoints[name].Outcomes; !reflect.DeepEqual(got, map[OutcomeKey]int64{{EndpointCancelled, ""}: 1}) {
			t.Errorf("%s outcomes %v when Stop returned, want one cancelled call", name, got)
		}
	}
	select {
	case <-c.done:
	default:
		t.Error("Stop returned before the provider")
	}
	c.Stop() // a second Stop returns at once
}

// Keep-alive connections are reused between auctions (the pool), and
// closed by Close.
func TestConnectionsPooled(t *testing.T) {
	verifyNoLeaks(t)
	e := newEndpoint(t, answer(bid("x", "top", "1", "s")))
	f := newFixture(t, OpenRTBOptions{}, e)
	for range 5 {
		if bids, _, _ := f.run(t, time.Second); len(bids) != 1 {
			t.Fatalf("bids %v", bids)
		}
	}
	if n, _ := e.openConns(); n != 1 {
		t.Errorf("%d connections for 5 sequential auctions, want 1 kept alive", n)
	}
}

func TestStatsPrometheus(t *testing.T) {
	verifyNoLeaks(t)
	s := NewStats()
	s.observe("pbs", 30*time.Millisecond, EndpointBids, "")
	s.observe("pbs", 700*time.Millisecond, EndpointTimeout, ReasonSlowDrip)
	s.addWon("pbs", "appnexus")
	s.addIgnored(IgnoredNoAdm)
	text, err := testutil.CollectAndFormat(s, expfmt.TypeTextPlain, "ssatd_auction_endpoint_requests_total",
		"ssatd_auction_endpoint_duration_seconds", "ssatd_auction_bids_won_total", "ssatd_auction_bids_ignored_total")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.Write(text)
	for _, want := range []string{
		`ssatd_auction_endpoint_requests_total{endpoint="pbs",outcome="bids",reason=""} 1`,
		`ssatd_auction_endpoint_requests_total{endpoint="pbs",outcome="timeout",reason="slow_drip"} 1`,
		`ssatd_auction_endpoint_duration_seconds_bucket{endpoint="pbs",le="0.025"} 0`,
		`ssatd_auction_endpoint_duration_seconds_bucket{endpoint="pbs",le="0.05"} 1`,
		`ssatd_auction_endpoint_duration_seconds_bucket{endpoint="pbs",le="1"} 2`,
		`ssatd_auction_endpoint_duration_seconds_bucket{endpoint="pbs",le="+Inf"} 2`,
		`ssatd_auction_endpoint_duration_seconds_count{endpoint="pbs"} 2`,
		`ssatd_auction_bids_won_total{endpoint="pbs",seat="appnexus"} 1`,
		`ssatd_auction_bids_ignored_total{reason="no_adm"} 1`,
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("no %s in\n%s", want, b.String())
		}
	}
}

// TestSeatLabels: a seat is its own label only when it is a short plain
// token, and an endpoint has at most 32 named seats and other; another
// endpoint has a cap of its own.
func TestSeatLabels(t *testing.T) {
	verifyNoLeaks(t)
	for _, tt := range []struct{ seat, want string }{
		{"appnexus", "appnexus"},
		{"rubicon_2.b-X", "rubicon_2.b-X"},
		{strings.Repeat("a", 64), strings.Repeat("a", 64)},
		{strings.Repeat("a", 65), "other"},
		{"", "other"},
		{"two words", "other"},
		{`quote"d`, "other"},
		{"line\nbreak", "other"},
		{"ünïcode", "other"},
		{"seat}", "other"},
	} {
		if got := seatLabel(tt.seat); got != tt.want {
			t.Errorf("seatLabel(%q) = %q, want %q", tt.seat, got, tt.want)
		}
	}
	s := NewStats()
	s.addWon("pbs", "bad seat") // other first: it does not take a named place
	for i := range 40 {
		s.addWon("pbs", fmt.Sprintf("seat%d", i))
	}
	s.addWon("pbs", "seat3") // a named seat keeps its series
	s.addWon("backup", "seat39")
	snap := s.Snapshot()
	pbs := snap.Endpoints["pbs"].Won
	if len(pbs) != 33 || pbs["other"] != 1+8 || pbs["seat31"] != 1 || pbs["seat32"] != 0 || pbs["seat3"] != 2 {
		t.Errorf("pbs seats: %d series, other %d, seat31 %d, seat32 %d, seat3 %d; want 33, 9, 1, 0, 2",
			len(pbs), pbs["other"], pbs["seat31"], pbs["seat32"], pbs["seat3"])
	}
	if got := snap.Endpoints["backup"].Won; !reflect.DeepEqual(got, map[string]int64{"seat39": 1}) {
		t.Errorf("backup seats %v: another endpoint's cap must not apply", got)
	}
}

// TestHostileSeatsDoNotGrowMetrics: a bidder that wins every page with a
// distinct 200 KB seat grew the exposition by 200 KB per page (8 MB after
// 40 pages). Its seats count as other: the exposition has the same size
// after 20 pages as after one, give or take the digits of the counts.
func TestHostileSeatsDoNotGrowMetrics(t *testing.T) {
	verifyNoLeaks(t)
	const pages = 20
	var n atomic.Int64
	long := strings.Repeat("s", 200<<10)
	e := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"r","seatbid":[{"seat":"%d-%s","bid":[{"id":"x","impid":"top","price":1,"adm":"<b>x</b>"}]}]}`, n.Add(1), long)
	})
	f := newFixture(t, OpenRTBOptions{}, e)
	reg := prometheus.NewRegistry()
	reg.MustRegister(f.p.Stats())
	size := func() int {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		for _, mf := range mfs {
			if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
				t.Fatal(err)
			}
		}
		return b.Len()
	}
	var first int
	for i := range pages {
		if bids, out, _ := f.run(t, 5*time.Second); out != Completed || len(bids) != 1 {
			t.Fatalf("page %d: outcome %v, bids %v", i, out, bids)
		}
		if i == 0 {
			first = size()
		}
	}
	if got := size(); got > first+64 || got > 16<<10 {
		t.Errorf("exposition %d bytes after %d pages, %d after one", got, pages, first)
	}
	if got := f.p.Stats().Snapshot().Endpoints["ep1"].Won; !reflect.DeepEqual(got, map[string]int64{"other": pages}) {
		t.Errorf("won %v, want other %d", got, pages)
	}
}
