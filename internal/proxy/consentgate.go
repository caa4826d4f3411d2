package proxy

import (
	"net/http"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
	privacy "github.com/ssatd/ssatd/internal/consent"
	"github.com/ssatd/ssatd/internal/telemetry"
)

// consentOptions is [consent] as the guest applies it (docs/behaviour.md,
// "Consent"); under "upstream" it decides as Trusted Server's
// consent_allows_server_side_auction (crates/trusted-server-core/src/
// consent/mod.rs) and fills regs as its build_regs
// (integrations/prebid.rs).
func consentOptions(c *config.ConsentConfig) privacy.Options {
	return privacy.Options{Policy: c.ConsentPolicy(), GDPRApplies: c.GDPRApplies, Jurisdiction: privacy.Jurisdiction(c.Jurisdiction), Tuning: c.Tuning()}
}

// decideConsent is the request's consent decision: its country and region
// are the ones device.geo gets ([geo], or the trusted country header).
// Strings that do not decode count as no consent and are logged here,
// once for the request.
func (g *Guest) decideConsent(x *exchange, r *http.Request) privacy.Decision {
	// Decided once a request: the page path, its auction and the edge
	// cookie (internal/identity) all ask.
	if x.consentDecided {
		return x.consent
	}
	defer func() { x.consentDecided = true }()
	var country, region string
	if geo := x.view.geo; geo != nil {
		country, region = geo.Country, geo.Region
	}
	d := g.consent.Decide(r, country, region)
	x.consent = d
	if len(d.Problems) > 0 {
		g.log.Warn("consent strings did not decode; counted as no consent",
			pathField(r.URL), zap.String("jurisdiction", string(d.Jurisdiction)), telemetry.Error(d.Err()))
	}
	return d
}
