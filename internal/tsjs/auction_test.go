package tsjs_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/testutil"
	"github.com/ssatd/ssatd/internal/tsjs"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/openrtb"
	"github.com/ssatd/ssatd/internal/telemetry"
)

// post sends body to path as tsjs's sendAuction does (fetch with
// content-type application/json).
func (e *env) post(t *testing.T, path, contentType, body string, opts ...reqOpt) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.front.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = testDomain
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// withStaticBids configures a slot on /news/** per bid besides "top",
// and the bids.
func withStaticBids(bids ...config.StaticBid) func(*config.Config) {
	return func(c *config.Config) {
		for _, b := range bids {
			if b.SlotID != "top" {
				c.CreativeOpportunities.Slots = append(c.CreativeOpportunities.Slots,
					config.Slot{ID: b.SlotID, PagePatterns: []string{"/news/**"}, Formats: [][]int{{b.W, b.H}}})
			}
		}
		c.Auction.StaticBids = bids
	}
}

func TestAuctionAnswersTsjsWithStaticBids(t *testing.T) {
	e := newEnv(t, http.NotFoundHandler(), withStaticBids(
		config.StaticBid{SlotID: "top", HbPb: "1.50", HbBidder: "example", W: 728, H: 90, HbAdid: "a1", Adm: "<div>top ad</div>"},
		config.StaticBid{SlotID: "side", HbPb: "0.40", HbBidder: "kargo", W: 300, H: 250, HbAdid: "a2", Adm: "<div>side ad</div>"},
		config.StaticBid{SlotID: "unasked", HbPb: "9.00", HbBidder: "x", W: 1, H: 1, Adm: "<p>no</p>"},
	))
	resp, body := e.post(t, "/auction", "application/json", testutil.TsjsAdRequest)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "application/json") {
		t.Errorf("Content-Type %q: tsjs reads only application/json", ct)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store, private" {
		t.Errorf("Cache-Control %q", cc)
	}
	got := testutil.ParseLikeTsjs(t, body)
	want := []testutil.TsjsBid{
		{ImpID: "top", Adm: "<div>top ad</div>", Seat: "example", CrID: "a1", Price: 1.5, W: 728, H: 90},
		{ImpID: "side", Adm: "<div>side ad</div>", Seat: "kargo", CrID: "a2", Price: 0.4, W: 300, H: 250},
	}
	if len(got) != len(want) {
		t.Fatalf("bids %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bid %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	var raw struct {
		SeatBid []struct {
			Bid []struct {
				ID string `json:"id"`
			} `json:"bid"`
		} `json:"seatbid"`
	}
	if err := json.Unmarshal(body, &raw); err != nil || len(raw.SeatBid) != 2 || raw.SeatBid[0].Bid[0].ID != "a1" {
		t.Errorf("bid ids: %v %s", err, body)
	}
	line := e.accessLine(t, 1)
	if line["route"] != "auction" || line["status"] != int64(200) || line["auction"] != "completed" {
		t.Errorf("access line %v", line)
	}
	if n := e.guest.Metrics().Sum("ssatd_requests_total", map[string]string{"route": "auction", "status_class": "2xx"}); n != 1 {
		t.Errorf("requests_total{route=auction,2xx} = %v, want 1", n)
	}
}

func TestAuctionRefusesBadClientInput(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the origin was asked for %s %s", r.Method, r.URL.Path)
	}))
	big := `{"adUnits":[],"config":{"pad":"` + strings.Repeat("x", tsjs.MaxAuctionBody) + `"}}`
	for _, tc := range []struct {
		name, method, ct, body string
		status                 int
		inBody                 string
	}{
		{"get", http.MethodGet, "", "", 405, "POST"},
		{"put", http.MethodPut, "application/json", testutil.TsjsAdRequest, 405, "POST"},
		{"form", http.MethodPost, "application/x-www-form-urlencoded", "a=b", 415, "application/json"},
		{"text plain", http.MethodPost, "text/plain;charset=UTF-8", testutil.TsjsAdRequest, 415, "application/json"},
		{"no content type", http.MethodPost, "", testutil.TsjsAdRequest, 415, "application/json"},
		{"too large", http.MethodPost, "application/json", big, 413, "262144"},
		{"malformed", http.MethodPost, "application/json", `{"adUnits":[`, 400, "not JSON"},
		{"not an object", http.MethodPost, "application/json", `[1,2]`, 400, "not JSON"},
		{"trailing data", http.MethodPost, "application/json", `{"adUnits":[]} {}`, 400, "after the JSON"},
		{"no adUnits", http.MethodPost, "application/json", `{"config":{}}`, 400, "adUnits is required"},
		{"null adUnits", http.MethodPost, "application/json", `{"adUnits":null}`, 400, "adUnits is required"},
		{"no code", http.MethodPost, "application/json", `{"adUnits":[{"mediaTypes":{"banner":{"sizes":[[1,2]]}}}]}`, 400, "code is required"},
		{"three-element size", http.MethodPost, "application/json", `{"adUnits":[{"code":"top","mediaTypes":{"banner":{"sizes":[[300,250,99]]}}}]}`, 400, "[width, height]"},
		{"negative size", http.MethodPost, "application/json", `{"adUnits":[{"code":"top","mediaTypes":{"banner":{"sizes":[[-1,250]]}}}]}`, 400, "not JSON"},
		{"no sizes", http.MethodPost, "application/json", `{"adUnits":[{"code":"top","mediaTypes":{"banner":{}}}]}`, 400, "sizes is required"},
		{"bid without bidder", http.MethodPost, "application/json", `{"adUnits":[{"code":"top","mediaTypes":{"banner":{"sizes":[[1,2]]}},"bids":[{"params":{}}]}]}`, 400, "bidder is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, e.front.URL+"/auction", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Host = testDomain
			if tc.ct != "" {
				req.Header.Set("Content-Type", tc.ct)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !bytes.Contains(body, []byte(tc.inBody)) {
				t.Errorf("%d %q, want %d containing %q", resp.StatusCode, body, tc.status, tc.inBody)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "no-store, private" {
				t.Errorf("Cache-Control %q", cc)
			}
			if tc.status == 405 && resp.Header.Get("Allow") != "POST" {
				t.Errorf("Allow %q", resp.Header.Get("Allow"))
			}
		})
	}
	if n := e.guest.Metrics().Sum("ssatd_requests_total", map[string]string{"route": "auction", "status_class": "4xx"}); n != 16 {
		t.Errorf("requests_total{route=auction,4xx} = %v, want 16", n)
	}
	if n := e.guest.Metrics().Sum("ssatd_requests_total", map[string]string{"status_class": "5xx"}); n != 0 {
		t.Errorf("client input caused %v 5xx", n)
	}
}

// An empty adUnits list is accepted and answered with no bids, as upstream
// answers it (the Axum and Fastly adapter tests POST {"adUnits":[]}); a
// unit without a banner is skipped, not refused.
// TestAuctionBodyNumberDoesNotFillTheAccessLine: encoding/json's error
// quotes a number of any length, so a /auction body holding one number of
// 200 KB put 200 KB of the client's bytes into the access line's error.
// The line's error is bounded by telemetry.Text and still says what was
// wrong.
func TestAuctionBodyNumberDoesNotFillTheAccessLine(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the origin was asked for %s %s", r.Method, r.URL.Path)
	}))
	huge := "3" + strings.Repeat("0", 200<<10)
	for i, body := range []string{
		`{"adUnits":[{"code":"top","mediaTypes":{"banner":{"sizes":[[` + huge + `,250]]}}}]}`,
		`{"adUnits":[{"code":"top","mediaTypes":{"banner":{"sizes":[[300,-` + huge + `]]}}}]}`,
	} {
		req, err := http.NewRequest(http.MethodPost, e.front.URL+"/auction", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = testDomain
		req.Header.Set("Content-Type", "application/json")
		resp, err := e.front.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("body %d: %d, want 400", i, resp.StatusCode)
		}
		msg, _ := e.accessLine(t, i+1)["error"].(string)
		if len(msg) > telemetry.MaxTextBytes+len("…") || !strings.Contains(msg, "cannot unmarshal number") || !strings.Contains(msg, "3000") {
			t.Errorf("body %d: access line error of %d bytes (at most %d): %.120q", i, len(msg), telemetry.MaxTextBytes, msg)
		}
	}
}

func TestAuctionNoBannerUnitsAnswersNoBids(t *testing.T) {
	e := newEnv(t, http.NotFoundHandler())
	for _, body := range []string{`{"adUnits":[]}`, `{"adUnits":[{"code":"top","mediaTypes":{},"bids":[]}],"config":{}}`} {
		resp, b := e.post(t, "/auction", "application/json; charset=utf-8", body)
		var got map[string]any
		if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, b)
		}
		if _, ok := got["seatbid"]; ok {
			t.Errorf("%s: seatbid present: %s", body, b)
		}
	}
}

// consentPurpose1 is a TCF v2 string granting purposes 1, 3 and 24 (the
// one TestConsentGating uses; see internal/tcf).
const consentPurpose1 = "CO5rKAAO5rKAAAHADBENCWEIAKAAAUAAAAYgAAAAAAAA"

// The consent gate of pages applies: without TCF purpose 1 the provider is
// never called and the answer has no bids.
func TestAuctionConsentGate(t *testing.T) {
	var calls atomic.Int32
	ep := newBidEndpoint(t, func(w http.ResponseWriter, r *http.Request, br openrtb.BidRequest) {
		calls.Add(1)
		bidOn("seat1", "2.37")(w, r, br)
	})
	e := newEnv(t, http.NotFoundHandler(), withOpenRTB(2000, ep), func(c *config.Config) {
		c.Consent.RequireTCFPurpose1 = true
		c.Auction.PriceGranularity = "medium"
	})
	resp, body := e.post(t, "/auction", "application/json", testutil.TsjsAdRequest)
	if resp.StatusCode != 200 || len(testutil.ParseLikeTsjs(t, body)) != 0 || calls.Load() != 0 {
		t.Fatalf("without consent: %d %s, %d bid requests", resp.StatusCode, body, calls.Load())
	}
	resp, body = e.post(t, "/auction", "application/json", testutil.TsjsAdRequest, func(r *http.Request) {
		r.AddCookie(&http.Cookie{Name: "euconsent-v2", Value: consentPurpose1})
	})
	bids := testutil.ParseLikeTsjs(t, body)
	if resp.StatusCode != 200 || len(bids) != 2 || calls.Load() != 1 {
		t.Fatalf("with consent: %d %s, %d bid requests", resp.StatusCode, body, calls.Load())
	}
	// The medium bucket of 2.37 is 2.30: the price a page gets.
	if bids[0].Price != 2.3 || bids[0].Seat != "seat1" || bids[0].ImpID != "top" {
		t.Errorf("bid %+v", bids[0])
	}
	br := ep.received()[0]
	if len(br.Imp) != 2 || br.Imp[0].ID != "top" || len(br.Imp[0].Banner.Format) != 2 || br.Imp[1].Ext == nil ||
		string(br.Imp[1].Ext.Prebid.Bidder["kargo"]) != `{"placementId":"p1"}` {
		t.Errorf("bid request imps %+v", br.Imp)
	}
}

// The auction runs under the pages' deadline, and the endpoint's call has
// ended when the answer's access line is written (goleak checks the rest).
func TestAuctionDeadlineAndNothingOutlivesIt(t *testing.T) {
	ep := newBidEndpoint(t, hang)
	e := newEnv(t, http.NotFoundHandler(), withOpenRTB(150, ep))
	start := time.Now()
	resp, body := e.post(t, "/auction", "application/json", testutil.TsjsAdRequest)
	took := time.Since(start)
	if resp.StatusCode != 200 || len(testutil.ParseLikeTsjs(t, body)) != 0 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if took < 150*time.Millisecond || took > 5*time.Second {
		t.Errorf("answered after %v, want the 150ms deadline", took)
	}
	line := e.accessLine(t, 1)
	if line["auction"] != "timeout" {
		t.Errorf("access line %v", line)
	}
}

// The page URL a bidder sees is the Referer on this host without its
// query (which can carry private data), else the site's root.
func TestAuctionPageURLFromReferer(t *testing.T) {
	ep := newBidEndpoint(t, bidOn("s", "1.00"))
	e := newEnv(t, http.NotFoundHandler(), withOpenRTB(2000, ep))
	for _, tc := range []struct{ referer, want string }{
		{"http://" + testDomain + "/news/a?email=x@y#f", "http://" + testDomain + "/news/a"},
		{"https://evil.example/x", "http://" + testDomain + "/"},
		{"", "http://" + testDomain + "/"},
	} {
		n := len(ep.received())
		e.post(t, "/auction", "application/json", testutil.TsjsAdRequest, header("Referer", tc.referer))
		got := ep.received()
		if len(got) != n+1 || got[n].Site.Page != tc.want {
			t.Errorf("Referer %q: site.page %v, want %q", tc.referer, got[n:], tc.want)
		}
	}
}

// POST /auction waits auction.post_auction_timeout_ms while /_ts/page-bids
// waits the page's auction.timeout_ms, as upstream keeps the two apart
// (publisher.rs:6433-6435, auction/endpoints.rs:295): the tmax each bid
// request carries is the time left of its own deadline.
func TestPostAuctionHasItsOwnDeadline(t *testing.T) {
	ep := newBidEndpoint(t, bidOn("s", "1.00"))
	e := newEnv(t, http.NotFoundHandler(), withNewsSlot, withOpenRTB(2000, ep), func(c *config.Config) {
		c.Auction.PostAuctionTimeoutMS = 250
	})
	e.post(t, "/auction", "application/json", testutil.TsjsAdRequest)
	e.mustGet(t, tsjs.PageBidsPath+pageBidsPathQuery("/news/a"), tsjsPageBids("1")...)
	got := ep.received()
	if len(got) != 2 {
		t.Fatalf("%d bid requests, want 2", len(got))
	}
	if tmax := got[0].TMax; tmax <= 0 || tmax > 250 {
		t.Errorf("POST /auction: tmax %d, want within its 250 ms", tmax)
	}
	if tmax := got[1].TMax; tmax <= 1000 || tmax > 2000 {
		t.Errorf("/_ts/page-bids: tmax %d, want within the page's 2000 ms", tmax)
	}
}
