package main

import (
	"html"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/demo"
	"github.com/ssatd/ssatd/internal/pageparse"
)

var (
	admImage = regexp.MustCompile(`<img src="([^"]+)"`)
	admLink  = regexp.MustCompile(`<a href="([^"]+)"`)
)

// TestDemoCreativesAreFirstParty: the demo bidder's creatives carry an
// image and a click, and both proxies make them first party as Trusted
// Server does: the image loads through /first-party/proxy from the
// proxy's own host, the click lands on the bidder's landing page through
// /first-party/click, and no creative names the bidder directly.
func TestDemoCreativesAreFirstParty(t *testing.T) {
	d := startTestDemo(t)
	bidderHost := strings.TrimSuffix(strings.TrimPrefix(d.bidderURL, "http://"), demo.AuctionPath)
	noRedirect := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, proxy := range []string{d.mirrorURL, d.offloadURL} {
		_, body := navigate(t, proxy+"/", "gzip, br")
		page, err := pageparse.Parse(body)
		if err != nil || len(page.Bids) == 0 {
			t.Fatalf("%s: bids %v, error %v", proxy, page, err)
		}
		for slot, b := range page.Bids {
			img, link := admImage.FindStringSubmatch(b.Adm), admLink.FindStringSubmatch(b.Adm)
			if img == nil || link == nil {
				t.Fatalf("%s %s: no image or link in %q", proxy, slot, b.Adm)
			}
			src, href := html.UnescapeString(img[1]), html.UnescapeString(link[1])
			if !strings.HasPrefix(src, proxy+"/first-party/proxy?tsurl=") || !strings.HasPrefix(href, proxy+"/first-party/click?tsurl=") {
				t.Errorf("%s %s: image %q, link %q, want the proxy's first-party URLs", proxy, slot, src, href)
			}
			if strings.Contains(b.Adm, `="http://`+bidderHost) {
				t.Errorf("%s %s: the creative still names the bidder: %q", proxy, slot, b.Adm)
			}
			resp, err := noRedirect.Get(src)
			if err != nil {
				t.Fatal(err)
			}
			svg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(svg), "<svg") {
				t.Errorf("%s %s: the badge through the proxy: %d %q", proxy, slot, resp.StatusCode, svg)
			}
			resp, err = noRedirect.Get(href)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, "http://"+bidderHost+demo.LandingPath) {
				t.Errorf("%s %s: the click: %d to %q, want 302 to the bidder's landing page", proxy, slot, resp.StatusCode, loc)
			}
		}
	}
}
