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

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/rewrite"
)

// TestUserBundleServedWithUpstreamHeaders: bundle.file replaces the
// built-in bundle in the page's tag and at the bundle path, with
// upstream's ETag, type and cache policy.
func TestUserBundleServedWithUpstreamHeaders(t *testing.T) {
	js := []byte("/* tsjs-unified.min.js, user supplied */ window.tsjs = window.tsjs || {};\n")
	file := filepath.Join(t.TempDir(), "tsjs-unified.min.js")
	if err := os.WriteFile(file, js, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(js)
	hash := hex.EncodeToString(sum[:])
	e := newEnv(t, htmlPage, func(c *config.Config) { c.Bundle.File = file })

	_, page := e.mustGet(t, "/", navigate)
	tag := `<script src="/static/tsjs=tsjs-unified.min.js?v=` + hash + `" id="trustedserver-js"></script>`
	if !bytes.Contains(page, []byte(tag)) {
		t.Fatalf("page lacks %s: %s", tag, page)
	}
	// Surrogate-Control is upstream's header for Fastly's cache, which
	// Fastly strips before delivery: a CDN in front (external) gets it, and
	// the builtin edge removes it as Fastly would.
	external := newEnv(t, htmlPage, func(c *config.Config) {
		c.Bundle.File = file
		c.Platform.DeliveryCompression = config.DeliveryCompressionExternal
	})
	for _, tc := range []struct{ query, cc, edge string }{
		{"?v=" + hash, "public, max-age=31536000, immutable", "max-age=31536000"},
		{"?v=stale", "public, max-age=300, stale-while-revalidate=60, stale-if-error=86400", "max-age=300, stale-while-revalidate=60, stale-if-error=86400"},
		{"", "public, max-age=300, stale-while-revalidate=60, stale-if-error=86400", "max-age=300, stale-while-revalidate=60, stale-if-error=86400"},
	} {
		for _, p := range []struct {
			e    *env
			edge string
		}{{e, ""}, {external, tc.edge}} {
			resp, body := p.e.mustGet(t, rewrite.BundlePath+tc.query)
			h := resp.Header
			if resp.StatusCode != 200 || !bytes.Equal(body, js) {
				t.Fatalf("%q: %d %q", tc.query, resp.StatusCode, body)
			}
			if h.Get("ETag") != `"sha256-`+hash+`"` || h.Get("Content-Type") != "application/javascript; charset=utf-8" ||
				h.Get("Cache-Control") != tc.cc || h.Get("Surrogate-Control") != p.edge || !strings.Contains(h.Get("Vary"), "Accept-Encoding") {
				t.Errorf("%q: headers %v", tc.query, h)
			}
		}
	}
	resp, body := e.mustGet(t, rewrite.BundlePath, header("If-None-Match", `"sha256-`+hash+`"`))
	if resp.StatusCode != http.StatusNotModified || len(body) != 0 || resp.Header.Get("ETag") != `"sha256-`+hash+`"` {
		t.Errorf("revalidation: %d %v", resp.StatusCode, resp.Header)
	}
	// The edge compresses it like the built-in one (X-Compress-Hint), and
	// the strong tag stays, as on Fastly.
	resp, body = e.mustGet(t, rewrite.BundlePath, header("Accept-Encoding", "gzip"))
	if resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(decode(t, compress.Gzip, body), js) ||
		resp.Header.Get("ETag") != `"sha256-`+hash+`"` {
		t.Errorf("compressed: %v", resp.Header)
	}
}

func TestUserBundleConfigErrorsNameTheKey(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.js")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(dir, "missing.js"), dir, empty} {
		c := config.Defaults()
		c.Publisher.Domain, c.Publisher.OriginURL = testDomain, "http://127.0.0.1:1"
		c.Bundle.File = f
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "bundle.file") {
			t.Errorf("%s: %v", f, err)
		}
	}
}
