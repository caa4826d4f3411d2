package proxy

import (
	"net/http"
	"net/http/httputil"
	"strings"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
)

// conditionalHeaders are dropped for eligible requests (§2): the page is
// personalised, so the origin must always send the whole representation.
var conditionalHeaders = []string{"If-None-Match", "If-Modified-Since", "Range", "If-Range"}

// rewriteOriginRequest builds the origin request (spec §2). It is the only
// place where origin request headers are decided.
func (g *Guest) rewriteOriginRequest(pr *httputil.ProxyRequest) {
	x := exchangeOf(pr.In)
	// SetURL replaces scheme and host whatever the client sent: an
	// absolute-form request URI or a foreign Host never changes where ssatd
	// connects. The client's path and query are kept as they are.
	pr.SetURL(g.origin)
	if g.allowOverride {
		stripModeOverride(pr.Out.URL)
	}
	pr.Out.Host = g.hostOverride
	g.setForwarded(pr, x)
	if x.eligible {
		for _, h := range conditionalHeaders {
			pr.Out.Header.Del(h)
		}
	}
	x.originAE = g.originAcceptEncoding(pr.In.Header, x)
	pr.Out.Header.Set("Accept-Encoding", x.originAE)
}

// originAcceptEncoding decides the Accept-Encoding sent to the origin. It is
// always set, never left to Go's transport (spec §2, Go pitfall).
func (g *Guest) originAcceptEncoding(in http.Header, x *exchange) string {
	if x.mode == modeOffload && g.offloadAE != config.OffloadOriginNegotiate {
		return string(compress.Identity)
	}
	return compress.MirrorOriginAcceptEncoding(compress.ParseAcceptEncoding(in.Values("Accept-Encoding")))
}

// setForwarded tells the origin who the client is. ReverseProxy has already
// removed any Forwarded and X-Forwarded-* the client sent; from a trusted
// proxy they are put back and extended, from anyone else they are replaced
// by what this hop observed.
func (g *Guest) setForwarded(pr *httputil.ProxyRequest, x *exchange) {
	if !x.view.trusted {
		pr.SetXForwarded()
		return
	}
	in := pr.In.Header
	for _, h := range []string{"Forwarded", "X-Forwarded-Host", "X-Forwarded-Proto"} {
		if v := in.Values(h); len(v) > 0 {
			pr.Out.Header[h] = append([]string(nil), v...)
		}
	}
	prior := strings.Join(in.Values("X-Forwarded-For"), ", ")
	pr.SetXForwarded() // sets X-Forwarded-For to the client address, Host and Proto
	if prior != "" {
		pr.Out.Header.Set("X-Forwarded-For", prior+", "+pr.Out.Header.Get("X-Forwarded-For"))
	}
	if v := in.Get("X-Forwarded-Host"); v != "" {
		pr.Out.Header.Set("X-Forwarded-Host", v)
	}
	if v := in.Get("X-Forwarded-Proto"); v != "" {
		pr.Out.Header.Set("X-Forwarded-Proto", v)
	}
}
