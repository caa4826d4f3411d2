package main

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/ssatd/ssatd/internal/demo"
	"github.com/ssatd/ssatd/internal/testutil"
)

// callbackRequests records the tsjs callbacks a tab sent.
type callbackRequests struct {
	mu       sync.Mutex
	auction  []*network.Request
	pageBids []*network.Request
}

func (c *callbackRequests) listen(ev any) {
	r, ok := ev.(*network.EventRequestWillBeSent)
	if !ok || r.Request == nil {
		return
	}
	u, err := url.Parse(r.Request.URL)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch u.Path {
	case "/auction":
		c.auction = append(c.auction, r.Request)
	case "/_ts/page-bids", "/__ts/page-bids":
		c.pageBids = append(c.pageBids, r.Request)
	}
}

// spaState is what the test reads of the page after each step.
type spaState struct {
	Path      string          `json:"path"`
	Source    string          `json:"source"`
	Count     int             `json:"count"`
	Slots     []string        `json:"slots"`
	Frames    []renderedFrame `json:"frames"`
	NoReload  bool            `json:"noReload"`
	ViewTitle string          `json:"viewTitle"`
	// The app's navigation as rendered: the view marked current, and
	// whether its tabs are styled (a border) and sit in one row.
	CurrentTab string `json:"currentTab"`
	TabBorder  string `json:"tabBorder"`
	TabsInRow  bool   `json:"tabsInRow"`
	Footer     string `json:"footer"`
}

const spaStateJS = `({
	path: location.pathname,
	source: window.tsjs.lastRender ? window.tsjs.lastRender.source : "",
	count: window.tsjs.renderCount || 0,
	slots: (window.tsjs.adSlots || []).map(function (s) { return s.id; }),
	frames: ` + framesJS + `,
	noReload: window.__spaTestMarker === 1,
	viewTitle: (document.getElementById("spa-title") || {}).textContent || "",
	currentTab: (document.querySelector('a[data-spa][aria-current="page"]') || {}).pathname || "",
	tabBorder: getComputedStyle(document.querySelector("a[data-spa]")).borderTopStyle,
	tabsInRow: (function () {
		var tops = Array.prototype.map.call(document.querySelectorAll("a[data-spa]"), function (a) { return a.getBoundingClientRect().top; });
		return tops.length > 1 && tops.every(function (t) { return t === tops[0]; });
	})(),
	footer: document.querySelector(".site-footer").textContent
})`

// TestDemoSPAInBrowser drives the demo's single-page app in headless
// Chromium with the built-in bundle: a refresh (tsjs.requestAds, POST
// /auction) and an SPA navigation (pushState, then popstate; GET
// /_ts/page-bids) each render bids the page did not have, in sandboxed
// iframes, without reloading the page.
func TestDemoSPAInBrowser(t *testing.T) {
	bin := testutil.RequireTool(t, "chromium", "chromium-browser", "google-chrome")
	d := startTestDemo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1280, 1000), chromedp.UserDataDir(t.TempDir()))
	defer cancelAlloc()
	ev := &pageEvents{url: d.offloadURL + demo.SPAPath}
	cb := &callbackRequests{}
	tab, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithListener(func(e any) { ev.listen(e); cb.listen(e) }))
	defer cancelTab()
	if err := chromedp.Do(tab, chromedp.Navigate(ev.url)); err != nil {
		t.Fatalf("navigate %s: %v", ev.url, err)
	}
	story := demo.SPAPaths()[1]
	wait := func(step, cond string) spaState {
		t.Helper()
		if _, err := chromedp.Run(tab, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		st, err := chromedp.Run(tab, chromedp.Evaluate[spaState](spaStateJS))
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		return st
	}
	first := wait("first view", `window.tsjs && window.tsjs.rendered === true`)
	if _, err := chromedp.Run(tab, chromedp.Evaluate[int](`window.__spaTestMarker = 1`)); err != nil {
		t.Fatal(err)
	}
	checkFrames(t, "first view", first, "initial", []string{"top-leaderboard"})
	// The navigation is tabs in a row, the view shown marked, and the
	// footer counts nothing the app does not have (it said "0 stories on
	// this page, 0 in the page state").
	if first.CurrentTab != demo.SPAPath || first.TabBorder != "solid" || !first.TabsInRow || strings.Contains(first.Footer, "stories") {
		t.Errorf("first view: current tab %q, tab border %q, tabs in a row %v, footer %q", first.CurrentTab, first.TabBorder, first.TabsInRow, first.Footer)
	}

	// Refresh: requestAds renders new bids in the same slots.
	if err := chromedp.Do(tab, chromedp.Click("#spa-refresh")); err != nil {
		t.Fatal(err)
	}
	refreshed := wait("refresh", `window.tsjs.lastRender && window.tsjs.lastRender.source === "auction"`)
	checkFrames(t, "refresh", refreshed, "auction", []string{"top-leaderboard"})
	newBids(t, "refresh", first, refreshed)

	// Navigation: pushState to a story view renders its slots' bids.
	if err := chromedp.Do(tab, chromedp.Click(`a[data-spa][href$="`+story+`"]`)); err != nil {
		t.Fatal(err)
	}
	navigated := wait("navigation", `window.tsjs.lastRender.source === "page-bids" && location.pathname === "`+story+`"`)
	checkFrames(t, "navigation", navigated, "page-bids", []string{"top-leaderboard", "spa-mpu"})
	if navigated.CurrentTab != story {
		t.Errorf("after navigation the current tab is %q, want %q", navigated.CurrentTab, story)
	}
	newBids(t, "navigation", refreshed, navigated)

	// Back: popstate re-auctions the first view.
	if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](`history.back(), true`)); err != nil {
		t.Fatal(err)
	}
	back := wait("back", `window.tsjs.lastRender.path === "`+demo.SPAPath+`" && window.tsjs.renderCount > `+jsInt(navigated.Count))
	checkFrames(t, "back", back, "page-bids", []string{"top-leaderboard"})
	newBids(t, "back", navigated, back)
	if !back.NoReload || back.ViewTitle != "Live desk" || back.CurrentTab != demo.SPAPath {
		t.Errorf("after back: the page reloaded (%v) or the view is %q, tab %q", !back.NoReload, back.ViewTitle, back.CurrentTab)
	}

	// Each step was one auction at the demo bidder, and the callbacks
	// spoke tsjs's wire format.
	if n := d.bidder.Requests(); n != 4 {
		t.Errorf("the demo bidder received %d bid requests, want 4 (first view, refresh, navigation, back)", n)
	}
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if len(cb.auction) != 1 || len(cb.pageBids) != 2 {
		t.Fatalf("%d /auction and %d page-bids requests, want 1 and 2", len(cb.auction), len(cb.pageBids))
	}
	a := cb.auction[0]
	var body struct {
		AdUnits []struct {
			Code       string `json:"code"`
			MediaTypes struct {
				Banner struct {
					Sizes [][]int `json:"sizes"`
				} `json:"banner"`
			} `json:"mediaTypes"`
			Bids []any `json:"bids"`
		} `json:"adUnits"`
		Config map[string]any `json:"config"`
	}
	var raw []byte // the protocol's base64, decoded by the []byte field
	for _, e := range a.PostDataEntries {
		raw = append(raw, e.Bytes...)
	}
	if a.Method != "POST" || headerValue(a.Headers, "Content-Type") != "application/json" || !a.HasPostData {
		t.Errorf("/auction request %s %v", a.Method, a.Headers)
	}
	if err := json.Unmarshal(raw, &body); err != nil || len(body.AdUnits) != 1 ||
		body.AdUnits[0].Code != "top-leaderboard" || len(body.AdUnits[0].MediaTypes.Banner.Sizes) != 2 || body.AdUnits[0].Bids == nil || body.Config == nil {
		t.Errorf("/auction body %s (%v): %+v", raw, err, body)
	}
	for i, want := range []string{story, demo.SPAPath} {
		r := cb.pageBids[i]
		u, _ := url.Parse(r.URL)
		if u.Path != "/_ts/page-bids" || u.Query().Get("path") != want || headerValue(r.Headers, "X-TSJS-Page-Bids") != "1" {
			t.Errorf("page-bids request %d: %s %v", i, r.URL, r.Headers)
		}
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if len(ev.errors) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(ev.errors, "\n"))
	}
}

// checkFrames: the step rendered one sandboxed creative per slot, sized to
// its bid, from the demo bidder.
func checkFrames(t *testing.T, step string, st spaState, source string, slots []string) {
	t.Helper()
	if st.Source != source || strings.Join(st.Slots, ",") != strings.Join(slots, ",") || len(st.Frames) != len(slots) {
		t.Fatalf("%s: source %q, slots %q, %d creatives; want %q, %q: %+v", step, st.Source, st.Slots, len(st.Frames), source, slots, st)
	}
	for i, f := range st.Frames {
		if f.Sandbox != creativeSandbox || f.W == "" || f.H == "" || !strings.Contains(f.Srcdoc, slots[i]+" · "+f.W+"x"+f.H) ||
			!strings.Contains(f.Srcdoc, "via OpenRTB") || !strings.HasPrefix(f.Bid, "demo-") {
			t.Errorf("%s: creative %d = %+v", step, i, f)
		}
	}
}

// newBids: every creative after the step comes from a later auction than
// any before it (the demo bidder's bid ids and captions name the auction).
func newBids(t *testing.T, step string, before, after spaState) {
	t.Helper()
	if after.Count <= before.Count {
		t.Errorf("%s: render count %d, was %d", step, after.Count, before.Count)
	}
	old := map[string]bool{}
	for _, f := range before.Frames {
		old[f.Bid] = true
	}
	for _, f := range after.Frames {
		if old[f.Bid] {
			t.Errorf("%s: creative %q was already shown before", step, f.Bid)
		}
	}
}

func jsInt(n int) string { b, _ := json.Marshal(n); return string(b) }
