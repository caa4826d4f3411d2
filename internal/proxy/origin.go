package proxy

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httputil"
	"strings"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
)

// conditionalHeaders are dropped for eligible requests (docs/behaviour.md, "Origin request"): the page is
// personalised, so the origin must always send the whole representation.
var conditionalHeaders = []string{"If-None-Match", "If-Modified-Since", "Range", "If-Range"}

// rewriteOriginRequest builds the origin request (docs/behaviour.md, "Origin request"). It is the only
// place where origin request headers are decided.
func (g *Guest) rewriteOriginRequest(pr *httputil.ProxyRequest) {
	x := exchangeOf(pr.In)
	// SetURL replaces scheme and host whatever the client sent: an
	// absolute-form request URI or a foreign Host never changes where ssatd
	// connects. The client's path and query are kept as they are.
	pr.SetURL(g.origin)
	pr.Out.URL.RawQuery = g.publisherQuery(pr.Out.URL.RawQuery)
	pr.Out.Host = g.hostOverride
	if g.fastlyView {
		setFastlyView(pr)
	} else {
		g.setForwarded(pr, x)
	}
	// CDN-Loop is end-to-end: the entries the request came with pass on,
	// and this hop's is appended (RFC 8586 §2), which is what looped()
	// looks for. Fastly appends its own the same way
	// (https://www.fastly.com/documentation/reference/http/http-headers/CDN-Loop/).
	pr.Out.Header.Add("CDN-Loop", g.cdnLoop)
	if x.eligible {
		for _, h := range conditionalHeaders {
			pr.Out.Header.Del(h)
		}
	}
	x.originAE = g.originAcceptEncoding(pr.In.Header, x)
	pr.Out.Header.Set("Accept-Encoding", x.originAE)
}

// originAcceptEncoding decides the Accept-Encoding sent to the origin. It is
// always set, never left to Go's transport (docs/behaviour.md, "Origin request", Go pitfall).
func (g *Guest) originAcceptEncoding(in http.Header, x *exchange) string {
	if x.mode == modeOffload && g.offloadAE != config.OffloadOriginNegotiate {
		return string(compress.Identity)
	}
	return compress.MirrorOriginAcceptEncoding(compress.ParseAcceptEncoding(in.Values("Accept-Encoding")))
}

// setForwarded tells the origin who the client is. ReverseProxy has already
// removed any Forwarded and X-Forwarded-* the client sent; from a trusted
// proxy they are put back and extended, from anyone else they are replaced
// by what this hop observed. Either way the host and scheme the origin sees
// are the ones ssatd itself rewrites links to (x.view): an origin that
// builds absolute links from them can only name the publisher's hosts.
func (g *Guest) setForwarded(pr *httputil.ProxyRequest, x *exchange) {
	in := pr.In.Header
	var prior string
	if x.view.trusted {
		if v := in.Values("Forwarded"); len(v) > 0 {
			pr.Out.Header["Forwarded"] = withoutForwardedHost(v)
		}
		prior = strings.Join(in.Values("X-Forwarded-For"), ", ")
	}
	pr.SetXForwarded() // sets X-Forwarded-For to the client address, Host and Proto
	if prior != "" {
		pr.Out.Header.Set("X-Forwarded-For", prior+", "+pr.Out.Header.Get("X-Forwarded-For"))
	}
	pr.Out.Header.Set("X-Forwarded-Host", x.view.host)
	pr.Out.Header.Set("X-Forwarded-Proto", x.view.scheme)
}

// withoutForwardedHost drops the host= parameters of RFC 7239 Forwarded
// elements: they were not checked against the allowed hosts, and the one
// that was is in X-Forwarded-Host.
func withoutForwardedHost(values []string) []string {
	var out []string
	for _, v := range values {
		var elems []string
		for _, elem := range strings.Split(v, ",") {
			var pairs []string
			for _, pair := range strings.Split(elem, ";") {
				k, _, _ := strings.Cut(strings.TrimSpace(pair), "=")
				if !strings.EqualFold(k, "host") && strings.TrimSpace(pair) != "" {
					pairs = append(pairs, strings.TrimSpace(pair))
				}
			}
			if len(pairs) > 0 {
				elems = append(elems, strings.Join(pairs, ";"))
			}
		}
		if len(elems) > 0 {
			out = append(out, strings.Join(elems, ", "))
		}
	}
	return out
}

// newCDNLoopToken returns this guest's CDN-Loop entry, a pseudonym (RFC
// 8586 §2) unique to the process, so that two ssatd deployments in a chain
// are not mistaken for a loop, while a request that comes back to this one
// is.
func newCDNLoopToken() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "ssatd-" + hex.EncodeToString(b[:])
}

// looped reports whether r already passed through this guest: one of its
// CDN-Loop entries is ours. An entry is a cdn-id, optionally followed by
// parameters after ";" (RFC 8586 §2).
func (g *Guest) looped(r *http.Request) bool {
	for _, v := range r.Header.Values("CDN-Loop") {
		for _, entry := range strings.Split(v, ",") {
			id, _, _ := strings.Cut(entry, ";")
			if strings.TrimSpace(id) == g.cdnLoop {
				return true
			}
		}
	}
	return false
}
