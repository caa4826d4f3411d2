package config

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
