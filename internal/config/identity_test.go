package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestECValidation: upstream's bounds on [ec] (settings.rs:340-520), and
// the store's URL.
func TestECValidation(t *testing.T) {
	token := strings.Repeat("t", 32)
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantKey string // "" for valid
	}{
		{"no edge cookie", func(c *Config) {}, ""},
		{"a passphrase of 32", func(c *Config) { c.EC.Passphrase = strings.Repeat("p", 32) }, ""},
		{"a short passphrase", func(c *Config) { c.EC.Passphrase = strings.Repeat("p", 31) }, "ec.passphrase"},
		{"a partner", func(c *Config) {
			c.EC.Partners = []ECPartner{{Name: "a", SourceDomain: "a.example", APIToken: token}}
		}, ""},
		{"a partner without a name", func(c *Config) {
			c.EC.Partners = []ECPartner{{SourceDomain: "a.example", APIToken: token}}
		}, "ec.partners[0].name"},
		{"a source domain with a scheme", func(c *Config) {
			c.EC.Partners = []ECPartner{{Name: "a", SourceDomain: "https://a.example", APIToken: token}}
		}, "ec.partners[0].source_domain"},
		{"a label ending in a hyphen", func(c *Config) {
			c.EC.Partners = []ECPartner{{Name: "a", SourceDomain: "a-.example", APIToken: token}}
		}, "ec.partners[0].source_domain"},
		{"a source domain twice", func(c *Config) {
			c.EC.Partners = []ECPartner{{Name: "a", SourceDomain: "a.example", APIToken: token}, {Name: "b", SourceDomain: "A.example", APIToken: token}}
		}, "ec.partners[1].source_domain"},
		{"a short token", func(c *Config) {
			c.EC.Partners = []ECPartner{{Name: "a", SourceDomain: "a.example", APIToken: token[1:]}}
		}, "ec.partners[0].api_token"},
		{"a Redis URL", func(c *Config) { c.Store.URL = "redis://127.0.0.1:6379/0" }, ""},
		{"a store URL of another scheme", func(c *Config) { c.Store.URL = "http://127.0.0.1:6379" }, "store.url"},
	}
	for _, tt := range tests {
		c := valid()
		tt.mutate(c)
		err := c.Validate()
		switch {
		case tt.wantKey == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.wantKey != "" && (err == nil || !strings.Contains(err.Error(), tt.wantKey+":")):
			t.Errorf("%s: %v, want a problem with %s", tt.name, err, tt.wantKey)
		}
	}
	c := valid()
	c.EC.Partners = []ECPartner{{Name: "a", SourceDomain: "a.example", APIToken: token}}
	if err := c.Validate(); err != nil || c.EC.Partners[0].OpenRTBAtype != 3 || c.EC.Partners[0].BatchRateLimit != 60 {
		t.Errorf("upstream's defaults not applied: %+v, %v", c.EC.Partners[0], err)
	}
}

// TestTrustedServerECIsMapped: a Trusted Server file's [ec] drives the
// edge cookie; [ssatd.server] data_dir and [ssatd.store] give its store.
func TestTrustedServerECIsMapped(t *testing.T) {
	doc := tsMinimal + `
[ec]
passphrase = "ec-passphrase-SECRET-0123456789abcdef"
ec_store = "ids"

[[ec.partners]]
name = "One"
source_domain = "one.partner.test"
api_token = "partner-token-SECRET-0123456789abcdef"
openrtb_atype = 1
batch_rate_limit = 30

[ssatd.server]
data_dir = "/var/lib/ssatd"

[ssatd.store]
pool_size = 8
`
	c, err := Load(writeFile(t, doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := ECConfig{Passphrase: "ec-passphrase-SECRET-0123456789abcdef", Partners: []ECPartner{{Name: "One", SourceDomain: "one.partner.test",
		APIToken: "partner-token-SECRET-0123456789abcdef", OpenRTBAtype: 1, BatchRateLimit: 30}}}
	if !reflect.DeepEqual(c.EC, want) || c.Server.DataDir != "/var/lib/ssatd" || c.Store.PoolSize != 8 {
		t.Errorf("ec %+v, data_dir %q, store %+v", c.EC, c.Server.DataDir, c.Store)
	}
	for _, n := range c.Source.NotEmulated {
		if n.Key == "ec" {
			t.Errorf("[ec] without pull sync noted as not emulated: %s", n)
		}
	}
	if len(c.SecretsLeftOut()) != 1 {
		t.Errorf("config convert does not say [ec] is left out")
	}
}
