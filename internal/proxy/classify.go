package proxy

import (
	"mime"
	"net/http"
	"strings"

	"github.com/ssatd/ssatd/internal/compress"
)

// route is what the guest does with an origin response (docs/behaviour.md, "Classification").
type route string

const (
	routeHeadersOnly route = "headers-only"
	routePassThrough route = "pass-through"
	routeUnsupported route = "unsupported-encoding"
	routePipeline    route = "pipeline"
	routeError       route = "error"
	routeRejected    route = "rejected"
	// The routes of route families (routes.go): tsjs's bundle and
	// callbacks (internal/tsjs).
	routeBundle   route = "bundle"
	routeAuction  route = "auction"
	routePageBids route = "page-bids"
)

// classify decides the route from status and headers alone, before any
// body byte is read. The first matching row of the "Classification" (docs/behaviour.md) table wins.
func classify(method string, resp *http.Response) (route, compress.Coding) {
	switch {
	case method == http.MethodHead,
		resp.StatusCode < 200,
		resp.StatusCode == http.StatusNoContent,
		resp.StatusCode == http.StatusResetContent,
		resp.StatusCode == http.StatusNotModified:
		return routeHeadersOnly, ""
	case !isHTML(resp.Header.Get("Content-Type")):
		return routePassThrough, ""
	}
	c, _, ok := contentCoding(resp.Header)
	if !ok {
		return routeUnsupported, ""
	}
	return routePipeline, c
}

// contentCoding reads a response's Content-Encoding: the one place the
// guest parses it. Several lines are one list (RFC 9110 §8.4), a stacked
// coding, which ssatd does not decode. ok reports a coding the guest
// decodes; name is the origin_coding of the access line and metrics: that
// coding, or else the header as sent.
func contentCoding(h http.Header) (c compress.Coding, name string, ok bool) {
	ce := strings.Join(h.Values("Content-Encoding"), ", ")
	if c, ok := compress.ParseContentEncoding(ce); ok {
		return c, string(c), true
	}
	return "", ce, false
}

func isHTML(contentType string) bool {
	if contentType == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		// A parameter error still leaves the media type readable.
		mt, _, _ = strings.Cut(contentType, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return mt == "text/html"
}
