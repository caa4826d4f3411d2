package proxy

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/forwarded"
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
	// connects. The client's path and query are kept as they came
	// (keepClientTarget).
	keepClientTarget(pr)
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
// that was is in X-Forwarded-Host. The rest passes as it came, each field
// line on its own, quoted values quoted.
func withoutForwardedHost(values []string) []string {
	var out []string
	for _, v := range values {
		var elems []string
		for _, e := range forwarded.ParseLine(v) {
			if s := e.String("host"); s != "" {
				elems = append(elems, s)
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

// keepClientTarget gives the origin request the client's path and query
// as they came, byte for byte, but for the bytes that cannot be in a
// request-target, which go percent-encoded (escapeTarget): "A proxy MUST
// NOT modify the absolute-path and query parts of the received target URI"
// (RFC 9110 §7.7). Left to ReverseProxy, a query holding a ';' or a '%'
// not followed by two hex digits went through url.ParseQuery, which drops
// each parameter it cannot parse and sorts the rest ("?a=1;b=2" and
// "?q=100%" reached the origin as no query at all), and a path that Go
// would not write as it came (a '|' or '^', which browsers send as they
// are, or a byte above 0x7f) was decoded and encoded again, so "/a%2Fb|c"
// reached the origin as "/a/b%7Cc", another path. pr.Out.URL is still
// the client's here, so SetURL joins this path to the origin's.
func keepClientTarget(pr *httputil.ProxyRequest) {
	in, out := pr.In.URL, pr.Out.URL
	out.RawQuery = escapeTarget(in.RawQuery, false)
	if in.RawPath == "" {
		return // Go writes Path back as the client sent it
	}
	if p, err := url.PathUnescape(in.RawPath); err != nil || p != in.Path {
		return
	}
	// escapeTarget leaves only bytes that url.URL.EscapedPath takes as
	// they are, so it writes RawPath, not a re-encoding of Path.
	out.RawPath = escapeTarget(in.RawPath, true)
}

// escapeTarget percent-encodes the bytes of a raw path or query that a
// request-target cannot hold but that a request may still carry: bytes
// above 0x7f, which an HTTP/2 :path (or a lenient HTTP/1 client) may send
// as they are (a request-target is ASCII, RFC 9112 §3.2, RFC 3986 §3.4;
// browsers send such bytes percent-encoded, the WHATWG URL standard's path
// and query states), and '#', which would end the target at the origin
// (RFC 3986 §3.5) where ssatd saw more. In a path it also encodes the ASCII
// that Go's url package will not write as it is (url.URL.EscapedPath falls
// back to re-encoding the whole path then): '"', '<', '>', '\', '^', '`',
// '{', '|', '}'. Whitespace and control bytes never get here
// (badRequestTarget). Percent-escapes already there stay as they are.
func escapeTarget(s string, path bool) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if mustEscape(s[i], path) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		if c := s[i]; mustEscape(c, path) {
			b = append(b, '%', hex[c>>4], hex[c&15])
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}

// mustEscape is escapeTarget's byte rule.
func mustEscape(c byte, path bool) bool {
	switch {
	case c >= 0x80 || c == '#':
		return true
	case path:
		return strings.IndexByte("\"<>\\^`{|}", c) >= 0
	}
	return false
}
