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
	originName, _ := splitHost(strings.ToLower(g.originHost))
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

// headerRewriter rewrites the URL headers of every response ReverseProxy
// writes, interim and final, just before they go out: ReverseProxy copies
// a 103's headers and writes them at once, with no hook of its own.
type headerRewriter struct {
	http.ResponseWriter
	g *Guest
	v clientView
}

func (w *headerRewriter) WriteHeader(code int) {
	w.g.rewriteURLHeaders(w.Header(), w.v)
	w.ResponseWriter.WriteHeader(code)
}

func (w *headerRewriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
