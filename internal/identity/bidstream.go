package identity

import (
	"context"
	"net/http"
	"slices"
	"strings"

	privacy "github.com/ssatd/ssatd/internal/consent"
	"github.com/ssatd/ssatd/internal/openrtb"
)

// Bidstream is what a bid request carries of the reader's identity
// (auction/endpoints.rs:175-285, ec/eids.rs:18-75): user.id is the
// request's ts-ec when consent allows the edge cookie, and user.ext.eids
// the uids its entry holds for partners with bidstream_enabled, sorted by
// source, when consent allows them too. d is the request's consent
// decision; minted is the id Mint gave a request without a cookie, "" if
// none. A nil Family, or no store, gives the id alone at most.
func (f *Family) Bidstream(r *http.Request, d privacy.Decision, minted string) (userID string, eids []openrtb.EID) {
	if f == nil || !d.EC.Allowed {
		return "", nil
	}
	id := cookieID(cookieValues(r))
	if !Valid(id) {
		id = minted
	}
	if !Valid(id) {
		return "", nil
	}
	if f.graph == nil || !d.EC.EIDs || !slices.ContainsFunc(f.all, func(p *partner) bool { return p.BidstreamEnabled }) {
		return id, nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	e, _, ok, err := f.graph.get(ctx, id)
	if err != nil {
		f.failed(err, "bid request without partner ids: store read failed", id)
		return id, nil
	}
	if !ok || !e.Consent.OK {
		return id, nil
	}
	for _, p := range f.all {
		if u := e.IDs[p.SourceDomain].UID; p.BidstreamEnabled && u != "" {
			eids = append(eids, openrtb.EID{Source: p.SourceDomain, UIDs: []openrtb.UID{{ID: u, Atype: p.OpenRTBAtype}}})
		}
	}
	slices.SortFunc(eids, func(a, b openrtb.EID) int { return strings.Compare(a.Source, b.Source) })
	return id, eids
}
