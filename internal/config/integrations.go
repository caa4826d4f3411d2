package config

import (
	"maps"
	"slices"
)

// IntegrationsConfig is what a Trusted Server file's [integrations.*]
// tables say that the client bundle depends on: which integrations are
// enabled (their modules join the bundle read from bundle.dir,
// internal/bundle) and GPT's gam_attribution_enabled (the bundle tag's
// data-ts-gam-attribution). A native file has no integrations.
type IntegrationsConfig struct {
	// Enabled lists the enabled integrations' ids, sorted.
	Enabled []string
	// GAMAttribution: gpt is enabled with gam_attribution_enabled
	// (integrations/gpt.rs:523-529, tsjs_script_tag_attributes).
	GAMAttribution bool
}

// tsEnabledIntegrations is each integration of the file by id, true when
// its table is present and enabled (prebid is enabled unless turned off,
// tsPrebid.setDefaults).
func tsEnabledIntegrations(ts *tsSettings) map[string]bool {
	in := ts.Integrations
	return map[string]bool{
		"prebid":             in.Prebid != nil && in.Prebid.Enabled,
		"nextjs":             in.NextJS != nil && in.NextJS.Enabled,
		"testlight":          in.Testlight != nil && in.Testlight.Enabled,
		"didomi":             in.Didomi != nil && in.Didomi.Enabled,
		"sourcepoint":        in.Sourcepoint != nil && in.Sourcepoint.Enabled,
		"permutive":          in.Permutive != nil && in.Permutive.Enabled,
		"lockr":              in.Lockr != nil && in.Lockr.Enabled,
		"datadome":           in.DataDome != nil && in.DataDome.Enabled,
		"gpt":                in.GPT != nil && in.GPT.Enabled,
		"gpt_diagnostics":    in.GPTDiagnostics != nil && in.GPTDiagnostics.Enabled,
		"osano":              in.Osano != nil && in.Osano.Enabled,
		"aps":                in.APS != nil && in.APS.Enabled,
		"google_tag_manager": in.GoogleTagManager != nil && in.GoogleTagManager.Enabled,
		"adserver_mock":      in.AdserverMock != nil && in.AdserverMock.Enabled,
	}
}

// tsIntegrationsOf maps the file's [integrations.*] tables.
func tsIntegrationsOf(ts *tsSettings) IntegrationsConfig {
	on := tsEnabledIntegrations(ts)
	var ic IntegrationsConfig
	for _, id := range slices.Sorted(maps.Keys(on)) {
		if on[id] {
			ic.Enabled = append(ic.Enabled, id)
		}
	}
	ic.GAMAttribution = on["gpt"] && ts.Integrations.GPT.GAMAttributionEnabled
	return ic
}
