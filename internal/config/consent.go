package config

import (
	"fmt"
	"slices"

	"github.com/ssatd/ssatd/internal/consent"
)

// ConsentConfig is the [consent] section.
type ConsentConfig struct {
	// GDPRApplies is sent to bid endpoints as regs.gdpr.
	GDPRApplies bool `toml:"gdpr_applies" env:"GDPR_APPLIES"`
	// RequireTCFPurpose1 runs the ad stack only for clients whose TCF v2
	// string grants purpose 1.
	RequireTCFPurpose1 bool `toml:"require_tcf_purpose1" env:"REQUIRE_TCF_PURPOSE1"`
	// Policy and Jurisdiction: see ConsentPolicy.
	Policy       string `toml:"policy" env:"POLICY"`
	Jurisdiction string `toml:"jurisdiction" env:"JURISDICTION"`

	// The rest is upstream's [consent] settings, read under the upstream
	// policy only (consent.Tuning; a Trusted Server file sets them from
	// the upstream key named on each).

	// Mode is consent.mode: "interpreter" or "proxy".
	Mode string `toml:"mode" env:"MODE"`
	// CheckExpiration is consent.check_expiration.
	CheckExpiration bool `toml:"check_expiration" env:"CHECK_EXPIRATION"`
	// MaxConsentAgeDays is consent.max_consent_age_days, clamped to
	// 1-3650 with a warning as upstream does.
	MaxConsentAgeDays int `toml:"max_consent_age_days" env:"MAX_CONSENT_AGE_DAYS"`
	// GDPRAppliesIn is consent.gdpr.applies_in.
	GDPRAppliesIn []string `toml:"gdpr_applies_in" env:"GDPR_APPLIES_IN"`
	// USPrivacyStates is consent.us_states.privacy_states.
	USPrivacyStates []string `toml:"us_privacy_states" env:"US_PRIVACY_STATES"`
	// NoticeGiven, LSPACovered and GPCImpliesOptOut are
	// consent.us_privacy_defaults.
	NoticeGiven      bool `toml:"us_privacy_notice_given" env:"US_PRIVACY_NOTICE_GIVEN"`
	LSPACovered      bool `toml:"us_privacy_lspa_covered" env:"US_PRIVACY_LSPA_COVERED"`
	GPCImpliesOptOut bool `toml:"gpc_implies_optout" env:"GPC_IMPLIES_OPTOUT"`
	// ConflictResolution and FreshnessThresholdDays are
	// consent.conflict_resolution's mode and freshness_threshold_days.
	ConflictResolution     string `toml:"conflict_resolution" env:"CONFLICT_RESOLUTION"`
	FreshnessThresholdDays int    `toml:"freshness_threshold_days" env:"FRESHNESS_THRESHOLD_DAYS"`
}

// defaultConsent is the [consent] of no file: no policy set, and
// upstream's defaults for its own keys (consent.DefaultTuning).
func defaultConsent() ConsentConfig {
	t := consent.DefaultTuning()
	return ConsentConfig{
		Mode:                   string(t.Mode),
		CheckExpiration:        t.CheckExpiration,
		MaxConsentAgeDays:      t.MaxConsentAgeDays,
		GDPRAppliesIn:          t.GDPRCountries,
		USPrivacyStates:        t.USPrivacyStates,
		NoticeGiven:            t.USPrivacyDefaults.NoticeGiven,
		LSPACovered:            t.USPrivacyDefaults.LSPACovered,
		GPCImpliesOptOut:       t.USPrivacyDefaults.GPCImpliesOptOut,
		ConflictResolution:     string(t.Conflict),
		FreshnessThresholdDays: t.FreshnessThresholdDays,
	}
}

// Tuning is upstream's [consent] settings as the consent package takes
// them.
func (c *ConsentConfig) Tuning() *consent.Tuning {
	return &consent.Tuning{
		Mode:              consent.Mode(c.Mode),
		CheckExpiration:   c.CheckExpiration,
		MaxConsentAgeDays: min(max(c.MaxConsentAgeDays, consent.MinConsentAgeDays), consent.MaxConsentAgeDays),
		GDPRCountries:     slices.Clone(c.GDPRAppliesIn),
		USPrivacyStates:   slices.Clone(c.USPrivacyStates),
		USPrivacyDefaults: consent.USPrivacyDefaults{
			NoticeGiven: c.NoticeGiven, LSPACovered: c.LSPACovered, GPCImpliesOptOut: c.GPCImpliesOptOut,
		},
		Conflict:               consent.ConflictMode(c.ConflictResolution),
		FreshnessThresholdDays: c.FreshnessThresholdDays,
	}
}

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
	// Upstream's enums (consent_config.rs, ConsentMode and ConflictMode,
	// lowercase serde names).
	switch consent.Mode(k.Mode) {
	case consent.ModeInterpreter, consent.ModeProxy:
	default:
		p.addf("consent.mode", "must be \"interpreter\" or \"proxy\", got %q", k.Mode)
	}
	switch consent.ConflictMode(k.ConflictResolution) {
	case consent.ConflictRestrictive, consent.ConflictNewest, consent.ConflictPermissive:
	default:
		p.addf("consent.conflict_resolution", "must be \"restrictive\", \"newest\" or \"permissive\", got %q", k.ConflictResolution)
	}
	if k.FreshnessThresholdDays < 0 {
		p.addf("consent.freshness_threshold_days", "must be 0 or more, got %d", k.FreshnessThresholdDays)
	}
}

// consentAgeWarning says that consent.max_consent_age_days is out of
// upstream's range and is clamped, as upstream's ConsentConfig::validate
// does with a warning (consent_config.rs).
func (c *Config) consentAgeWarning() string {
	d := c.Consent.MaxConsentAgeDays
	if d >= consent.MinConsentAgeDays && d <= consent.MaxConsentAgeDays {
		return ""
	}
	return fmt.Sprintf("consent.max_consent_age_days = %d is outside %d-%d; clamped to %d", d,
		consent.MinConsentAgeDays, consent.MaxConsentAgeDays, c.Consent.Tuning().MaxConsentAgeDays)
}
