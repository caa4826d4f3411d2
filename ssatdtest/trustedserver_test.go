package ssatdtest_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/ssatdtest"
)

// tsConfig is a Trusted Server settings file (upstream's format) for the
// origin and a Prebid Server at pbs, with ssatd's own settings in [ssatd].
// The jurisdiction is given because upstream's consent decision fails
// closed where it is unknown, and a test request has no geo.
func tsConfig(origin, pbs, delivery string) string {
	return `
[publisher]
domain = "127.0.0.1"
cookie_domain = ".127.0.0.1"
origin_url = "` + origin + `"
proxy_secret = "test-proxy-secret-0123456789abcdef"

[auction]
enabled = true
providers = ["prebid"]

[integrations.prebid]
server_url = "` + pbs + `"
bidders = ["alpha"]

[creative_opportunities]
gam_network_id = "123"
auction_timeout_ms = 2000

[[creative_opportunities.slot]]
id = "atf"
page_patterns = ["/**"]
formats = [{ width = 300, height = 250 }]
gam_unit_path = "/{network_id}/news/{slot_id}"
div_id = "ad-atf"
floor_price = 0.75
providers = { prebid = { bidders = { alpha = { placementId = 7 } } } }

[ssatd.consent]
jurisdiction = "non-regulated"

[ssatd.platform]
delivery_compression = "` + delivery + `"
`
}

// nativeConfig is tsConfig in ssatd's own format.
func nativeConfig(origin, bidder, delivery string) string {
	return `
[publisher]
domain = "127.0.0.1"
origin_url = "` + origin + `"
ssat_cache_control = "no-store, private"

[platform]
delivery_compression = "` + delivery + `"

[consent]
policy = "upstream"
jurisdiction = "non-regulated"

[auction]
enabled = true
provider = "openrtb"
timeout_ms = 2000

[[auction.openrtb]]
name = "prebid"
url = "` + bidder + `"
timeout_ms = 1000

[[creative_opportunities.slot]]
id = "atf"
page_patterns = ["/**"]
formats = [[300, 250]]
gam_unit_path = "/123/news/atf"
div_id = "ad-atf"
floor_price = 0.75
bidders = { alpha = { placementId = 7 } }
`
}

// A publisher's Trusted Server file drives the same page as the native
// file it is equivalent to: the same slots and bids in the page, and the
// same impressions sent to Prebid Server (at server_url plus
// /openrtb2/auction), in both compression modes.
func TestTrustedServerFileServesTheSameSlotsAndBidsAsNative(t *testing.T) {
	offers := ssatdtest.Answer{Offers: []ssatdtest.Offer{{Slot: "atf", Seat: "alpha", Price: "2.35"}}}
	for _, delivery := range []string{"builtin", "external"} {
		t.Run(delivery, func(t *testing.T) {
			origin := startOrigin(t, page)
			tsPage, tsImp := serveOnce(t, "trusted-server", offers, func(pbs string) string {
				return tsConfig(origin.URL, strings.TrimSuffix(pbs, ssatdtest.AuctionPath), delivery)
			})
			nPage, nImp := serveOnce(t, "native", offers, func(pbs string) string { return nativeConfig(origin.URL, pbs, delivery) })
			if len(tsPage.Slots) != 1 || tsPage.Bids["atf"].Bidder != "alpha" {
				t.Fatalf("Trusted Server file: slots %+v bids %+v", tsPage.Slots, tsPage.Bids)
			}
			if !reflect.DeepEqual(tsPage.Slots, nPage.Slots) || !reflect.DeepEqual(tsPage.Bids, nPage.Bids) {
				t.Errorf("pages differ:\nTrusted Server: %+v %+v\nnative: %+v %+v", tsPage.Slots, tsPage.Bids, nPage.Slots, nPage.Bids)
			}
			if !reflect.DeepEqual(tsImp, nImp) {
				t.Errorf("impressions differ:\nTrusted Server: %+v\nnative: %+v", tsImp, nImp)
			}
			imp := tsImp[0]
			if imp.TagID != "/123/news/atf" || imp.BidFloor == nil || *imp.BidFloor != 0.75 || imp.BidFloorCur != "USD" ||
				!strings.Contains(string(imp.Ext), `"alpha":{"placementId":7}`) {
				t.Errorf("impression %+v ext %s", imp, imp.Ext)
			}
		})
	}
}

// serveOnce runs ssatd with the configuration config makes for a Prebid
// Server answering offers, requests one page as a browser navigation, and
// returns what the page got and the impressions Prebid Server was sent.
// Each daemon stops before the next starts, so that Start's goroutine
// check sees one daemon at a time.
func serveOnce(t *testing.T, name string, offers ssatdtest.Answer, config func(pbs string) string) (page *ssatdtest.Page, imps []ssatdtest.Imp) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		bidder := ssatdtest.NewBidder(t, offers)
		srv := ssatdtest.Start(t, config(bidder.URL))
		resp, body := get(t, srv.URL+"/news/a", true)
		// Upstream never lets a personalised page be stored.
		if cc := resp.Header.Get("Cache-Control"); cc != "no-store, private" {
			t.Errorf("Cache-Control %q", cc)
		}
		page = parse(t, body)
		if reqs := bidder.Requests(); len(reqs) == 1 {
			imps = reqs[0].Imp
		} else {
			t.Errorf("%d bid requests, want 1", len(reqs))
		}
		http.DefaultClient.CloseIdleConnections()
	})
	if page == nil || len(imps) == 0 {
		t.FailNow()
	}
	return page, imps
}
