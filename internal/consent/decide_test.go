package consent

import (
	"reflect"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/openrtb"
)

func i8(v int8) *int8 { return &v }

// TestDecideUpstream is upstream's consent_allows_server_side_auction
// (consent/mod.rs) and build_regs (integrations/prebid.rs), case by case.
func TestDecideUpstream(t *testing.T) {
	p1 := tcString(updated, 1, 2, 3)
	noP1 := tcString(updated, 2, 3, 4)
	stale := tcString(updated.Add(-400*24*time.Hour), 1)
	tests := []struct {
		name            string
		country, region string
		fixed           Jurisdiction
		gpc             bool
		cookies         []string
		allowed         bool
		regs            *openrtb.Regs
		consent         string
		problems        int
	}{
		{name: "unknown jurisdiction, no signal: fails closed", allowed: false},
		{name: "GDPR country, no signal", country: "DE", allowed: false, regs: nil},
		{name: "GDPR country, purpose 1", country: "FR", cookies: []string{"euconsent-v2", p1}, allowed: true, regs: &openrtb.Regs{GDPR: i8(1)}, consent: p1},
		{name: "GDPR country, no purpose 1", country: "FR", cookies: []string{"euconsent-v2", noP1}, regs: &openrtb.Regs{GDPR: i8(1)}, consent: noP1},
		{name: "unknown jurisdiction, purpose 1", cookies: []string{"euconsent-v2", p1}, allowed: true, regs: &openrtb.Regs{GDPR: i8(1)}, consent: p1},
		{name: "non-regulated, no signal", country: "JP", allowed: true},
		{name: "non-regulated but a TCF string without purpose 1", country: "JP", cookies: []string{"euconsent-v2", noP1}, regs: &openrtb.Regs{GDPR: i8(1)}, consent: noP1},
		{name: "undecodable TCF counts as no consent", country: "DE", cookies: []string{"euconsent-v2", "not-a-tc-string"}, regs: &openrtb.Regs{GDPR: i8(1)}, consent: "not-a-tc-string", problems: 1},
		{name: "expired TCF counts as no consent", country: "DE", cookies: []string{"euconsent-v2", stale}, regs: &openrtb.Regs{GDPR: i8(1)}, consent: stale, problems: 1},
		{name: "purpose 1 through GPP's TCF section", country: "DE", cookies: []string{"__gpp", header(2) + "~" + p1, "__gpp_sid", "2"}, allowed: true,
			regs: &openrtb.Regs{GDPR: i8(1), GPP: header(2) + "~" + p1, GPPSID: []int{2}}},
		{name: "GPP TCF section without purpose 1", country: "DE", cookies: []string{"__gpp", header(2) + "~" + noP1},
			regs: &openrtb.Regs{GDPR: i8(1), GPP: header(2) + "~" + noP1, GPPSID: []int{2}}},
		{name: "__gpp_sid 2 alone makes GDPR apply", country: "US", region: "NY", cookies: []string{"__gpp_sid", "2,6"}, regs: &openrtb.Regs{GDPR: i8(1), GPPSID: []int{2, 6}}},
		{name: "undecodable GPP: raw string sent, sid from __gpp_sid", country: "US", cookies: []string{"__gpp", "garbage~x", "__gpp_sid", "7"}, allowed: true,
			regs: &openrtb.Regs{GDPR: i8(0), GPP: "garbage~x", GPPSID: []int{7}}, problems: 1},
		{name: "US state with GPC: us_privacy 1YYN", country: "US", region: "CA", gpc: true, allowed: true, regs: &openrtb.Regs{GDPR: i8(0), USPrivacy: "1YYN"}},
		{name: "US state with GPC keeps the client's us_privacy", country: "US", region: "CA", gpc: true, cookies: []string{"us_privacy", "1YNN"}, allowed: true, regs: &openrtb.Regs{GDPR: i8(0), USPrivacy: "1YNN"}},
		{name: "GPC outside a US privacy state: signalled, no us_privacy", country: "US", region: "NY", gpc: true, allowed: true, regs: &openrtb.Regs{GDPR: i8(0)}},
		{name: "US opt-out forwarded", country: "US", region: "VA", cookies: []string{"us_privacy", "1YYN", "__gpp", header(7) + "~" + usNat(1)}, allowed: true,
			regs: &openrtb.Regs{GDPR: i8(0), USPrivacy: "1YYN", GPP: header(7) + "~" + usNat(1), GPPSID: []int{7}}},
		{name: "undecodable us_privacy in a US state with GPC is replaced", country: "US", region: "CO", gpc: true, cookies: []string{"us_privacy", "bad"}, allowed: true,
			regs: &openrtb.Regs{GDPR: i8(0), USPrivacy: "1YYN"}, problems: 1},
		{name: "consent.jurisdiction overrides geo", country: "JP", fixed: JurisdictionGDPR, allowed: false},
		{name: "consent.jurisdiction non-regulated", fixed: JurisdictionNonRegulated, allowed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Policy: PolicyUpstream, Jurisdiction: tt.fixed, Now: func() time.Time { return updated.Add(time.Hour) }}
			d := o.Decide(request(tt.gpc, tt.cookies...), tt.country, tt.region)
			if d.Allowed != tt.allowed {
				t.Errorf("allowed = %v, want %v (jurisdiction %s)", d.Allowed, tt.allowed, d.Jurisdiction)
			}
			if !reflect.DeepEqual(d.Regs, tt.regs) {
				t.Errorf("regs = %+v, want %+v", d.Regs, tt.regs)
			}
			if d.Consent != tt.consent {
				t.Errorf("user.consent = %q, want %q", d.Consent, tt.consent)
			}
			if len(d.Problems) != tt.problems {
				t.Errorf("problems %v, want %d", d.Problems, tt.problems)
			}
		})
	}
}

// TestDecideTCF is today's behaviour: off runs always, tcf needs purpose 1
// in euconsent-v2; regs.gdpr is consent.gdpr_applies; GPP is not read.
func TestDecideTCF(t *testing.T) {
	p1 := tcString(updated, 1)
	tests := []struct {
		policy  Policy
		cookies []string
		allowed bool
	}{
		{PolicyOff, nil, true},
		{PolicyOff, []string{"euconsent-v2", "bad"}, true},
		{PolicyTCF, nil, false},
		{PolicyTCF, []string{"euconsent-v2", p1}, true},
		{PolicyTCF, []string{"euconsent-v2", tcString(updated, 2)}, false},
		{PolicyTCF, []string{"__gpp", header(2) + "~" + p1}, false},
	}
	for _, tt := range tests {
		o := Options{Policy: tt.policy, GDPRApplies: true}
		d := o.Decide(request(false, tt.cookies...), "DE", "")
		if d.Allowed != tt.allowed || !reflect.DeepEqual(d.Regs, &openrtb.Regs{GDPR: i8(1)}) {
			t.Errorf("%s %v: allowed %v regs %+v; want %v and gdpr 1", tt.policy, tt.cookies, d.Allowed, d.Regs, tt.allowed)
		}
	}
}
