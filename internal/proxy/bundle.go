package proxy

import (
	"bytes"
	"net/http"
	"time"

	"github.com/ssatd/ssatd/internal/rewrite"
)

// serveBundle answers the client bundle that every rewritten page loads
// (§4.2) from the guest itself, never from the origin.
func (g *Guest) serveBundle(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("ETag", `"`+g.bundleHash+`"`)
	h.Set("X-Content-Type-Options", "nosniff")
	if r.URL.Query().Get("v") == g.bundleHash {
		// The URL names these exact bytes, so it can be cached for good.
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "public, max-age=300")
	}
	if g.canHint {
		h.Set(HintHeader, "on")
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(g.bundle))
}

func isBundleRequest(r *http.Request) bool {
	return r.URL.Path == rewrite.BundlePath && (r.Method == http.MethodGet || r.Method == http.MethodHead)
}
