package config

import (
	"maps"
	"slices"
)

// What a Trusted Server file configures that ssatd accepts and does not do
// yet: one note per section (or key) the file sets, saying what the
// publisher misses. As ssatd comes to emulate a section, its entry goes.
// Upstream paths are relative to crates/trusted-server-core/src/.

// tsSectionNote is the note for a section, given when the file (or the
// environment) has the section and, where upstream has a switch for it,
// turns it on.
type tsSectionNote struct {
	NotEmulated
	on func(*tsSettings) bool // nil: whenever present
}

var tsSectionNotes = []tsSectionNote{
	{NotEmulated{"ec", "pull sync is not run: partners sync through /_ts/api/v1/batch-sync only (ec/pull_sync.rs)"},
		func(ts *tsSettings) bool {
			return slices.ContainsFunc(ts.EC.Partners, func(p tsPartner) bool { return p.PullSyncEnabled })
		}},
	{NotEmulated{"response_headers", "the headers are not added to responses"}, nil},
	{NotEmulated{"cache", "asset cache rules are not applied; the origin's Cache-Control passes through"},
		func(ts *tsSettings) bool {
			return slices.ContainsFunc(ts.Cache.AssetRules, func(r tsAssetRule) bool { return r.Enabled })
		}},
	{NotEmulated{"image_optimizer", "no image optimisation"}, nil},
	{NotEmulated{"tinybird", "no auction or access events are sent to Tinybird"},
		func(ts *tsSettings) bool { return ts.Tinybird.Enabled || ts.Tinybird.AccessEnabled }},
}

// tsNotEmulated lists the notes for what the file sets.
func tsNotEmulated(ts *tsSettings, tree map[string]any) []NotEmulated {
	var notes []NotEmulated
	for _, n := range tsSectionNotes {
		if _, ok := tree[n.Key]; ok && (n.on == nil || n.on(ts)) {
			notes = append(notes, n.NotEmulated)
		}
	}
	pub, _ := tree["publisher"].(map[string]any)
	pubNotes := map[string]string{
		"max_buffered_body_bytes": "ssatd's limits apply instead ([ssatd.publisher] max_origin_response_bytes, max_decoded_body_bytes)",
	}
	for _, k := range slices.Sorted(maps.Keys(pubNotes)) {
		miss := pubNotes[k]
		if _, ok := pub[k]; ok {
			notes = append(notes, NotEmulated{"publisher." + k, miss})
		}
	}
	if len(ts.Proxy.AssetRoutes) > 0 {
		notes = append(notes, NotEmulated{"proxy.asset_routes", "asset routes are not served: their prefixes reach the publisher's origin (proxy.rs)"})
	}
	a := ts.Auction
	if a.Mediator != nil {
		notes = append(notes, NotEmulated{"auction.mediator", "no mediation: the highest bid per slot wins"})
	}
	if len(a.AllowedContextKeys) > 0 {
		notes = append(notes, NotEmulated{"auction.allowed_context_keys", "no client context is forwarded to providers"})
	}
	if ts.Consent.ConsentStore != nil {
		notes = append(notes, NotEmulated{"consent.consent_store", "consent is not kept per edge-cookie id: a returning reader without consent cookies is decided as a new one (consent/kv.rs)"})
	}
	notes = append(notes, tsDebugNotes(ts)...)
	notes = append(notes, tsCreativeOppNotes(ts)...)
	return append(notes, tsIntegrationNotes(ts)...)
}

func tsDebugNotes(ts *tsSettings) []NotEmulated {
	var notes []NotEmulated
	if ts.Debug.AuctionHTMLComment {
		notes = append(notes, NotEmulated{"debug.auction_html_comment", "no auction dump before </body>"})
	}
	if ts.Debug.JA4EndpointEnabled {
		notes = append(notes, NotEmulated{"debug.ja4_endpoint_enabled", "no JA4 debug endpoint"})
	}
	return notes
}

func tsCreativeOppNotes(ts *tsSettings) []NotEmulated {
	co := ts.CreativeOpportunities
	if co == nil {
		return nil
	}
	var notes []NotEmulated
	if co.AssemblyMode != nil && *co.AssemblyMode != "inline" {
		notes = append(notes, NotEmulated{"creative_opportunities.assembly_mode", "pages are assembled inline; there is no shared template cache"})
	}
	if co.TemplateCacheVary != nil || co.TemplateCacheMaxAgeSeconds != nil || co.OriginIsCookieIndependent != nil {
		notes = append(notes, NotEmulated{"creative_opportunities.template_cache_*", "there is no shared template cache"})
	}
	return notes
}

// tsIntegrationNotes: one note per enabled integration. Prebid's
// server-side auction is emulated (tsmap.go); its client side is not.
func tsIntegrationNotes(ts *tsSettings) []NotEmulated {
	in := ts.Integrations
	enabled := tsEnabledIntegrations(ts)
	delete(enabled, "prebid") // noted apart below
	var notes []NotEmulated
	if pb := in.Prebid; pb != nil && pb.Enabled {
		notes = append(notes, NotEmulated{"integrations.prebid", "only the server-side auction is emulated: Prebid script tags stay in pages and /integrations/prebid/* is not served (integrations/prebid.rs)"})
		if len(pb.BidParamOverrides) > 0 || len(pb.BidParamZoneOverrides) > 0 || len(pb.BidParamOverrideRules) > 0 {
			notes = append(notes, NotEmulated{"integrations.prebid.bid_param_*", "bidder parameter overrides are not applied: only a slot's providers.prebid.bidders are sent"})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(enabled)) {
		if enabled[id] {
			notes = append(notes, NotEmulated{"integrations." + id, "not emulated: its routes under /integrations/" + id + "/, page rewrites and head scripts are missing; its bundle module is loaded only from bundle.dir"})
		}
	}
	return notes
}
