package consent

import (
	"slices"
	"strings"
	"time"

	"github.com/ssatd/ssatd/internal/tcf"
)

// Tuning is upstream's [consent] settings, which shape the decision under
// the upstream policy (crates/trusted-server-core/src/consent_config.rs at
// IABTechLab/trusted-server d97bda69). DefaultTuning holds upstream's
// defaults; a nil *Tuning in Options means them.
type Tuning struct {
	// Mode is consent.mode: decode the strings (interpreter) or forward
	// them raw without deciding from their contents (proxy).
	Mode Mode
	// CheckExpiration and MaxConsentAgeDays: a TCF string last updated
	// longer ago than that counts as no consent (consent/mod.rs:186-216).
	CheckExpiration   bool
	MaxConsentAgeDays int
	// GDPRCountries is consent.gdpr.applies_in and USPrivacyStates
	// consent.us_states.privacy_states (consent/jurisdiction.rs:48-80),
	// both matched without regard to case.
	GDPRCountries   []string
	USPrivacyStates []string
	// USPrivacyDefaults is consent.us_privacy_defaults, the flags of the
	// us_privacy string built from Sec-GPC (consent/mod.rs:457-480).
	USPrivacyDefaults USPrivacyDefaults
	// Conflict and FreshnessThresholdDays are
	// consent.conflict_resolution: which TCF consent wins when the
	// euconsent-v2 cookie and GPP's TCF section disagree
	// (consent/mod.rs:359-424).
	Conflict               ConflictMode
	FreshnessThresholdDays int
}

// USPrivacyDefaults is consent.us_privacy_defaults.
type USPrivacyDefaults struct {
	NoticeGiven      bool
	LSPACovered      bool
	GPCImpliesOptOut bool
}

// Mode is consent.mode (consent_config.rs, ConsentMode).
type Mode string

// The modes.
const (
	ModeInterpreter Mode = "interpreter"
	ModeProxy       Mode = "proxy"
)

// ConflictMode is consent.conflict_resolution.mode (consent_config.rs,
// ConflictMode).
type ConflictMode string

// The conflict modes.
const (
	ConflictRestrictive ConflictMode = "restrictive"
	ConflictNewest      ConflictMode = "newest"
	ConflictPermissive  ConflictMode = "permissive"
)

// Upstream's bounds for max_consent_age_days; a value outside is clamped
// with a warning (consent_config.rs, ConsentConfig::validate).
const (
	MinConsentAgeDays = 1
	MaxConsentAgeDays = 3650
)

// DefaultTuning is upstream's default [consent] (consent_config.rs:9-29,
// 83-96, 179-260): interpreter mode, expiry after 395 days, the EU, EEA
// and UK for GDPR, the US states with a comprehensive privacy law,
// notice given and GPC as opt-out without LSPA, restrictive conflicts
// with a 30-day freshness threshold.
func DefaultTuning() Tuning {
	return Tuning{
		Mode:              ModeInterpreter,
		CheckExpiration:   true,
		MaxConsentAgeDays: 395,
		GDPRCountries: []string{"AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE", "IT", "LV",
			"LT", "LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE", "IS", "LI", "NO", "GB"},
		USPrivacyStates: []string{"CA", "VA", "CO", "CT", "UT", "MT", "OR", "TX", "FL", "DE", "IA", "NE", "NH", "NJ", "TN", "MN",
			"MD", "IN", "KY", "RI"},
		USPrivacyDefaults:      USPrivacyDefaults{NoticeGiven: true, GPCImpliesOptOut: true},
		Conflict:               ConflictRestrictive,
		FreshnessThresholdDays: 30,
	}
}

var defaultTuning = DefaultTuning()

// jurisdiction is upstream's detect_jurisdiction (consent/jurisdiction.rs:
// 48-80): unknown without a country, GDPR for a country in GDPRCountries
// (checked first, so Germany's DE is never Delaware), a US state in
// USPrivacyStates, or non-regulated.
func (t *Tuning) jurisdiction(country, region string) Jurisdiction {
	switch {
	case country == "":
		return JurisdictionUnknown
	case slices.ContainsFunc(t.GDPRCountries, func(c string) bool { return strings.EqualFold(c, country) }):
		return JurisdictionGDPR
	case strings.EqualFold(country, "US") && region != "" &&
		slices.ContainsFunc(t.USPrivacyStates, func(s string) bool { return strings.EqualFold(s, region) }):
		return Jurisdiction(jurisdictionUSStatePrefix + strings.ToUpper(region))
	}
	return JurisdictionNonRegulated
}

// resolveConflict is upstream's apply_tcf_conflict_resolution
// (consent/mod.rs:359-399): when the euconsent-v2 cookie and GPP's TCF
// section disagree on whether EIDs may be sent (purposes 1 and 4,
// allows_eid_transmission), the mode picks one; otherwise the cookie's
// string stands.
func (t *Tuning) resolveConflict(standalone, fromGPP *tcf.Consent) *tcf.Consent {
	if standalone == nil || fromGPP == nil {
		return standalone
	}
	standaloneAllows, gppAllows := allowsEIDs(standalone), allowsEIDs(fromGPP)
	if standaloneAllows == gppAllows {
		return standalone
	}
	restrictive := !gppAllows // GPP wins when it is the one that denies
	pickGPP := restrictive
	switch t.Conflict {
	case ConflictPermissive:
		pickGPP = gppAllows
	case ConflictNewest:
		// select_newest_signal (consent/mod.rs:401-424): the newer wins
		// only by more than the threshold; within it, restrictive.
		threshold := time.Duration(t.FreshnessThresholdDays) * 24 * time.Hour
		switch {
		case standalone.LastUpdated.Sub(fromGPP.LastUpdated) > threshold:
			pickGPP = false
		case fromGPP.LastUpdated.Sub(standalone.LastUpdated) > threshold:
			pickGPP = true
		}
	}
	if pickGPP {
		return fromGPP
	}
	return standalone
}

// allowsEIDs is upstream's allows_eid_transmission (consent/mod.rs:354):
// storage (purpose 1) and personalised ads (purpose 4).
func allowsEIDs(c *tcf.Consent) bool { return c.Purpose(1) && c.Purpose(4) }

// expired reports a TCF string past MaxConsentAgeDays
// (is_consent_expired, consent/mod.rs:444-448).
func (t *Tuning) expired(c *tcf.Consent, now time.Time) bool {
	return t.CheckExpiration && now.Sub(c.LastUpdated) > time.Duration(t.MaxConsentAgeDays)*24*time.Hour
}

// gpcUSPrivacy is upstream's build_us_privacy_from_gpc
// (consent/mod.rs:457-480): "1" then notice, opt-out Y, LSPA; nothing
// when GPC is not to imply an opt-out.
func (t *Tuning) gpcUSPrivacy() (USPrivacy, bool) {
	d := t.USPrivacyDefaults
	if !d.GPCImpliesOptOut {
		return USPrivacy{}, false
	}
	return USPrivacy{Notice: yn(d.NoticeGiven), OptOutSale: 'Y', LSPA: yn(d.LSPACovered)}, true
}

func yn(b bool) byte {
	if b {
		return 'Y'
	}
	return 'N'
}
