package config

import (
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/consent"
)

// TestConsentTuningKeys: upstream's [consent] settings reach the consent
// decision from either format, a bad value is an error naming the key
// the file used, and an out-of-range age is clamped with a warning as
// upstream's ConsentConfig::validate does.
func TestConsentTuningKeys(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		environ []string
		check   func(*consent.Tuning) bool
		err     string
		warn    string
	}{
		{name: "native defaults are upstream's", doc: minimalTOML,
			check: func(tn *consent.Tuning) bool {
				d := consent.DefaultTuning()
				return tn.Mode == d.Mode && tn.MaxConsentAgeDays == 395 && len(tn.GDPRCountries) == len(d.GDPRCountries) && tn.Conflict == consent.ConflictRestrictive
			}},
		{name: "native keys", doc: minimalTOML + "\n[consent]\npolicy = \"upstream\"\nmode = \"proxy\"\ngdpr_applies_in = [\"CH\"]\nconflict_resolution = \"newest\"\n",
			check: func(tn *consent.Tuning) bool {
				return tn.Mode == consent.ModeProxy && len(tn.GDPRCountries) == 1 && tn.Conflict == consent.ConflictNewest
			}},
		{name: "native environment", doc: minimalTOML, environ: []string{"SSATD_CONSENT_US_PRIVACY_STATES=NY,CA", "SSATD_CONSENT_GPC_IMPLIES_OPTOUT=false"},
			check: func(tn *consent.Tuning) bool {
				return len(tn.USPrivacyStates) == 2 && !tn.USPrivacyDefaults.GPCImpliesOptOut
			}},
		{name: "native bad mode names the key", doc: minimalTOML + "\n[consent]\nmode = \"decode\"\n", err: "consent.mode"},
		{name: "upstream keys", doc: tsMinimal + "\n[consent]\ncheck_expiration = false\n[consent.us_privacy_defaults]\nlspa_covered = true\n[consent.conflict_resolution]\nmode = \"permissive\"\nfreshness_threshold_days = 7\n",
			check: func(tn *consent.Tuning) bool {
				return !tn.CheckExpiration && tn.USPrivacyDefaults.LSPACovered && tn.USPrivacyDefaults.NoticeGiven &&
					tn.Conflict == consent.ConflictPermissive && tn.FreshnessThresholdDays == 7
			}},
		{name: "upstream environment, JSON array", doc: tsMinimal, environ: []string{`TRUSTED_SERVER__CONSENT__GDPR__APPLIES_IN=["CH","FR"]`},
			check: func(tn *consent.Tuning) bool { return len(tn.GDPRCountries) == 2 && tn.GDPRCountries[0] == "CH" }},
		{name: "upstream bad conflict mode names upstream's key", doc: tsMinimal + "\n[consent.conflict_resolution]\nmode = \"oldest\"\n", err: "consent.conflict_resolution.mode"},
		{name: "age clamped with a warning", doc: tsMinimal + "\n[consent]\nmax_consent_age_days = 5000\n",
			check: func(tn *consent.Tuning) bool { return tn.MaxConsentAgeDays == 3650 }, warn: "clamped to 3650"},
		{name: "age 0 clamped to 1", doc: minimalTOML + "\n[consent]\nmax_consent_age_days = 0\n",
			check: func(tn *consent.Tuning) bool { return tn.MaxConsentAgeDays == 1 }, warn: "consent.max_consent_age_days = 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(writeFile(t, tt.doc), tt.environ)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one naming %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !tt.check(c.Consent.Tuning()) {
				t.Errorf("tuning %+v", *c.Consent.Tuning())
			}
			w := strings.Join(c.Warnings(), "\n")
			if tt.warn != "" && !strings.Contains(w, tt.warn) {
				t.Errorf("warnings %q, want %q", w, tt.warn)
			}
		})
	}
}
