package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/csp"
)

// TestPagePolicyHeaderThroughTheGuest: the header's policy reaches the
// rewrite and the client. A hash policy keeps the page's inline script,
// gets the loader's hash in the header (for HEAD too: the headers GET would
// get) and the injected scripts in the loader form; a nonce policy is sent
// as it came and every injected script carries its nonce; each page is
// counted by rule.
func TestPagePolicyHeaderThroughTheGuest(t *testing.T) {
	policies := map[string]string{
		"/hash":  "default-src 'self'; script-src 'self' 'sha256-AAAA'",
		"/nonce": "script-src 'self' 'nonce-N0nce'",
	}
	var e *env
	e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Security-Policy", policies[r.URL.Path])
		page := strings.Replace(e.page(), "</body>", `<script nonce="N0nce">var u="http://`+e.host+`/x"</script></body>`, 1)
		_, _ = w.Write([]byte(page))
	}))
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		resp, body := e.mustGet(t, "/hash", navigate, func(r *http.Request) { r.Method = method })
		if got, want := resp.Header.Get("Content-Security-Policy"), policies["/hash"]+" '"+csp.LoaderHash+"'"; got != want {
			t.Errorf("%s: header %q, want %q", method, got, want)
		}
		if method == http.MethodHead {
			continue
		}
		page := string(body)
		if !strings.Contains(page, `var u="http://`+e.host+`/x"`) {
			t.Errorf("the script a hash policy allows was rewritten:\n%s", page)
		}
		if strings.Count(page, "<script>"+csp.LoaderJS+"</script>") != 2 {
			t.Errorf("want the ad-slots and bids scripts in the loader form:\n%s", page)
		}
	}
	resp, body := e.mustGet(t, "/nonce", navigate)
	if got := resp.Header.Get("Content-Security-Policy"); got != policies["/nonce"] {
		t.Errorf("a nonce policy was changed: %q", got)
	}
	page := string(body)
	if n := strings.Count(page, "<script"); n != 4 || strings.Count(page, `<script nonce="N0nce"`) != 4 {
		t.Errorf("want 4 scripts, each with the nonce:\n%s", page)
	}
	if strings.Contains(page, "http://"+e.host) {
		t.Errorf("a nonce-allowed script kept the origin:\n%s", page)
	}
	m := e.guest.Metrics()
	for rule, want := range map[string]float64{"loader_hash": 1, "kept": 1, "nonce": 1, "bundle_blocked": 0} {
		if got := m.Sum("ssatd_csp_pages_total", map[string]string{"rule": rule}); got != want {
			t.Errorf("ssatd_csp_pages_total{rule=%q} = %v, want %v", rule, got, want)
		}
	}
	if e.logs.FilterMessage("content security policy").Len() != 2 {
		t.Errorf("want one log line per page under a policy")
	}
}
