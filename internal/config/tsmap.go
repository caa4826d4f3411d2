package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// tsMappedFrom names, for each native key that a Trusted Server file sets,
// the upstream key it comes from; the [ssatd] table may not set these.
var tsMappedFrom = map[string]string{
	"publisher.domain":                      "publisher.domain",
	"publisher.origin_url":                  "publisher.origin_url",
	"publisher.origin_host_header_override": "publisher.origin_host_header_override",
	"auction.enabled":                       "auction.enabled",
	"auction.timeout_ms":                    "creative_opportunities.auction_timeout_ms, auction.timeout_ms",
	"auction.post_auction_timeout_ms":       "auction.timeout_ms",
	"auction.provider":                      "auction.providers",
	"auction.openrtb":                       "auction.providers, [integrations.prebid]",
	"auction.price_granularity":             "creative_opportunities.price_granularity",
	"consent.policy":                        "[consent]",
	"consent.mode":                          "consent.mode",
	"consent.check_expiration":              "consent.check_expiration",
	"consent.max_consent_age_days":          "consent.max_consent_age_days",
	"consent.gdpr_applies_in":               "consent.gdpr.applies_in",
	"consent.us_privacy_states":             "consent.us_states.privacy_states",
	"consent.us_privacy_notice_given":       "consent.us_privacy_defaults.notice_given",
	"consent.us_privacy_lspa_covered":       "consent.us_privacy_defaults.lspa_covered",
	"consent.gpc_implies_optout":            "consent.us_privacy_defaults.gpc_implies_optout",
	"consent.conflict_resolution":           "consent.conflict_resolution.mode",
	"consent.freshness_threshold_days":      "consent.conflict_resolution.freshness_threshold_days",
	"creative_opportunities.slot":           "[[creative_opportunities.slot]]",
	"request_signing.enabled":               "request_signing.enabled",
	"handlers":                              "[[handlers]]",
	"tester_cookie.enabled":                 "tester_cookie.enabled",
	"tester_cookie.cookie_domain":           "publisher.cookie_domain",
	"ec.passphrase":                         "ec.passphrase",
	"ec.partners":                           "[[ec.partners]]",
}

var tsMappedNativeKeys = slices.Sorted(maps.Keys(tsMappedFrom))

// tsMap sets the native keys a Trusted Server file drives, with upstream's
// meaning, and returns what the file configures that ssatd does not do.
// Upstream paths are relative to crates/trusted-server-core/src/.
func (d *decoder) tsMap(ts *tsSettings, tree map[string]any, c *Config) []NotEmulated {
	p := &c.Publisher
	p.Domain = ts.Publisher.Domain
	p.OriginURL = ts.Publisher.OriginURL
	if ts.Publisher.OriginHostHeaderOverride != nil {
		p.OriginHostHeaderOverride = *ts.Publisher.OriginHostHeaderOverride
	}
	// Upstream never lets a personalised page be stored
	// (docs/behaviour.md, "Eligible pages").
	p.SSATCacheControl = SSATCacheNoStorePrivate
	// ssatd imitates upstream's consent decision (consent.go).
	c.Consent.Policy = "upstream"
	d.tsConsent(&ts.Consent, &c.Consent)
	c.FirstParty = tsFirstParty(ts)
	c.Integrations = tsIntegrationsOf(ts)
	if rs := ts.RequestSigning; rs != nil {
		// Upstream's config_store_id and secret_store_id name its Fastly
		// stores; ssatd's stand-in for both is request_signing.key_dir,
		// set in [ssatd.request_signing] (internal/signing).
		c.RequestSigning.Enabled = rs.Enabled
		d.alias("request_signing.enabled", "request_signing.enabled")
	}

	// [[handlers]] as they are: path, username, password (settings.rs:
	// 556-567).
	for _, h := range ts.Handlers {
		c.Handlers = append(c.Handlers, HandlerConfig{Path: h.Path, Username: Secret(h.Username), Password: Secret(h.Password)})
	}

	// tester_cookie.rs:11-16 writes publisher.cookie_domain.
	c.TesterCookie = TesterCookieConfig{Enabled: ts.TesterCookie.Enabled, CookieDomain: ts.Publisher.CookieDomain}
	d.alias("tester_cookie.enabled", "tester_cookie.enabled")
	d.alias("tester_cookie.cookie_domain", "publisher.cookie_domain")
	d.tsEC(&ts.EC, c)

	a := &c.Auction
	a.Enabled = ts.Auction.Enabled
	a.TimeoutMS = ts.Auction.TimeoutMS
	d.alias("auction.timeout_ms", "auction.timeout_ms")
	notes := d.tsProviders(ts, c)
	if co := ts.CreativeOpportunities; co != nil {
		// The page's auction and /_ts/page-bids wait auction_timeout_ms,
		// falling back to auction.timeout_ms (publisher.rs:4162-4166,
		// 6433-6435), while POST /auction waits auction.timeout_ms
		// (auction/endpoints.rs:295).
		if co.AuctionTimeoutMS != nil {
			a.TimeoutMS = *co.AuctionTimeoutMS
			a.PostAuctionTimeoutMS = ts.Auction.TimeoutMS
			d.alias("auction.post_auction_timeout_ms", "auction.timeout_ms")
			d.alias("auction.timeout_ms", "creative_opportunities.auction_timeout_ms")
		}
		a.PriceGranularity = co.PriceGranularity
		d.alias("auction.price_granularity", "creative_opportunities.price_granularity")
		notes = append(notes, d.tsSlots(ts, co, c)...)
	}
	return append(notes, tsNotEmulated(ts, tree)...)
}

// alias makes a problem with native key name the upstream key it came
// from and point at its line or variable.
func (d *decoder) alias(native, upstream string) {
	d.src.names[native] = upstream
	if name, ok := d.src.env[upstream]; ok {
		d.src.env[native] = name
		return
	}
	if line, ok := d.src.lines[upstream]; ok {
		d.src.lines[native] = line
	}
}

// tsProviders maps auction.providers. "prebid" is Prebid Server at
// [integrations.prebid] server_url, with /openrtb2/auction appended unless
// it is there (integrations/prebid.rs:1573-1584), and the integration's
// timeout_ms, account_id, test_mode and debug (prebid.rs:202-230,
// 1954-1960, 2003).
func (d *decoder) tsProviders(ts *tsSettings, c *Config) []NotEmulated {
	var notes []NotEmulated
	a := &c.Auction
	a.Provider = AuctionProviderNone
	for i, name := range ts.Auction.Providers {
		key := fmt.Sprintf("auction.providers[%d]", i)
		pb := ts.Integrations.Prebid
		switch {
		case name != "prebid":
			notes = append(notes, NotEmulated{key, fmt.Sprintf("provider %q is not run: only \"prebid\" is emulated, so its bids are missing", name)})
		case pb == nil || !pb.Enabled:
			notes = append(notes, NotEmulated{key, "\"prebid\" is listed but [integrations.prebid] is not enabled: no bids"})
		default:
			url := strings.TrimRight(pb.ServerURL, "/")
			if !strings.HasSuffix(url, "/openrtb2/auction") {
				url += "/openrtb2/auction"
			}
			e := OpenRTBEndpoint{Name: "prebid", URL: url, TimeoutMS: pb.TimeoutMS, Test: pb.TestMode, Debug: pb.Debug}
			if pb.AccountID != nil {
				e.AccountID = *pb.AccountID
			}
			n := len(a.OpenRTB)
			a.OpenRTB = append(a.OpenRTB, e)
			a.Provider = AuctionProviderOpenRTB
			d.alias(fmt.Sprintf("auction.openrtb[%d].url", n), "integrations.prebid.server_url")
			d.alias(fmt.Sprintf("auction.openrtb[%d].timeout_ms", n), "integrations.prebid.timeout_ms")
		}
	}
	return notes
}

// tsSlots maps the slots: formats as tables become [width, height],
// gam_unit_path's {network_id} and {slot_id} are filled in, and an absent
// one is /<gam_network_id>/<id> (creative_opportunities.rs:524-560).
// providers.prebid.bidders keeps the bidders [integrations.prebid] lists,
// as upstream drops the others (integrations/prebid.rs:1643-1676); a slot
// without it gets none: upstream expands it into every listed bidder with
// empty parameters, which it then drops unless a bid_param override fills
// them (prebid.rs:1133-1161, 1703-1736), and overrides are not emulated.
func (d *decoder) tsSlots(ts *tsSettings, co *tsCreativeOpps, c *Config) []NotEmulated {
	var notes []NotEmulated
	var known []string
	if ts.Integrations.Prebid != nil {
		known = ts.Integrations.Prebid.Bidders
	}
	section := ""
	if co.SectionRoot != nil {
		section = *co.SectionRoot
	}
	c.CreativeOpportunities.Slots = nil
	for i, s := range co.Slot {
		key := fmt.Sprintf("creative_opportunities.slot[%d]", i)
		n := Slot{ID: s.ID, PagePatterns: s.PagePatterns}
		if s.DivID != nil {
			n.DivID = *s.DivID
		}
		for _, f := range s.Formats {
			if f.MediaType != "" && f.MediaType != "banner" {
				notes = append(notes, NotEmulated{key + ".formats", fmt.Sprintf("media_type %q is requested as a banner", f.MediaType)})
			}
			n.Formats = append(n.Formats, []int{f.Width, f.Height})
		}
		n.GAMUnitPath = "/" + co.GAMNetworkID + "/" + s.ID
		if s.GAMUnitPath != nil {
			n.GAMUnitPath = strings.NewReplacer("{network_id}", co.GAMNetworkID, "{slot_id}", s.ID).Replace(*s.GAMUnitPath)
			if strings.Contains(n.GAMUnitPath, "{section}") {
				n.GAMUnitPath = strings.ReplaceAll(n.GAMUnitPath, "{section}", section)
				notes = append(notes, NotEmulated{key + ".gam_unit_path", fmt.Sprintf("{section} is not taken from the page's path: every page gets section_root %q", section)})
			}
		}
		if len(s.Targeting) > 0 {
			n.Targeting = map[string]any{}
			for k, v := range s.Targeting {
				n.Targeting[k] = v
			}
		}
		if pb := s.Providers.Prebid; pb != nil {
			for name, params := range pb.Bidders {
				// Empty or non-table parameters are dropped too, as
				// upstream drops them before the request
				// (integrations/prebid.rs:1711-1736).
				if p, ok := params.(map[string]any); !ok || len(p) == 0 || !slices.Contains(known, name) {
					continue
				}
				if n.Bidders == nil {
					n.Bidders = map[string]any{}
				}
				n.Bidders[name] = params
			}
		}
		n.FloorPrice = s.FloorPrice
		c.CreativeOpportunities.Slots = append(c.CreativeOpportunities.Slots, n)
		d.alias(key+".bidders", key+".providers.prebid.bidders")
	}
	return notes
}

// tsConsent sets upstream's [consent] settings (consent_config.rs:38-80),
// which the upstream policy reads (internal/consent, Tuning).
func (d *decoder) tsConsent(ts *tsConsent, k *ConsentConfig) {
	k.Mode = ts.Mode
	k.CheckExpiration = ts.CheckExpiration
	k.MaxConsentAgeDays = ts.MaxConsentAgeDays
	k.GDPRAppliesIn = ts.GDPR.AppliesIn
	k.USPrivacyStates = ts.USStates.PrivacyStates
	k.NoticeGiven = ts.USPrivacyDefaults.NoticeGiven
	k.LSPACovered = ts.USPrivacyDefaults.LSPACovered
	k.GPCImpliesOptOut = ts.USPrivacyDefaults.GPCImpliesOptout
	k.ConflictResolution = ts.ConflictResolution.Mode
	k.FreshnessThresholdDays = ts.ConflictResolution.FreshnessThresholdDays
	for native, upstream := range tsMappedFrom {
		if strings.HasPrefix(native, "consent.") && native != "consent.policy" {
			d.alias(native, upstream)
		}
	}
}

// tsEC maps [ec]: the passphrase and the partners (settings.rs:271-327,
// 424-456). The store is ssatd's: [ssatd.server] data_dir or
// [ssatd.store] url stand in for upstream's ec_store.
func (d *decoder) tsEC(e *tsEC, c *Config) {
	c.EC.Passphrase = e.Passphrase
	d.alias("ec.passphrase", "ec.passphrase")
	for _, p := range e.Partners {
		c.EC.Partners = append(c.EC.Partners, ECPartner{Name: p.Name, SourceDomain: p.SourceDomain,
			APIToken: p.APIToken, OpenRTBAtype: p.OpenRTBAtype, BatchRateLimit: p.BatchRateLimit, BidstreamEnabled: p.BidstreamEnabled})
	}
}
