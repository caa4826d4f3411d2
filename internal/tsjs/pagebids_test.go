package tsjs_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/ssatd/ssatd/internal/family"
	"github.com/ssatd/ssatd/internal/tsjs"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/ssat"
)

// tsjsPageBids is the request tsjs's SPA hook sends (integrations/gpt/
// index.ts, fetchPageBids): GET {endpoint}?path=encodeURIComponent(path)
// with X-TSJS-Page-Bids "1", or "fallback" on the legacy alias, and the
// Fetch Metadata a same-origin fetch carries.
func tsjsPageBids(marker string) []reqOpt {
	return []reqOpt{header("X-TSJS-Page-Bids", marker), header("Sec-Fetch-Site", "same-origin"),
		header("Sec-Fetch-Mode", "cors"), header("Sec-Fetch-Dest", "empty")}
}

// pageBidsPathQuery is the query tsjs builds, encodeURIComponent(path).
func pageBidsPathQuery(path string) string {
	return "?path=" + url.QueryEscape(path)
}

type pageBidsBody struct {
	Slots []ssat.Slot         `json:"slots"`
	Bids  map[string]ssat.Bid `json:"bids"`
}

func decodePageBids(t *testing.T, b []byte) pageBidsBody {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || len(raw) != 2 || raw["slots"] == nil || raw["bids"] == nil {
		t.Fatalf("not {slots, bids}: %v %s", err, b)
	}
	var out pageBidsBody
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func withNewsSlot(c *config.Config) {
	c.CreativeOpportunities.Slots = []config.Slot{
		{ID: "top", PagePatterns: []string{"/**"}, Formats: [][]int{{728, 90}}, GAMUnitPath: "/1/top"},
		{ID: "news", PagePatterns: []string{"/news/**"}, Formats: [][]int{{300, 250}}, DivID: "news-ad", Targeting: map[string]any{"pos": "mid"}},
	}
	c.Auction.StaticBids = []config.StaticBid{
		{SlotID: "top", HbPb: "1.50", HbBidder: "example", W: 728, H: 90, HbAdid: "a1", Adm: "<div>top</div>"},
		{SlotID: "news", HbPb: "0.80", HbBidder: "other", W: 300, H: 250, HbAdid: "a2", Adm: "<div>news</div>"},
	}
}

func TestPageBidsAnswersSlotsAndBidsForPath(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the origin was asked for %s", r.URL)
	}), withNewsSlot)
	for _, tc := range []struct {
		path  string
		slots []string
	}{
		{"/news/story-2", []string{"top", "news"}},
		{"news/story-2?utm=x#frag", []string{"top", "news"}}, // normalised to /news/story-2
		{"/about", []string{"top"}},
	} {
		resp, b := e.mustGet(t, tsjs.PageBidsPath+pageBidsPathQuery(tc.path), tsjsPageBids("1")...)
		if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "no-store, private" ||
			resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Link") != "" {
			t.Fatalf("%s: %d %v %s", tc.path, resp.StatusCode, resp.Header, b)
		}
		got := decodePageBids(t, b)
		if len(got.Slots) != len(tc.slots) || len(got.Bids) != len(tc.slots) {
			t.Fatalf("%s: %s", tc.path, b)
		}
		for i, id := range tc.slots {
			if got.Slots[i].ID != id || got.Bids[id].Adm == "" || got.Slots[i].Formats == nil || got.Slots[i].Targeting == nil {
				t.Errorf("%s: slot %d %+v, bids %+v", tc.path, i, got.Slots[i], got.Bids)
			}
		}
		if len(got.Slots) == 2 && (got.Slots[1].DivID != "news-ad" || got.Bids["news"].HbPb != "0.80") {
			t.Errorf("news slot %+v bid %+v", got.Slots[1], got.Bids["news"])
		}
	}
	line := e.accessLine(t, 1)
	if line["route"] != "page-bids" || line["auction"] != "completed" || line["status"] != int64(200) {
		t.Errorf("access line %v", line)
	}
	if n := e.guest.Metrics().Sum("ssatd_requests_total", map[string]string{"route": "page-bids", "status_class": "2xx"}); n != 3 {
		t.Errorf("requests_total{route=page-bids} = %v", n)
	}
}

func TestPageBidsCrossSiteGate(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the origin was asked for %s %s", r.Method, r.URL)
	}))
	q := pageBidsPathQuery("/")
	for _, tc := range []struct {
		name   string
		method string
		path   string
		opts   []reqOpt
		status int
	}{
		{"tsjs same-origin", "GET", tsjs.PageBidsPath, tsjsPageBids("1"), 200},
		{"legacy client, header only", "GET", tsjs.PageBidsPath, []reqOpt{header("X-TSJS-Page-Bids", "1")}, 200},
		{"same-origin without the header", "GET", tsjs.PageBidsPath, []reqOpt{header("Sec-Fetch-Site", "same-origin")}, 200},
		{"neither", "GET", tsjs.PageBidsPath, nil, 403},
		{"cross-site with the header", "GET", tsjs.PageBidsPath, []reqOpt{header("X-TSJS-Page-Bids", "1"), header("Sec-Fetch-Site", "cross-site")}, 403},
		{"same-site", "GET", tsjs.PageBidsPath, []reqOpt{header("X-TSJS-Page-Bids", "1"), header("Sec-Fetch-Site", "same-site")}, 403},
		{"none (typed in the address bar)", "GET", tsjs.PageBidsPath, []reqOpt{header("X-TSJS-Page-Bids", "1"), header("Sec-Fetch-Site", "none")}, 403},
		{"options", "OPTIONS", tsjs.PageBidsPath, tsjsPageBids("1"), 403},
		{"options preflight", "OPTIONS", tsjs.PageBidsPath, []reqOpt{header("Origin", "https://evil.example"), header("Access-Control-Request-Headers", "x-tsjs-page-bids")}, 403},
		{"legacy neither", "GET", tsjs.PageBidsLegacyPath, nil, 403},
		{"legacy options", "OPTIONS", tsjs.PageBidsLegacyPath, tsjsPageBids("fallback"), 403},
		{"legacy tsjs", "GET", tsjs.PageBidsLegacyPath, tsjsPageBids("fallback"), 200},
		{"unknown format", "GET", tsjs.PageBidsPath + "?format=html&path=/", tsjsPageBids("1"), 400},
		{"empty format", "GET", tsjs.PageBidsPath + "?format=", tsjsPageBids("1"), 400},
		{"json format", "GET", tsjs.PageBidsPath + "?format=json", tsjsPageBids("1"), 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.path
			if target == tsjs.PageBidsPath || target == tsjs.PageBidsLegacyPath {
				target += q
			}
			req, _ := http.NewRequest(tc.method, e.front.URL+target, nil)
			req.Host = testDomain
			for _, o := range tc.opts {
				o(req)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status || resp.Header.Get("Cache-Control") != "no-store, private" {
				t.Errorf("%d %q, want %d", resp.StatusCode, resp.Header.Get("Cache-Control"), tc.status)
			}
			if legacy := tc.path == tsjs.PageBidsLegacyPath; legacy != (resp.Header.Get("Link") != "") && tc.status != 403 {
				t.Errorf("Link %q on %s", resp.Header.Get("Link"), tc.path)
			}
		})
	}
	if n := len(e.logs.FilterField(zap.String("deprecated_alias", tsjs.PageBidsLegacyPath)).All()); n != 1 {
		t.Errorf("%d deprecated-alias log lines, want 1 (refused requests are not counted)", n)
	}
}

// With the auction off or consent missing, the answer has no slots, so
// the client builds none; a crawler keeps the slots but gets no auction.
func TestPageBidsAdStackGates(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*config.Config)
		opts   []reqOpt
		slots  int
		bids   int
		reason string
	}{
		{"auction disabled", func(c *config.Config) { c.Auction.Enabled = false }, nil, 0, 0, family.IneligibleNoAuction},
		{"no consent", func(c *config.Config) { c.Consent.RequireTCFPurpose1 = true }, nil, 0, 0, family.IneligibleConsent},
		{"consent", func(c *config.Config) { c.Consent.RequireTCFPurpose1 = true },
			[]reqOpt{header("Cookie", "euconsent-v2="+consentPurpose1)}, 1, 1, ""},
		{"bot", func(*config.Config) {}, []reqOpt{header("User-Agent", "Mozilla/5.0 (compatible; Googlebot/2.1)")}, 1, 0, family.IneligibleBot},
		{"prefetch", func(*config.Config) {}, []reqOpt{header("Sec-Purpose", "prefetch")}, 1, 0, family.IneligiblePrefetch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, http.NotFoundHandler(), tc.mutate)
			resp, b := e.mustGet(t, tsjs.PageBidsPath+pageBidsPathQuery("/x"), append(tsjsPageBids("1"), tc.opts...)...)
			got := decodePageBids(t, b)
			if resp.StatusCode != 200 || len(got.Slots) != tc.slots || len(got.Bids) != tc.bids {
				t.Errorf("%d %s", resp.StatusCode, b)
			}
			line := e.accessLine(t, 1)
			if tc.reason != "" && line["ineligible"] != tc.reason {
				t.Errorf("access line %v, want ineligible=%s", line, tc.reason)
			}
		})
	}
}

func TestPageBidsNotConfigured(t *testing.T) {
	e := newEnv(t, http.NotFoundHandler(), func(c *config.Config) {
		c.CreativeOpportunities.Slots = nil
		c.Auction.StaticBids = nil
	})
	resp, _ := e.mustGet(t, tsjs.PageBidsPath+"?path=/", tsjsPageBids("1")...)
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Cache-Control") != "no-store, private" {
		t.Errorf("%d %v", resp.StatusCode, resp.Header)
	}
}
