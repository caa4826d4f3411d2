package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/ssatd/ssatd/internal/auction"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/openrtb"
	"github.com/ssatd/ssatd/internal/ssat"
)

// bidEndpoint is a loopback OpenRTB endpoint that records the requests it
// received.
type bidEndpoint struct {
	*httptest.Server
	mu       sync.Mutex
	requests []openrtb.BidRequest
	headers  []http.Header
}

func newBidEndpoint(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, br openrtb.BidRequest)) *bidEndpoint {
	t.Helper()
	e := &bidEndpoint{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var br openrtb.BidRequest
		_ = json.NewDecoder(r.Body).Decode(&br)
		e.mu.Lock()
		e.requests = append(e.requests, br)
		e.headers = append(e.headers, r.Header.Clone())
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

const bidsOf = `var b=JSON.parse("`

// htmlPage serves the test page naming the host it was asked for.
var htmlPage = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html")
	_, _ = io.WriteString(w, strings.ReplaceAll(testPage, "ORIGIN", r.Host))
})

// TestOpenRTBPageFinishesAtDeadlineWithPartialBids: one endpoint answers
// at once, the other is slower than the auction deadline. The page waits
// at </body> only until the deadline, comes out whole, and carries the
// answered bids.
func TestOpenRTBPageFinishesAtDeadlineWithPartialBids(t *testing.T) {
	verifyNoLeaks(t)
	fast := newBidEndpoint(t, bidOn("fastseat", "1.234"))
	// The slow endpoint never answers on its own: it returns only when
	// ssatd gives up on it, so a page that waited for its answer would
	// never end.
	abandoned := make(chan struct{})
	slow := newBidEndpoint(t, func(w http.ResponseWriter, r *http.Request, _ openrtb.BidRequest) {
		<-r.Context().Done()
		close(abandoned)
	})
	const deadline = 400 * time.Millisecond
	e := newEnv(t, htmlPage, withOpenRTB(int(deadline/time.Millisecond), fast, slow))
	start := time.Now()
	resp, body := e.mustGet(t, "/news/a", navigate, header("Cookie", "session=secret"))
	took := time.Since(start)
	if resp.StatusCode != http.StatusOK || !bytes.HasSuffix(body, []byte("</body></html>")) {
		t.Fatalf("status %d, page %q", resp.StatusCode, body)
	}
	if !bytes.Contains(body, []byte(`\"hb_bidder\":\"fastseat\"`)) || !bytes.Contains(body, []byte(`\"hb_pb\":\"1.23\"`)) ||
		!bytes.Contains(body, []byte(`\"hb_adid\":\"fastseat-top\"`)) {
		t.Errorf("the fast endpoint's bid is missing: %s", body)
	}
	// The page waited for the deadline (the fast bid is in it) and ended
	// without the slow endpoint's answer, which never comes; ssatd hung up
	// on it (the endpoint's server sees that a moment later, when it reads
	// the closed connection).
	line := e.accessLine(t, 1)
	if took < deadline-20*time.Millisecond {
		t.Errorf("the page took %v, less than its %v auction deadline; access line %v", took, deadline, line)
	}
	select {
	case <-abandoned:
	case <-time.After(10 * time.Second):
		t.Errorf("ssatd never hung up on the slow endpoint; access line %v", line)
	}
	if got := line["auction"]; got != "partial" {
		t.Errorf("access log auction = %v, want partial", got)
	}
	for _, h := range fast.headers {
		if h.Get("Cookie") != "" {
			t.Errorf("the client's cookie reached the endpoint: %v", h)
		}
	}
	reqs := fast.received()
	if len(reqs) != 1 || reqs[0].Site.Page != "http://"+testDomain+"/news/a" || reqs[0].Site.Domain != testDomain ||
		reqs[0].Device.IP != "127.0.0.1" || *reqs[0].Imp[0].Secure != 0 || reqs[0].Imp[0].TagID != "/1/top" {
		t.Errorf("bid request %+v", reqs)
	}

	var m strings.Builder
	if err := e.guest.Metrics().WritePrometheus(&m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`ssatd_auction_endpoint_requests_total{endpoint="first",outcome="bids",reason=""} 1`,
		`ssatd_auction_endpoint_requests_total{endpoint="second",outcome="timeout",reason="no_answer"} 1`,
		`ssatd_auction_bids_won_total{endpoint="first",seat="fastseat"} 1`,
	} {
		if !strings.Contains(m.String(), want) {
			t.Errorf("/metrics lacks %s:\n%s", want, m.String())
		}
	}
}

// heldProvider answers only when its context ends, and then only when the
// test releases it: an auction whose calls take a while to wind down.
type heldProvider struct {
	cancelled, release chan struct{}
	returned           atomic.Bool
}

func (p *heldProvider) Bids(ctx context.Context, _ auction.Request) (map[string]ssat.Bid, error) {
	<-ctx.Done()
	close(p.cancelled)
	<-p.release
	p.returned.Store(true)
	return nil, ctx.Err()
}

// TestAuctionEndsBeforeAccessLine: a page that ends without waiting for its
// auction (here the origin answers 404) stops the auction, and its access
// line is written only once the auction's provider has returned, so that
// nothing of the auction outlives the page's record. It failed when
// auction.Call.Stop only cancelled: the line came while the provider ran.
func TestAuctionEndsBeforeAccessLine(t *testing.T) {
	verifyNoLeaks(t)
	origin := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(origin.Close)
	p := &heldProvider{cancelled: make(chan struct{}), release: make(chan struct{})}
	// The hook sees the access line as it is written: whether the
	// provider had returned by then is read at that moment.
	lineWritten := make(chan bool, 1)
	logger, logs := newObservedLogger(zap.InfoLevel, func(e zapcore.Entry) error {
		if e.Message == "access" {
			select {
			case lineWritten <- p.returned.Load():
			default: // one request, one line
			}
		}
		return nil
	})
	g, err := New(testConfig(t, origin.URL), Options{Logger: logger, Bundle: []byte("bundle"), Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	front := httptest.NewServer(g)
	t.Cleanup(front.Close)
	release := sync.OnceFunc(func() { close(p.release) })
	t.Cleanup(release) // a failed test lets the provider return too
	got := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, front.URL+"/news/a", nil)
		req.Host = testDomain
		req.Header.Set("Sec-Fetch-Dest", "document")
		resp, err := client.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		got <- err
	}()
	<-p.cancelled // the page has ended and stopped its auction
	// The provider is held: a guest that does not wait for it writes its
	// line now, and the hook reports it at once. A correct guest writes
	// none however long the provider is held; 300 ms bounds the test.
	select {
	case <-lineWritten:
		t.Fatal("the access line was written while the page's auction was still running")
	case <-time.After(300 * time.Millisecond):
	}
	release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if returned := <-lineWritten; !returned {
		t.Fatal("the access line was written before the auction's provider returned")
	}
	line := logs.waitAccess(t, 1)[0].ContextMap()
	if st := line["status"]; st != int64(http.StatusNotFound) {
		t.Errorf("access line status %v, want the origin's 404", st)
	}
}

// TestAuctionRecordWithBidderDown: a failing or unreachable endpoint
// leaves the page whole, and the access line and the auction metric say
// what happened: failed when no endpoint gave a usable answer, partial when
// another did, completed when every endpoint answered (a no-bid included).
// It caught a dead bidder recorded as completed.
func TestAuctionRecordWithBidderDown(t *testing.T) {
	notJSON := func(w http.ResponseWriter, r *http.Request, _ openrtb.BidRequest) {
		_, _ = io.WriteString(w, "<html>not json")
	}
	noBid := func(w http.ResponseWriter, r *http.Request, _ openrtb.BidRequest) {
		w.WriteHeader(http.StatusNoContent)
	}
	tests := []struct {
		name      string
		endpoints []string // "bad", "down", "good", "nobid"
		want      string
		bids      bool // the good endpoint's bid is on the page
	}{
		{"invalid answer", []string{"bad"}, "failed", false},
		{"bidder down", []string{"down"}, "failed", false},
		{"down and bad", []string{"down", "bad"}, "failed", false},
		{"down beside a good one", []string{"down", "good"}, "partial", true},
		{"no bid beside a bad one", []string{"nobid", "bad"}, "partial", false},
		{"no bid", []string{"nobid"}, "completed", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verifyNoLeaks(t)
			var eps []*bidEndpoint
			for _, kind := range tt.endpoints {
				switch kind {
				case "bad":
					eps = append(eps, newBidEndpoint(t, notJSON))
				case "nobid":
					eps = append(eps, newBidEndpoint(t, noBid))
				case "good":
					eps = append(eps, newBidEndpoint(t, bidOn("goodseat", "1")))
				case "down":
					down := newBidEndpoint(t, noBid)
					down.Close() // connection refused
					eps = append(eps, down)
				}
			}
			e := newEnv(t, htmlPage, withOpenRTB(2000, eps...))
			resp, body := e.mustGet(t, "/", navigate)
			if resp.StatusCode != http.StatusOK || !bytes.HasSuffix(body, []byte("</body></html>")) {
				t.Fatalf("status %d, page %s", resp.StatusCode, body)
			}
			if has := bytes.Contains(body, []byte(`\"hb_bidder\":\"goodseat\"`)); has != tt.bids || !tt.bids && !bytes.Contains(body, []byte(bidsOf+`{}");`)) {
				t.Errorf("good bid on the page %v, want %v: %s", has, tt.bids, body)
			}
			if got := e.accessLine(t, 1)["auction"]; got != tt.want {
				t.Errorf("access log auction = %v, want %s", got, tt.want)
			}
			m := e.guest.Metrics()
			if n := m.Sum("ssatd_auction_duration_seconds", map[string]string{"outcome": tt.want}); n != 1 {
				t.Errorf("ssatd_auction_duration_seconds{outcome=%q} counted %v pages, want 1", tt.want, n)
			}
		})
	}
}

// TestConsentGating: with require_tcf_purpose1, the ad stack runs only for
// a TCF v2 string that grants purpose 1; other pages get the core rewrite.
// Both variants of the slot path are private, so that a shared cache never
// hands the page without ads to a consenting client.
func TestConsentGating(t *testing.T) {
	verifyNoLeaks(t)
	publicPage := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=600")
		htmlPage(w, r)
	})
	const (
		grants = "CO5rKAAO5rKAAAHADBENCWEIAKAAAUAAAAYgAAAAAAAA" // purposes 1, 3, 24 (see internal/tcf)
		denies = "CO5rKAAO5rKAAAHADBENCWEIAEAAAUAAAAYgAAAAAAAA" // the same fields, but purposes 2 and 24 only
	)
	tests := []struct {
		name    string
		require bool
		cookie  string
		adStack bool
		consent string // user.consent sent
	}{
		{"required, purpose 1 granted", true, grants, true, grants},
		{"required, purpose 1 not granted", true, denies, false, ""},
		{"required, no string", true, "", false, ""},
		{"required, garbage", true, "not-a-tcf-string", false, ""},
		{"not required, no string", false, "", true, ""},
		{"not required, string passed on", false, denies, true, denies},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verifyNoLeaks(t)
			ep := newBidEndpoint(t, bidOn("seat", "2"))
			e := newEnv(t, publicPage, withOpenRTB(2000, ep), func(c *config.Config) {
				c.Consent.RequireTCFPurpose1 = tt.require
				c.Consent.GDPRApplies = true
			})
			opts := []reqOpt{navigate}
			if tt.cookie != "" {
				opts = append(opts, header("Cookie", "euconsent-v2="+tt.cookie))
			}
			resp, body := e.mustGet(t, "/", opts...)
			if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`id="trustedserver-js"`)) {
				t.Fatalf("status %d, no core rewrite: %s", resp.StatusCode, body)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "private, max-age=0" {
				t.Errorf("Cache-Control %q, want private, max-age=0 for either variant", cc)
			}
			hasSlots := bytes.Contains(body, []byte(`adSlots=JSON.parse(`))
			hasBids := bytes.Contains(body, []byte(bidsOf))
			if hasSlots != tt.adStack || hasBids != tt.adStack {
				t.Errorf("ad slots %v, bids %v; want %v", hasSlots, hasBids, tt.adStack)
			}
			reqs := ep.received()
			if !tt.adStack {
				if len(reqs) != 0 {
					t.Errorf("the endpoint was called %d times without consent", len(reqs))
				}
				if got := e.accessLine(t, 1)["ineligible"]; got != "consent" {
					t.Errorf("access log ineligible = %v", got)
				}
				return
			}
			if len(reqs) != 1 {
				t.Fatalf("%d bid requests", len(reqs))
			}
			gotConsent := ""
			if reqs[0].User != nil {
				gotConsent = reqs[0].User.Consent
			}
			if gotConsent != tt.consent || reqs[0].Regs == nil || reqs[0].Regs.GDPR == nil || *reqs[0].Regs.GDPR != 1 {
				t.Errorf("user %+v regs %+v; want consent %q and gdpr 1", reqs[0].User, reqs[0].Regs, tt.consent)
			}
		})
	}
}

// The client address comes from X-Forwarded-For only through a trusted
// proxy; otherwise a client could name any address.
func TestOpenRTBClientIP(t *testing.T) {
	verifyNoLeaks(t)
	for _, tt := range []struct {
		name    string
		trusted []string
		want    string
	}{
		{"untrusted peer: its own address", nil, "127.0.0.1"},
		{"trusted peer: the first untrusted hop from the right", []string{"127.0.0.0/8", "10.0.0.0/8"}, "198.51.100.9"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			verifyNoLeaks(t)
			ep := newBidEndpoint(t, bidOn("seat", "1"))
			e := newEnv(t, htmlPage, withOpenRTB(2000, ep), func(c *config.Config) { c.Server.TrustedProxies = tt.trusted })
			e.mustGet(t, "/", navigate, header("X-Forwarded-For", "203.0.113.1, 198.51.100.9, 10.1.2.3"),
				header("Accept-Language", "fr-CH, fr;q=0.9"))
			reqs := ep.received()
			if len(reqs) != 1 || reqs[0].Device.IP != tt.want || reqs[0].Device.Language != "fr" {
				t.Errorf("device %+v, want ip %s and language fr", reqs[0].Device, tt.want)
			}
		})
	}
}
