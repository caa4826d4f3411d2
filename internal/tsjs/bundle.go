package tsjs

import (
	"bytes"
	"net/http"
	"strings"
	"time"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/family"
	"github.com/ssatd/ssatd/internal/rewrite"
	"github.com/ssatd/ssatd/internal/ssat"
)

// serveBundle answers the paths under rewrite.StaticPrefix from the guest
// itself, never from the origin, as upstream's handle_tsjs_dynamic does
// (crates/trusted-server-core/src/publisher.rs:525-567): the client bundle
// every rewritten page loads (docs/behaviour.md, "Bundle tag") by either
// of its names, a deferred module by its own, and "Not Found" for any
// other name.
func (f *Family) serveBundle(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, rewrite.StaticPrefix)
	if name == "tsjs-unified.min.js" || name == "tsjs-unified.js" {
		if f.bundle.User {
			f.serveUpstream(w, r, f.bundle.JS, f.bundle.Hash)
		} else {
			f.serveBuiltIn(w, r)
		}
		return
	}
	if m, ok := f.bundle.Deferred[moduleID(name)]; ok {
		f.serveUpstream(w, r, m.JS, m.Hash)
		return
	}
	// publisher.rs:274-278, not_found_response.
	family.Answer{Status: http.StatusNotFound, Msg: "Not Found", Policy: family.Unstated}.Write(w)
}

// moduleID is the id a module's file name names: tsjs-<id>.min.js or
// tsjs-<id>.js (publisher.rs:604-613, parse_single_module_filename); ""
// for any other name.
func moduleID(name string) string {
	stem, ok := strings.CutPrefix(name, "tsjs-")
	if !ok {
		return ""
	}
	if id, ok := strings.CutSuffix(stem, ".min.js"); ok {
		return id
	}
	id, _ := strings.CutSuffix(stem, ".js")
	if id == stem {
		return ""
	}
	return id
}

// serveBuiltIn answers the built-in bundle with ssatd's headers.
func (f *Family) serveBuiltIn(w http.ResponseWriter, r *http.Request) {
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
