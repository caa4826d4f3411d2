package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/measure"
	"github.com/ssatd/ssatd/internal/openrtb"
)

// -proxy against a real daemon handler: both modes and both client codings
// are reported with the codings the daemon used.
func TestMeasureProxy(t *testing.T) {
	var host string
	origin := measureOrigin(t, func() []byte { return measurePage(host, "") }, negotiate)
	host = strings.TrimPrefix(origin.URL, "http://")
	front := measureDaemon(t, origin.URL, func(c *config.Config) {
		c.Debug.DiagnosticsHeaders = true
		c.Debug.AllowModeOverride = true
	})
	code, stdout, stderr := measureRun(t, "-proxy", front.URL, "-url", "/news/a.html?x=1", "-host", measureDomain, "-runs", "2", "-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct{ Daemon measure.DaemonReport }
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	type key struct{ mode, ae string }
	want := map[key]struct{ diag, output, delivery, delivered string }{
		{"identity", "br"}:   {"offload", "identity", "fastly-dynamic", "br"},
		{"identity", "gzip"}: {"offload", "identity", "fastly-dynamic", "gzip"},
		{"mirror", "br"}:     {"mirror", "br", "in-guest", "br"},
		{"mirror", "gzip"}:   {"mirror", "gzip", "in-guest", "gzip"},
	}
	rep := doc.Daemon
	if len(rep.Results) != len(want) || len(rep.Problems) != 0 {
		t.Fatalf("results %+v problems %q", rep.Results, rep.Problems)
	}
	var decoded int64
	for _, r := range rep.Results {
		w, ok := want[key{r.Mode, r.AcceptEncoding}]
		if !ok {
			t.Errorf("unexpected result %+v", r)
			continue
		}
		delete(want, key{r.Mode, r.AcceptEncoding})
		if r.Status != 200 || r.DiagMode != w.diag || r.OutputCoding != w.output || r.Delivery != w.delivery || r.DeliveredCoding != w.delivered {
			t.Errorf("%s/%s: %+v, want %+v", r.Mode, r.AcceptEncoding, r, w)
		}
		if r.Mode == "identity" && r.OriginAE != "identity" {
			t.Errorf("%s/%s: origin asked %q", r.Mode, r.AcceptEncoding, r.OriginAE)
		}
		if r.Mode == "mirror" && r.OriginCoding != r.AcceptEncoding {
			t.Errorf("%s/%s: origin coding %q", r.Mode, r.AcceptEncoding, r.OriginCoding)
		}
		if r.ProcessingMS <= 0 || r.TotalMS <= 0 || r.TTFBMS <= 0 || r.DeliveredBytes <= 0 || r.DeliveredBytes >= r.DecodedBytes {
			t.Errorf("%s/%s: times or sizes %+v", r.Mode, r.AcceptEncoding, r)
		}
		// Trusted Server's set is read: processed bytes are the origin body
		// as read, the identity page or its smaller coded form.
		if r.Headers != "x-ts-ssat" || !r.SameAsFirst {
			t.Errorf("%s/%s: headers %q, same %v", r.Mode, r.AcceptEncoding, r.Headers, r.SameAsFirst)
		}
		if page := int64(len(measurePage(host, ""))); (r.Mode == "identity" && r.ProcessedBytes != page) || (r.Mode == "mirror" && (r.ProcessedBytes <= 0 || r.ProcessedBytes >= page)) {
			t.Errorf("%s/%s: processed %d bytes, origin page %d", r.Mode, r.AcceptEncoding, r.ProcessedBytes, page)
		}
		decoded = r.DecodedBytes
	}
	if decoded <= int64(len(measurePage(host, ""))) {
		t.Errorf("decoded page %d bytes: the SSAT injection did not run", decoded)
	}

	code, table, _ := measureRun(t, "-proxy", front.URL, "-url", "/news/a.html", "-runs", "1")
	if code != 0 || !strings.Contains(table, "offload") || !strings.Contains(table, "in-guest") {
		t.Fatalf("table (exit %d):\n%s", code, table)
	}
}

// A daemon without the diagnostics, or a page it does not treat as SSAT,
// is not measured silently: the command says which settings must be on.
// The diagnostics alone are enough, since with them ssatd accepts
// Trusted Server's ?__ts_ssat_compression.
func TestMeasureProxyNeedsDebugSettings(t *testing.T) {
	origin := measureOrigin(t, func() []byte { return measurePage("x.example", "") }, negotiate)
	tests := []struct {
		name    string
		mutate  func(*config.Config)
		wantErr string
	}{
		{"no diagnostics", func(c *config.Config) {}, "with neither X-Ts-Ssat-Compression-Mode nor X-Ssatd-Compression-Mode"},
		{"not an SSAT page", func(c *config.Config) {
			c.Debug.DiagnosticsHeaders = true
			c.CreativeOpportunities.Slots[0].PagePatterns = []string{"/elsewhere/**"}
		}, "the override was ignored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			front := measureDaemon(t, origin.URL, tt.mutate)
			code, stdout, stderr := measureRun(t, "-proxy", front.URL, "-url", "/", "-runs", "1")
			if code != 1 || !strings.Contains(stderr, tt.wantErr) || !strings.Contains(stderr, "debug.diagnostics_headers = true") {
				t.Fatalf("exit %d, stderr:\n%s", code, stderr)
			}
			// Said once, with no table of what could not be measured.
			if n := strings.Count(stderr, "debug.diagnostics_headers"); n != 1 || stdout != "" {
				t.Errorf("advice given %d times, stdout %q; want once and no table", n, stdout)
			}
		})
	}
}

// -proxy A,B,C measures deployments side by side in one run: a server
// speaking the upstream headers and ssatd twice. Each row carries that
// deployment's own figures, and the decoded pages are compared with the
// first deployment's.
func TestMeasureProxyComparesDeployments(t *testing.T) {
	var host string
	origin := measureOrigin(t, func() []byte { return measurePage(host, "") }, negotiate)
	host = strings.TrimPrefix(origin.URL, "http://")
	ssatd := measureDaemon(t, origin.URL, func(c *config.Config) { c.Debug.DiagnosticsHeaders = true })
	fastly := upstreamLike(t, measurePage("elsewhere.example", ""))
	code, stdout, stderr := measureRun(t, "-proxy", ssatd.URL+","+fastly.URL+","+ssatd.URL, "-url", "/news/a.html",
		"-host", measureDomain, "-runs", "1", "-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct{ Comparison measure.Comparison }
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Comparison
	if len(c.Deployments) != 3 {
		t.Fatalf("%d deployments", len(c.Deployments))
	}
	for i, d := range c.Deployments {
		if len(d.Results) != 4 {
			t.Fatalf("deployment %d: %d results", i, len(d.Results))
		}
		for _, r := range d.Results {
			if r.Headers != "x-ts-ssat" || r.Status != 200 || r.DecodedBytes <= 0 {
				t.Errorf("deployment %d %s/%s: %+v", i, r.Mode, r.AcceptEncoding, r)
			}
		}
	}
	for _, r := range c.Deployments[1].Results {
		want := map[string]struct {
			vcpu, proc float64
			bytes      int64
			out        string
		}{"identity": {19, 9.045, 1365106, "identity"}, "mirror": {47, 44.630, 178351, "gzip"}}[r.Mode]
		if r.VCPUMS != want.vcpu || r.ProcessingMS != want.proc || r.ProcessedBytes != want.bytes || r.OutputCoding != want.out || r.DiagMode != map[string]string{"identity": "offload", "mirror": "mirror"}[r.Mode] {
			t.Errorf("upstream-like %s/%s: %+v, want %+v", r.Mode, r.AcceptEncoding, r, want)
		}
	}
	for i, r := range c.Deployments[2].Results {
		if r.BodySHA256 != c.Deployments[0].Results[i].BodySHA256 || r.BodySHA256 == c.Deployments[1].Results[i].BodySHA256 {
			t.Errorf("row %d: page hashes %s, %s, %s; want the two ssatd runs alike and the other page different", i,
				c.Deployments[0].Results[i].BodySHA256, c.Deployments[1].Results[i].BodySHA256, r.BodySHA256)
		}
	}
	code, table, _ := measureRun(t, "-proxy", ssatd.URL+","+fastly.URL, "-url", "/news/a.html", "-host", measureDomain, "-runs", "1")
	if code != 0 || !strings.Contains(table, "[2] vCPU ms") || !strings.Contains(table, "differs") || !strings.Contains(table, "1,365,106") {
		t.Fatalf("table (exit %d):\n%s", code, table)
	}
}

// The daemon sends the page's guest CPU in a trailer; -proxy with one URL
// reports it, to the microsecond, in the table, the JSON and the CSV.
func TestMeasureProxyReportsGuestCPU(t *testing.T) {
	var host string
	origin := measureOrigin(t, func() []byte { return measurePage(host, "") }, negotiate)
	host = strings.TrimPrefix(origin.URL, "http://")
	front := measureDaemon(t, origin.URL, func(c *config.Config) {
		c.Debug.DiagnosticsHeaders = true
		c.Debug.AllowModeOverride = true
	})
	code, stdout, stderr := measureRun(t, "-proxy", front.URL, "-url", "/news/a.html", "-host", measureDomain, "-runs", "3", "-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Daemon struct {
			Results []struct {
				Mode           string   `json:"mode"`
				AcceptEncoding string   `json:"accept_encoding"`
				GuestCPUMS     *float64 `json:"guest_cpu_ms"`
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Daemon.Results) != 4 {
		t.Fatalf("results %+v", doc.Daemon.Results)
	}
	for _, r := range doc.Daemon.Results {
		if r.GuestCPUMS == nil || *r.GuestCPUMS <= 0 {
			t.Errorf("%s/%s: guest_cpu_ms %v, want the daemon's trailer", r.Mode, r.AcceptEncoding, r.GuestCPUMS)
		}
	}
	code, table, _ := measureRun(t, "-proxy", front.URL, "-url", "/news/a.html", "-host", measureDomain, "-runs", "1")
	lines := strings.Split(table, "\n")
	if code != 0 || len(lines) < 3 || !strings.HasSuffix(strings.TrimSpace(lines[1]), "guest CPU ms") {
		t.Fatalf("table has no guest CPU column (exit %d):\n%s", code, table)
	}
	for _, l := range lines[2:6] {
		f := strings.Fields(l)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err != nil || v <= 0 {
			t.Errorf("row %q: last column is not a guest CPU figure", l)
		}
	}
	code, csvOut, _ := measureRun(t, "-proxy", front.URL, "-url", "/news/a.html", "-host", measureDomain, "-runs", "1", "-format", "csv")
	if code != 0 || !strings.HasSuffix(strings.SplitN(csvOut, "\n", 2)[0], ",vcpu_ms,guest_cpu_ms") {
		t.Fatalf("csv header (exit %d):\n%s", code, csvOut)
	}
}

// freshBidder answers every auction with a bid of its own id, as a real
// bidder does.
func freshBidder(t *testing.T, n *atomic.Int64) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var br openrtb.BidRequest
		_ = json.NewDecoder(r.Body).Decode(&br)
		resp := openrtb.BidResponse{ID: br.ID, Cur: "USD", SeatBid: []openrtb.SeatBid{{Seat: "alpha"}}}
		for _, imp := range br.Imp {
			resp.SeatBid[0].Bid = append(resp.SeatBid[0].Bid, openrtb.Bid{ID: fmt.Sprintf("bid-%d", n.Add(1)), ImpID: imp.ID,
				Price: "1.50", AdM: "<div>ad</div>", W: 300, H: 250})
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(s.Close)
	return s
}

// A static page behind a real auction was reported "the decoded page
// differs … (a dynamic page?)" on every row, because each auction's bid
// has its own id. The pages are compared with the bids script set aside,
// as verify compares codings; a page that differs elsewhere is reported
// with what differs.
func TestMeasureProxyStaticPageIsSameDespiteFreshBids(t *testing.T) {
	var bids, counter atomic.Int64
	bidder := freshBidder(t, &bids)
	for _, tt := range []struct {
		name    string
		extra   func() string
		dynamic bool
	}{
		{"static page", func() string { return "" }, false},
		{"dynamic page", func() string { return fmt.Sprintf("<p>request %06d</p>", counter.Add(1)) }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var host string
			origin := measureOrigin(t, func() []byte { return measurePage(host, tt.extra()) }, negotiate)
			host = strings.TrimPrefix(origin.URL, "http://")
			front := measureDaemon(t, origin.URL, func(c *config.Config) {
				c.Debug.DiagnosticsHeaders = true
				c.Auction.Provider = config.AuctionProviderOpenRTB
				c.Auction.TimeoutMS = 2000
				c.Auction.OpenRTB = []config.OpenRTBEndpoint{{Name: "alpha", URL: bidder.URL}}
				c.CreativeOpportunities.Slots[0].Formats = [][]int{{300, 250}}
			})
			code, stdout, stderr := measureRun(t, "-proxy", front.URL, "-url", "/news/a.html", "-host", measureDomain, "-runs", "1", "-format", "json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var doc struct{ Daemon measure.DaemonReport }
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Daemon.Results) != 4 {
				t.Fatalf("%d results", len(doc.Daemon.Results))
			}
			if bids.Load() == 0 {
				t.Fatalf("the bidder was never asked: no auction ran")
			}
			for i, r := range doc.Daemon.Results {
				switch {
				case i == 0 || !tt.dynamic:
					if !r.SameAsFirst || r.Differs != "" {
						t.Errorf("%s/%s: same %v, differs %q; want the same page", r.Mode, r.AcceptEncoding, r.SameAsFirst, r.Differs)
					}
				case r.SameAsFirst || !strings.Contains(r.Differs, "request 0000"):
					t.Errorf("%s/%s: same %v, differs %q; want the differing counter named", r.Mode, r.AcceptEncoding, r.SameAsFirst, r.Differs)
				}
			}
			code, table, _ := measureRun(t, "-proxy", front.URL, "-url", "/news/a.html", "-host", measureDomain, "-runs", "1")
			if code != 0 || strings.Contains(table, "differs") != tt.dynamic || (tt.dynamic && !strings.Contains(table, "request 0000")) {
				t.Errorf("table (exit %d):\n%s", code, table)
			}
		})
	}
}
