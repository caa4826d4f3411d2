package proxy

import (
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// Why a request is not SSAT-eligible (docs/behaviour.md, "Eligibility"); logged with each request.
const (
	ineligibleMethod     = "method"
	ineligibleNotDoc     = "not_document"
	ineligiblePrefetch   = "prefetch"
	ineligibleBot        = "bot"
	ineligibleNoSlot     = "no_slot"
	ineligibleNoAuction  = "auction_disabled"
	ineligibleConsent    = "consent" // [consent] require_tcf_purpose1 and no purpose 1 consent
	ineligibleNone       = ""
	secFetchDestDocument = "document"
)

// eligibility applies the gates of "Eligibility" in docs/behaviour.md that depend on the request alone;
// the slot match is done by the caller. It returns "" when all pass.
func (g *Guest) eligibility(r *http.Request) string {
	// HEAD is judged like GET so that it gets GET's headers (RFC 9110
	// §9.3.2); it gets no auction, having no body to put bids in.
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return ineligibleMethod
	}
	if !isDocumentNavigation(r.Header) {
		return ineligibleNotDoc
	}
	if isPrefetch(r.Header) {
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

// isPrefetch: Chrome sends Sec-Purpose: prefetch, older browsers Purpose.
func isPrefetch(h http.Header) bool {
	for _, name := range []string{"Sec-Purpose", "Purpose", "X-Purpose", "X-Moz"} {
		for _, v := range h.Values(name) {
			if strings.Contains(strings.ToLower(v), "prefetch") {
				return true
			}
		}
	}
	return false
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
