package config

import (
	"reflect"
	"testing"
)

// TestTrustedServerIntegrationsForTheBundle: the integrations a Trusted
// Server file enables (a present [integrations.prebid] is enabled unless
// turned off, as upstream's default) and GPT's GAM attribution, which
// counts only with gpt enabled.
func TestTrustedServerIntegrationsForTheBundle(t *testing.T) {
	cases := []struct {
		name, doc string
		want      IntegrationsConfig
	}{
		{"none", tsMinimal, IntegrationsConfig{}},
		{"gpt with attribution, prebid by default, didomi off", tsMinimal + `
[integrations.gpt]
enabled = true
gam_attribution_enabled = true
[integrations.prebid]
server_url = "http://127.0.0.1:8001"
[integrations.didomi]
enabled = false
`, IntegrationsConfig{Enabled: []string{"gpt", "prebid"}, GAMAttribution: true}},
		{"attribution with gpt off", tsMinimal + `
[integrations.gpt]
enabled = false
gam_attribution_enabled = true
`, IntegrationsConfig{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := loadTS(t, c.doc)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.Integrations, c.want) {
				t.Errorf("integrations %+v, want %+v", cfg.Integrations, c.want)
			}
		})
	}
}
