package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/testutil"
)

// reactModules is the directory whose node_modules hold react@19.1.0 and
// react-dom@19.1.0 (SSATD_REACT, which .ci/run installs).
func reactModules(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SSATD_REACT")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "react-dom", "package.json")); dir == "" || err != nil {
		testutil.SkipOrFail(t, "SSATD_REACT does not name a directory with node_modules/react-dom "+
			"(npm install --prefix DIR react@19.1.0 react-dom@19.1.0)")
	}
	return dir
}

// reactApp is the page's React app, shared by the server render (node) and
// the client's hydration. As a Next.js App Router app it renders the whole
// document, and its script is added at DOMContentLoaded (Next.js's chunks
// load async), so React hydrates after that. It has a counter that
// re-renders the slot's parent and a button that remounts the slot's
// element with a new key, as a client navigation that keeps the layout
// does. The slot is an empty element the app renders, as a publisher's ad
// component renders its container; its effect counts the commits that
// hydrated or rendered it. The story before the slot has 100 blocks that
// take about 2 ms each to render, a slow device's hydration, with kind
// "slow-root" in the root and with "slow-boundary" in a Suspense boundary
// that holds the slot too (React hydrates a boundary after the root).
const reactApp = `
function makeApp(React, kind) {
  var h = React.createElement;
  var loader = 'document.addEventListener("DOMContentLoaded", function () {' +
    ' var s = document.createElement("script"); s.src = "/app.js"; document.head.appendChild(s); });';
  function Ad() {
    React.useEffect(function () { window.__adCommits = (window.__adCommits || 0) + 1; }, []);
    return h("div", { id: "ad-top", className: "ad" });
  }
  function Block(p) { for (var end = Date.now() + 2; Date.now() < end; ); return h("p", null, "block " + p.i); }
  function Story() {
    var out = [];
    for (var i = 0; i < 100; i++) out.push(h(Block, { key: i, i: i }));
    return h("section", null, out);
  }
  return function App() {
    var c = React.useState(0), r = React.useState(0), ad = h(Ad, { key: "ad-" + r[0] });
    var slot = kind === "slow-boundary" ? h(React.Suspense, { fallback: null }, h(Story), ad) :
      kind === "slow-root" ? [h(Story, { key: "story" }), ad] : ad;
    return h("html", null,
      h("head", null, h("meta", { charSet: "utf-8" }), h("link", { rel: "icon", href: "data:," }), h("title", null, "React")),
      h("body", null,
        h("main", null,
          h("h1", null, "A React page"),
          h("button", { id: "count", onClick: function () { c[1](c[0] + 1); } }, "clicked " + c[0]),
          h("button", { id: "remount", onClick: function () { r[1](r[0] + 1); } }, "remount"),
          slot,
          h("p", null, "The story.")),
        h("script", { dangerouslySetInnerHTML: { __html: loader } })));
  };
}
`

// reactServerRender prints the app's document as react-dom/server renders it.
const reactServerRender = `
const req = require('module').createRequire(process.argv[1] + '/');
const React = req('react'), server = req('react-dom/server');
` + reactApp + `
process.stdout.write('<!DOCTYPE html>' + server.renderToString(React.createElement(makeApp(React, process.argv[2]))));
`

// reactClientScript is the client: React's own production CommonJS builds
// (React 19 ships no browser bundle), each wrapped as a module of a
// require the script defines, then hydrateRoot of the document in a
// transition, as Next.js hydrates (next.js,
// packages/next/src/client/app-index.tsx, hydrate): a transition's
// hydration yields to the browser between slices of work. An error React
// reports (a hydration mismatch goes to window.reportError, React 19's
// default onRecoverableError) or logs is kept in window.__errors as it
// happens.
func reactClientScript(t *testing.T, dir, kind string) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("(function () {\nwindow.__errors = [];\n" +
		"window.addEventListener('error', function (e) { window.__errors.push('error: ' + e.message); });\n" +
		"var logError = console.error; console.error = function () { window.__errors.push('console.error: ' + Array.prototype.join.call(arguments, ' ')); return logError.apply(console, arguments); };\n" +
		"var defs = {};\n")
	for _, m := range []struct{ name, file string }{
		{"react", "react/cjs/react.production.js"},
		{"scheduler", "scheduler/cjs/scheduler.production.js"},
		{"react-dom", "react-dom/cjs/react-dom.production.js"},
		{"react-dom/client", "react-dom/cjs/react-dom-client.production.js"},
	} {
		src, err := os.ReadFile(filepath.Join(dir, "node_modules", m.file))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("defs[" + `"` + m.name + `"` + "] = function (module, exports, require) {\n")
		b.Write(src)
		b.WriteString("\n};\n")
	}
	b.WriteString(`var cache = {};
function require(name) {
  if (cache[name]) return cache[name].exports;
  var m = cache[name] = { exports: {} };
  defs[name](m, m.exports, require);
  return m.exports;
}
var React = require("react"), client = require("react-dom/client");
` + reactApp + `
React.startTransition(function () { client.hydrateRoot(document, React.createElement(makeApp(React, "` + kind + `"))); });
})();
`)
	return b.Bytes()
}

// reactOrigin serves the app's server-rendered document and its client
// script.
func reactOrigin(t *testing.T, kind string) *httptest.Server {
	t.Helper()
	dir := reactModules(t)
	node := testutil.RequireTool(t, "node", "nodejs")
	cmd := exec.Command(node, "-e", reactServerRender, filepath.Join(dir, "node_modules"), kind)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	page, err := cmd.Output()
	if err != nil {
		t.Fatalf("server render: %v: %s", err, stderr.String())
	}
	if !bytes.Contains(page, []byte(`<div id="ad-top" class="ad"></div>`)) {
		t.Fatalf("the server render has no empty slot element: %s", page)
	}
	app := reactClientScript(t, dir, kind)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(page)
		case "/app.js":
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			_, _ = w.Write(app)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

const reactCreative = `<p id="creative">REACT-SLOT-CREATIVE</p>`

// reactSlot is what the page says of its slot: the creative in #ad-top,
// whether that element is the one marked before, the commits of the slot's
// component, the counter's text and the errors logged.
type reactSlot struct {
	Creative  bool     `json:"creative"`
	Marked    bool     `json:"marked"`
	AdCommits int      `json:"adCommits"`
	Count     string   `json:"count"`
	Errors    []string `json:"errors"`
}

const reactSlotJS = `(function () {
	var el = document.getElementById("ad-top"), f = el && el.querySelector("iframe");
	return { creative: !!(f && f.srcdoc.indexOf("REACT-SLOT-CREATIVE") >= 0), marked: !!(el && el.__marked),
		adCommits: window.__adCommits || 0, count: (document.getElementById("count") || {}).textContent || "",
		errors: window.__errors || [] };
})()`

// TestReactHydrationKeepsTheCreative catches the bundle filling a slot
// that React renders before React hydrated it: React found the creative an
// extra child (error #418), rendered the root anew and the creative was
// gone. Through ssatd in Chromium, a React 19 page hydrated as Next.js
// hydrates keeps its creative with no error logged, with a quick
// hydration, with one that outlasts the load event's two frames, and with
// the slot in a Suspense boundary that hydrates after them; a state change
// that re-renders the slot's parent keeps it, and a remount that replaces
// the slot's element gets it again.
func TestReactHydrationKeepsTheCreative(t *testing.T) {
	browser := startBrowser(t)
	for _, kind := range []string{"fast", "slow-root", "slow-boundary"} {
		t.Run(kind, func(t *testing.T) { reactPageKeepsCreative(t, browser, kind) })
	}
}

func reactPageKeepsCreative(t *testing.T, browser context.Context, kind string) {
	origin := reactOrigin(t, kind)
	front := measureDaemon(t, origin.URL, func(c *config.Config) {
		c.CreativeOpportunities.Slots = []config.Slot{{ID: "ad-top", PagePatterns: []string{"/**"}, Formats: [][]int{{300, 250}}}}
		c.Auction.Provider = config.AuctionProviderStatic
		c.Auction.StaticBids = []config.StaticBid{{SlotID: "ad-top", HbPb: "1.00", HbBidder: "static", W: 300, H: 250, HbAdid: "r1", Adm: reactCreative}}
	})
	ev := &pageEvents{url: front.URL + "/"}
	tabCtx, cancel := chromedp.NewContext(browser, chromedp.WithListener(ev.listen))
	defer cancel()
	if err := chromedp.Do(tabCtx, chromedp.Navigate(ev.url)); err != nil {
		t.Fatal(err)
	}
	state := func() reactSlot {
		t.Helper()
		got, err := chromedp.Run(tabCtx, chromedp.Evaluate[reactSlot](reactSlotJS))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	wait := func(cond, what string) {
		t.Helper()
		if _, err := chromedp.Run(tabCtx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			t.Fatalf("%s: %v; the page: %+v", what, err, state())
		}
	}

	// The slot's element has been hydrated (or rendered anew after a
	// mismatch, which reports the error first) and the bundle has rendered.
	wait(`window.__adCommits >= 1 && window.tsjs && window.tsjs.rendered === true`, "hydration and the first render")
	if got := state(); !got.Creative || got.AdCommits != 1 || len(got.Errors) != 0 {
		t.Fatalf("after hydration: %+v; want the creative in #ad-top, no error", got)
	}

	// A re-render of the slot's parent leaves the slot's children alone.
	if _, err := chromedp.Run(tabCtx, chromedp.Evaluate[bool](`document.getElementById("ad-top").__marked = true`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tabCtx, chromedp.Click("#count")); err != nil {
		t.Fatal(err)
	}
	wait(`document.getElementById("count").textContent === "clicked 1"`, "the counter's re-render")
	if got := state(); !got.Creative || !got.Marked || len(got.Errors) != 0 {
		t.Fatalf("after a re-render: %+v; want the creative in the same element, no error", got)
	}

	// A remount replaces the element: the creative is rendered again in it.
	if err := chromedp.Do(tabCtx, chromedp.Click("#remount")); err != nil {
		t.Fatal(err)
	}
	wait(`(function () { var el = document.getElementById("ad-top"); return !el.__marked && !!el.querySelector("iframe"); })()`, "the remounted slot's creative")
	if got := state(); !got.Creative || got.Marked || got.AdCommits != 2 || len(got.Errors) != 0 {
		t.Fatalf("after a remount: %+v; want the creative in the new element, no error", got)
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if len(ev.errors) != 0 {
		t.Errorf("the page logged errors: %q", ev.errors)
	}
}
