package proxy

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/bundle"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/server"
	"github.com/ssatd/ssatd/internal/testutil"
)

// TestHashHeaderPolicyRunsPageAndInjectedScriptsInBrowser: a header policy
// that allows the page's one inline script by SHA-256 and nothing else
// inline. Through the guest, in Chromium, the page's script (which names
// the origin) runs as it came, and the ad-slots and bids scripts run in the
// loader form whose hash the header was given; the bid renders, and the
// browser reports no violation. The control, with the policies unread,
// rewrites the page's script and injects scripts the policy blocks.
func TestHashHeaderPolicyRunsPageAndInjectedScriptsInBrowser(t *testing.T) {
	bin := testutil.RequireTool(t, "chromium", "chromium-browser", "google-chrome")
	var originHost string
	own := func() string {
		return `document.documentElement.dataset.hydrated="yes";window.ownURL="http://` + originHost + `/x";`
	}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sum := sha256.Sum256([]byte(own()))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'sha256-"+
			base64.StdEncoding.EncodeToString(sum[:])+"'")
		_, _ = w.Write([]byte(`<!doctype html><html><head><meta charset="utf-8"><title>t</title></head>` +
			`<body><div id="ad-top"></div><button id="count">clicked 0</button><script>` + own() + `</script></body></html>`))
	}))
	t.Cleanup(origin.Close)
	originHost = strings.TrimPrefix(origin.URL, "http://")
	fixed, control := policyFront(t, origin.URL, false), policyFront(t, origin.URL, true)
	browserCtx := startChromium(t, bin)

	got := showUnderPolicy(t, browserCtx, fixed+"/", true)
	if !got.Hydrated || !got.Slots || !got.Rendered || len(got.Violations) > 0 {
		t.Errorf("under the header's hash policy: %+v", got)
	}
	before := showUnderPolicy(t, browserCtx, control+"/", false)
	if before.Hydrated || before.Slots || before.Rendered {
		t.Errorf("control: the scripts ran although the policy blocks them: %+v", before)
	}
}

// TestMetaPolicyListRunsPageAndInjectedScriptsInBrowser: a <meta> whose
// content is two policies joined by a comma, which Chromium enforces both
// of (whatwg/html#5102): the first allows the page's script by SHA-256,
// the second by nonce. ssatd read one policy, where the hash touching the
// comma is no hash: the page's script was rewritten and blocked, and the
// bids took the nonce alone, which the first policy blocks. Now, in
// Chromium, the page's script runs as it came and the bids run in the
// loader form with the nonce; the control, its policies unread, runs
// neither.
func TestMetaPolicyListRunsPageAndInjectedScriptsInBrowser(t *testing.T) {
	bin := testutil.RequireTool(t, "chromium", "chromium-browser", "google-chrome")
	var originHost string
	own := func() string {
		return `document.documentElement.dataset.hydrated="yes";window.ownURL="http://` + originHost + `/x";`
	}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sum := sha256.Sum256([]byte(own()))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		policy := "script-src 'self' 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "', script-src 'self' 'nonce-x1'"
		_, _ = w.Write([]byte(`<!doctype html><html><head><meta charset="utf-8"><title>t</title>` +
			`<meta http-equiv="content-security-policy" content="` + policy + `"></head>` +
			`<body><div id="ad-top"></div><button id="count">clicked 0</button><script nonce="x1">` + own() + `</script></body></html>`))
	}))
	t.Cleanup(origin.Close)
	originHost = strings.TrimPrefix(origin.URL, "http://")
	fixed, control := policyFront(t, origin.URL, false), policyFront(t, origin.URL, true)
	browserCtx := startChromium(t, bin)

	got := showUnderPolicy(t, browserCtx, fixed+"/", true)
	if !got.Hydrated || !got.Slots || !got.Rendered || len(got.Violations) > 0 {
		t.Errorf("under the <meta> policy list: %+v", got)
	}
	before := showUnderPolicy(t, browserCtx, control+"/", false)
	if before.Hydrated || before.Rendered {
		t.Errorf("control: the scripts ran although the policies block them: %+v", before)
	}
}

// policyFront is a guest in front of origin, its pages' policies read or,
// for the control, not.
func policyFront(t *testing.T, origin string, control bool) string {
	cfg := testConfig(t, origin, func(c *config.Config) { c.CreativeOpportunities.Slots[0].DivID = "ad-top" })
	g, err := New(cfg, Options{Bundle: bundle.JS(), FlushLatency: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	g.ignoreCSP = control
	t.Cleanup(g.Close)
	h, err := server.ClientHandler(cfg, g)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
