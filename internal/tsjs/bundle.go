package tsjs

import (
	"bytes"
	"net/http"
	"time"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/ssat"
)

// serveBundle answers the client bundle that every rewritten page loads
// (docs/behaviour.md, "Bundle tag") from the guest itself, never from the origin.
func (f *Family) serveBundle(w http.ResponseWriter, r *http.Request) {
	if f.bundle.User {
		f.serveUserBundle(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	// Weak, because the same tag names every representation: the edge
	// compresses this body to gzip or br after it leaves here (X-Compress-Hint),
	// and a CDN in front may do so too, and a strong tag must differ between
	// content codings (RFC 9110 §8.8.1, §8.8.3). A tag per coding would have
	// to be minted where the compression happens, in every layer that
	// compresses; a weak one stays true whatever is in front, and
	// If-None-Match still revalidates with weak comparison (RFC 9110 §13.1.2).
	// The cost is that If-Range, which needs a strong tag, always gets the
	// whole bundle, which is small.
	h.Set("ETag", `W/"`+f.bundle.Hash+`"`)
	h.Set("X-Content-Type-Options", "nosniff")
	if r.URL.Query().Get("v") == f.bundle.Hash {
		// The URL names these exact bytes, so it can be cached for good.
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "public, max-age=300")
	}
	if f.bundle.Hint {
		// The edge adds no Vary for the hint, as Fastly documents none:
		// the representation varies with Accept-Encoding, so say so here.
		h.Set(ssat.HintHeader, "on")
		compress.AddVary(h, "Accept-Encoding")
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.bundle.JS))
}
