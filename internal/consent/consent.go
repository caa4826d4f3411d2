package consent

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ssatd/ssatd/internal/openrtb"
	"github.com/ssatd/ssatd/internal/tcf"
)

// Policy is consent.policy.
type Policy string

// The policies (docs/behaviour.md, "Consent").
const (
	// PolicyOff runs the auction whatever the client's signals.
	PolicyOff Policy = "off"
	// PolicyTCF runs it only when euconsent-v2 grants TCF purpose 1.
	PolicyTCF Policy = "tcf"
	// PolicyUpstream decides as Trusted Server does.
	PolicyUpstream Policy = "upstream"
)

// Cookie and header names, as upstream's constants.rs.
const (
	CookieGPP       = "__gpp"
	CookieGPPSID    = "__gpp_sid"
	CookieUSPrivacy = "us_privacy"
	HeaderGPC       = "Sec-GPC"
)

// Options configure Decide.
type Options struct {
	Policy Policy
	// GDPRApplies is regs.gdpr under the off and tcf policies.
	GDPRApplies bool
	// Jurisdiction, when set, replaces the one from the client's country.
	Jurisdiction Jurisdiction
	// Tuning is upstream's [consent] settings; upstream's defaults when
	// nil. Read under the upstream policy only.
	Tuning *Tuning
	// Now is the clock for the consent-age check; time.Now when nil.
	Now func() time.Time
}

// Decision is what the auction may do and send.
type Decision struct {
	// Allowed: the server-side auction may run.
	Allowed bool
	// Consent is user.consent: the euconsent-v2 string as sent.
	Consent string
	// Regs is the bid request's regs; nil when there is nothing to say.
	Regs         *openrtb.Regs
	Jurisdiction Jurisdiction
	// EC is what the signals say about the edge cookie (ts-ec).
	EC ECGate
	// Problems are the strings that did not decode, each counted as no
	// consent; the caller logs them once for the request.
	Problems []error
}

// Decide reads the request's consent signals and decides under o.Policy.
// country and region locate the client ([geo]); both may be empty.
func (o *Options) Decide(r *http.Request, country, region string) Decision {
	tc := cookie(r, tcf.CookieName)
	if o.Policy != PolicyUpstream {
		return o.decideTCF(tc)
	}
	t := o.tuning()
	d := Decision{Consent: tc, Jurisdiction: o.Jurisdiction}
	if d.Jurisdiction == "" {
		d.Jurisdiction = t.jurisdiction(country, region)
	}
	rawGPP, rawSID := cookie(r, CookieGPP), cookie(r, CookieGPPSID)
	if t.Mode == ModeProxy {
		// Proxy mode decodes nothing (consent/mod.rs:139-162): the raw
		// strings go on, and no decoded TCF consent exists to grant
		// purpose 1.
		sid := ParseSID(rawSID)
		gdprApplies := tc != "" || slices.Contains(sid, SectionTCFEUv2)
		d.Allowed = !needsPurpose1(gdprApplies, d.Jurisdiction)
		d.Regs = regs(gdprApplies, d.Jurisdiction, cookie(r, CookieUSPrivacy), rawGPP, sid, gpc(r))
		d.EC = ecGate(d.Jurisdiction, ecSignals{gpc: gpc(r)})
		d.EC.EIDs = eidsAllowed(nil, gdprApplies || d.Jurisdiction == JurisdictionGDPR)
		return d
	}
	effective, sid, saleOptOut := o.decodeTCF(t, &d, tc, rawGPP, rawSID)
	gdprApplies := tc != "" || slices.Contains(sid, SectionTCFEUv2)
	d.Allowed = !needsPurpose1(gdprApplies, d.Jurisdiction) || (effective != nil && effective.Purpose(1))
	usp := o.usPrivacy(t, r, &d)
	d.Regs = regs(gdprApplies, d.Jurisdiction, usp, rawGPP, sid, gpc(r))
	d.EC = ecGate(d.Jurisdiction, ecSignals{tcf: effective, saleOptOut: saleOptOut, usp: decodedUSP(usp), gpc: gpc(r)})
	d.EC.EIDs = eidsAllowed(effective, gdprApplies || d.Jurisdiction == JurisdictionGDPR)
	return d
}

// decodeTCF decodes the TCF consent in effect, upstream's effective_tcf
// after conflict resolution and the expiry check (consent/mod.rs:163-216,
// 325-334): the euconsent-v2 cookie's, or GPP's TCF section's, nil when
// neither decodes or it has expired. sid is GPP's section ids, or the
// __gpp_sid cookie's when GPP does not decode; saleOptOut is GPP's US sale
// opt-out.
func (o *Options) decodeTCF(t *Tuning, d *Decision, tc, rawGPP, rawSID string) (effective *tcf.Consent, sid []int, saleOptOut *bool) {
	var standalone, fromGPP *tcf.Consent
	if tc != "" {
		c, err := tcf.Decode(tc)
		d.problem(tcf.CookieName, err)
		standalone = c
	}
	if rawGPP != "" {
		g, err := DecodeGPP(rawGPP)
		d.problem(CookieGPP, err)
		if g != nil {
			sid, saleOptOut = g.SectionIDs, g.SaleOptOut
			d.Problems = append(d.Problems, g.Problems...)
			fromGPP = g.TCF
		}
	}
	if sid == nil && rawSID != "" {
		sid = ParseSID(rawSID)
	}
	effective = t.resolveConflict(standalone, fromGPP)
	if effective == nil {
		effective = fromGPP
	}
	if effective != nil && t.expired(effective, o.now()) {
		d.Problems = append(d.Problems, fmt.Errorf("tcf consent last updated %s, older than %d days", effective.LastUpdated.Format(time.DateOnly), t.MaxConsentAgeDays))
		effective = nil
	}
	return effective, sid, saleOptOut
}

// needsPurpose1 is upstream's consent_allows_server_side_auction
// (consent/mod.rs:340-352): a TCF signal, or a GDPR or unknown
// jurisdiction, needs purpose 1 granted.
func needsPurpose1(gdprApplies bool, j Jurisdiction) bool {
	return gdprApplies || j == JurisdictionGDPR || j == JurisdictionUnknown
}

func (o *Options) tuning() *Tuning {
	if o.Tuning != nil {
		return o.Tuning
	}
	return &defaultTuning
}

// decideTCF is the off and tcf policies: euconsent-v2 alone.
func (o *Options) decideTCF(tc string) Decision {
	d := Decision{Consent: tc, Allowed: o.Policy == PolicyOff}
	if tc != "" {
		c, err := tcf.Decode(tc)
		d.problem(tcf.CookieName, err)
		if c != nil && c.Purpose(1) {
			d.Allowed = true
		}
		// Under the tcf policy a decoded string without purpose 1
		// withdraws the edge cookie, as under GDPR (ecGate).
		d.EC.Withdrawn = o.Policy == PolicyTCF && c != nil && !c.Purpose(1)
		d.EC.EIDs = c != nil && c.Purpose(1) && c.Purpose(4)
	}
	// The edge cookie follows the policy's decision: off allows it (and
	// its partners' ids) as a non-regulated jurisdiction does, tcf needs
	// purpose 1.
	d.EC.Allowed = d.Allowed
	if o.Policy == PolicyOff {
		d.EC.EIDs = true
	}
	gdpr := int8(0)
	if o.GDPRApplies {
		gdpr = 1
	}
	d.Regs = &openrtb.Regs{GDPR: &gdpr}
	return d
}

// usPrivacy is regs.us_privacy: the cookie as sent, or, in a US state
// with a privacy law, one built from Sec-GPC: 1 and
// consent.us_privacy_defaults when the cookie is absent or undecodable
// (upstream's apply_gpc_us_privacy, consent/mod.rs:219-236).
func (o *Options) usPrivacy(t *Tuning, r *http.Request, d *Decision) string {
	raw := cookie(r, CookieUSPrivacy)
	decoded := false
	if raw != "" {
		_, err := DecodeUSPrivacy(raw)
		d.problem(CookieUSPrivacy, err)
		decoded = err == nil
	}
	if !decoded && gpc(r) && d.Jurisdiction.IsUSState() {
		if u, ok := t.gpcUSPrivacy(); ok {
			return u.String()
		}
	}
	return raw
}

// regs is upstream's build_regs (integrations/prebid.rs): nothing when
// there is no signal; gdpr 1 when a TCF signal is present or in a GDPR
// jurisdiction, omitted when the jurisdiction is unknown, else 0.
func regs(gdprApplies bool, j Jurisdiction, usp, gpp string, sid []int, gpc bool) *openrtb.Regs {
	if !gdprApplies && usp == "" && gpp == "" && sid == nil && !gpc {
		return nil
	}
	r := &openrtb.Regs{USPrivacy: usp, GPP: gpp, GPPSID: sid}
	switch {
	case gdprApplies || j == JurisdictionGDPR:
		one := int8(1)
		r.GDPR = &one
	case j != JurisdictionUnknown:
		zero := int8(0)
		r.GDPR = &zero
	}
	return r
}

func (d *Decision) problem(name string, err error) {
	if err != nil {
		d.Problems = append(d.Problems, fmt.Errorf("%s: %w", name, err))
	}
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// gpc: Sec-GPC: 1 (Global Privacy Control, section 3.3).
func gpc(r *http.Request) bool { return strings.TrimSpace(r.Header.Get(HeaderGPC)) == "1" }

func cookie(r *http.Request, name string) string {
	c, err := r.Cookie(name)
	if err != nil {
		return ""
	}
	return c.Value
}

// Err joins the problems for one log field; nil when there are none.
func (d *Decision) Err() error { return errors.Join(d.Problems...) }
