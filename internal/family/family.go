// Package family is the seam between ssatd's client-side route table and
// the route families that serve paths of their own beside the origin's
// pages: what every route needs from the guest that runs it, without being
// part of that guest (internal/proxy).
//
// The route table (internal/proxy, routes.go) says which family serves
// which method and path; everything else falls through to the page path,
// which proxies the origin. For each request it serves, the table has
// already refused bad request-targets and methods, and opened the
// request's record; for a route that runs work for a client (an auction)
// it has also admitted the request among those in progress, answering 503
// itself when they are full. When the family's handler returns, the table
// closes the record: the status and bytes the handler wrote, the access
// line, the metrics and the request's span. A family therefore never
// writes an access line, a metric or a reason: it tells the Seam what it
// decided, and answers errors through it.
//
// A family is a package exposing http.Handlers built from a Seam (see
// internal/tsjs); adding one is a line in the route table and the package.
package family

import (
	"net/http"
	"net/netip"
	"strings"
	"time"

	"go.uber.org/zap"

	privacy "github.com/ssatd/ssatd/internal/consent"
	"github.com/ssatd/ssatd/internal/ssat"
)

// Seam is what a route family gets from the guest that runs it. The
// methods taking r act on the record the route table opened for r, so r
// must be the request the family's handler was given (or one derived from
// it, sharing its context); for a request the table did not open they
// record nothing, View and Consent return zero values, and Auction runs
// none. A Seam is safe for concurrent use.
type Seam interface {
	// View is the client's side of r as the guest worked it out when r
	// arrived: the host and scheme links must point at. It is not
	// computed again.
	View(r *http.Request) View

	// Refuse answers r with a, a refusal of what the client asked: its
	// reason and err go to the access line, and it is not counted as a
	// failure. Headers already set on w stay (a.Write).
	Refuse(w http.ResponseWriter, r *http.Request, a Answer, err error)

	// Ineligible records why r runs no auction, one of the Ineligible*
	// names, for its access line.
	Ineligible(r *http.Request, why string)

	// Consent is r's consent decision, as the page path decides it (its
	// country and region from [geo]); strings that do not decode are
	// logged once here and count as no consent.
	Consent(r *http.Request) privacy.Decision

	// Slots are the configured slots whose page patterns match path, as a
	// page on that path gets them.
	Slots(path string) []ssat.Slot

	// IsBot reports whether userAgent is one of bots.user_agents.
	IsBot(userAgent string) bool

	// Auction runs the configured auction for r under c.Timeout and
	// returns once the provider has returned, so that nothing outlives r:
	// the winning bids by slot ID, their creatives made first party for
	// c.Render, and how long the auction took. It
	// records r as eligible, with the auction's outcome and duration.
	Auction(r *http.Request, c AuctionCall) (bids map[string]ssat.Bid, took time.Duration)

	// Logger is the guest's logger, for what a family logs besides the
	// access line.
	Logger() *zap.Logger
}

// View is the client-facing side of a request: request_host and
// request_scheme of "URL rewriting" in docs/behaviour.md. Host is one the
// publisher allows (a forged Host is replaced by publisher.domain); both
// come from Forwarded and X-Forwarded-* only when the peer is a trusted
// proxy.
type View struct {
	Host   string // host[:port], lower case
	Scheme string // "http" or "https"
	// ClientIP is the client's address (the peer's, or a trusted proxy's
	// forwarded one); zero when unknown.
	ClientIP netip.Addr
}

// AuctionCall is an auction a family runs for a request: the slots, the
// page the bids are for (an absolute URL whose path is the auction's
// path), the consent decision from Seam.Consent, and the deadline.
type AuctionCall struct {
	Slots   []ssat.Slot
	PageURL string
	Consent privacy.Decision
	Timeout time.Duration
	// Render is where the bids' creatives are rendered, which decides how
	// the guest makes them first party.
	Render Render
}

// Render is where winning creatives are rendered (docs/behaviour.md,
// "First-party routes").
type Render uint8

const (
	// RenderInline: in the page, or in a frame of a foreign origin that
	// the page's bids reach (the page's bids, /_ts/page-bids):
	// ${AUCTION_PRICE} expanded, absolute first-party URLs, no bundle.
	RenderInline Render = iota
	// RenderAuction: in a frame tsjs builds on the publisher's origin from
	// the POST /auction answer: root-relative URLs, the bundle in <body>.
	RenderAuction
)

// Why a request is not SSAT-eligible (docs/behaviour.md, "Eligibility"):
// the access line's ineligible field.
const (
	IneligibleMethod    = "method"
	IneligibleNotDoc    = "not_document"
	IneligiblePrefetch  = "prefetch"
	IneligibleBot       = "bot"
	IneligibleNoSlot    = "no_slot"
	IneligibleNoAuction = "auction_disabled"
	IneligibleConsent   = "consent" // the consent policy refuses
	IneligibleNone      = ""
)

// IsPrefetch reports a speculative request: Chrome sends Sec-Purpose:
// prefetch, older browsers Purpose, X-Purpose or X-Moz.
func IsPrefetch(h http.Header) bool {
	for _, name := range []string{"Sec-Purpose", "Purpose", "X-Purpose", "X-Moz"} {
		for _, v := range h.Values(name) {
			if strings.Contains(strings.ToLower(v), "prefetch") {
				return true
			}
		}
	}
	return false
}
