package proxy

import (
	"net/http"
	"net/url"
	"time"

	"github.com/ssatd/ssatd/internal/auction"
	"github.com/ssatd/ssatd/internal/compress"
	privacy "github.com/ssatd/ssatd/internal/consent"
	"github.com/ssatd/ssatd/internal/hostport"
	"github.com/ssatd/ssatd/internal/ssat"
)

// The endpoints Trusted Server's client script (tsjs) calls back after the
// first view (docs/behaviour.md, "tsjs callbacks"). Their paths are
// upstream's: crates/trusted-server-adapter-axum/src/app.rs (named_routes)
// and crates/trusted-server-core/src/publisher.rs (PAGE_BIDS_PATH,
// PAGE_BIDS_LEGACY_PATH).
const (
	auctionPath        = "/auction"
	pageBidsPath       = "/_ts/page-bids"
	pageBidsLegacyPath = "/__ts/page-bids"
)

// noStorePrivate is the policy of every tsjs callback answer: it is made
// for one reader and must never be stored, by a browser or a shared cache
// (upstream's NO_STORE_PRIVATE_CACHE_CONTROL, cache_policy.rs).
const noStorePrivate = "no-store, private"

// serveTsjs answers tsjs's callbacks itself, never sending them to the
// origin, and reports whether r was one. Methods upstream does not route
// on /_ts/page-bids (anything but GET and OPTIONS) go to the origin, as
// upstream's publisher fallback sends them.
func (g *Guest) serveTsjs(fw *firstByteWriter, r *http.Request, x *exchange) bool {
	var serve func(http.ResponseWriter, *http.Request, *exchange)
	switch {
	case r.URL.Path == auctionPath:
		x.route, serve = routeAuction, g.serveAuction
	case (r.URL.Path == pageBidsPath || r.URL.Path == pageBidsLegacyPath) &&
		(r.Method == http.MethodGet || r.Method == http.MethodOptions):
		x.route, serve = routePageBids, g.servePageBids
	default:
		return false
	}
	// A callback runs an auction, so it takes its place among the requests
	// in progress like any other request (docs/behaviour.md, "Admission
	// order"), and is refused 503 with Retry-After when they are full.
	x.client = g.clientKey(r, x)
	if place, err := admitShared(r.Context(), g.clientRequests, g.requests, x.client, g.requests.deadline(0)); err != nil {
		x.ctx = r.Context()
		g.answerError(fw, r, x, err)
	} else {
		serve(fw, r, x)
		place.release()
	}
	x.status, x.outCoding, x.outBytes = fw.status, string(compress.Identity), fw.written
	g.finish(r, x)
	return true
}

// refuseCallback answers a refused callback with a plain-text reason,
// logged as a refusal of client input, not counted as a failure. The
// no-store, private policy is already set.
func (g *Guest) refuseCallback(w http.ResponseWriter, x *exchange, status int, r reason, msg string, err error) {
	g.recordFailure(x, outcomeOK, r, err)
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// runCallbackAuction runs the configured auction for a callback under
// timeout, and returns once the provider has returned: Stop cancels the
// call and waits for it, so it does not outlive the request.
func (g *Guest) runCallbackAuction(r *http.Request, x *exchange, req auction.Request, timeout time.Duration) map[string]ssat.Bid {
	x.auctionStart = time.Now()
	c := auction.Start(r.Context(), g.provider, req, timeout)
	bids, out := c.Wait(r.Context())
	c.Stop()
	x.auctionOut, x.auctionTook = out, time.Since(x.auctionStart)
	return bids
}

// callbackAuctionRequest is what the auction may know of a callback: the
// same client facts a page's auction gets, for the page at pagePath.
func (g *Guest) callbackAuctionRequest(x *exchange, r *http.Request, d privacy.Decision, pageURL string) auction.Request {
	req := g.auctionRequest(x, r, d)
	req.PageURL = pageURL
	if u, err := url.Parse(pageURL); err == nil {
		req.Path = u.Path
	}
	return req
}

// callbackPageURL is the page a POST /auction bids for: its Referer when
// that is an http(s) URL on the host the client used, without credentials,
// query or fragment, else the site's root. This is upstream's
// sanitize_publisher_page_url (auction/formats.rs), keyed on the request's
// host (ssatd may serve several) instead of publisher.domain alone: the
// query can carry private data and must not reach bidders.
func callbackPageURL(r *http.Request, v clientView) string {
	root := v.scheme + "://" + v.host + "/"
	ref := r.Header.Get("Referer")
	if ref == "" || len(ref) > 8192 {
		return root
	}
	u, err := url.Parse(ref)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || !sameHostName(u.Host, v.host) {
		return root
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return u.String()
}

// sameHostName compares two host[:port] values by host name only.
func sameHostName(a, b string) bool {
	return hostport.SameName(a, b)
}
