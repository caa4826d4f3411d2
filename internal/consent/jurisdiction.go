package consent

import (
	"fmt"
	"strings"
)

// Jurisdiction is the privacy regime that applies to the client, as
// upstream's detect_jurisdiction decides it (consent/jurisdiction.rs).
type Jurisdiction string

// The jurisdictions; a US state with a privacy law is "US-" and its code.
const (
	JurisdictionGDPR          Jurisdiction = "GDPR"
	JurisdictionNonRegulated  Jurisdiction = "non-regulated"
	JurisdictionUnknown       Jurisdiction = "unknown"
	jurisdictionUSStatePrefix              = "US-"
)

// IsUSState reports a US state with a privacy law.
func (j Jurisdiction) IsUSState() bool {
	return strings.HasPrefix(string(j), jurisdictionUSStatePrefix)
}

// JurisdictionOf is the regime for an ISO 3166-1 alpha-2 country and, in
// the US, an ISO 3166-2 subdivision code without the country, under
// upstream's default lists (DefaultTuning): unknown without a country,
// GDPR in the EU/EEA/UK, a US state with a privacy law, or non-regulated.
func JurisdictionOf(country, region string) Jurisdiction {
	return defaultTuning.jurisdiction(country, region)
}

// ParseJurisdiction reads consent.jurisdiction: "" (from [geo]), "GDPR",
// "US-XX", "non-regulated" or "unknown", in any case.
func ParseJurisdiction(s string) (Jurisdiction, error) {
	switch u := strings.ToUpper(strings.TrimSpace(s)); {
	case u == "":
		return "", nil
	case u == string(JurisdictionGDPR):
		return JurisdictionGDPR, nil
	case u == strings.ToUpper(string(JurisdictionNonRegulated)):
		return JurisdictionNonRegulated, nil
	case u == strings.ToUpper(string(JurisdictionUnknown)):
		return JurisdictionUnknown, nil
	case strings.HasPrefix(u, jurisdictionUSStatePrefix) && len(u) == len(jurisdictionUSStatePrefix)+2:
		return Jurisdiction(u), nil
	}
	return "", fmt.Errorf("want \"\", \"GDPR\", \"US-XX\" (a state code), \"non-regulated\" or \"unknown\", got %q", s)
}
