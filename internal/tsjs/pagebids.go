package tsjs

import (
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/family"
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
func (f *Family) servePageBids(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", string(family.NoStorePrivate))
	if r.Method == http.MethodOptions {
		// The gate below trusts X-TSJS-Page-Bids because no preflight is
		// ever granted (publisher.rs, page_bids_preflight_denied).
		f.refuse(w, r, http.StatusForbidden, family.PageBidsPreflight, "Forbidden", nil)
		return
	}
	if !pageBidsAllowed(r.Header) {
		f.refuse(w, r, http.StatusForbidden, family.PageBidsCrossSite, "Forbidden", nil)
		return
	}
	if r.URL.Path == PageBidsLegacyPath {
		f.logDeprecatedAlias(r)
		w.Header().Set("Link", deprecationLink)
	}
	if !f.haveSlots {
		f.refuse(w, r, http.StatusNotFound, family.PageBidsNoSlots, "Creative opportunities not configured", nil)
		return
	}
	q := r.URL.Query()
	if q.Has("format") && q.Get("format") != "json" {
		f.refuse(w, r, http.StatusBadRequest, family.PageBidsFormat, "Unknown format", nil)
		return
	}
	path := "/"
	if q.Has("path") {
		path = normalizePageBidsPath(q.Get("path"))
	}
	writeJSON(w, f.pageBids(r, path))
}

// pageBids matches the slots for path and runs the auction for them
// unless the ad stack is off for this request. When the auction is
// disabled or consent is missing, no slots are returned either, so the
// client builds no ad slots; a bot or a prefetch keeps the slots but gets
// no auction (publisher.rs, handle_page_bids).
func (f *Family) pageBids(r *http.Request, path string) pageBidsAnswer {
	slots := f.seam.Slots(path)
	decision := f.seam.Consent(r)
	answer := pageBidsAnswer{Slots: []ssat.Slot{}, Bids: map[string]ssat.Bid{}}
	switch {
	case !f.auctionEnabled:
		f.seam.Ineligible(r, family.IneligibleNoAuction)
		return answer
	case !decision.Allowed:
		f.seam.Ineligible(r, family.IneligibleConsent)
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
		f.seam.Ineligible(r, family.IneligibleNoSlot)
	case f.seam.IsBot(r.UserAgent()):
		f.seam.Ineligible(r, family.IneligibleBot)
	case family.IsPrefetch(r.Header):
		f.seam.Ineligible(r, family.IneligiblePrefetch)
	default:
		v := f.seam.View(r)
		// The page's deadline, as upstream's page-bids handler uses
		// creative_opportunities.auction_timeout_ms (IABTechLab/
		// trusted-server crates/trusted-server-core/src/publisher.rs:6433-6435).
		answer.Bids, _ = f.seam.Auction(r, family.AuctionCall{Slots: slots, PageURL: v.Scheme + "://" + v.Host + path,
			Consent: decision, Timeout: f.auctionTimeout})
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
func (f *Family) logDeprecatedAlias(r *http.Request) {
	if r.Header.Get("X-Tsjs-Page-Bids") == pageBidsFallbackMarker {
		f.seam.Logger().Warn("page-bids: served the deprecated alias "+PageBidsLegacyPath+" to a current tsjs bundle that could not use "+
			PageBidsPath+"; check what in front of ssatd answers "+PageBidsPath, zap.String("deprecated_alias", PageBidsLegacyPath))
		return
	}
	f.seam.Logger().Info("page-bids: served the deprecated alias "+PageBidsLegacyPath+" (a tsjs bundle older than the rename)",
		zap.String("deprecated_alias", PageBidsLegacyPath))
}
