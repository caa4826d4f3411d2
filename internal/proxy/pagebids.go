package proxy

import (
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/ssat"
)

// deprecationLink marks answers on the legacy /__ts/page-bids alias with
// the RFC 9745 "deprecation" link relation, as upstream's
// mark_deprecated_alias (publisher.rs) does.
const deprecationLink = `<https://github.com/IABTechLab/trusted-server/issues/970>; rel="deprecation"`

// pageBidsFallbackMarker is the X-TSJS-Page-Bids value a current tsjs
// sends when it retries the legacy alias (publisher.rs,
// PAGE_BIDS_FALLBACK_MARKER).
const pageBidsFallbackMarker = "fallback"

// pageBidsAnswer is upstream's handle_page_bids body, {"slots", "bids"},
// which tsjs's SPA hook reads into tsjs.adSlots and tsjs.bids
// (integrations/gpt/index.ts, PageBidsResponse). Slots and bids have the
// shape of the page's own scripts (rewrite.AdSlotsScript, BidsScript).
type pageBidsAnswer struct {
	Slots []ssat.Slot         `json:"slots"`
	Bids  map[string]ssat.Bid `json:"bids"`
}

// servePageBids answers the SPA re-auction GET /_ts/page-bids?path= and
// its deprecated alias (docs/behaviour.md, "tsjs callbacks"), in the order
// of upstream's handle_page_bids: the cross-site gate first, then the
// alias's deprecation signal, then the configuration, then the format.
func (g *Guest) servePageBids(w http.ResponseWriter, r *http.Request, x *exchange) {
	w.Header().Set("Cache-Control", noStorePrivate)
	if r.Method == http.MethodOptions {
		// The gate below trusts X-TSJS-Page-Bids because no preflight is
		// ever granted (publisher.rs, page_bids_preflight_denied).
		g.refuseCallback(w, x, http.StatusForbidden, reasonPageBidsPreflight, "Forbidden", nil)
		return
	}
	if !pageBidsAllowed(r.Header) {
		g.refuseCallback(w, x, http.StatusForbidden, reasonPageBidsCrossSite, "Forbidden", nil)
		return
	}
	if r.URL.Path == pageBidsLegacyPath {
		g.logDeprecatedAlias(r)
		w.Header().Set("Link", deprecationLink)
	}
	if len(g.slots) == 0 {
		g.refuseCallback(w, x, http.StatusNotFound, reasonPageBidsNoSlots, "Creative opportunities not configured", nil)
		return
	}
	q := r.URL.Query()
	if q.Has("format") && q.Get("format") != "json" {
		g.refuseCallback(w, x, http.StatusBadRequest, reasonPageBidsFormat, "Unknown format", nil)
		return
	}
	path := "/"
	if q.Has("path") {
		path = normalizePageBidsPath(q.Get("path"))
	}
	writeJSON(w, g.pageBids(r, x, path))
}

// pageBids matches the slots for path and runs the auction for them
// unless the ad stack is off for this request. When the auction is
// disabled or consent is missing, no slots are returned either, so the
// client builds no ad slots; a bot or a prefetch keeps the slots but gets
// no auction (publisher.rs, handle_page_bids).
func (g *Guest) pageBids(r *http.Request, x *exchange, path string) pageBidsAnswer {
	slots := g.matchSlots(path)
	decision := g.decideConsent(x, r)
	answer := pageBidsAnswer{Slots: []ssat.Slot{}, Bids: map[string]ssat.Bid{}}
	switch {
	case !g.auctionEnabled:
		x.ineligible = ineligibleNoAuction
		return answer
	case !decision.Allowed:
		x.ineligible = ineligibleConsent
		return answer
	}
	for _, s := range slots {
		if s.Formats == nil {
			s.Formats = [][]int{}
		}
		if s.Targeting == nil {
			s.Targeting = map[string]any{}
		}
		answer.Slots = append(answer.Slots, s)
	}
	switch {
	case len(slots) == 0:
		x.ineligible = ineligibleNoSlot
	case g.isBot(r.UserAgent()):
		x.ineligible = ineligibleBot
	case isPrefetch(r.Header):
		x.ineligible = ineligiblePrefetch
	default:
		x.slots = slots
		x.eligible = true
		pageURL := x.view.scheme + "://" + x.view.host + path
		// The page's deadline, as upstream's page-bids handler uses
		// creative_opportunities.auction_timeout_ms (IABTechLab/
		// trusted-server crates/trusted-server-core/src/publisher.rs:6433-6435).
		answer.Bids = g.runCallbackAuction(r, x, g.callbackAuctionRequest(x, r, decision, pageURL), g.auctionTimeout)
	}
	return answer
}

// pageBidsAllowed is upstream's same-origin gate (publisher.rs,
// page_bids_request_allowed): Sec-Fetch-Site, when sent, must be
// same-origin (same-site is refused: a sibling origin may not spend the
// visitor's auctions); without it, the non-simple X-TSJS-Page-Bids header
// must be present, which a cross-origin page cannot send without the
// preflight this endpoint never grants.
func pageBidsAllowed(h http.Header) bool {
	if site := h.Values("Sec-Fetch-Site"); len(site) > 0 {
		return site[0] == "same-origin"
	}
	_, ok := h["X-Tsjs-Page-Bids"]
	return ok
}

// normalizePageBidsPath is upstream's normalize_page_bids_path: the part
// before any '?' or '#', with a leading '/'.
func normalizePageBidsPath(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i]
	}
	if !strings.HasPrefix(raw, "/") {
		raw = "/" + raw
	}
	return raw
}

// logDeprecatedAlias says the legacy alias is still in use, separating a
// current bundle that fell back (a deployment problem, which lasts) from
// a bundle older than the rename (which ages out), as upstream does.
func (g *Guest) logDeprecatedAlias(r *http.Request) {
	if r.Header.Get("X-Tsjs-Page-Bids") == pageBidsFallbackMarker {
		g.log.Warn("page-bids: served the deprecated alias "+pageBidsLegacyPath+" to a current tsjs bundle that could not use "+
			pageBidsPath+"; check what in front of ssatd answers "+pageBidsPath, zap.String("deprecated_alias", pageBidsLegacyPath))
		return
	}
	g.log.Info("page-bids: served the deprecated alias "+pageBidsLegacyPath+" (a tsjs bundle older than the rename)",
		zap.String("deprecated_alias", pageBidsLegacyPath))
}
