package auction

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/openrtb"
	"github.com/ssatd/ssatd/internal/ssat"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

var topFloor = 0.5

var testSlots = []ssat.Slot{
	{ID: "top", Formats: [][]int{{728, 90}, {970, 250}}, GAMUnitPath: "/1/top", FloorPrice: &topFloor,
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
