package config

import (
	"bytes"
	"strings"
	"testing"
)

// openrtbTOML uses the keys exactly as README.md and configs/example.toml
// document them.
const openrtbTOML = `
[publisher]
domain = "www.example.com"
origin_url = "https://origin.example.com"

[auction]
enabled = true
timeout_ms = 500
provider = "openrtb"
price_granularity = "auto"
currency = "eur"

[[auction.openrtb]]
name = "pbs"
url = "http://prebid-server:8000/openrtb2/auction"
timeout_ms = 450
account_id = "1001"
test = true
headers = { "X-Api-Key" = "s3cret-key" }

[consent]
gdpr_applies = true
require_tcf_purpose1 = true

[[creative_opportunities.slot]]
id = "top"
page_patterns = ["/**"]
formats = [[728, 90]]
[creative_opportunities.slot.bidders]
appnexus = { placementId = 13144370 }
`

func TestOpenRTBKeys(t *testing.T) {
	c, err := Load(writeFile(t, openrtbTOML), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Auction
	if a.Provider != AuctionProviderOpenRTB || a.PriceGranularity != "auto" || a.Currency != "EUR" || len(a.OpenRTB) != 1 {
		t.Fatalf("auction %+v", a)
	}
	e := a.OpenRTB[0]
	if e.Name != "pbs" || e.URL != "http://prebid-server:8000/openrtb2/auction" || e.TimeoutMS != 450 || e.AccountID != "1001" ||
		!e.Test || e.Headers["X-Api-Key"] != "s3cret-key" {
		t.Errorf("endpoint %+v", e)
	}
	if !c.Consent.GDPRApplies || !c.Consent.RequireTCFPurpose1 {
		t.Errorf("consent %+v", c.Consent)
	}
	if got := string(c.CreativeOpportunities.Slots[0].BidderParams["appnexus"]); got != `{"placementId":13144370}` {
		t.Errorf("bidder params %s", got)
	}

	var out bytes.Buffer
	if err := c.WriteEffective(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "s3cret-key") || !strings.Contains(out.String(), "X-Api-Key = 'xxxxx'") {
		t.Errorf("the header value is not masked:\n%s", out.String())
	}
	if _, err := Load(writeFile(t, out.String()), nil); err != nil {
		t.Errorf("the effective configuration does not load: %v", err)
	}
}

func TestOpenRTBRejects(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		key    string // the key the error must name
		reason string
	}{
		{"no endpoint", func(c *Config) { c.Auction.OpenRTB = nil }, "auction.openrtb:", "at least one"},
		{"relative url", func(c *Config) { c.Auction.OpenRTB[0].URL = "/openrtb2/auction" }, "auction.openrtb[0].url", "scheme"},
		{"ftp url", func(c *Config) { c.Auction.OpenRTB[0].URL = "ftp://pbs/auction" }, "auction.openrtb[0].url", "scheme"},
		{"no host", func(c *Config) { c.Auction.OpenRTB[0].URL = "http:///auction" }, "auction.openrtb[0].url", "host"},
		{"bad port", func(c *Config) { c.Auction.OpenRTB[0].URL = "http://pbs:99999/auction" }, "auction.openrtb[0].url", "port"},
		{"credentials", func(c *Config) { c.Auction.OpenRTB[0].URL = "http://u:pw@pbs/auction" }, "auction.openrtb[0].url", "credentials"},
		{"unparsable", func(c *Config) { c.Auction.OpenRTB[0].URL = "http://pbs/%zz" }, "auction.openrtb[0].url", "must be"},
		{"empty url", func(c *Config) { c.Auction.OpenRTB[0].URL = "" }, "auction.openrtb[0].url", "required"},
		{"no name", func(c *Config) { c.Auction.OpenRTB[0].Name = "" }, "auction.openrtb[0].name", "required"},
		{"name with a quote", func(c *Config) { c.Auction.OpenRTB[0].Name = `p"bs` }, "auction.openrtb[0].name", "letters"},
		{"duplicate name", func(c *Config) { c.Auction.OpenRTB = append(c.Auction.OpenRTB, c.Auction.OpenRTB[0]) }, "auction.openrtb[1].name", "unique"},
		{"negative timeout", func(c *Config) { c.Auction.OpenRTB[0].TimeoutMS = -1 }, "auction.openrtb[0].timeout_ms", "zero"},
		{"header name", func(c *Config) { c.Auction.OpenRTB[0].Headers = map[string]string{"X Key": "v"} }, `auction.openrtb[0].headers."X Key"`, "header name"},
		{"reserved header", func(c *Config) { c.Auction.OpenRTB[0].Headers = map[string]string{"host": "v"} }, "auction.openrtb[0].headers.host", "set by ssatd"},
		{"header value", func(c *Config) { c.Auction.OpenRTB[0].Headers = map[string]string{"X-Key": "a\r\nb"} }, "auction.openrtb[0].headers.X-Key", "characters"},
		{"header name with colon", func(c *Config) { c.Auction.OpenRTB[0].Headers = map[string]string{"X:Key": "v"} }, `auction.openrtb[0].headers."X:Key"`, "header name"},
		{"header value DEL", func(c *Config) { c.Auction.OpenRTB[0].Headers = map[string]string{"X-Key": "a\x7fb"} }, "auction.openrtb[0].headers.X-Key", "characters"},
		{"header value NUL", func(c *Config) { c.Auction.OpenRTB[0].Headers = map[string]string{"X-Key": "a\x00b"} }, "auction.openrtb[0].headers.X-Key", "characters"},
		{"granularity", func(c *Config) { c.Auction.PriceGranularity = "fine" }, "auction.price_granularity", "one of"},
		{"currency", func(c *Config) { c.Auction.Currency = "US$" }, "auction.currency", "ISO-4217"},
		{"bidder params", func(c *Config) { c.CreativeOpportunities.Slots[0].Bidders = map[string]any{"appnexus": 5} }, "creative_opportunities.slot[0].bidders.appnexus", "table"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			c.Auction.Provider = AuctionProviderOpenRTB
			c.Auction.OpenRTB = []OpenRTBEndpoint{{Name: "pbs", URL: "https://pbs.example/openrtb2/auction"}}
			c.CreativeOpportunities.Slots = []Slot{{ID: "top", PagePatterns: []string{"/**"}}}
			if err := c.Validate(); err != nil {
				t.Fatalf("the base is invalid: %v", err)
			}
			tt.mutate(c)
			err := c.Validate()
			if err == nil {
				t.Fatal("Validate succeeded")
			}
			if !strings.Contains(err.Error(), tt.key) || !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("error %q does not name %s and %q", err, tt.key, tt.reason)
			}
			if strings.Contains(err.Error(), "pw@") || strings.Contains(err.Error(), "a\r\nb") {
				t.Errorf("the error shows a secret: %q", err)
			}
		})
	}
}

func TestOpenRTBWarnings(t *testing.T) {
	c := valid()
	c.Auction.OpenRTB = []OpenRTBEndpoint{{Name: "pbs", URL: "https://pbs.example/a", TimeoutMS: 900}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	w := strings.Join(c.Warnings(), "\n")
	if !strings.Contains(w, "not called") || !strings.Contains(w, "auction.openrtb[0].timeout_ms (900)") {
		t.Errorf("warnings:\n%s", w)
	}
}
