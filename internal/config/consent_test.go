package config

import (
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/consent"
)

// consent.policy defaults from require_tcf_purpose1, and each bad value is
// a problem naming its key.
func TestConsentPolicy(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*ConsentConfig)
		policy  consent.Policy
		problem string // the key named, "" when valid
	}{
		{"unset is off", func(*ConsentConfig) {}, consent.PolicyOff, ""},
		{"unset with require_tcf_purpose1 is tcf", func(c *ConsentConfig) { c.RequireTCFPurpose1 = true }, consent.PolicyTCF, ""},
		{"upstream", func(c *ConsentConfig) { c.Policy = "upstream" }, consent.PolicyUpstream, ""},
		{"upstream with a jurisdiction", func(c *ConsentConfig) { c.Policy, c.Jurisdiction = "upstream", "us-ca" }, consent.PolicyUpstream, ""},
		{"unknown policy", func(c *ConsentConfig) { c.Policy = "strict" }, "", "consent.policy"},
		{"off contradicts require_tcf_purpose1", func(c *ConsentConfig) { c.Policy, c.RequireTCFPurpose1 = "off", true }, "", "consent.policy"},
		{"bad jurisdiction", func(c *ConsentConfig) { c.Policy, c.Jurisdiction = "upstream", "EU" }, "", "consent.jurisdiction"},
		{"jurisdiction without upstream", func(c *ConsentConfig) { c.Jurisdiction = "GDPR" }, "", "consent.jurisdiction"},
	}
	for _, tt := range tests {
		c := valid()
		tt.mutate(&c.Consent)
		err := c.Validate()
		if tt.problem == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			} else if got := c.Consent.ConsentPolicy(); got != tt.policy {
				t.Errorf("%s: policy %q, want %q", tt.name, got, tt.policy)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.problem) {
			t.Errorf("%s: error %v, want one naming %s", tt.name, err, tt.problem)
		}
	}
	c := valid()
	c.Consent.Policy, c.Consent.Jurisdiction = "upstream", "us-ca"
	if err := c.Validate(); err != nil || c.Consent.Jurisdiction != "US-CA" {
		t.Errorf("jurisdiction kept as %q (%v), want US-CA", c.Consent.Jurisdiction, err)
	}
}
