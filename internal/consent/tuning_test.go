package consent

import (
	"reflect"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/openrtb"
)

// TestDecideUnderConsentTuning is upstream's [consent] settings, one key
// at a time, each case against upstream's rule in consent/mod.rs and
// consent/jurisdiction.rs (cited on the rule in tuning.go).
func TestDecideUnderConsentTuning(t *testing.T) {
	now := updated.Add(time.Hour)
	p1 := tcString(updated, 1, 2, 3)
	p14 := tcString(updated, 1, 4)
	only4 := tcString(updated, 4)
	gppOf := func(tc string) string { return header(2) + "~" + tc }
	conflict := []string{"euconsent-v2", p14, "__gpp", gppOf(only4)}
	tests := []struct {
		name            string
		tune            func(*Tuning)
		country, region string
		gpc             bool
		cookies         []string
		allowed         bool
		usPrivacy       string
		problems        int
	}{
		{name: "default: CH is not GDPR", country: "CH", allowed: true},
		{name: "gdpr.applies_in adds CH", tune: func(t *Tuning) { t.GDPRCountries = append(t.GDPRCountries, "ch") }, country: "CH"},
		{name: "gdpr.applies_in without FR", tune: func(t *Tuning) { t.GDPRCountries = []string{"DE"} }, country: "FR", allowed: true},
		{name: "default: NY builds no us_privacy from GPC", country: "US", region: "NY", gpc: true, allowed: true},
		{name: "us_states.privacy_states adds NY", tune: func(t *Tuning) { t.USPrivacyStates = []string{"ny"} }, country: "US", region: "NY", gpc: true, allowed: true, usPrivacy: "1YYN"},
		{name: "us_privacy_defaults: no notice, LSPA covered", tune: func(t *Tuning) { t.USPrivacyDefaults = USPrivacyDefaults{LSPACovered: true, GPCImpliesOptOut: true} },
			country: "US", region: "CA", gpc: true, allowed: true, usPrivacy: "1NYY"},
		{name: "us_privacy_defaults: GPC implies no opt-out", tune: func(t *Tuning) { t.USPrivacyDefaults.GPCImpliesOptOut = false }, country: "US", region: "CA", gpc: true, allowed: true},
		{name: "max_consent_age_days 10: a 20-day-old string has expired", tune: func(t *Tuning) { t.MaxConsentAgeDays = 10 },
			country: "DE", cookies: []string{"euconsent-v2", tcString(now.Add(-20*24*time.Hour), 1)}, problems: 1},
		{name: "check_expiration off: a 500-day-old string counts", tune: func(t *Tuning) { t.CheckExpiration = false },
			country: "DE", cookies: []string{"euconsent-v2", tcString(now.Add(-500*24*time.Hour), 1)}, allowed: true},
		{name: "conflict, restrictive (default): GPP's denial wins", country: "DE", cookies: conflict},
		{name: "conflict, permissive: the cookie's grant wins", tune: func(t *Tuning) { t.Conflict = ConflictPermissive }, country: "DE", cookies: conflict, allowed: true},
		{name: "conflict, newest, within the threshold: restrictive", tune: func(t *Tuning) { t.Conflict = ConflictNewest },
			country: "DE", cookies: []string{"euconsent-v2", p14, "__gpp", gppOf(tcString(updated.Add(-29*24*time.Hour), 4))}},
		{name: "conflict, newest: the cookie newer by more than the threshold wins", tune: func(t *Tuning) { t.Conflict = ConflictNewest },
			country: "DE", cookies: []string{"euconsent-v2", p14, "__gpp", gppOf(tcString(updated.Add(-31*24*time.Hour), 4))}, allowed: true},
		{name: "conflict, newest: GPP newer by more than the threshold wins", tune: func(t *Tuning) { t.Conflict = ConflictNewest; t.FreshnessThresholdDays = 5 },
			country: "DE", cookies: []string{"euconsent-v2", tcString(updated.Add(-6*24*time.Hour), 1, 4), "__gpp", gppOf(only4)}},
		{name: "no conflict when both allow EIDs or both deny: the cookie's stands", country: "DE",
			cookies: []string{"euconsent-v2", p1, "__gpp", gppOf(only4)}, allowed: true},
		{name: "proxy mode: purpose 1 is not decoded, so GDPR fails closed", tune: func(t *Tuning) { t.Mode = ModeProxy }, country: "DE", cookies: []string{"euconsent-v2", p1}},
		{name: "proxy mode: non-regulated runs", tune: func(t *Tuning) { t.Mode = ModeProxy }, country: "JP", allowed: true},
		{name: "proxy mode: no us_privacy built from GPC", tune: func(t *Tuning) { t.Mode = ModeProxy }, country: "US", region: "CA", gpc: true, allowed: true},
		{name: "proxy mode: an undecodable string is no problem", tune: func(t *Tuning) { t.Mode = ModeProxy }, country: "US", cookies: []string{"us_privacy", "bad"}, allowed: true, usPrivacy: "bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tune := DefaultTuning()
			if tt.tune != nil {
				tt.tune(&tune)
			}
			o := Options{Policy: PolicyUpstream, Tuning: &tune, Now: func() time.Time { return now }}
			d := o.Decide(request(tt.gpc, tt.cookies...), tt.country, tt.region)
			if d.Allowed != tt.allowed {
				t.Errorf("allowed = %v, want %v (jurisdiction %s, problems %v)", d.Allowed, tt.allowed, d.Jurisdiction, d.Problems)
			}
			usp := ""
			if d.Regs != nil {
				usp = d.Regs.USPrivacy
			}
			if usp != tt.usPrivacy {
				t.Errorf("regs.us_privacy = %q, want %q", usp, tt.usPrivacy)
			}
			if len(d.Problems) != tt.problems {
				t.Errorf("problems %v, want %d", d.Problems, tt.problems)
			}
		})
	}
}

// TestProxyModeForwardsRawSignals: in proxy mode the strings go to
// bidders as sent, with regs.gdpr from their presence alone
// (consent/mod.rs:139-162).
func TestProxyModeForwardsRawSignals(t *testing.T) {
	tune := DefaultTuning()
	tune.Mode = ModeProxy
	o := Options{Policy: PolicyUpstream, Tuning: &tune}
	d := o.Decide(request(false, "euconsent-v2", "opaque", "__gpp", "raw~gpp", "__gpp_sid", "2,7"), "DE", "")
	want := &openrtb.Regs{GDPR: i8(1), GPP: "raw~gpp", GPPSID: []int{2, 7}}
	if !reflect.DeepEqual(d.Regs, want) || d.Consent != "opaque" {
		t.Errorf("regs %+v consent %q, want %+v and the raw string", d.Regs, d.Consent, want)
	}
}

// TestConflictingTCFSignalsDecidedRestrictivelyByDefault: the cookie
// grants purposes 1 and 4, GPP's TCF section only 4. Upstream's default
// takes the denying one, so a GDPR reader gets no auction; ssatd took the
// cookie's string whatever GPP said.
func TestConflictingTCFSignalsDecidedRestrictivelyByDefault(t *testing.T) {
	o := Options{Policy: PolicyUpstream, Now: func() time.Time { return updated }}
	r := request(false, "euconsent-v2", tcString(updated, 1, 4), "__gpp", header(2)+"~"+tcString(updated, 4))
	if d := o.Decide(r, "FR", ""); d.Allowed {
		t.Error("auction allowed although GPP's TCF section denies purpose 1 and the default conflict mode is restrictive")
	}
}
