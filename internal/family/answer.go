package family

import (
	"net/http"
	"strconv"
)

// Policy is the Cache-Control of an answer the guest or a route family
// writes itself rather than the origin. The constants are the whole
// table; the one other value is an eligible page's configured policy
// (publisher.ssat_cache_control), which the page path passes as
// Policy(value).
type Policy string

const (
	// Unstated sends no Cache-Control: the answer carries another header
	// that says what matters (a 405's Allow, a 411's Connection: close).
	Unstated Policy = ""
	// NoStore is for a refusal or failure that says nothing about the
	// resource asked for: no cache may keep it (RFC 9111 §5.2.2.5).
	NoStore Policy = "no-store"
	// NoStorePrivate is for an answer made for one reader, every tsjs
	// callback's included: never stored, by a browser or a shared cache
	// (upstream's NO_STORE_PRIVATE_CACHE_CONTROL,
	// crates/trusted-server-core/src/cache_policy.rs).
	NoStorePrivate Policy = "no-store, private"
)

// Answer is a plain-text answer: a status, the reason it is recorded
// under, a one-line message and the policy caches get. It is the one shape
// of every error or refusal ssatd writes on the client side, so that each
// carries the same Content-Type, nosniff and cache policy.
type Answer struct {
	Status int
	// Reason is what Seam.Refuse records; Write ignores it.
	Reason Reason
	// Msg is the body, without its final newline.
	Msg    string
	Policy Policy
	// RetryAfter, in seconds, is sent as Retry-After when positive
	// (delay-seconds form, RFC 9110 §10.2.3).
	RetryAfter int
}

// Write sends a on w. Headers already set on w stay, except those it
// sets and Content-Length, which was for some other body (as http.Error
// drops it). The body is Msg and a newline.
func (a Answer) Write(w http.ResponseWriter) {
	h := w.Header()
	h.Del("Content-Length")
	if a.Policy != Unstated {
		h.Set("Cache-Control", string(a.Policy))
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	if a.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(a.RetryAfter))
	}
	w.WriteHeader(a.Status)
	_, _ = w.Write([]byte(a.Msg + "\n"))
}
