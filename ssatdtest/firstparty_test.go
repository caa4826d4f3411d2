package ssatdtest_test

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/ssatd/ssatd/ssatdtest"
)

// adServer is a third party's ad server on loopback: an image, a pixel
// that records the price it was told, and the advertiser's landing page.
type adServer struct {
	*httptest.Server
	mu      sync.Mutex
	prices  []string // ?p= of each pixel request
	cookies []string // every Cookie header it was sent
	// seen is each request's path after who sent it: "browser:<dest>" when
	// it carries Sec-Fetch-Dest, which the first-party proxy never
	// forwards, else "proxy".
	seen []string
	// fetched is signalled on each request.
	fetched chan struct{}
}

func (a *adServer) log() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

var adImage = []byte("\x89PNG\r\n\x1a\nstand-in image bytes")

func startAdServer(t *testing.T) *adServer {
	t.Helper()
	a := &adServer{fetched: make(chan struct{}, 64)}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := "proxy"
		if d := r.Header.Get("Sec-Fetch-Dest"); d != "" {
			who = "browser:" + d
		}
		a.mu.Lock()
		a.seen = append(a.seen, who+" "+r.URL.Path)
		select {
		case a.fetched <- struct{}{}:
		default:
		}
		a.cookies = append(a.cookies, r.Header.Values("Cookie")...)
		if r.URL.Path == "/px" {
			a.prices = append(a.prices, r.URL.Query().Get("p"))
		}
		a.mu.Unlock()
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(adImage)
	}))
	t.Cleanup(a.Close)
	return a
}

// creative is the winning adm: an image, a pixel carrying the clearing
// price macro, and a click link, all on the ad server.
func (a *adServer) creative() string {
	return `<a href="` + a.URL + `/landing"><img src="` + a.URL + `/x.png" width="300" height="250"></a>` +
		`<img src="` + a.URL + `/px?p=${AUCTION_PRICE}" width="1" height="1">`
}

// tsFirstPartyConfig is tsConfig with [proxy] naming 127.0.0.1, the ad
// server's host, which lets the address guard through to it as a
// publisher developing locally would.
func tsFirstPartyConfig(origin, pbs string) string {
	return tsConfig(origin, pbs, "builtin") + `
[proxy]
allowed_domains = ["127.0.0.1"]
`
}

var admURL = regexp.MustCompile(`(?:src|href)="([^"]*)"`)

// admURLs are the creative's src and href values, unescaped, but the
// bundle's.
func admURLs(adm string) []string {
	var out []string
	for _, m := range admURL.FindAllStringSubmatch(adm, -1) {
		if u := html.UnescapeString(m[1]); !strings.HasPrefix(u, "/static/tsjs=") {
			out = append(out, u)
		}
	}
	return out
}

// Under a Trusted Server file with a proxy_secret, the winning creative is
// first party in all three places a page gets it, as upstream makes it:
// the page's bids and /_ts/page-bids carry absolute /first-party/proxy and
// /first-party/click URLs on the client's origin with ${AUCTION_PRICE}
// expanded, POST /auction root-relative ones with the bundle; and each
// signed URL, fetched through the daemon, reaches the ad server without
// the publisher's cookies and returns its bytes, or redirects to the
// landing page. Before the wiring the adm named the ad server and the
// routes were the origin's.
func TestWinningCreativeIsFirstPartyThroughTheDaemon(t *testing.T) {
	ad := startAdServer(t)
	origin := startOrigin(t, page)
	bidder := ssatdtest.NewBidder(t, ssatdtest.Answer{Offers: []ssatdtest.Offer{
		{Slot: "atf", Seat: "alpha", Price: "2.35", Creative: ad.creative()}}})
	srv := ssatdtest.Start(t, tsFirstPartyConfig(origin.URL, strings.TrimSuffix(bidder.URL, ssatdtest.AuctionPath)))

	_, body, err := srv.Navigate("/news/a")
	if err != nil {
		t.Fatal(err)
	}
	pageAdm := parse(t, body).Bids["atf"].Adm
	checkFirstParty(t, srv, ad, "page", pageAdm, srv.URL+"/first-party/")

	pbReq, _ := http.NewRequest(http.MethodGet, srv.URL+"/_ts/page-bids?path=/news/a", nil)
	pbReq.Header.Set("X-TSJS-Page-Bids", "1")
	var pb struct {
		Bids map[string]struct{ Adm string } `json:"bids"`
	}
	doJSON(t, srv, pbReq, &pb)
	checkFirstParty(t, srv, ad, "page-bids", pb.Bids["atf"].Adm, srv.URL+"/first-party/")

	auReq, _ := http.NewRequest(http.MethodPost, srv.URL+"/auction", strings.NewReader(
		`{"adUnits":[{"code":"atf","mediaTypes":{"banner":{"sizes":[[300,250]]}},"bids":[{"bidder":"alpha","params":{}}]}]}`))
	auReq.Header.Set("Content-Type", "application/json")
	var au struct {
		SeatBid []struct{ Bid []struct{ AdM string } } `json:"seatbid"`
	}
	doJSON(t, srv, auReq, &au)
	if len(au.SeatBid) != 1 || len(au.SeatBid[0].Bid) != 1 {
		t.Fatalf("/auction seatbid %+v", au.SeatBid)
	}
	auAdm := au.SeatBid[0].Bid[0].AdM
	if !strings.Contains(auAdm, `id="trustedserver-js"`) {
		t.Errorf("/auction adm lacks the bundle: %s", auAdm)
	}
	checkFirstParty(t, srv, ad, "auction", auAdm, "/first-party/")

	ad.mu.Lock()
	defer ad.mu.Unlock()
	// The page's and page-bids' pixels carry the clearing price; /auction's
	// leaves the macro to the client, as upstream's does.
	if want := []string{"2.35", "2.35", "${AUCTION_PRICE}"}; strings.Join(ad.prices, " ") != strings.Join(want, " ") {
		t.Errorf("pixel prices %q, want %q", ad.prices, want)
	}
	if len(ad.cookies) > 0 {
		t.Errorf("the ad server was sent the publisher's cookies: %q", ad.cookies)
	}
}

// checkFirstParty checks that adm names the ad server only through
// first-party URLs starting with prefix, and follows each through the
// daemon.
func checkFirstParty(t *testing.T, srv *ssatdtest.Server, ad *adServer, where, adm, prefix string) {
	t.Helper()
	urls := admURLs(adm)
	if len(urls) != 3 || strings.Contains(adm, ad.URL) {
		t.Fatalf("%s: adm is not first party: %s", where, adm)
	}
	for i, u := range urls {
		kind := "proxy?tsurl="
		if i == 0 {
			kind = "click?tsurl="
		}
		if !strings.HasPrefix(u, prefix+kind) || !strings.Contains(u, "&tstoken=") {
			t.Errorf("%s: URL %d is %q, want %s%s…&tstoken=…", where, i, u, prefix, kind)
			continue
		}
		if !strings.HasPrefix(u, "http") {
			u = srv.URL + u
		}
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Header.Set("Cookie", "publisher_session=secret")
		resp, got := do(t, req)
		switch {
		case i == 0 && (resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != ad.URL+"/landing"):
			t.Errorf("%s: click: %d Location %q", where, resp.StatusCode, resp.Header.Get("Location"))
		case i > 0 && (resp.StatusCode != http.StatusOK || !bytes.Equal(got, adImage)):
			t.Errorf("%s: %s: %d %q", where, u, resp.StatusCode, got)
		}
	}
}

// do sends req without following redirects and returns the response with
// its body read.
func do(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
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

func doJSON(t *testing.T, srv *ssatdtest.Server, req *http.Request, v any) {
	t.Helper()
	resp, body := do(t, req)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("%s: %v in %s", req.URL.Path, err, body)
	}
}

// auction.rewrite_creatives and sanitize_creatives decide what the page's
// bid carries, as upstream's process_inline_auction_creative does: with
// rewriting off the creative keeps its third-party URLs (its price macro
// still expanded), sanitizing removes scripts and handlers before
// rewriting, a creative sanitized to nothing loses its bid, and a native
// configuration passes the creative untouched.
func TestCreativeSettingsDecideWhatThePageGets(t *testing.T) {
	ad := startAdServer(t)
	origin := startOrigin(t, page)
	script := `<script src="` + ad.URL + `/ad.js"></script>`
	img := `<img src="` + ad.URL + `/x.png" onerror="steal()">`
	withAuction := func(keys string) func(string) string {
		return func(pbs string) string {
			return strings.Replace(tsFirstPartyConfig(origin.URL, pbs), "[auction]\n", "[auction]\n"+keys+"\n", 1)
		}
	}
	for _, tc := range []struct {
		name, creative string
		config         func(pbs string) string
		want           func(adm string) bool // nil: no bid
	}{
		{"rewrite off", ad.creative(), withAuction("rewrite_creatives = false"),
			func(adm string) bool { return adm == strings.Replace(ad.creative(), "${AUCTION_PRICE}", "2.35", 1) }},
		{"sanitized, then rewritten", script + img, withAuction("sanitize_creatives = true"),
			func(adm string) bool {
				return !strings.Contains(adm, "script") && !strings.Contains(adm, "onerror") &&
					strings.HasPrefix(adm, `<img src="`+srvURLMarker+`/first-party/proxy?tsurl=`)
			}},
		{"sanitized to nothing", script, withAuction("sanitize_creatives = true"), nil},
		{"native configuration", ad.creative(),
			func(pbs string) string { return nativeConfig(origin.URL, pbs+ssatdtest.AuctionPath, "builtin") },
			func(adm string) bool { return adm == ad.creative() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bidder := ssatdtest.NewBidder(t, ssatdtest.Answer{Offers: []ssatdtest.Offer{
				{Slot: "atf", Seat: "alpha", Price: "2.35", Creative: tc.creative}}})
			srv := ssatdtest.Start(t, tc.config(strings.TrimSuffix(bidder.URL, ssatdtest.AuctionPath)))
			_, body, err := srv.Navigate("/news/a")
			if err != nil {
				t.Fatal(err)
			}
			bid, ok := parse(t, body).Bids["atf"]
			switch {
			case tc.want == nil && ok:
				t.Errorf("the page has a bid, adm %q", bid.Adm)
			case tc.want != nil && !ok:
				t.Errorf("the page has no bid")
			case tc.want != nil && !tc.want(strings.ReplaceAll(bid.Adm, srv.URL, srvURLMarker)):
				t.Errorf("adm %s", bid.Adm)
			}
			http.DefaultClient.CloseIdleConnections()
		})
	}
}

// srvURLMarker stands for the daemon's URL in an expected adm.
const srvURLMarker = "SSATD"
