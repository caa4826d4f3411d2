package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/bundle"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/demo"
)

// TestDemoThroughBothProxies fetches every demo page through both proxies
// over loopback, as curl --compressed would with a browser's headers.
func TestDemoThroughBothProxies(t *testing.T) {
	d := startTestDemo(t)
	const browserAE = "gzip, deflate, br, zstd"
	originHost := strings.TrimPrefix(d.originURL, "http://")
	bundleTag := `<script src="/static/tsjs=tsjs-unified.min.js?v=` + bundle.Hash(bundle.JS()) + `" id="trustedserver-js"></script>`
	for _, p := range d.origin.Pages() {
		eligible := p.Path != demo.AboutPath
		identity, _ := d.origin.Body(p.Path)
		var bodies [2][]byte
		for i, proxy := range []struct {
			name, url, wantCoding string
		}{
			{"mirror", d.mirrorURL, "gzip"}, // the origin's choice for a browser
			{"offload", d.offloadURL, "br"}, // the builtin edge's choice
		} {
			if !eligible {
				proxy.wantCoding = "gzip" // not SSAT: mirror mode on both
			}
			resp, body := navigate(t, proxy.url+p.Path, browserAE)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s %s: status %d", proxy.name, p.Path, resp.StatusCode)
			}
			if got := resp.Header.Get("Content-Encoding"); got != proxy.wantCoding {
				t.Errorf("%s %s: Content-Encoding %q, want %q", proxy.name, p.Path, got, proxy.wantCoding)
			}
			if resp.Header.Get("X-Compress-Hint") != "" {
				t.Errorf("%s %s: the hint reached the client", proxy.name, p.Path)
			}
			cc := resp.Header.Get("Cache-Control")
			if eligible && (cc != "private, max-age=0" || resp.Header.Get("Surrogate-Control") != "" || resp.Header.Get("ETag") != "") {
				t.Errorf("%s %s: SSAT page headers %v", proxy.name, p.Path, resp.Header)
			}
			if !eligible && cc != "public, max-age=60" {
				t.Errorf("%s %s: a non-SSAT page keeps the origin's Cache-Control, got %q", proxy.name, p.Path, cc)
			}
			if !bytes.Contains(body, []byte(bundleTag)) {
				t.Errorf("%s %s: no bundle tag", proxy.name, p.Path)
			}
			hasSlots := bytes.Contains(body, []byte(`(window.tsjs=window.tsjs||{}).adSlots=JSON.parse(`))
			hasBids := bytes.Contains(body, []byte(`var s=t.scheduleInitialAdInit;`))
			if hasSlots != eligible || hasBids != eligible {
				t.Errorf("%s %s: ad slots script %v, bids script %v, want %v", proxy.name, p.Path, hasSlots, hasBids, eligible)
			}
			if eligible && (!bytes.Contains(body, []byte(`\"hb_bidder\":\"demo-`)) || !bytes.Contains(body, []byte(`via OpenRTB`))) {
				t.Errorf("%s %s: the demo bidder's OpenRTB bids are missing", proxy.name, p.Path)
			}
			proxyHost := strings.TrimPrefix(proxy.url, "http://")
			if bytes.Contains(body, []byte(`href="http://`+originHost)) || !bytes.Contains(body, []byte(`href="http://`+proxyHost+`/`)) {
				t.Errorf("%s %s: links were not pointed at %s", proxy.name, p.Path, proxyHost)
			}
			// Undo what the proxy did; what remains must be the origin page.
			undone := bytes.ReplaceAll(body, []byte(proxyHost), []byte(originHost))
			undone = regexp.MustCompile(`<script>\(window\.tsjs=[^<]*</script>|<script>\(function\(\)\{var t=window\.tsjs[^<]*</script>`).ReplaceAll(undone, nil)
			undone = bytes.Replace(undone, []byte(bundleTag), nil, 1)
			if !bytes.Equal(undone, identity) {
				t.Errorf("%s %s: apart from the injections and links, the page differs from the origin's (%d vs %d bytes)", proxy.name, p.Path, len(undone), len(identity))
			}
			// Each view is its own auction, and the demo bidder's bid ids
			// and captions name it: compare the pages without that.
			bodies[i] = auctionID.ReplaceAll(bytes.ReplaceAll(body, []byte(proxyHost), []byte("PROXY")), []byte("-AUCTION"))
		}
		if !bytes.Equal(bodies[0], bodies[1]) {
			t.Errorf("%s: mirror and offload pages differ beyond the proxy host", p.Path)
		}
	}

	// Assets pass through untouched, and the admin endpoints answer.
	resp, body := navigate(t, d.offloadURL+"/static/site.js", "br")
	if resp.Header.Get("Content-Encoding") != "br" || !bytes.Contains(body, []byte("site_ready")) {
		t.Errorf("site.js through the offload proxy: %v", resp.Header)
	}
	for _, u := range []string{d.mirrorAdmin + "/readyz", d.offloadAdmin + "/healthz"} {
		if code := cmdHealthcheck(context.Background(), []string{"-url", u}, io.Discard, io.Discard, nil); code != 0 {
			t.Errorf("healthcheck %s = %d", u, code)
		}
	}
}

// TestComposeConfigsMatchDemo keeps the Compose configurations in step with
// the in-process demo: same slots and OpenRTB endpoint (the bidder service),
// each proxy in its mode (the fleet profile's replicas in mirror mode).
func TestComposeConfigsMatchDemo(t *testing.T) {
	want, err := demo.ProxyConfig(demo.ProxyOptions{Listen: ":0", AdminListen: ":0", OriginURL: "http://origin:8000", Domain: "localhost",
		BidderURL: "http://bidder:8002/openrtb2/auction"})
	if err != nil {
		t.Fatal(err)
	}
	for file, offload := range map[string]bool{"demo.toml": false, "demo-offload.toml": true, "demo-fleet.toml": false} {
		cfg, err := config.Load(filepath.Join("..", "..", "configs", file), nil)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if cfg.Publisher.OriginURL != "http://origin:8000" || cfg.Publisher.Domain != "localhost" {
			t.Errorf("%s: origin_url %q, domain %q", file, cfg.Publisher.OriginURL, cfg.Publisher.Domain)
		}
		if cfg.Compute.Limits != want.Compute.Limits {
			t.Errorf("%s: compute.limits %q, want the demo's %q", file, cfg.Compute.Limits, want.Compute.Limits)
		}
		if cfg.Publisher.SSATCompressionOffloadEnabled != offload || cfg.Platform.DeliveryCompression != config.DeliveryCompressionBuiltin {
			t.Errorf("%s: offload %v platform %q", file, cfg.Publisher.SSATCompressionOffloadEnabled, cfg.Platform.DeliveryCompression)
		}
		if !cfg.Auction.Enabled || cfg.Auction.Provider != config.AuctionProviderOpenRTB || !reflect.DeepEqual(cfg.Auction.OpenRTB, want.Auction.OpenRTB) ||
			cfg.Auction.TimeoutMS != want.Auction.TimeoutMS || cfg.Auction.PriceGranularity != want.Auction.PriceGranularity {
			t.Errorf("%s: auction differs from the demo's:\n%+v\nwant\n%+v", file, cfg.Auction, want.Auction)
		}
		strip := func(s []config.Slot) []config.Slot {
			out := append([]config.Slot{}, s...)
			for i := range out {
				out[i].Patterns = nil
				out[i].BidderParams = nil
			}
			return out
		}
		if got, w := strip(cfg.CreativeOpportunities.Slots), strip(want.CreativeOpportunities.Slots); !reflect.DeepEqual(got, w) {
			t.Errorf("%s: slots differ from the demo's:\n%+v\nwant\n%+v", file, got, w)
		}
	}
}
