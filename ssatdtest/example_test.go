package ssatdtest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ssatd/ssatd/ssatdtest"
)

// page is the origin's article; its link names the origin.
const page = `<!doctype html><html><head><title>News</title></head>
<body><a href="ORIGIN/next">next</a><div id="ad-atf"></div></body></html>`

// config is the daemon's configuration: one slot on every page, one
// OpenRTB endpoint.
func config(origin, bidder string) string {
	return `
[publisher]
domain = "127.0.0.1"
origin_url = "` + origin + `"

[auction]
enabled = true
provider = "openrtb"
timeout_ms = 2000
price_granularity = "dense"

[[auction.openrtb]]
name = "pbs"
url = "` + bidder + `"

[[creative_opportunities.slot]]
id = "atf"
page_patterns = ["/**"]
formats = [[300, 250]]
gam_unit_path = "/123/news/atf"
div_id = "ad-atf"
`
}

func newOrigin() *httptest.Server {
	var origin *httptest.Server
	origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, strings.ReplaceAll(page, "ORIGIN", origin.URL))
	}))
	return origin
}

// A test starts an origin, a bidder that bids on the slot, and ssatd in
// front of the origin, then reads back what ssatd injected and what the
// bidder was asked. In a test, Start and NewBidder take the *testing.T and
// stop everything at the end.
func Example() {
	origin := newOrigin()
	defer origin.Close()
	bidder := ssatdtest.NewBidderServer(ssatdtest.Answer{Offers: []ssatdtest.Offer{
		{Slot: "atf", Seat: "alpha", Price: "4.57"},
		{Slot: "atf", Seat: "beta", Price: "1.20"},
	}})
	defer bidder.Close()
	srv, err := ssatdtest.NewServer(config(origin.URL, bidder.URL))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	// A browser's navigation, which makes the page eligible for the ad
	// stack, through the daemon's own client (TLS included).
	_, body, err := srv.Navigate("/news/today")
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := ssatdtest.ParsePage(body)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range p.Slots {
		fmt.Println("slot", s.ID, s.DivID, s.GAMUnitPath, s.Formats)
	}
	b := p.Bids["atf"]
	fmt.Println("winner", b.Bidder, b.PriceBucket, b.AdID, b.W, b.H)
	fmt.Println("bundle tag present:", strings.HasPrefix(p.Bundle, "/static/tsjs=tsjs-unified.min.js?v="))
	fmt.Println("link names the proxy:", p.Links[0] == srv.URL+"/next")

	req := bidder.Requests()[0]
	fmt.Println("bid request", req.Imp[0].ID, req.Imp[0].TagID, req.Imp[0].Banner.Format, req.Site.Page == srv.URL+"/news/today")
	// Output:
	// slot atf ad-atf /123/news/atf [[300 250]]
	// winner alpha 4.55 alpha-atf 300 250
	// bundle tag present: true
	// link names the proxy: true
	// bid request atf /123/news/atf [{300 250}] true
}
