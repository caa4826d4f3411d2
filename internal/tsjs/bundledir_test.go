package tsjs_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/rewrite"
)

// Modules written for the tests, not upstream's: what matters is how they
// are joined, named and served.
var testModules = map[string]string{
	"tsjs-core.min.js":     "window.tsjs={core:1}",
	"tsjs-core.js":         "/* unminified core, not taken */",
	"tsjs-creative.min.js": "tsjs.creative=1",
	"tsjs-gpt.min.js":      "tsjs.gpt=1",
	"tsjs-didomi.js":       "tsjs.didomi=1",
	"tsjs-prebid.min.js":   "tsjs.prebid=1",
	"tsjs-aps.min.js":      "tsjs.aps=1",
	"tsjs-lockr.min.js":    "tsjs.lockr=1 /* not enabled */",
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// bundleDirEnv is a guest serving testModules from bundle.dir, with gpt
// (GAM attribution on), didomi, prebid and aps enabled.
func bundleDirEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	for name, body := range testModules {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return newEnv(t, htmlPage, func(c *config.Config) {
		c.Bundle.Dir = dir
		c.Integrations = config.IntegrationsConfig{Enabled: []string{"aps", "didomi", "gpt", "prebid"}, GAMAttribution: true}
	})
}

// TestBundleDirServedAsUpstreamJoinsModules: the unified bundle is core,
// creative, then the enabled integrations' immediate modules in upstream's
// order, joined with ";\n", its v and ETag the SHA-256 of exactly that
// body; prebid, deferred, is served alone under its own hash; aps (no JS
// upstream), lockr (not enabled), gpt (in the bundle) and core have no URL
// of their own (publisher.rs:525-567, bundle.rs, registry.rs).
func TestBundleDirServedAsUpstreamJoinsModules(t *testing.T) {
	e := bundleDirEnv(t)
	unified := strings.Join([]string{testModules["tsjs-core.min.js"], testModules["tsjs-creative.min.js"],
		testModules["tsjs-didomi.js"], testModules["tsjs-gpt.min.js"]}, ";\n")
	v, pv := sha256Hex(unified), sha256Hex(testModules["tsjs-prebid.min.js"])
	const (
		immutable = "public, max-age=31536000, immutable"
		short     = "public, max-age=300, stale-while-revalidate=60, stale-if-error=86400"
	)
	for _, tc := range []struct {
		path, body, hash, cc string
	}{
		{rewrite.BundlePath + "?v=" + v, unified, v, immutable},
		{rewrite.BundlePath, unified, v, short},
		{rewrite.BundlePath + "?v=" + pv, unified, v, short},
		{rewrite.StaticPrefix + "tsjs-unified.js?v=" + v, unified, v, immutable},
		{rewrite.StaticPrefix + "tsjs-prebid.min.js?v=" + pv, testModules["tsjs-prebid.min.js"], pv, immutable},
		{rewrite.StaticPrefix + "tsjs-prebid.js", testModules["tsjs-prebid.min.js"], pv, short},
		{rewrite.StaticPrefix + "tsjs-prebid.min.js?v=" + v, testModules["tsjs-prebid.min.js"], pv, short},
	} {
		resp, body := e.mustGet(t, tc.path)
		h := resp.Header
		if resp.StatusCode != http.StatusOK || string(body) != tc.body {
			t.Errorf("%s: %d %q, want 200 %q", tc.path, resp.StatusCode, body, tc.body)
			continue
		}
		if h.Get("ETag") != `"sha256-`+tc.hash+`"` || h.Get("Cache-Control") != tc.cc ||
			h.Get("Content-Type") != "application/javascript; charset=utf-8" || !strings.Contains(h.Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s: headers %v, want ETag sha256-%s and %q", tc.path, h, tc.hash, tc.cc)
		}
		resp, body = e.mustGet(t, tc.path, header("If-None-Match", `"sha256-`+tc.hash+`"`))
		if resp.StatusCode != http.StatusNotModified || len(body) != 0 || resp.Header.Get("Cache-Control") != tc.cc {
			t.Errorf("%s revalidated: %d %v", tc.path, resp.StatusCode, resp.Header)
		}
	}
	for _, name := range []string{"tsjs-gpt.min.js", "tsjs-aps.min.js", "tsjs-lockr.min.js", "tsjs-core.min.js",
		"tsjs-creative.js", "tsjs-prebid.min.jsx", "prebid.min.js", "tsjs-unified.min.js.map", ""} {
		resp, body := e.mustGet(t, rewrite.StaticPrefix+name)
		if resp.StatusCode != http.StatusNotFound || string(body) != "Not Found\n" {
			t.Errorf("%q: %d %q, want 404", name, resp.StatusCode, body)
		}
	}
}

// TestHeadInjectionInUpstreamOrder: right after <head>, the ad-slots
// script, then the bundle tag with data-ts-gam-attribution, then the
// deferred module's tag, nothing between them (html_processor.rs:409-451;
// tsjs.rs).
func TestHeadInjectionInUpstreamOrder(t *testing.T) {
	e := bundleDirEnv(t)
	_, page := e.mustGet(t, "/", navigate)
	v := sha256Hex(strings.Join([]string{testModules["tsjs-core.min.js"], testModules["tsjs-creative.min.js"],
		testModules["tsjs-didomi.js"], testModules["tsjs-gpt.min.js"]}, ";\n"))
	tags := `<script src="/static/tsjs=tsjs-unified.min.js?v=` + v + `" id="trustedserver-js" data-ts-gam-attribution="true"></script>` +
		`<script src="/static/tsjs=tsjs-prebid.min.js?v=` + sha256Hex(testModules["tsjs-prebid.min.js"]) + `" defer></script>`
	head := bytes.Index(page, []byte("<head>"))
	slots := bytes.Index(page, []byte(`<script>(window.tsjs=window.tsjs||{}).adSlots=`))
	at := bytes.Index(page, []byte(tags))
	if head < 0 || slots != head+len("<head>") || at < slots || bytes.Contains(page[slots:at], []byte("</script><script src")) ||
		!bytes.HasPrefix(page[at+len(tags):], []byte(`<meta charset="utf-8">`)) {
		t.Errorf("head injection not in upstream's order (slots at %d, tags at %d):\n%s", slots, at, page)
	}
}

// TestBundleDirConfigErrorsNameTheKey: a bundle.dir that cannot make a
// bundle, or one set beside bundle.file, is a configuration error naming
// bundle.dir.
func TestBundleDirConfigErrorsNameTheKey(t *testing.T) {
	noCore := t.TempDir()
	if err := os.WriteFile(filepath.Join(noCore, "tsjs-creative.js"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := t.TempDir()
	if err := os.WriteFile(filepath.Join(good, "tsjs-core.js"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(good, "tsjs-core.js")
	for _, tc := range []struct{ name, dir, file string }{
		{"missing", filepath.Join(noCore, "absent"), ""},
		{"no core", noCore, ""},
		{"beside bundle.file", good, file},
	} {
		c := config.Defaults()
		c.Publisher.Domain, c.Publisher.OriginURL = testDomain, "http://127.0.0.1:1"
		c.Bundle.Dir, c.Bundle.File = tc.dir, tc.file
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "bundle.dir") {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	c := config.Defaults()
	c.Publisher.Domain, c.Publisher.OriginURL = testDomain, "http://127.0.0.1:1"
	c.Bundle.Dir = good
	if err := c.Validate(); err != nil {
		t.Errorf("a dir with core: %v", err)
	}
}
