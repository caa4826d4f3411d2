package edge

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/ssat"
)

// choice is the coding the edge applies to one response body.
type choice int

const (
	choiceNone   choice = iota // send as it is
	choiceBrotli               // br
	choiceGzip                 // gzip
	choiceZstd                 // zstd, only with Options.Zstd
)

func (c choice) String() string {
	switch c {
	case choiceBrotli:
		return "br"
	case choiceGzip:
		return "gzip"
	case choiceZstd:
		return "zstd"
	}
	return "identity"
}

// reason says why the edge made its choice: a closed set, for tests and
// for anyone reading a decision.
type reason string

const (
	reasonCompressed reason = "compressed"
	reasonNoHint     reason = "no_hint"      // not the edge's to touch
	reasonBadHint    reason = "unknown_hint" // a hint value other than on, gzip, br
	reasonRefused    reason = "not_accepted" // the client accepts no coding the hint allows
	reasonEncoded    reason = "already_encoded"
	reasonNoBody     reason = "no_body"        // HEAD, 204, 304, Content-Length: 0
	reasonPartial    reason = "partial"        // a 206 part or a Content-Range
	reasonSmall      reason = "below_min_size" // known, or found at the end, to be under min_size
)

// decision is what the edge does with one response, made once.
type decision struct {
	coding choice
	why    reason
}

// decide is the one place where the edge chooses what to do with a
// response (docs/behaviour.md, "Edge"), when its final header is written.
// It removes the hint, which never reaches the client. Only min_size can
// still turn a compressed decision into none, for a body that ends before
// reaching it; the writer does that at the end.
func (e *Edge) decide(method string, status int, h http.Header, ae compress.AcceptEncoding) decision {
	hints := h.Values(ssat.HintHeader)
	if len(hints) == 0 {
		return decision{choiceNone, reasonNoHint}
	}
	// Removed whether or not the edge compresses, and nothing else is
	// added: Fastly's page for the hint names only Content-Encoding, and
	// Viceroy does not implement the hint at all, so Vary is the guest's to
	// set wherever it sets the hint (docs/behaviour.md, "Fidelity").
	// https://docs.fastly.com/documentation/reference/http/http-headers/X-Compress-Hint/
	h.Del(ssat.HintHeader)
	if d, skipped := skip(method, status, h); skipped {
		return d
	}
	c := negotiate(hints[0], ae, e.zstd)
	if c == choiceNone {
		if !knownHint(hints[0]) {
			return decision{choiceNone, reasonBadHint}
		}
		return decision{choiceNone, reasonRefused}
	}
	if n, ok := declaredLength(h); ok && n < int64(e.minSize) {
		return decision{choiceNone, reasonSmall}
	}
	return decision{c, reasonCompressed}
}

// negotiate picks the delivery coding for a hinted response as Fastly
// documents it (docs/behaviour.md, "Edge"): "on" selects br whenever the
// client accepts br at all, whatever its weights, else gzip; "gzip" and
// "br" force that coding when the client accepts it. "In either case, the
// compression level applied is level 1" is the [delivery] default.
// https://docs.fastly.com/documentation/reference/http/http-headers/X-Compress-Hint/
// zstd, which Fastly does not apply for the hint, ranks between br and
// gzip for "on" when an operator enables it. Unknown hint values compress
// nothing: the edge only does what it was clearly asked to.
func negotiate(hint string, ae compress.AcceptEncoding, zstd bool) choice {
	switch strings.ToLower(strings.TrimSpace(hint)) {
	case "on":
		switch {
		case ae.Accepts(string(compress.Brotli)):
			return choiceBrotli
		case zstd && ae.Accepts("zstd"):
			return choiceZstd
		case ae.Accepts(string(compress.Gzip)):
			return choiceGzip
		}
	case "br":
		if ae.Accepts(string(compress.Brotli)) {
			return choiceBrotli
		}
	case "gzip":
		if ae.Accepts(string(compress.Gzip)) {
			return choiceGzip
		}
	}
	return choiceNone
}

func knownHint(hint string) bool {
	switch strings.ToLower(strings.TrimSpace(hint)) {
	case "on", "br", "gzip":
		return true
	}
	return false
}

// skip reports responses the edge never compresses whatever the hint:
// HEAD, 204 and 304 have no body to compress (RFC 9110 §6.4.1), a
// declared empty body has nothing to gain, and a 206 part is a range of the
// identity representation (RFC 9110 §14.2): compressing it would produce
// something no client can reassemble.
func skip(method string, status int, h http.Header) (decision, bool) {
	switch {
	case h.Get("Content-Encoding") != "":
		return decision{choiceNone, reasonEncoded}, true
	case method == http.MethodHead || status == http.StatusNoContent || status == http.StatusNotModified:
		return decision{choiceNone, reasonNoBody}, true
	case status == http.StatusPartialContent || h.Get("Content-Range") != "":
		return decision{choiceNone, reasonPartial}, true
	}
	if n, ok := declaredLength(h); ok && n == 0 {
		return decision{choiceNone, reasonNoBody}, true
	}
	return decision{}, false
}

// declaredLength is the guest's Content-Length, when it set a valid one.
func declaredLength(h http.Header) (int64, bool) {
	v := strings.TrimSpace(h.Get("Content-Length"))
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil && n >= 0
}
