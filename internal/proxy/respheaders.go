package proxy

import (
	"net/http"
	"strings"

	"github.com/ssatd/ssatd/internal/rewrite"
)

// urlHeaders hold URLs the origin builds from its own host, like the links
// in a page: a redirect, a preload, a refresh. They are rewritten by the
// same rules as the page's links (docs/behaviour.md, "URL rewriting").
var urlHeaders = []string{"Location", "Content-Location", "Refresh", "Link"}

// rewriteURLHeaders points the origin URLs in response headers, and
// cookies scoped to the origin host, at the host the client used. It runs
// on every response the guest forwards, interim ones (103 Early Hints)
// included, on every route.
func (g *Guest) rewriteURLHeaders(h http.Header, v clientView) {
	for _, k := range urlHeaders {
		vals := h[k]
		for i, val := range vals {
			if out, ok := rewrite.URL(val, g.originHost, v.host, v.scheme); ok {
				vals[i] = out
			}
		}
	}
	cookies := h["Set-Cookie"]
	for i, c := range cookies {
		cookies[i] = g.rewriteCookieDomain(c, v.host)
	}
}

// rewriteCookieDomain replaces a Domain attribute naming the origin host
// (RFC 6265 §5.2.3: case-insensitive, a leading dot ignored) by the name of
// the request host, so that the browser keeps the cookie.
func (g *Guest) rewriteCookieDomain(c, requestHost string) string {
	originName, _ := splitHost(g.originHost) // compared with EqualFold below
	parts := strings.Split(c, ";")
	changed := false
	for i, p := range parts[1:] {
		k, val, ok := strings.Cut(p, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "domain") {
			continue
		}
		if strings.EqualFold(strings.TrimPrefix(strings.TrimSpace(val), "."), originName) {
			name, _ := splitHost(requestHost)
			parts[i+1] = " Domain=" + name
			changed = true
		}
	}
	if !changed {
		return c
	}
	return strings.Join(parts, ";")
}

// representationTrailers describe the origin's body; on the rewrite route
// the body is not the origin's any more, so they would be false.
var representationTrailers = append([]string{"ETag"}, digestFields...)

// headerRewriter applies the header rules ReverseProxy leaves no hook for,
// just before headers go out: the URL headers of every response, interim
// (103 Early Hints, which ReverseProxy copies and writes at once) and
// final, and the announced trailers of a rewritten page. It is also where
// interim responses stop for a client that cannot take them.
type headerRewriter struct {
	http.ResponseWriter
	g *Guest
	x *exchange
	// noInterim: the client spoke HTTP/1.0, which has no 1xx responses.
	noInterim bool
}

func (w *headerRewriter) WriteHeader(code int) {
	if code < 200 && w.noInterim {
		// "A server MUST NOT send a 1xx response to an HTTP/1.0 client"
		// (RFC 9110 §15.2): an HTTP/1.0 client, nginx's default upstream
		// protocol among them, reads the 103 as the final response and
		// the real status line as its body. ReverseProxy clears the
		// header map after the call, so the 1xx's fields go nowhere.
		return
	}
	h := w.Header()
	w.g.rewriteURLHeaders(h, w.x.view)
	if code >= 200 && w.x.route == routePipeline {
		var keep []string
		for _, v := range h.Values("Trailer") {
			for _, k := range strings.Split(v, ",") {
				if k = strings.TrimSpace(k); k != "" && !isRepresentationTrailer(k) {
					keep = append(keep, k)
				}
			}
		}
		h.Del("Trailer")
		if len(keep) > 0 {
			h.Set("Trailer", strings.Join(keep, ", "))
		}
	}
	w.ResponseWriter.WriteHeader(code)
	unsetSentDecisions(h)
}

// dropTrailers removes the representation trailers ReverseProxy copied
// after a rewritten body, announced or not (http.TrailerPrefix), before
// the server sends them when the handler returns.
func (w *headerRewriter) dropTrailers() {
	if w.x.route != routePipeline {
		return
	}
	h := w.Header()
	for _, k := range representationTrailers {
		h.Del(k)
		h.Del(http.TrailerPrefix + k)
	}
}

func isRepresentationTrailer(k string) bool {
	for _, r := range representationTrailers {
		if strings.EqualFold(k, r) {
			return true
		}
	}
	return false
}

func (w *headerRewriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
