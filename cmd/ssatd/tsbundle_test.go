package main

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeTrustedServerFileWithBundleDir: a Trusted Server file with gpt
// (GAM attribution on) and prebid enabled, and [ssatd.bundle] dir holding
// module files, served by the daemon: the page's head gets the ad-slots
// script, the bundle tag (core, creative, gpt joined; prebid left out as
// deferred) with data-ts-gam-attribution, then prebid's deferred tag, and
// the daemon serves both URLs with the hashes the tags name.
func TestServeTrustedServerFileWithBundleDir(t *testing.T) {
	dir := t.TempDir()
	modules := map[string]string{"core": "window.tsjs={}", "creative": "tsjs.c=1", "gpt": "tsjs.g=1", "prebid": "tsjs.p=1"}
	for id, body := range modules {
		if err := os.WriteFile(filepath.Join(dir, "tsjs-"+id+".min.js"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hashOf := func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }
	unified := "window.tsjs={};\ntsjs.c=1;\ntsjs.g=1"
	origin := newTestOrigin(t)
	doc := strings.Replace(tsFile, "http://127.0.0.1:8000", origin.srv.URL, 1) + `
[integrations.gpt]
enabled = true
gam_attribution_enabled = true

[ssatd.server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
drain_period = "0s"

[ssatd.consent]
jurisdiction = "non-regulated"

[ssatd.bundle]
dir = "` + filepath.ToSlash(dir) + `"
`
	sc := startServeCommand(t, doc)
	c := newTestClient(t)
	defer c.Transport.(*http.Transport).CloseIdleConnections()
	_, _, page := get(t, c, "http://"+sc.clientAddr+"/page", "news.test")
	tags := `<script src="/static/tsjs=tsjs-unified.min.js?v=` + hashOf(unified) + `" id="trustedserver-js" data-ts-gam-attribution="true"></script>` +
		`<script src="/static/tsjs=tsjs-prebid.min.js?v=` + hashOf("tsjs.p=1") + `" defer></script>`
	slots := strings.Index(page, "<head><script>(window.tsjs=window.tsjs||{}).adSlots=")
	at := strings.Index(page, tags)
	if slots < 0 || at < slots || !strings.HasPrefix(page[at+len(tags):], "<title>") || strings.Count(page, "<script src=") != 2 {
		t.Fatalf("head not as upstream injects it:\n%s\n%s", page, sc.stderr.String())
	}
	for path, want := range map[string]string{
		"/static/tsjs=tsjs-unified.min.js?v=" + hashOf(unified):   unified,
		"/static/tsjs=tsjs-prebid.min.js?v=" + hashOf("tsjs.p=1"): "tsjs.p=1",
	} {
		status, h, body := get(t, c, "http://"+sc.clientAddr+path, "news.test")
		if status != http.StatusOK || body != want || h.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("%s: %d %q %v", path, status, body, h)
		}
	}
}
