package edge

import (
	"net/http"
	"strings"

	"github.com/ssatd/ssatd/internal/compress"
)

// choice is what the edge does with one response body.
type choice int

const (
	choiceNone   choice = iota // send as it is
	choiceBrotli               // br, by the edge's own brotli writer
	choiceGzip                 // gzip (or zstd when enabled), by gzhttp
)

func (c choice) String() string {
	switch c {
	case choiceBrotli:
		return "br"
	case choiceGzip:
		return "gzip"
	}
	return "identity"
}

// negotiate picks the delivery coding for a hinted response (docs/behaviour.md, "Edge"). For
// "on" the client's q-values decide and br wins ties; "gzip" and "br" force
// that coding when the client accepts it. Unknown hint values compress
// nothing: the edge only does what it was clearly asked to.
func negotiate(hint string, ae compress.AcceptEncoding) choice {
	brQ, gzQ := ae.Q(string(compress.Brotli)), ae.Q(string(compress.Gzip))
	switch strings.ToLower(strings.TrimSpace(hint)) {
	case "on":
		switch {
		case brQ > 0 && brQ >= gzQ:
			return choiceBrotli
		case gzQ > 0:
			return choiceGzip
		}
	case "br":
		if brQ > 0 {
			return choiceBrotli
		}
	case "gzip":
		if gzQ > 0 {
			return choiceGzip
		}
	}
	return choiceNone
}

// skip reports responses the edge never compresses whatever the hint:
// HEAD, 1xx, 204 and 304 have no body to compress (RFC 9110 §6.4.1), a
// declared empty body has nothing to gain, and a 206 part is a range of the
// identity representation (RFC 9110 §14.2): compressing it would produce
// something no client can reassemble.
func skip(method string, status int, h http.Header) bool {
	return method == http.MethodHead || status < 200 || status == http.StatusNoContent ||
		status == http.StatusNotModified || status == http.StatusPartialContent ||
		h.Get("Content-Range") != "" || strings.TrimSpace(h.Get("Content-Length")) == "0"
}
