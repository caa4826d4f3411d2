package proxy

import (
	"net/http"

	"golang.org/x/net/http/httpguts"

	"github.com/ssatd/ssatd/internal/family"
)

// refusal is a request the guest answers itself, before any origin
// request, because forwarding it would be wrong.
type refusal struct {
	refuses func(g *Guest, r *http.Request) bool
	answer  family.Answer
	// outcome is outcomeOK for a refusal of what a client may not ask
	// (logged with its reason, not counted as a failure), outcomeError for
	// a failure of the deployment (counted).
	outcome string
	header  [2]string // one more header to set, name and value, when not ""
	warn    string    // logged at warn level when not ""
}

// refusals are checked in order (docs/behaviour.md, "Errors").
var refusals = []refusal{
	{
		// Fastly's edge answers these before the guest runs
		// (computelimits.go, where the limits and their sources are).
		refuses: (*Guest).urlTooLong,
		answer: family.Answer{Status: http.StatusRequestURITooLong, Reason: reasonURLTooLong, Policy: family.NoStore,
			Msg: "414 URI Too Long: the URL is longer than 8192 bytes"},
		outcome: outcomeOK,
	},
	{
		refuses: (*Guest).headersOverflow,
		answer: family.Answer{Status: http.StatusRequestHeaderFieldsTooLarge, Reason: reasonHeaderOverflow, Policy: family.NoStore,
			Msg: "Header overflow"},
		outcome: outcomeOK,
	},
	{
		// A CONNECT would ask us to tunnel somewhere: ssatd is not a
		// forward proxy (RFC 9110 §9.3.6 lets a server refuse it).
		refuses: func(_ *Guest, r *http.Request) bool { return r.Method == http.MethodConnect },
		answer: family.Answer{Status: http.StatusMethodNotAllowed, Reason: reasonConnectRefused, Policy: family.Unstated,
			Msg: "CONNECT is not supported"},
		outcome: outcomeOK,
		header:  [2]string{"Allow", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"},
	},
	{
		// A request-target has no whitespace or control byte (RFC 9112
		// §3.2; RFC 9113 §8.3.1: :path is an absolute-path and query).
		// Go's HTTP/1 server never lets one through, but a space in an
		// HTTP/2 :path arrives here, and the query keeps it raw: the
		// origin's request line would end early and go on with the
		// client's bytes ("GET /a?x=1 HTTP/1.1 HTTP/1.1"). An invalid
		// request-line is answered 400 (RFC 9112 §3).
		refuses: func(_ *Guest, r *http.Request) bool { return badRequestTarget(r.RequestURI) },
		answer: family.Answer{Status: http.StatusBadRequest, Reason: reasonBadTarget, Policy: family.NoStore,
			Msg: "400 Bad Request: the request-target holds a space or a control character"},
		outcome: outcomeOK,
	},
	{
		// A method is a token (RFC 9110 §9.1). Go's HTTP/1 server refuses
		// any other with 400 itself, but its HTTP/2 server lets a :method
		// such as "G\xffT" through, and the origin transport then refused
		// to send it ("net/http: invalid method"): a 502 for the client's
		// own malformed request.
		refuses: func(_ *Guest, r *http.Request) bool { return !httpguts.ValidHeaderFieldName(r.Method) },
		answer: family.Answer{Status: http.StatusBadRequest, Reason: reasonBadMethod, Policy: family.NoStore,
			Msg: "400 Bad Request: the method is not a token"},
		outcome: outcomeOK,
	},
	{
		// A request body delimited by Transfer-Encoding is refused (RFC
		// 9112 §6.3 allows 411): net/http silently drops a Content-Length
		// sent alongside it, and a front proxy that honoured that
		// Content-Length would frame the stream differently (request
		// smuggling). Browsers and form posts send Content-Length.
		refuses: func(_ *Guest, r *http.Request) bool { return len(r.TransferEncoding) > 0 },
		answer: family.Answer{Status: http.StatusLengthRequired, Reason: reasonRequestTE, Policy: family.Unstated,
			Msg: "411 Length Required: request bodies must carry a Content-Length"},
		outcome: outcomeOK,
		header:  [2]string{"Connection", "close"},
	},
	{
		// The request has been through this guest before: the origin
		// leads back here. Forwarding again would repeat until resources
		// run out; 508 (RFC 5842 §7.2) ends it after one hop.
		refuses: (*Guest).looped,
		answer: family.Answer{Status: http.StatusLoopDetected, Reason: reasonLoop, Policy: family.NoStore,
			Msg: "508 Loop Detected: publisher.origin_url leads back to ssatd"},
		outcome: outcomeError,
		warn:    "request loop: the origin leads back to ssatd; check publisher.origin_url",
	},
}

// refuse answers r itself when a refusal applies, and reports whether it
// did; the request is then finished.
func (g *Guest) refuse(w http.ResponseWriter, r *http.Request, x *exchange) bool {
	for i := range refusals {
		f := &refusals[i]
		if !f.refuses(g, r) {
			continue
		}
		x.route, x.status = routeRejected, f.answer.Status
		g.recordFailure(x, f.outcome, f.answer.Reason, nil)
		if f.warn != "" {
			g.log.Warn(f.warn, pathField(r.URL))
		}
		if f.header[0] != "" {
			w.Header().Set(f.header[0], f.header[1])
		}
		f.answer.Write(w)
		g.finish(r, x)
		return true
	}
	return false
}

// badRequestTarget reports whether target holds a byte that cannot be in
// an HTTP/1.1 request-target: whitespace, a control character or DEL.
// Bytes above 0x7f are not refused; rewriteOriginRequest percent-encodes
// them (escapeTarget).
func badRequestTarget(target string) bool {
	for i := 0; i < len(target); i++ {
		if b := target[i]; b <= ' ' || b == 0x7f {
			return true
		}
	}
	return false
}
