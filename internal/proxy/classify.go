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
	routeSigning  route = "signing" // internal/signing's routes
	routeTester   route = "tester"  // internal/tester's routes
	// The four /first-party/* routes (internal/firstparty).
	routeFirstParty route = "first-party"
	// The edge-cookie partner routes (internal/identity).
	routeIdentify  route = "identify"
	routeBatchSync route = "batch-sync"
	routeAdminEC   route = "admin-ec" // GET /_ts/admin/ec[/{id}]
)

// why is the row of docs/behaviour.md's "Classification" table that put
// a response on its route: a closed set, in the table's order, which is
// the order classify tries them (the first that applies wins).
// TestClassificationTableIsTheCode holds the two together.
type why uint8

const (
	whyPartialPage why = iota // a 206 of HTML: refused, 502 (ranges.go)
	whyHeadOfPage             // a HEAD whose GET would be rewritten: the rewritten page's headers
	whyNoBody                 // another HEAD, or a status without a body
	whyNotText                // neither HTML nor a type of publisher.rewrite_content_types
	whyPartialText            // a 206 of such a text type, passed on with its range
	whyUnsupported            // a Content-Encoding the guest does not decode
	whyRewrite                // everything else: decoded, rewritten, encoded

	whyCount // the number of rows; not a row
)

// whyRoutes is the route of each row.
var whyRoutes = [whyCount]route{
	whyPartialPage: routeError,
	whyHeadOfPage:  routeHeadersOnly,
	whyNoBody:      routeHeadersOnly,
	whyNotText:     routePassThrough,
	whyPartialText: routePassThrough,
	whyUnsupported: routeUnsupported,
	whyRewrite:     routePipeline,
}

// classification is what the guest does with an origin response.
type classification struct {
	route route
	why   why
	// coding is the origin's coding the pipeline decodes: on the pipeline
	// route, and for a HEAD of a page (the coding its GET would have).
	coding compress.Coding
	text   textKind // the pipeline's rules, likewise
}

// classify decides what the guest does with an origin response from the
// request method, the status and the headers alone, before any body byte
// is read: the one place that decides it (docs/behaviour.md,
// "Classification"). types is publisher.rewrite_content_types: a text
// response of those types is streamed through the text rules, as upstream
// streams every processable content type (trusted-server-core
// publisher.rs, classify_response_route and is_processable_content_type).
func classify(method string, resp *http.Response, types textTypes) classification {
	c := classification{route: routeHeadersOnly, why: whyNoBody}
	ct := resp.Header.Get("Content-Type")
	html := isHTML(ct)
	kind, isText := types.kindOf(ct)
	switch {
	case resp.StatusCode == http.StatusPartialContent && html:
		c.why = whyPartialPage
	case method == http.MethodHead:
		if get := classify(http.MethodGet, resp, types); get.why == whyRewrite {
			c.why, c.coding, c.text = whyHeadOfPage, get.coding, get.text
		}
	case resp.StatusCode < 200, resp.StatusCode == http.StatusNoContent,
		resp.StatusCode == http.StatusResetContent, resp.StatusCode == http.StatusNotModified:
		// whyNoBody
	case !html && !isText:
		c.why = whyNotText
	case resp.StatusCode == http.StatusPartialContent:
		// A part of the origin's bytes cannot be rewritten on its own; the
		// pass-through answer is the origin's own.
		c.why = whyPartialText
	default:
		coding, _, ok := contentCoding(resp.Header)
		if !ok {
			c.why = whyUnsupported
			break
		}
		c.why, c.coding = whyRewrite, coding
		if !html {
			c.text = kind
		}
	}
	c.route = whyRoutes[c.why]
	return c
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
