package tsjs

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/ssat"
)

// Upstream's cache policy for the tsjs bundle on Fastly (publisher.rs,
// serve_tsjs_static; http_util.rs, serve_static_with_etag;
// cache_policy.rs, with EdgeCacheHeader::SurrogateControl as the Fastly
// adapter passes it): a URL whose ?v= names these bytes is immutable for a
// year, any other is fresh for five minutes with stale-while-revalidate
// and stale-if-error.
const (
	upstreamBundleImmutable     = "public, max-age=31536000, immutable"
	upstreamBundleImmutableEdge = "max-age=31536000"
	upstreamBundleShort         = "public, max-age=300, stale-while-revalidate=60, stale-if-error=86400"
	upstreamBundleShortEdge     = "max-age=300, stale-while-revalidate=60, stale-if-error=86400"
)

// serveUpstream answers js, whose hash is hash (bundle.file, the bundle
// made of bundle.dir's modules, or one deferred module), with upstream's
// headers: a strong
// "sha256-HEX" ETag, application/javascript, Vary: Accept-Encoding and
// the hint, a 304 to an If-None-Match equal to the tag. Upstream keeps
// the tag strong although Fastly compresses the body under it; ssatd does
// the same here, so a cache in front sees what it would see on Fastly.
// Ranges are not served, as upstream serves none.
func (f *Family) serveUpstream(w http.ResponseWriter, r *http.Request, js []byte, hash string) {
	h := w.Header()
	etag := `"sha256-` + hash + `"`
	h.Set("ETag", etag)
	h.Set("X-Content-Type-Options", "nosniff")
	compress.AddVary(h, "Accept-Encoding")
	if r.URL.Query().Get("v") == hash {
		h.Set("Cache-Control", upstreamBundleImmutable)
		h.Set("Surrogate-Control", upstreamBundleImmutableEdge)
	} else {
		h.Set("Cache-Control", upstreamBundleShort)
		h.Set("Surrogate-Control", upstreamBundleShortEdge)
	}
	if f.bundle.Hint {
		h.Set(ssat.HintHeader, "on")
	}
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/javascript; charset=utf-8")
	h.Set("Content-Length", fmt.Sprint(len(js)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = bytes.NewReader(js).WriteTo(w)
	}
}
