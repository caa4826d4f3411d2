package rewrite

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/net/html/charset"

	"github.com/ssatd/ssatd/internal/ssat"

	"github.com/ssatd/ssatd/internal/testutil"
)

// browserOrSkip returns a Chromium binary. Without one the test skips,
// except under SSATD_STRICT=1, where a missing tool fails the run.
func browserOrSkip(t *testing.T) string {
	t.Helper()
	return testutil.RequireTool(t, "chromium", "chromium-browser", "google-chrome")
}

// charsetPage is an origin page in one charset. native is text written in
// that charset by the origin itself: it shows that the browser decoded the
// page with it.
type charsetPage struct {
	label, native string
}

// Regression (issue 18, "injected scripts are UTF-8 in pages that are
// not"): in a page served as iso-8859-1 a bid's adm "Café €5" showed as
// "CafÃ© â‚¬5". The page is rewritten by Rewrite with the real slot and bid
// scripts and loaded in headless Chromium over loopback HTTP.
func TestInjectedTextRightInLegacyCharsetsInBrowser(t *testing.T) {
	bin := browserOrSkip(t)
	const adm = "Café €5"
	pages := []charsetPage{
		{"iso-8859-1", "Crème brûlée"},
		{"windows-1252", "Prix: 5 €, “quoted”"},
		{"shift_jis", "日本語のページ"},
	}
	slots, err := AdSlotsScript([]ssat.Slot{{ID: "top", DivID: "ad", Formats: [][]int{{300, 250}}, Targeting: map[string]any{"section": "Café"}}})
	if err != nil {
		t.Fatal(err)
	}
	bids, err := BidsScript(map[string]ssat.Bid{"top": {Adm: "<span>" + adm + "</span>", W: 300, H: 250}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(BundlePath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
	})
	for _, p := range pages {
		enc, _ := charset.Lookup(p.label)
		if enc == nil {
			t.Fatalf("no encoding %q", p.label)
		}
		native, err := enc.NewEncoder().String(p.native)
		if err != nil {
			t.Fatalf("%s: %v", p.label, err)
		}
		origin := "<!DOCTYPE html><html><head><title>t</title></head><body><p id=native>" + native +
			`</p><div id=ad></div><script>document.addEventListener("DOMContentLoaded",function(){` +
			`document.getElementById("ad").innerHTML=window.tsjs.bids.top.adm})</script></body></html>`
		mux.HandleFunc("/"+p.label, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset="+p.label)
			opts := &Options{HeadPrepend: append(append([]byte{}, slots...), BundleTag("0123")...), BodyEnd: func() []byte { return bids }}
			if _, err := Rewrite(w, strings.NewReader(origin), opts); err != nil {
				t.Errorf("rewrite: %v", err)
			}
		})
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()

	browserCtx := startChromium(t, bin)
	for _, p := range pages {
		t.Run(p.label, func(t *testing.T) {
			tab, cancelTab := chromedp.NewContext(browserCtx)
			defer cancelTab()
			type shown struct {
				Charset string `json:"charset"`
				Native  string `json:"native"`
				Ad      string `json:"ad"`
				Section string `json:"section"`
			}
			if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/"+p.label)); err != nil {
				t.Fatal(err)
			}
			if _, err := chromedp.Run(tab, chromedp.Poll[bool](`document.querySelector("#ad span") !== null`,
				chromedp.WithPollingTimeout(20*time.Second))); err != nil {
				t.Fatalf("the page did not render the bid: %v", err)
			}
			got, err := chromedp.Run(tab, chromedp.Evaluate[shown](`({charset: document.characterSet,
				native: document.getElementById("native").textContent,
				ad: document.getElementById("ad").textContent,
				section: window.tsjs.adSlots[0].targeting.section})`))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.EqualFold(got.Charset, canonicalCharset(p.label)) || got.Native != p.native {
				t.Fatalf("the browser did not read the page as %s: %+v", p.label, got)
			}
			if got.Ad != adm || got.Section != "Café" {
				t.Errorf("injected text shows as ad %q, section %q; want %q, %q", got.Ad, got.Section, adm, "Café")
			}
		})
	}
}

// canonicalCharset is document.characterSet for a label: the WHATWG
// Encoding Standard reads iso-8859-1 as windows-1252.
func canonicalCharset(label string) string {
	if label == "iso-8859-1" {
		return "windows-1252"
	}
	return label
}

// startChromium starts headless Chromium for the rest of the test (the
// browser tests of internal/proxy start it the same way; measure's
// launcher cannot serve here, since measure imports this package).
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
