package consent

import (
	"testing"
	"time"
)

// TestDecideECGate is upstream's allows_ec_creation and
// has_explicit_ec_withdrawal (consent/mod.rs:541-626) case by case: the
// edge cookie may be created, withdrawn, or neither (a request that fails
// closed does not withdraw).
func TestDecideECGate(t *testing.T) {
	p1 := tcString(updated, 1, 2)
	noP1 := tcString(updated, 2, 3)
	tests := []struct {
		name            string
		country, region string
		policy          Policy
		gpc             bool
		cookies         []string
		want            ECGate
	}{
		{name: "no signals, unknown jurisdiction: blocked, not withdrawn"},
		{name: "non-regulated, no signals", country: "JP", want: ECGate{Allowed: true}},
		{name: "GDPR with purpose 1", country: "FR", cookies: []string{"euconsent-v2", p1}, want: ECGate{Allowed: true}},
		{name: "GDPR without purpose 1: withdrawn", country: "FR", cookies: []string{"euconsent-v2", noP1}, want: ECGate{Withdrawn: true}},
		{name: "GDPR, no signals: blocked, not withdrawn", country: "DE"},
		{name: "GDPR, undecodable TCF: blocked, not withdrawn", country: "DE", cookies: []string{"euconsent-v2", "garbage"}},
		{name: "US state, GPC: withdrawn", country: "US", region: "CA", gpc: true, want: ECGate{Withdrawn: true}},
		{name: "US state, GPC beats TCF purpose 1", country: "US", region: "CA", gpc: true, cookies: []string{"euconsent-v2", p1}, want: ECGate{Withdrawn: true}},
		{name: "US state, us_privacy opt-out", country: "US", region: "VA", cookies: []string{"us_privacy", "1YYN"}, want: ECGate{Withdrawn: true}},
		{name: "US state, us_privacy no opt-out", country: "US", region: "VA", cookies: []string{"us_privacy", "1YNN"}, want: ECGate{Allowed: true}},
		{name: "US state, GPP sale opt-out", country: "US", region: "VA", cookies: []string{"__gpp", header(7) + "~" + usNat(1)}, want: ECGate{Withdrawn: true}},
		{name: "US state, GPP no sale opt-out", country: "US", region: "VA", cookies: []string{"__gpp", header(7) + "~" + usNat(2)}, want: ECGate{Allowed: true}},
		{name: "US state, TCF without purpose 1", country: "US", region: "CA", cookies: []string{"euconsent-v2", noP1}, want: ECGate{Withdrawn: true}},
		{name: "US state, no signals: blocked, not withdrawn", country: "US", region: "CA"},
		{name: "US state without a privacy law", country: "US", region: "NY", want: ECGate{Allowed: true}},
		{name: "policy off allows", policy: PolicyOff, want: ECGate{Allowed: true}},
		{name: "policy tcf without purpose 1 withdraws", policy: PolicyTCF, cookies: []string{"euconsent-v2", noP1}, want: ECGate{Withdrawn: true}},
		{name: "policy tcf with purpose 1", policy: PolicyTCF, cookies: []string{"euconsent-v2", p1}, want: ECGate{Allowed: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Policy: PolicyUpstream, Now: func() time.Time { return updated.Add(time.Hour) }}
			if tt.policy != "" {
				o.Policy = tt.policy
			}
			d := o.Decide(request(tt.gpc, tt.cookies...), tt.country, tt.region)
			if got := (ECGate{Allowed: d.EC.Allowed, Withdrawn: d.EC.Withdrawn}); got != tt.want {
				t.Errorf("EC = %+v, want %+v (jurisdiction %s)", got, tt.want, d.Jurisdiction)
			}
		})
	}
}

// TestDecideEIDsGate is upstream's gate_eids_by_consent
// (consent/mod.rs:478-520): with a TCF consent, purposes 1 and 4; without
// one, unless GDPR applies.
func TestDecideEIDsGate(t *testing.T) {
	tests := []struct {
		name    string
		country string
		cookies []string
		want    bool
	}{
		{"purposes 1 and 4", "FR", []string{"euconsent-v2", tcString(updated, 1, 4)}, true},
		{"purpose 1 without 4", "FR", []string{"euconsent-v2", tcString(updated, 1, 2)}, false},
		{"GDPR without TCF", "FR", nil, false},
		{"non-regulated without TCF", "JP", nil, true},
		{"non-regulated with a TCF string without purpose 4", "JP", []string{"euconsent-v2", tcString(updated, 1)}, false},
	}
	for _, tt := range tests {
		o := Options{Policy: PolicyUpstream, Now: func() time.Time { return updated.Add(time.Hour) }}
		if got := o.Decide(request(false, tt.cookies...), tt.country, "").EC.EIDs; got != tt.want {
			t.Errorf("%s: EIDs %v, want %v", tt.name, got, tt.want)
		}
	}
}
