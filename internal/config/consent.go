package config

import (
	"github.com/ssatd/ssatd/internal/consent"
)

// The consent.policy values (docs/behaviour.md, "Consent"):
//   - "off": the auction runs whatever the client's signals;
//   - "tcf": only when the euconsent-v2 cookie grants TCF purpose 1;
//   - "upstream": as Trusted Server decides (GPP, us_privacy, Sec-GPC,
//     jurisdiction; GDPR or unknown jurisdiction needs purpose 1).
//
// Unset, it is "tcf" when require_tcf_purpose1 is true and "off"
// otherwise, which is the behaviour of those keys alone.
//
// consent.jurisdiction ("GDPR", "US-XX", "non-regulated", "unknown")
// replaces the jurisdiction from [geo]'s country and region, under
// "upstream" only.

// ConsentPolicy is the policy in effect.
func (c *ConsentConfig) ConsentPolicy() consent.Policy {
	switch {
	case c.Policy != "":
		return consent.Policy(c.Policy)
	case c.RequireTCFPurpose1:
		return consent.PolicyTCF
	}
	return consent.PolicyOff
}

func (c *Config) validateConsent(p *problems) {
	k := &c.Consent
	switch consent.Policy(k.Policy) {
	case "", consent.PolicyTCF, consent.PolicyUpstream:
	case consent.PolicyOff:
		if k.RequireTCFPurpose1 {
			p.addf("consent.policy", "is \"off\" but consent.require_tcf_purpose1 is true: remove one")
		}
	default:
		p.addf("consent.policy", "must be \"off\", \"tcf\" or \"upstream\", got %q", k.Policy)
	}
	j, err := consent.ParseJurisdiction(k.Jurisdiction)
	if err != nil {
		p.addf("consent.jurisdiction", "%v", err)
		return
	}
	k.Jurisdiction = string(j)
	if j != "" && k.ConsentPolicy() != consent.PolicyUpstream {
		p.addf("consent.jurisdiction", "is used only with consent.policy = \"upstream\"")
	}
}
