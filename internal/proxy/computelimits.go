package proxy

import (
	"net/http"
	"net/http/httputil"
	"sync"
	"time"
)

// Fastly's limits on the client request, applied under compute.limits =
// "fastly" before the guest runs and so before anything reaches the origin
// (docs/behaviour.md, "Fidelity").
const (
	// fastlyMaxURLBytes: "URL size 8KB: exceeding the limit results in a
	// 414 URI Too Long error"
	// (https://docs.fastly.com/products/network-services-resource-limits#request-and-response-limits),
	// and "Maximum length of a URL 8192 bytes"
	// (https://docs.fastly.com/products/compute-resource-limits).
	fastlyMaxURLBytes = 8192
	// fastlyMaxHeaderBytes: "Maximum length of a request header 69KB per
	// header" (https://docs.fastly.com/products/compute-resource-limits).
	// Fastly's docs give no status for it on Compute; VCL services answer
	// 503 with "Header overflow"
	// (https://www.fastly.com/documentation/reference/vcl/constraints-and-limitations).
	// ssatd sends that body with 431 (RFC 6585 §5): client input never
	// gets a 5xx from ssatd, and 431 is what Go's server already answers
	// past server.max_header_bytes.
	fastlyMaxHeaderBytes = 69 << 10
	// fastlyMaxHeaderCount: "Request header count 255 ... a response with
	// \"Header overflow\" in the body is emitted" (the VCL page above; the
	// Compute page names no count, and the same edge receives both).
	fastlyMaxHeaderCount = 255
	// fastlyMaxCookieBytes: "Cookie size 32KB: exceeding the limit results
	// in Fastly stripping the cookie and setting
	// req.http.Fastly-Cookie-Overflow" (network services page above;
	// https://www.fastly.com/documentation/reference/http/http-headers/Fastly-Cookie-Overflow/).
	fastlyMaxCookieBytes = 32 << 10
)

// The status and body of a sandbox that hit a resource limit. Fastly
// documents 503 for the wall-clock limit and "typically 500 or 503" for the
// CPU and heap limits, without a body
// (https://www.fastly.com/documentation/reference/compute/errors); ssatd
// sends 503 for both, with a plain-text body naming the limit.
var (
	errCPULimit = &guestError{status: http.StatusServiceUnavailable, reason: reasonCPULimit,
		msg: "the page used more CPU than compute.cpu_limit_ms"}
	errRuntimeLimit = &guestError{status: http.StatusServiceUnavailable, reason: reasonRuntimeLimit,
		msg: "the request ran longer than compute.max_runtime"}
)

// urlTooLong and headersOverflow are the refusals (refusals.go) of
// Fastly's edge, which answers them before the guest runs.
func (g *Guest) urlTooLong(r *http.Request) bool {
	return g.enforced && len(r.RequestURI) > fastlyMaxURLBytes
}

func (g *Guest) headersOverflow(r *http.Request) bool {
	return g.enforced && headerOverflow(r.Header)
}

// stripOverflowCookie removes a Cookie over Fastly's limit, as Fastly
// removes it, and marks the request with Fastly-Cookie-Overflow: 1; the
// request goes on.
func (g *Guest) stripOverflowCookie(r *http.Request) {
	if g.enforced && cookieBytes(r.Header) > fastlyMaxCookieBytes {
		r.Header.Del("Cookie")
		r.Header.Set("Fastly-Cookie-Overflow", "1")
	}
}

// headerOverflow reports a request over Fastly's header count, or with one
// field line, name and value, over its per-header length.
func headerOverflow(h http.Header) bool {
	n := 0
	for k, vs := range h {
		for _, v := range vs {
			n++
			if len(k)+len(v) > fastlyMaxHeaderBytes {
				return true
			}
		}
	}
	return n > fastlyMaxHeaderCount
}

func cookieBytes(h http.Header) int {
	n := 0
	for _, v := range h.Values("Cookie") {
		n += len(v)
	}
	return n
}

// startRuntimeLimit ends the request compute.max_runtime after it
// started, as Fastly ends a sandbox at its wall-clock limit: 503 before the
// response headers, an aborted response after. It cancels the request with
// cause errRuntimeLimit (failureOf), which ends every wait on the origin or
// the auction, and then sets a write deadline of now on w, which ends a
// write blocked on a client that stopped reading (server.write_timeout
// would otherwise hold it longer) as a runtime-limit failure. The 503 is
// written only once both are done, with the deadline lifted
// (runtimeLimit.answering). The returned func stops the timer; once it has
// returned, w is not touched.
func (g *Guest) startRuntimeLimit(x *exchange, w http.ResponseWriter) (stop func()) {
	if g.maxRuntime <= 0 {
		return func() {}
	}
	l := &runtimeLimit{w: w}
	x.runtime = l
	l.timer = time.AfterFunc(g.maxRuntime-time.Since(x.start), func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.done {
			return
		}
		x.cancel(errRuntimeLimit)
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now())
	})
	return l.stop
}

// runtimeLimit is one request's compute.max_runtime timer.
type runtimeLimit struct {
	w     http.ResponseWriter
	timer *time.Timer
	mu    sync.Mutex
	done  bool // the timer may no longer touch w
}

func (l *runtimeLimit) stop() {
	l.timer.Stop()
	l.mu.Lock()
	l.done = true
	l.mu.Unlock()
}

// answering is called before the 503 of a request ended at the limit is
// written: it waits until the timer has set its deadline (the cause is set
// just before, under the same lock), then lifts it, so that the answer is
// not cut off by it. server.write_timeout, when set, arms its own per
// write.
func (l *runtimeLimit) answering() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done = true
	_ = http.NewResponseController(l.w).SetWriteDeadline(time.Time{})
}

// nativeCPULimit is compute.cpu_limit_ms in this machine's CPU; 0 = off.
func (c computeOptions) nativeCPULimit() time.Duration {
	if c.cpuLimit <= 0 {
		return 0
	}
	return time.Duration(float64(c.cpuLimit) / c.cpuScale)
}

// spoofableForwarded are the headers Trusted Server's guest strips from
// every client request on Fastly, so that a client cannot choose the host
// or scheme it sees (crates/trusted-server-core/src/http_util.rs,
// SPOOFABLE_FORWARDED_HEADERS, called from the Fastly adapter's main.rs);
// its publisher fetch drops fastly-ssl again before the origin
// (publisher.rs). The adapter also removes any client-sent
// x-ts-tls-protocol and x-ts-tls-cipher before setting them from the TLS
// connection; ssatd has no TLS metadata of Fastly's to set, so it only
// removes them.
var spoofableForwarded = []string{"Forwarded", "X-Forwarded-Host", "X-Forwarded-Proto", "Fastly-SSL",
	"X-Ts-Tls-Protocol", "X-Ts-Tls-Cipher"}

// setFastlyView builds the forwarding headers of compute.request_view =
// "fastly": those the origin gets from Trusted Server on Compute. ssatd
// adds none of its own. X-Forwarded-For goes on as the client sent it, if
// it did: Fastly does not modify it in Compute services
// (https://www.fastly.com/documentation/reference/http/http-headers/X-Forwarded-For/)
// and Trusted Server neither strips nor sets it for the origin.
func setFastlyView(pr *httputil.ProxyRequest) {
	for _, h := range spoofableForwarded {
		pr.Out.Header.Del(h)
	}
	if xff := pr.In.Header.Values("X-Forwarded-For"); len(xff) > 0 {
		pr.Out.Header["X-Forwarded-For"] = xff
	}
}
