package proxy

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	privacy "github.com/ssatd/ssatd/internal/consent"
	"github.com/ssatd/ssatd/internal/family"
	"github.com/ssatd/ssatd/internal/ssat"
)

// Why a request is not SSAT-eligible (docs/behaviour.md, "Eligibility");
// logged with each request. The names are the seam's (internal/family),
// which route families record too.
const (
	ineligibleMethod     = family.IneligibleMethod
	ineligibleNotDoc     = family.IneligibleNotDoc
	ineligiblePrefetch   = family.IneligiblePrefetch
	ineligibleBot        = family.IneligibleBot
	ineligibleNoSlot     = family.IneligibleNoSlot
	ineligibleNoAuction  = family.IneligibleNoAuction
	ineligibleConsent    = family.IneligibleConsent // the consent policy refuses (consentgate.go)
	ineligibleNone       = family.IneligibleNone
	secFetchDestDocument = "document"
)

// decideEligibility decides whether the request is SSAT-eligible and, if
// it is, its slots (docs/behaviour.md, "Eligibility"): x.ineligible,
// x.eligible, x.slots and x.adPath. It returns the request's consent
// decision, for the auction.
func (g *Guest) decideEligibility(x *exchange, r *http.Request) (d privacy.Decision) {
	x.ineligible = g.eligibility(r)
	if x.ineligible == ineligibleNone {
		x.slots = g.matchSlots(r.URL.Path)
		switch {
		case len(x.slots) == 0:
			x.ineligible = ineligibleNoSlot
		default:
			if d = g.decideConsent(x, r); !d.Allowed {
				x.ineligible = ineligibleConsent
			}
		}
	}
	x.eligible = x.ineligible == ineligibleNone
	x.adPath = x.eligible || (g.auctionEnabled && g.hasSlot(r.URL.Path))
	return d
}

// eligibility applies the gates of "Eligibility" in docs/behaviour.md that
// depend on the request alone. It returns "" when all pass.
func (g *Guest) eligibility(r *http.Request) string {
	// HEAD is judged like GET so that it gets GET's headers (RFC 9110
	// §9.3.2); it gets no auction, having no body to put bids in.
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return ineligibleMethod
	}
	if !isDocumentNavigation(r.Header) {
		return ineligibleNotDoc
	}
	if family.IsPrefetch(r.Header) {
		return ineligiblePrefetch
	}
	if g.isBot(r.UserAgent()) {
		return ineligibleBot
	}
	if !g.auctionEnabled {
		return ineligibleNoAuction
	}
	return ineligibleNone
}

// isDocumentNavigation: Sec-Fetch-Dest says so when present (Fetch Metadata);
// otherwise an Accept that lists text/html, where "*/*" alone does not count
// because every sub-resource request sends it.
func isDocumentNavigation(h http.Header) bool {
	if dest := h.Values("Sec-Fetch-Dest"); len(dest) > 0 {
		return strings.EqualFold(strings.TrimSpace(dest[0]), secFetchDestDocument)
	}
	for _, v := range h.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil || mt != "text/html" {
				continue
			}
			if q, ok := params["q"]; ok && isZeroQ(q) {
				continue
			}
			return true
		}
	}
	return false
}

// isZeroQ reports an explicit refusal (q=0); an unparsable q is ignored.
func isZeroQ(q string) bool {
	f, err := strconv.ParseFloat(strings.TrimSpace(q), 64)
	return err == nil && f == 0
}

func (g *Guest) isBot(ua string) bool {
	if ua == "" {
		return false
	}
	ua = strings.ToLower(ua)
	for _, b := range g.bots {
		if strings.Contains(ua, b) {
			return true
		}
	}
	return false
}

func (g *Guest) hasSlot(path string) bool {
	for i := range g.slots {
		if g.slots[i].Matches(path) {
			return true
		}
	}
	return false
}

func (g *Guest) matchSlots(path string) []ssat.Slot {
	var out []ssat.Slot
	for i := range g.slots {
		s := &g.slots[i]
		if !s.Matches(path) {
			continue
		}
		div := s.DivID
		if div == "" {
			div = s.ID
		}
		out = append(out, ssat.Slot{DivID: div, Formats: s.Formats, GAMUnitPath: s.GAMUnitPath, ID: s.ID, Targeting: s.Targeting,
			Bidders: s.BidderParams, FloorPrice: s.FloorPrice})
	}
	return out
}
