package ssatdtest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ssatd/ssatd/internal/testutil"
	"github.com/ssatd/ssatd/ssatdtest"
)

// In Chromium, a page served by ssatd under a Trusted Server file renders
// the winning creative (the built-in bundle's sandboxed frame) with its
// image and pixel loaded through /first-party/proxy: the ad server sees
// only the daemon's fetches, never the browser, and the pixel carries the
// clearing price.
func TestWinningCreativeIsFirstPartyInChromium(t *testing.T) {
	bin := testutil.RequireTool(t, "chromium", "chromium-browser", "google-chrome")
	ad := startAdServer(t)
	origin := startOrigin(t, page)
	bidder := ssatdtest.NewBidder(t, ssatdtest.Answer{Offers: []ssatdtest.Offer{
		{Slot: "atf", Seat: "alpha", Price: "2.35", Creative: ad.creative()}}})
	srv := ssatdtest.Start(t, tsFirstPartyConfig(origin.URL, strings.TrimSuffix(bidder.URL, ssatdtest.AuctionPath)))
	ctx := startChromium(t, bin)

	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/news/a")); err != nil {
		t.Fatal(err)
	}
	srcdoc, err := chromedp.Run(ctx, chromedp.Poll[string](`(document.querySelector("#ad-atf iframe") || {}).srcdoc`,
		chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatalf("no creative frame: %v", err)
	}
	if !strings.Contains(srcdoc, srv.URL+"/first-party/proxy?tsurl=") || strings.Contains(srcdoc, `src="`+ad.URL) {
		t.Errorf("the frame's creative is not first party: %s", srcdoc)
	}
	// The image and the pixel, each fetched once by the daemon.
	deadline := time.After(20 * time.Second)
	for want := 2; len(ad.log()) < want; {
		select {
		case <-ad.fetched:
		case <-deadline:
			t.Fatalf("the creative's image and pixel were not fetched: %q", ad.log())
		}
	}
	for _, s := range ad.log() {
		if !strings.HasPrefix(s, "proxy ") {
			t.Errorf("the browser went to the ad server itself: %s (all: %q)", s, ad.log())
		}
	}
	ad.mu.Lock()
	defer ad.mu.Unlock()
	if strings.Join(ad.prices, " ") != "2.35" {
		t.Errorf("pixel prices %q, want 2.35", ad.prices)
	}
}

func startChromium(t *testing.T, bin string) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()))
	t.Cleanup(cancelAlloc)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	return browserCtx
}
