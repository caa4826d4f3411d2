package proxy

import (
	"net/http"
	"strings"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/ssat"
)

// privateCacheControl is the default "Eligible pages" (docs/behaviour.md)
// cache policy for personalised pages; publisher.ssat_cache_control may
// choose upstream's config.SSATCacheNoStorePrivate instead.
const privateCacheControl = config.SSATCachePrivate

// sharedCacheHeaders would let a shared cache store or revalidate a
// personalised page (docs/behaviour.md, "Eligible pages"): CDN-specific controls, freshness from the
// origin, and the validators of the unpersonalised origin document.
var sharedCacheHeaders = []string{
	"Surrogate-Control", "Fastly-Surrogate-Control", "CDN-Cache-Control",
	"Cloudflare-CDN-Cache-Control", "Expires", "Age", "ETag", "Last-Modified",
}

// bodyDescribingHeaders describe the origin's bytes, which the rewrite
// changes: a range or a digest of the origin body is wrong for the output.
var bodyDescribingHeaders = append([]string{"Content-Length", "Accept-Ranges"}, digestFields...)

// digestFields carry a digest of the origin's bytes, as headers or as
// trailers: Content-MD5 (RFC 1864), Digest (RFC 3230), Content-Digest and
// Repr-Digest (RFC 9530). A rewritten body would fail every one of them.
var digestFields = []string{"Content-MD5", "Digest", "Content-Digest", "Repr-Digest"}

// applyPrivacy sets the "Eligible pages" (docs/behaviour.md) headers. It is used on every response to an
// eligible request that still sends headers, errors included.
func (g *Guest) applyPrivacy(h http.Header) {
	h.Set("Cache-Control", g.cacheControl)
	for _, k := range sharedCacheHeaders {
		h.Del(k)
	}
}

// applyRewrittenHeaders is the final header policy of a pipeline response
// (docs/behaviour.md, "Eligible pages", "Rewritten responses", "Offload mode"). Set-Cookie and other end-to-end headers pass through.
func (g *Guest) applyRewrittenHeaders(h http.Header, x *exchange, out compress.Coding) {
	for _, k := range bodyDescribingHeaders {
		h.Del(k)
	}
	if out == compress.Identity {
		h.Del("Content-Encoding")
	} else {
		h.Set("Content-Encoding", string(out))
	}
	if x.adPath && x.text == textHTML {
		// A text response gets no ads, so it has no such variants.
		// The page with ads and the one without are variants of one URL,
		// chosen by request headers a shared cache does not key on
		// (eligibility): neither may be stored, or a cache could serve the
		// ad-free one to browsers.
		g.applyPrivacy(h)
	} else if et := h.Get("ETag"); et != "" && !strings.HasPrefix(et, "W/") {
		// The bytes differ from the origin's, so a strong validator would
		// be false (RFC 9110 §8.8.1); the rewrite is deterministic for a
		// given origin document, so the weak form stays true.
		h.Set("ETag", "W/"+et)
	}
	if x.mode == modeOffload && g.canHint {
		h.Set(ssat.HintHeader, "on")
	}
	if x.mode == modeOffload || (x.eligible && x.text == textHTML) {
		// The coding of an offloaded response, and of an eligible page in
		// mirror mode (the origin was offered only what the client
		// accepts), follows the client's Accept-Encoding: an origin that
		// leaves Vary out must not make the page look invariant
		// (RFC 9110 §12.5.5). Other mirrored responses keep the origin's
		// Vary, as any reverse proxy passes it.
		compress.AddVary(h, "Accept-Encoding")
	}
}

// weakenNotModifiedETag gives an origin's 304 the validator the 200 would
// carry (RFC 9110 §15.4.5): W/"x" where the origin says "x" and the client
// revalidates a page that applyRewrittenHeaders weakened. A 304 has no
// Content-Type to tell a page from an image, so the client's If-None-Match
// tells: a client that lists W/"x" and not "x" holds the weak tag ssatd
// gave, since the origin itself names that representation "x".
func weakenNotModifiedETag(resp *http.Response) {
	et := resp.Header.Get("ETag")
	if resp.StatusCode != http.StatusNotModified || et == "" || strings.HasPrefix(et, "W/") {
		return
	}
	inm := resp.Request.Header.Values("If-None-Match")
	if listsETag(inm, "W/"+et) && !listsETag(inm, et) {
		resp.Header.Set("ETag", "W/"+et)
	}
}

// listsETag reports whether an If-None-Match field lists tag exactly
// (RFC 9110 §8.8.3: a tag is opaque, and may itself hold a comma).
func listsETag(fields []string, tag string) bool {
	for _, f := range fields {
		for f != "" {
			f = strings.TrimLeft(f, " \t,")
			weak := strings.HasPrefix(f, "W/")
			rest := strings.TrimPrefix(f, "W/")
			if !strings.HasPrefix(rest, `"`) {
				break // "*" or a malformed field names no tag
			}
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				break
			}
			n := end + 2
			if weak {
				n += 2
			}
			if f[:n] == tag {
				return true
			}
			f = f[n:]
		}
	}
	return false
}

// Diagnostics headers (debug.diagnostics_headers). Those known before the
// body are headers; the two that are only true once the whole body has been
// processed are sent as trailers.
const (
	DiagMode             = "X-Ssatd-Compression-Mode"
	DiagOriginAE         = "X-Ssatd-Origin-Accept-Encoding"
	DiagOriginCoding     = "X-Ssatd-Origin-Content-Encoding"
	DiagOutputCoding     = "X-Ssatd-Output-Content-Encoding"
	DiagDelivery         = "X-Ssatd-Delivery-Compression"
	DiagProcessedBytes   = "X-Ssatd-Processed-Bytes"
	DiagProcessingMillis = "X-Ssatd-Processing-Ms"
	// DiagGuestCPUMillis is the page's guest CPU in platform milliseconds:
	// native thread CPU times compute.cpu_scale.
	DiagGuestCPUMillis = "X-Ssatd-Guest-Cpu-Ms"
)

// deliveryOf names who compresses what the client receives: the platform
// when the page was offloaded with the hint (canHint), else the guest.
func deliveryOf(m mode, out compress.Coding, platform string, canHint bool) string {
	switch {
	case m == modeOffload && canHint:
		return platform
	case out != compress.Identity:
		return "in-guest"
	}
	return "none"
}

func applyDiagnostics(resp *http.Response, x *exchange, out compress.Coding, platform string, canHint bool) {
	h := resp.Header
	h.Set(DiagMode, string(x.mode))
	h.Set(DiagOriginAE, x.originAE)
	h.Set(DiagOriginCoding, x.originCoding)
	h.Set(DiagOutputCoding, string(out))
	h.Set(DiagDelivery, deliveryOf(x.mode, out, platform, canHint))
	if resp.Trailer == nil {
		resp.Trailer = http.Header{}
	}
	setDecisionsHeader(h, x)
	resp.Trailer[DiagDecisions] = nil
	resp.Trailer[DiagProcessedBytes] = nil
	resp.Trailer[DiagProcessingMillis] = nil
	resp.Trailer[DiagGuestCPUMillis] = nil
	applyTSDiagnostics(resp, x, out, platform, canHint)
}
