package main

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/ssatd/ssatd/internal/demo"
	"github.com/ssatd/ssatd/internal/measure/chromium"
	"github.com/ssatd/ssatd/internal/testutil"
)

// screenshotDir is where the browser test writes its screenshots: the
// test's temporary folder, removed afterwards, or the folder that
// SSATD_SCREENSHOTS names, created if it does not exist.
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("SSATD_SCREENSHOTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("SSATD_SCREENSHOTS: %v", err)
	}
	return dir
}

func TestScreenshotDirIsCreated(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet")
	t.Setenv("SSATD_SCREENSHOTS", dir)
	if got := screenshotDir(t); got != dir {
		t.Fatalf("screenshotDir = %q, want %q", got, dir)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("SSATD_SCREENSHOTS=%s was not created: %v", dir, err)
	}
}

type renderedPage struct {
	Slots       []string        `json:"slots"`
	Frames      []renderedFrame `json:"frames"`
	Adms        []string        `json:"adms"`
	StateCount  string          `json:"stateCount"`
	TeaserCount string          `json:"teaserCount"`
	Proto       string          `json:"proto"`       // the document's nextHopProtocol
	BundleProto string          `json:"bundleProto"` // the bundle script's
}

// startBrowser starts headless Chromium, with extra flags, for the rest of
// the test, as measure -browser starts it (chromium.Start: the same
// flags, and a failed launch, which says nothing of the demo, tried again).
func startBrowser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	bin := testutil.RequireTool(t, "chromium", "chromium-browser", "google-chrome")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	browserCtx, _, stop, err := chromium.Start(ctx, bin, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return browserCtx
}

// TestDemoInBrowser loads the demo pages in headless Chromium through both
// proxies over plain HTTP/1.1 (see browseDemo).
func TestDemoInBrowser(t *testing.T) {
	d := startTestDemo(t)
	browseDemo(t, startBrowser(t), d, "", "http/1.1")
}

// TestDemoInBrowserOverTLS loads the pages of `ssatd demo -tls` as
// TestDemoInBrowser does: the document and the bundle arrive over HTTP/2.
// Chromium trusts exactly the demo's certificate: its public key is pinned
// with --ignore-certificate-errors-spki-list (honoured with a
// --user-data-dir), and a server with another certificate still fails.
func TestDemoInBrowserOverTLS(t *testing.T) {
	d := startTestDemoWith(t, demoOptions{tls: true, certDir: t.TempDir()})
	certPEM, err := os.ReadFile(d.certs.Cert)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatalf("%s holds no PEM block", d.certs.Cert)
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	spki := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	browserCtx := startBrowser(t, chromedp.Flag("ignore-certificate-errors-spki-list", base64.StdEncoding.EncodeToString(spki[:])))

	other := httptest.NewUnstartedServer(http.NotFoundHandler())
	other.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	other.StartTLS()
	tabCtx, cancelTab := chromedp.NewContext(browserCtx)
	err = chromedp.Do(tabCtx, chromedp.Navigate(other.URL))
	cancelTab()
	other.Close()
	if err == nil || !strings.Contains(err.Error(), "ERR_CERT_AUTHORITY_INVALID") {
		t.Fatalf("a certificate other than the demo's: %v, want net::ERR_CERT_AUTHORITY_INVALID", err)
	}
	browseDemo(t, browserCtx, d, "tls-", "h2")
}

// browseDemo loads the home and an article page of d through both proxies
// in the browser: the page and the bundle arrive over proto (the
// navigation's nextHopProtocol), the bundle renders the demo bids into the
// slots, window.tsjs has the matched slots, the document arrives br-encoded
// from the offload proxy and in the origin's coding from the mirror proxy,
// and the page logs no error. Screenshots are named with shotPrefix.
func browseDemo(t *testing.T, browserCtx context.Context, d *demoRun, shotPrefix, proto string) {
	t.Helper()
	shots := screenshotDir(t)

	// Each slot's winning bid as the bundle renders it: a sandboxed iframe
	// of the bid's size, its container naming seat and price bucket. The
	// demo bidder's prices are fixed (demo.DemoPrice): the winners are
	// top-leaderboard demo-gamma 2.456, home-mpu demo-beta 3.890,
	// article-mpu demo-beta 3.911 and sidebar-sky demo-gamma 4.089, floored
	// by the dense granularity (cents up to 3.00, then 0.05 steps).
	type winner struct{ seat, w, h, pb string }
	wantBid := map[string]winner{
		"top-leaderboard": {"demo-gamma", "728", "90", "2.45"},
		"home-mpu":        {"demo-beta", "300", "250", "3.85"},
		"article-mpu":     {"demo-beta", "300", "250", "3.90"},
		"sidebar-sky":     {"demo-gamma", "160", "600", "4.05"},
	}
	divOf := map[string]string{}
	for _, s := range demo.Slots() {
		divOf[s.ID] = s.DivID
	}
	pages := map[string][]string{ // path → the slots that match it
		"/":                    {"top-leaderboard", "home-mpu", "sidebar-sky"},
		demo.ArticlePaths()[0]: {"top-leaderboard", "article-mpu", "sidebar-sky"},
	}
	originCoding := "gzip" // what the demo origin sends for Chromium's Accept-Encoding
	for _, proxy := range []struct{ name, base, coding string }{
		{"mirror", d.mirrorURL, originCoding},
		{"offload", d.offloadURL, "br"},
	} {
		for path, slots := range pages {
			name := proxy.name + "-home"
			if path != "/" {
				name = proxy.name + "-article"
			}
			t.Run(name, func(t *testing.T) {
				ev := &pageEvents{url: proxy.base + path}
				tabCtx, cancelTab := chromedp.NewContext(browserCtx, chromedp.WithListener(ev.listen))
				defer cancelTab()
				// Without the HTTP cache, each page fetches its bundle: its
				// protocol is known whichever page loads first.
				if _, err := chromedp.Call(tabCtx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
					t.Fatal(err)
				}
				if err := chromedp.Do(tabCtx, chromedp.Navigate(ev.url)); err != nil {
					t.Fatalf("navigate %s: %v", ev.url, err)
				}
				if _, err := chromedp.Run(tabCtx, chromedp.Poll[bool](`window.tsjs && window.tsjs.rendered === true`,
					chromedp.WithPollingTimeout(20*time.Second))); err != nil {
					t.Fatalf("the bundle did not render the slots: %v", err)
				}
				got, err := chromedp.Run(tabCtx, chromedp.Evaluate[renderedPage](`({
					slots: (window.tsjs.adSlots || []).map(function (s) { return s.id; }),
					frames: `+framesJS+`,
					adms: Object.keys(window.tsjs.bids || {}).sort().map(function (k) { return window.tsjs.bids[k].hb_adid + " " + window.tsjs.bids[k].adm; }),
					stateCount: (document.getElementById("state-count") || {}).textContent || "",
					teaserCount: (document.getElementById("teaser-count") || {}).textContent || "",
					proto: performance.getEntriesByType("navigation")[0].nextHopProtocol,
					bundleProto: performance.getEntriesByType("resource").filter(function (r) { return r.name.indexOf("/static/tsjs=") >= 0; })
						.map(function (r) { return r.nextHopProtocol; }).join(" ")
				})`))
				if err != nil {
					t.Fatal(err)
				}
				if got.Proto != proto || got.BundleProto != proto {
					t.Errorf("nextHopProtocol: page %q, bundle %q; want %q", got.Proto, got.BundleProto, proto)
				}
				if !reflect.DeepEqual(got.Slots, slots) {
					t.Errorf("window.tsjs.adSlots ids = %q, want %q", got.Slots, slots)
				}
				if len(got.Frames) != len(slots) {
					t.Errorf("%d creatives rendered, want %d: %+v", len(got.Frames), len(slots), got.Frames)
				}
				for i, f := range got.Frames {
					if i >= len(slots) {
						break
					}
					w := wantBid[slots[i]]
					if f.Div != divOf[slots[i]] || f.W != w.w || f.H != w.h || f.Sandbox != creativeSandbox ||
						!strings.HasPrefix(f.Bid, w.seat+" ") || !strings.HasSuffix(f.Bid, " "+w.pb) ||
						!strings.Contains(f.Srcdoc, w.seat+" · "+slots[i]+" · "+w.w+"x"+w.h) {
						t.Errorf("creative %d = %+v, want slot %s's %s bid in #%s, %sx%s, sandboxed", i, f, slots[i], w.seat, divOf[slots[i]], w.w, w.h)
					}
				}
				// The bids came through the OpenRTB exchange: the demo
				// bidder's bid ids and creatives.
				if len(got.Adms) != len(slots) {
					t.Errorf("window.tsjs.bids has %d bids, want %d: %q", len(got.Adms), len(slots), got.Adms)
				}
				for _, a := range got.Adms {
					if !strings.HasPrefix(a, "demo-") || !strings.Contains(a, "via OpenRTB</div>") {
						t.Errorf("bid %q did not come from the demo bidder", a)
					}
				}
				if path == "/" && (got.StateCount == "0" || got.TeaserCount == "0") {
					t.Errorf("the page's own scripts did not run: state %q, teasers %q", got.StateCount, got.TeaserCount)
				}
				shot, err := chromedp.Run(tabCtx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				file := filepath.Join(shots, shotPrefix+name+".png")
				if err := os.WriteFile(file, shot, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("screenshot: %s", file)

				ev.mu.Lock()
				defer ev.mu.Unlock()
				if ev.document == nil {
					t.Fatalf("no document response for %s", ev.url)
				}
				if ev.document.Status != http.StatusOK {
					t.Errorf("document status %d", ev.document.Status)
				}
				if ce := headerValue(ev.document.Headers, "Content-Encoding"); ce != proxy.coding {
					t.Errorf("document content-encoding %q, want %q (headers %v)", ce, proxy.coding, ev.document.Headers)
				}
				if cc := headerValue(ev.document.Headers, "Cache-Control"); cc != "private, max-age=0" {
					t.Errorf("document cache-control %q", cc)
				}
				if len(ev.errors) > 0 {
					t.Errorf("the page reported errors:\n%s", strings.Join(ev.errors, "\n"))
				}
			})
		}
	}

	// Two proxies, two pages: each page view was one OpenRTB request.
	if n := d.bidder.Requests(); n != 4 {
		t.Errorf("the demo bidder received %d bid requests, want 4", n)
	}

	// The mirror proxy's coding is the origin's: ask the origin directly
	// with Chromium's Accept-Encoding.
	resp, _ := navigate(t, d.originURL+"/", "gzip, deflate, br, zstd")
	if ce := resp.Header.Get("Content-Encoding"); ce != originCoding {
		t.Errorf("the origin sends %q for a browser, the test expected %q through the mirror proxy", ce, originCoding)
	}
}
