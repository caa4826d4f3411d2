package proxy

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/ssatd/ssatd/internal/bundle"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/server"
	"github.com/ssatd/ssatd/internal/testutil"
)

// sveltekitDir is the adapter-node build of testdata/sveltekit-csp
// (SSATD_SVELTEKIT: a copy of testdata/sveltekit-csp, installed and built there by .ci/run). Without it the test skips, and
// fails under SSATD_STRICT=1.
func sveltekitDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SSATD_SVELTEKIT")
	if dir == "" {
		testutil.SkipOrFail(t, "SSATD_SVELTEKIT does not name the build of internal/proxy/testdata/sveltekit-csp (see README, \"Test it\")")
		return ""
	}
	if _, err := os.Stat(filepath.Join(dir, "build", "index.js")); err != nil {
		testutil.SkipOrFail(t, "SSATD_SVELTEKIT=%s holds no adapter-node build: %v", dir, err)
	}
	return dir
}

// startSvelteKit runs the app's adapter-node server on a Unix socket and
// returns a transport that reaches it whatever host a request names:
// SvelteKit prerenders with the origin http://sveltekit-prerender, which
// is the guest's origin_url here, so that the origin the pages name is
// the one the guest rewrites.
func startSvelteKit(t *testing.T, dir string) *http.Transport {
	t.Helper()
	node := testutil.RequireTool(t, "node", "nodejs")
	sock := filepath.Join(t.TempDir(), "sveltekit.sock")
	cmd := exec.Command(node, filepath.Join(dir, "build", "index.js"))
	cmd.Env = append(os.Environ(), "SOCKET_PATH="+sock, "ORIGIN="+svelteOrigin)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	// adapter-node says "Listening on <socket>" once it listens.
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if strings.Contains(lines.Text(), "Listening on") {
			break
		}
	}
	go func() { // drain, so the server never blocks on its output
		for lines.Scan() {
		}
	}()
	return &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
		DisableCompression: true,
	}
}

const svelteOrigin = "http://sveltekit-prerender"

// svelteFront is the guest in front of the SvelteKit server, with the
// real client bundle; control leaves the pages' policies unread, as the
// guest did before.
func svelteFront(t *testing.T, rt http.RoundTripper, control bool) string {
	t.Helper()
	cfg := testConfig(t, svelteOrigin, func(c *config.Config) {
		c.CreativeOpportunities.Slots[0].DivID = "ad-top"
	})
	g, err := New(cfg, Options{Transport: rt, Bundle: bundle.JS(), FlushLatency: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	g.ignoreCSP = control
	t.Cleanup(g.Close)
	front, err := server.ClientHandler(cfg, g)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(front)
	t.Cleanup(srv.Close)
	return srv.URL
}

// policyShown is what a page under a policy, behind the guest, shows in
// Chromium.
type policyShown struct {
	Hydrated bool   `json:"hydrated"` // the app's onMount ran
	Count    string `json:"count"`    // the counter after one click
	Share    string `json:"share"`    // the share link's href
	Slots    bool   `json:"slots"`    // window.tsjs.adSlots was set
	Rendered bool   `json:"rendered"` // the bundle rendered the bids
	CSP      string `json:"csp"`      // the policy in the page's <meta>, if any
	// Violations are the policy violations the page reported.
	Violations []string `json:"violations"`
}

// TestSvelteKitCSPPagesHydrateAndShowAds: a real SvelteKit 2 app with
// kit.csp.mode "auto", served by adapter-node, behind the guest, in
// Chromium. /static is prerendered, its policy a <meta> that allows the
// start script by SHA-256; the inline rules rewrote the origin in that
// script, Chromium blocked it and the page never hydrated. /dynamic is
// rendered per request, its policy a header with a nonce; the injected
// scripts had no nonce and were blocked, so no ad rendered. Both now
// hydrate (the counter counts) and render the bid; the control, with the
// policies unread, fails both ways.
func TestSvelteKitCSPPagesHydrateAndShowAds(t *testing.T) {
	dir := sveltekitDir(t)
	bin := testutil.RequireTool(t, "chromium", "chromium-browser", "google-chrome")
	rt := startSvelteKit(t, dir)
	defer rt.CloseIdleConnections()
	fixed, control := svelteFront(t, rt, false), svelteFront(t, rt, true)
	browserCtx := startChromium(t, bin)
	for _, path := range []string{"/static", "/dynamic"} {
		t.Run(path, func(t *testing.T) {
			got := showUnderPolicy(t, browserCtx, fixed+path, true)
			if !got.Hydrated || got.Count != "clicked 1" {
				t.Errorf("the page did not hydrate: %+v", got)
			}
			if !got.Slots || !got.Rendered {
				t.Errorf("the injected scripts did not run: %+v", got)
			}
			if len(got.Violations) > 0 {
				t.Errorf("policy violations: %q", got.Violations)
			}
			// The prerendered start script is kept as it is, origin and
			// all (docs/behaviour.md, "Content Security Policy"), so the
			// link its data renders names the origin; the dynamic page's
			// script, allowed by nonce, is rewritten.
			if keptOrigin := strings.Contains(got.Share, "sveltekit-prerender"); keptOrigin != (path == "/static") {
				t.Errorf("share link %q", got.Share)
			}
			if path == "/static" && !strings.Contains(got.CSP, "'sha256-") {
				t.Errorf("/static is not the hash-policy page: meta %q", got.CSP)
			}
			before := showUnderPolicy(t, browserCtx, control+path, false)
			switch path {
			case "/static":
				if before.Hydrated {
					t.Errorf("control: the prerendered page hydrated with its start script rewritten: %+v", before)
				}
			case "/dynamic":
				if before.Rendered || before.Slots {
					t.Errorf("control: the injected scripts ran without the nonce: %+v", before)
				}
			}
		})
	}
}

// startChromium starts headless Chromium for the rest of the test.
func startChromium(t *testing.T, bin string) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
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

// showUnderPolicy loads url, clicks the counter once and reads the page. With
// fixed it waits for the hydration marker and the bundle's render; the
// control waits for the browser's first policy violation instead.
func showUnderPolicy(t *testing.T, browserCtx context.Context, url string, fixed bool) policyShown {
	t.Helper()
	tab, cancel := chromedp.NewContext(browserCtx)
	defer cancel()
	if err := chromedp.Do(tab, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument,
			page.AddScriptToEvaluateOnNewDocumentParams{Source: violationObserver})
		return err
	}), chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	cond := `document.documentElement.dataset.hydrated === "yes" && window.tsjs && window.tsjs.rendered === true`
	if !fixed {
		cond = `window.__violations.length > 0 && document.readyState === "complete"`
	}
	if _, err := chromedp.Run(tab, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		shown, _ := chromedp.Run(tab, chromedp.Evaluate[policyShown](policyRead))
		t.Fatalf("%s: waiting for %s: %v; %+v", url, cond, err, shown)
	}
	if _, err := chromedp.Run(tab, chromedp.Evaluate[any](`(function(){var b=document.getElementById("count");if(b)b.click();return null})()`)); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(tab, chromedp.Evaluate[policyShown](policyRead))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// violationObserver records the page's policy violations from its start.
const violationObserver = `window.__violations = [];
document.addEventListener("securitypolicyviolation", function (e) {
	window.__violations.push(e.violatedDirective + " " + (e.blockedURI || "?") + " " + e.sourceFile + ":" + e.lineNumber + ":" + e.columnNumber + " " + e.sample);
});`

const policyRead = `({
	hydrated: document.documentElement.dataset.hydrated === "yes",
	count: (document.getElementById("count") || {}).textContent || "",
	share: (document.getElementById("share") || {}).href || "",
	slots: !!(window.tsjs && window.tsjs.adSlots && window.tsjs.adSlots.length),
	rendered: !!(window.tsjs && window.tsjs.rendered === true),
	csp: (document.querySelector('meta[http-equiv="content-security-policy"]') || {content: ""}).content,
	violations: window.__violations || []
})`
