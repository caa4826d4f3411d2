package config

import "github.com/ssatd/ssatd/internal/consent"

// eligibilityWarning says why no page can ever be SSAT-eligible, or ""
// when some page can (docs/behaviour.md, "Eligibility"). Such a
// configuration is valid, as a plain rewriting proxy, but it is rarely
// what an operator who installs ssatd means.
func (c *Config) eligibilityWarning() string {
	const consequence = "no page is ever SSAT-eligible, so no page gets the ad-slot and bid scripts"
	switch {
	case !c.Auction.Enabled && len(c.CreativeOpportunities.Slots) == 0:
		return "auction.enabled is off and no creative_opportunities.slot is configured: " + consequence
	case !c.Auction.Enabled:
		return "auction.enabled is off: " + consequence
	case len(c.CreativeOpportunities.Slots) == 0:
		return "auction.enabled is on but no creative_opportunities.slot is configured: " + consequence + "; no auction will ever run"
	}
	return ""
}

// consentWarning says that, under the upstream consent policy with no
// location, every request without a consent string is refused the
// auction: Trusted Server treats an unknown jurisdiction as needing TCF
// purpose 1 (docs/behaviour.md, "Consent under the upstream policy"), and
// on Fastly it knows the client's country, which ssatd does not.
func (c *Config) consentWarning() string {
	if !c.Auction.Enabled || c.Consent.ConsentPolicy() != consent.PolicyUpstream || c.Consent.Jurisdiction != "" ||
		c.Geo.Country != "" || c.Geo.CountryHeader != "" {
		return ""
	}
	return "consent.policy is \"upstream\" and none of geo.country, geo.country_header or consent.jurisdiction is set: " +
		"the jurisdiction is unknown, so a request without a TCF consent string granting purpose 1 gets no auction " +
		"(in a Trusted Server file, set them in [ssatd.geo] or [ssatd.consent])"
}
