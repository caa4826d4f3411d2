package ssatdtest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/ssatdtest"
)

// startOrigin serves page for every path; ORIGIN in it becomes the origin's URL.
func startOrigin(t *testing.T, page string) *httptest.Server {
	t.Helper()
	var origin *httptest.Server
	origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, strings.ReplaceAll(page, "ORIGIN", origin.URL))
	}))
	t.Cleanup(origin.Close)
	return origin
}

func get(t *testing.T, url string, nav bool) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if nav {
		req.Header.Set("Accept", "text/html")
		req.Header.Set("Sec-Fetch-Dest", "document")
		req.Header.Set("Sec-Fetch-Mode", "navigate")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func parse(t *testing.T, body []byte) *ssatdtest.Page {
	t.Helper()
	p, err := ssatdtest.ParsePage(body)
	if err != nil {
		t.Fatalf("%v in %s", err, body)
	}
	return p
}

func TestStartRunsTheDaemonOnLoopback(t *testing.T) {
	origin := startOrigin(t, page)
	bidder := ssatdtest.NewBidder(t, ssatdtest.Answer{})
	srv := ssatdtest.Start(t, config(origin.URL, bidder.URL))
	for _, u := range []string{srv.URL, srv.AdminURL} {
		if !strings.HasPrefix(u, "http://127.0.0.1:") || strings.HasSuffix(u, ":0") {
			t.Errorf("URL %q is not a bound loopback address", u)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if resp, body := get(t, srv.AdminURL+path, false); resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
	if _, body := get(t, srv.AdminURL+"/metrics", false); !strings.Contains(string(body), "ssatd_") {
		t.Errorf("/metrics has no ssatd metrics")
	}
	resp, body := get(t, srv.URL+"/", true)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "private, max-age=0" {
		t.Errorf("eligible page: %d, Cache-Control %q", resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
	p := parse(t, body)
	if len(p.Slots) != 1 || p.Bids == nil || len(p.Bids) != 0 {
		t.Errorf("no-bid answer: slots %v bids %v", p.Slots, p.Bids)
	}
	if n := len(bidder.Requests()); n != 1 {
		t.Errorf("bidder got %d requests, want 1", n)
	}
}

func TestNewServerNamesTheBadKey(t *testing.T) {
	_, err := ssatdtest.NewServer("[publisher]\ndomain = \"127.0.0.1\"\norigin_url = \"ftp://x\"\n")
	if err == nil || !strings.Contains(err.Error(), "publisher.origin_url") {
		t.Fatalf("error %v does not name publisher.origin_url", err)
	}
}

// The bidder answers as scripted, and the page gets what the auction made
// of the answer.
func TestBidderAnswersAsScripted(t *testing.T) {
	tests := []struct {
		name   string
		answer ssatdtest.Answer
		want   map[string]ssatdtest.Bid // by slot, Adm not compared
	}{
		{"no bid", ssatdtest.Answer{}, map[string]ssatdtest.Bid{}},
		{"highest seat wins, size from the slot", ssatdtest.Answer{Offers: []ssatdtest.Offer{
			{Slot: "atf", Seat: "low", Price: "1.00"},
			{Slot: "atf", Seat: "high", Price: "3.21"},
		}}, map[string]ssatdtest.Bid{"atf": {Bidder: "high", PriceBucket: "3.20", AdID: "high-atf", W: 300, H: 250}}},
		{"scripted size", ssatdtest.Answer{Offers: []ssatdtest.Offer{
			{Slot: "atf", Seat: "s", Price: "0.50", W: 320, H: 50},
		}}, map[string]ssatdtest.Bid{"atf": {Bidder: "s", PriceBucket: "0.50", AdID: "s-atf", W: 320, H: 50}}},
		{"offer for a slot not asked for", ssatdtest.Answer{Offers: []ssatdtest.Offer{
			{Slot: "elsewhere", Seat: "s", Price: "9"},
		}}, map[string]ssatdtest.Bid{}},
		{"error status", ssatdtest.Answer{Status: http.StatusInternalServerError, Offers: []ssatdtest.Offer{
			{Slot: "atf", Seat: "s", Price: "1"},
		}}, map[string]ssatdtest.Bid{}},
		{"slower than the auction", ssatdtest.Answer{Delay: time.Minute, Offers: []ssatdtest.Offer{
			{Slot: "atf", Seat: "s", Price: "1"},
		}}, map[string]ssatdtest.Bid{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			origin := startOrigin(t, page)
			bidder := ssatdtest.NewBidder(t, tt.answer)
			cfg := strings.Replace(config(origin.URL, bidder.URL), "timeout_ms = 2000", "timeout_ms = 300", 1)
			srv := ssatdtest.Start(t, cfg)
			_, body := get(t, srv.URL+"/", true)
			got := parse(t, body).Bids
			for slot, b := range got {
				if b.Adm == "" {
					t.Errorf("bid for %s has no creative", slot)
				}
				b.Adm = ""
				got[slot] = b
			}
			if !equalBids(got, tt.want) {
				t.Errorf("bids %+v, want %+v", got, tt.want)
			}
		})
	}
}

func equalBids(a, b map[string]ssatdtest.Bid) bool {
	if a == nil || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// What the bidder records is the bid request as sent: the page, the
// client, and one impression per matched slot.
func TestBidderRecordsBidRequests(t *testing.T) {
	origin := startOrigin(t, page)
	bidder := ssatdtest.NewBidder(t, ssatdtest.Answer{})
	srv := ssatdtest.Start(t, config(origin.URL, bidder.URL))
	get(t, srv.URL+"/a", true)
	bidder.SetAnswer(ssatdtest.Answer{Offers: []ssatdtest.Offer{{Slot: "atf", Seat: "x", Price: "1.00"}}})
	_, body := get(t, srv.URL+"/b", true)
	if b := parse(t, body).Bids["atf"]; b.Bidder != "x" {
		t.Errorf("after SetAnswer the page got %+v", b)
	}
	reqs := bidder.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests recorded, want 2", len(reqs))
	}
	for i, want := range []string{"/a", "/b"} {
		r := reqs[i]
		if r.ID == "" || len(r.Imp) != 1 || r.Imp[0].ID != "atf" || r.Site == nil || r.Site.Page != srv.URL+want {
			t.Errorf("request %d: %+v", i, r)
		}
		if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("X-Openrtb-Version") != "2.6" {
			t.Errorf("request %d headers %v", i, r.Header)
		}
		if r.TMax <= 0 || r.TMax > 2000 {
			t.Errorf("request %d tmax %d, want within the 2000ms auction", i, r.TMax)
		}
	}
	if reqs[0].ID == reqs[1].ID {
		t.Errorf("two pages sent the same request id %q", reqs[0].ID)
	}
}

// A request that is not a navigation gets the core rewrite only: links and
// the bundle tag, no slots and no bids, and no auction.
func TestParsePageOfAnIneligibleRequest(t *testing.T) {
	origin := startOrigin(t, page)
	bidder := ssatdtest.NewBidder(t, ssatdtest.Answer{})
	srv := ssatdtest.Start(t, config(origin.URL, bidder.URL))
	_, body := get(t, srv.URL+"/", false)
	p := parse(t, body)
	if p.Slots != nil || p.Bids != nil {
		t.Errorf("ineligible page has slots %v, bids %v", p.Slots, p.Bids)
	}
	if p.Bundle == "" || len(p.Links) != 1 || p.Links[0] != srv.URL+"/next" {
		t.Errorf("bundle %q links %v", p.Bundle, p.Links)
	}
	if n := len(bidder.Requests()); n != 0 {
		t.Errorf("an ineligible page called the bidder %d times", n)
	}
}

// A creative that could end the script early or is not ASCII comes back
// as it was bid.
func TestParsePageReadsEscapedCreatives(t *testing.T) {
	adm := `<div title="é &amp; 😀">"</script><!-- \ ` + "\u2028" + `</div>`
	origin := startOrigin(t, page)
	bidder := ssatdtest.NewBidder(t, ssatdtest.Answer{Offers: []ssatdtest.Offer{
		{Slot: "atf", Seat: "s", Price: "1", Creative: adm},
	}})
	srv := ssatdtest.Start(t, config(origin.URL, bidder.URL))
	_, body := get(t, srv.URL+"/", true)
	if got := parse(t, body).Bids["atf"].Adm; got != adm {
		t.Errorf("creative %q, want %q", got, adm)
	}
}

func TestParsePageRefusesBrokenScripts(t *testing.T) {
	slots := `<script>(window.tsjs=window.tsjs||{}).adSlots=JSON.parse("[]");</script>`
	tests := map[string]string{
		"unterminated": `<html><head><script>(window.tsjs=window.tsjs||{}).adSlots=JSON.parse("[{</script></head></html>`,
		"not JSON":     `<html><head><script>(window.tsjs=window.tsjs||{}).adSlots=JSON.parse("[{");</script></head></html>`,
		"twice":        `<html><head>` + slots + slots + `</head></html>`,
	}
	for name, body := range tests {
		if p, err := ssatdtest.ParsePage([]byte(body)); err == nil {
			t.Errorf("%s: no error, got %+v", name, p)
		}
	}
	p, err := ssatdtest.ParsePage([]byte(`<html><head>` + slots + `</head></html>`))
	if err != nil || p.Slots == nil || len(p.Slots) != 0 {
		t.Errorf("an empty slots script: %+v, %v", p, err)
	}
}
