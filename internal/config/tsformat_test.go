package config

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// tsMinimal is the smallest Trusted Server file upstream accepts
// (settings.rs:30-48 requires these four publisher keys).
const tsMinimal = `[publisher]
domain = "news.test"
cookie_domain = ".news.test"
origin_url = "https://origin.news.test"
proxy_secret = "proxy-secret-SECRET-0123456789abcdef"
`

func loadTS(t *testing.T, doc string, environ ...string) (*Config, error) {
	t.Helper()
	return Load(writeFile(t, doc), environ)
}

func TestTrustedServerFileWithEverySectionLoads(t *testing.T) {
	c, err := Load("testdata/ts-every-section.toml", nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	top, rail := c.CreativeOpportunities.Slots[0], c.CreativeOpportunities.Slots[1]
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"format", c.Source.Format, FormatTrustedServer},
		{"publisher.domain", c.Publisher.Domain, "news.test"},
		{"publisher.origin_url", c.Publisher.OriginURL, "https://origin.news.test"},
		{"publisher.origin_host_header_override", c.Publisher.OriginHostHeaderOverride, "www.news.test"},
		{"personalised pages are never stored, as upstream", c.Publisher.SSATCacheControl, SSATCacheNoStorePrivate},
		{"consent decided as upstream", c.Consent.Policy, "upstream"},
		{"consent.max_consent_age_days", c.Consent.Tuning().MaxConsentAgeDays, 390},
		{"consent.gdpr.applies_in", c.Consent.Tuning().GDPRCountries, []string{"FR", "DE"}},
		{"consent.us_states.privacy_states", c.Consent.Tuning().USPrivacyStates, []string{"CA"}},
		{"auction.enabled", c.Auction.Enabled, true},
		{"page auction waits auction_timeout_ms", c.Auction.TimeoutMS, 450},
		{"POST /auction waits auction.timeout_ms", c.Auction.PostAuctionTimeoutMS, 1800},
		{"price_granularity", c.Auction.PriceGranularity, "medium"},
		{"prebid is Prebid Server over OpenRTB", c.Auction.Provider, AuctionProviderOpenRTB},
		{"server_url gets /openrtb2/auction", c.Auction.OpenRTB[0].URL, "http://pbs.news.test:8000/openrtb2/auction"},
		{"prebid timeout_ms", c.Auction.OpenRTB[0].TimeoutMS, 900},
		{"prebid account_id", c.Auction.OpenRTB[0].AccountID, "acct-1"},
		{"prebid test_mode", c.Auction.OpenRTB[0].Test, true},
		{"prebid debug", c.Auction.OpenRTB[0].Debug, true},
		{"only prebid is an endpoint", len(c.Auction.OpenRTB), 1},
		{"formats tables", top.Formats, [][]int{{728, 90}, {970, 250}}},
		{"default unit path", top.GAMUnitPath, "/4242/top"},
		{"templated unit path", rail.GAMUnitPath, "/4242/site/rail"},
		{"div_id", rail.DivID, "rail-div"},
		{"targeting", top.Targeting, map[string]any{"pos": "atf"}},
		{"bidders not in integrations.prebid.bidders, or with empty parameters, are dropped", keys(top.BidderParams), []string{"appnexus"}},
		{"bidder params", string(top.BidderParams["appnexus"]), `{"placementId":13144370}`},
		{"no bidders without providers.prebid", len(rail.Bidders), 0},
		{"floor_price", *top.FloorPrice, 0.5},
		{"no floor_price", rail.FloorPrice, (*float64)(nil)},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s: got %#v, want %#v", tt.name, tt.got, tt.want)
		}
	}
	var noted []string
	for _, n := range c.Source.NotEmulated {
		noted = append(noted, n.Key)
	}
	for _, want := range []string{"ec", "response_headers", "cache", "proxy.asset_routes",
		"image_optimizer", "tinybird",
		"auction.providers[1]", "auction.mediator", "debug.auction_html_comment",
		"integrations.prebid", "integrations.prebid.bid_param_*", "integrations.aps", "integrations.gpt", "integrations.nextjs",
	} {
		if !containsString(noted, want) {
			t.Errorf("no accepted-not-emulated note for %s; notes: %v", want, noted)
		}
	}
	// Disabled integrations cost the publisher nothing: no note.
	for _, quiet := range []string{"integrations.didomi", "integrations.testlight", "integrations.osano"} {
		if containsString(noted, quiet) {
			t.Errorf("note for disabled %s", quiet)
		}
	}
	// The first-party routes and creative rewriting are served
	// (internal/firstparty): no note.
	for _, served := range []string{"rewrite", "proxy", "publisher.proxy_secret", "auction.rewrite_creatives", "auction.sanitize_creatives"} {
		if containsString(noted, served) {
			t.Errorf("note for %s, which is served", served)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func noteKeys(c *Config) []string {
	var out []string
	for _, n := range c.Source.NotEmulated {
		out = append(out, n.Key)
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func TestTrustedServerFileGetsUpstreamDefaults(t *testing.T) {
	doc := tsMinimal + `
[auction]
enabled = true

[creative_opportunities]
gam_network_id = "99"

[[creative_opportunities.slot]]
id = "atf"
page_patterns = ["/"]
formats = [{ width = 300, height = 250 }]
`
	c, err := loadTS(t, doc)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	tests := []struct {
		name string
		got  any
		want any
	}{
		// auction_config_types.rs:84-86: 2000 ms, used by the page when
		// creative_opportunities.auction_timeout_ms is absent.
		{"auction timeout", c.Auction.TimeoutMS, 2000},
		{"POST /auction's is the same", c.Auction.PostAuctionTimeoutMS, 0},
		// price_bucket.rs: dense.
		{"price granularity", c.Auction.PriceGranularity, "dense"},
		{"no providers: no auction endpoint", c.Auction.Provider, AuctionProviderNone},
		{"unit path /<gam_network_id>/<id>", c.CreativeOpportunities.Slots[0].GAMUnitPath, "/99/atf"},
		{"ssatd's own defaults elsewhere", c.Server.Listen, ":8080"},
		// cookie_domain is the tester cookie's, as upstream's only use of
		// it (tester_cookie.rs): nothing of the smallest file is unread.
		{"notes: none", noteKeys(c), []string(nil)},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s: got %#v, want %#v", tt.name, tt.got, tt.want)
		}
	}
}

func TestTrustedServerFileTyposFailNamingTheKey(t *testing.T) {
	slot := "\n[creative_opportunities]\ngam_network_id = \"1\"\n\n[[creative_opportunities.slot]]\nid = \"a\"\npage_patterns = [\"/\"]\n"
	tests := []struct {
		name    string
		doc     string
		environ []string
		want    string
	}{
		{"publisher key", tsMinimal + "orgin_url = \"x\"\n", nil, `line 6: publisher.orgin_url: unknown key; did you mean "publisher.origin_url"?`},
		{"native key in a Trusted Server section", tsMinimal + "\n[auction]\nprovider = \"openrtb\"\n", nil, `line 8: auction.provider: unknown key; did you mean "auction.providers"?`},
		{"integration name", tsMinimal + "\n[integrations.prebd]\nenabled = true\n", nil, `line 7: integrations.prebd: unknown table; did you mean "integrations.prebid"?`},
		{"integration key", tsMinimal + "\n[integrations.prebid]\nserver_ur = \"http://pbs\"\n", nil, `line 8: integrations.prebid.server_ur: unknown key; did you mean "integrations.prebid.server_url"?`},
		{"format table key", tsMinimal + slot + "formats = [{ widt = 300, height = 250 }]\n", nil, `line 13: creative_opportunities.slot[0].formats[0].widt: unknown key; did you mean "creative_opportunities.slot[0].formats[0].width"?`},
		{"format as a native pair", tsMinimal + slot + "formats = [[300, 250]]\n", nil, `line 13: creative_opportunities.slot[0].formats[0]: found an array, wants a table`},
		{"slot providers", tsMinimal + slot + "formats = [{ width = 1, height = 1 }]\nproviders = { prebd = {} }\n", nil, `line 14: creative_opportunities.slot[0].providers.prebd: unknown table; did you mean "creative_opportunities.slot[0].providers.prebid"?`},
		{"top-level key of a section", "passphrase = \"x\"\n" + tsMinimal, nil, `line 1: passphrase: unknown key; did you mean "ec.passphrase"?`},
		{"unknown section", tsMinimal + "\n[integration.prebid]\nenabled = true\n", nil, `line 7: integration: unknown table; did you mean "integrations"?`},
		{"ssatd table", tsMinimal + "\n[ssatd.server]\nlistn = \":1\"\n", nil, `line 8: ssatd.server.listn: unknown key; did you mean "ssatd.server.listen"?`},
		{"missing required key", strings.Replace(tsMinimal, "cookie_domain", "cookie_domian", 1), nil, `publisher.cookie_domain: is required by Trusted Server`},
		{"wrong type", tsMinimal + "\n[auction]\ntimeout_ms = \"2s\"\n", nil, `line 8: auction.timeout_ms: found the string "2s", wants an integer`},
		{"variable typo", tsMinimal, []string{"TRUSTED_SERVER__PUBLISHER__DOMAN=x"}, `TRUSTED_SERVER__PUBLISHER__DOMAN: unknown variable; did you mean TRUSTED_SERVER__PUBLISHER__DOMAIN?`},
		{"variable of the wrong type", tsMinimal, []string{"TRUSTED_SERVER__AUCTION__ENABLED=yes please"}, `TRUSTED_SERVER__AUCTION__ENABLED: auction.enabled: found the string "yes please", wants true or false`},
		{"variable past a value", tsMinimal, []string{"TRUSTED_SERVER__PUBLISHER__DOMAIN__X=1"}, `TRUSTED_SERVER__PUBLISHER__DOMAIN__X: unknown variable: publisher.domain holds a single value`},
		{"negative floor_price", tsMinimal + slot + "formats = [{ width = 1, height = 1 }]\nfloor_price = -0.5\n", nil, `line 14: creative_opportunities.slot[0].floor_price: must be a price of zero or more, got -0.5`},
		{"ssatd table sets a mapped key", tsMinimal + "\n[ssatd.publisher]\ndomain = \"other.test\"\n", nil, `line 8: ssatd.publisher.domain: is set by the Trusted Server keys (publisher.domain); set it there`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadTS(t, tt.doc, tt.environ...)
			if err == nil {
				t.Fatal("Load succeeded, want a problem")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("problems:\n%v\nwant one containing %q", err, tt.want)
			}
		})
	}
}

func TestTrustedServerEnvironmentOverlay(t *testing.T) {
	file := tsMinimal + `
[auction]
enabled = false
providers = ["prebid"]

[integrations.prebid]
server_url = "http://pbs.test"
bidders = ["file-bidder"]

[creative_opportunities]
gam_network_id = "7"
`
	slots := `[{"id":"env-slot","page_patterns":["/"],"formats":[{"width":320,"height":50}],"floor_price":0.25,` +
		`"providers":{"prebid":{"bidders":{"kargo":{"placementId":"p1"}}}}}]`
	tests := []struct {
		name    string
		environ []string
		got     func(*Config) any
		want    any
	}{
		{"a scalar wins over the file", []string{"TRUSTED_SERVER__PUBLISHER__DOMAIN=env.test"}, func(c *Config) any { return c.Publisher.Domain }, "env.test"},
		{"a bool", []string{"TRUSTED_SERVER__AUCTION__ENABLED=true"}, func(c *Config) any { return c.Auction.Enabled }, true},
		{"an integer creates a missing key", []string{"TRUSTED_SERVER__CREATIVE_OPPORTUNITIES__AUCTION_TIMEOUT_MS=333"}, func(c *Config) any { return c.Auction.TimeoutMS }, 333},
		{"slots as JSON", []string{"TRUSTED_SERVER__CREATIVE_OPPORTUNITIES__SLOT=" + slots, "TRUSTED_SERVER__INTEGRATIONS__PREBID__BIDDERS=[\"kargo\"]"},
			func(c *Config) any {
				s := c.CreativeOpportunities.Slots[0]
				return []any{s.ID, s.Formats, s.GAMUnitPath, string(s.BidderParams["kargo"])}
			}, []any{"env-slot", [][]int{{320, 50}}, "/7/env-slot", `{"placementId":"p1"}`}},
		{"an indexed slot field", []string{"TRUSTED_SERVER__CREATIVE_OPPORTUNITIES__SLOT=" + slots, "TRUSTED_SERVER__CREATIVE_OPPORTUNITIES__SLOT__0__DIV_ID=d0"},
			func(c *Config) any { return c.CreativeOpportunities.Slots[0].DivID }, "d0"},
		{"a comma list", []string{"TRUSTED_SERVER__INTEGRATIONS__PREBID__BIDDERS=kargo, rubicon", "TRUSTED_SERVER__CREATIVE_OPPORTUNITIES__SLOT=" + slots},
			func(c *Config) any { return keys(c.CreativeOpportunities.Slots[0].BidderParams) }, []string{"kargo"}},
		{"indexed elements", []string{"TRUSTED_SERVER__AUCTION__PROVIDERS__0=aps", "TRUSTED_SERVER__AUCTION__PROVIDERS__1=prebid"},
			func(c *Config) any { return len(c.Auction.OpenRTB) }, 1},
		{"a JSON table", []string{`TRUSTED_SERVER__RESPONSE_HEADERS={"X-Test":"1"}`},
			func(c *Config) any { return c.Source.NotEmulated[0].Key }, "response_headers"},
		{"ssatd's variables beside a Trusted Server file", []string{"SSATD_SERVER_LISTEN=:7777"}, func(c *Config) any { return c.Server.Listen }, ":7777"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadTS(t, file, tt.environ...)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got := tt.got(c); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestFormatIsDetectedOrChosen(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		chosen  string
		want    Format
		wantErr string
	}{
		{"native file", minimalTOML, "", FormatSSATD, ""},
		{"trusted server file by its publisher keys", tsMinimal, "", FormatTrustedServer, ""},
		{"trusted server file by a section", "[response_headers]\nX-Test = \"1\"\n", "", FormatTrustedServer, ""},
		{"both formats", tsMinimal + "\n[server]\nlisten = \":1\"\n", "", "", "the file has keys of both formats (Trusted Server: publisher.cookie_domain, publisher.proxy_secret; ssatd: server)"},
		{"chosen", minimalTOML, "trusted-server", FormatTrustedServer, ""},
		{"chosen badly", minimalTOML, "ts", "", `SSATD_CONFIG_FORMAT: must be "ssatd" or "trusted-server", got "ts"`},
		{"syntax error goes to the native loader", "[publisher\n", "", FormatSSATD, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := detectFormat([]byte(tt.doc), tt.chosen)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	// Through Load, a chosen format is the one read: a native file read as
	// a Trusted Server file lacks upstream's required keys.
	_, err := Load(writeFile(t, minimalTOML), []string{FormatEnv + "=trusted-server"})
	var list *Errors
	if !errors.As(err, &list) || !strings.Contains(err.Error(), "publisher.cookie_domain: is required by Trusted Server") {
		t.Errorf("native file read as trusted-server: %v", err)
	}
}

func TestSSATDTableCarriesNativeSettings(t *testing.T) {
	doc := tsMinimal + `
[ssatd.server]
listen = ":8181"

[ssatd.publisher]
ssat_compression_offload_enabled = true

[ssatd.compute]
limits = "fastly"
`
	c, err := loadTS(t, doc)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.Server.Listen != ":8181" || !c.Publisher.SSATCompressionOffloadEnabled || c.Compute.Limits != ComputeLimitsFastly {
		t.Errorf("listen %q, offload %v, limits %q", c.Server.Listen, c.Publisher.SSATCompressionOffloadEnabled, c.Compute.Limits)
	}
	// A problem Validate finds in the table points at its line, named as
	// the table spells it.
	_, err = loadTS(t, tsMinimal+"\n[ssatd.compute]\nlimits = \"lambda\"\n")
	if err == nil || !strings.Contains(err.Error(), "line 8: ssatd.compute.limits: must be") {
		t.Errorf("bad [ssatd] value: %v", err)
	}
}

func TestTrustedServerSecretsAreNotShown(t *testing.T) {
	c, err := Load("testdata/ts-every-section.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := c.WriteEffective(&out); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Source.NotEmulated {
		out.WriteString(n.String() + "\n")
	}
	if strings.Contains(out.String(), "SECRET") {
		t.Errorf("a secret of the file is shown:\n%s", out.String())
	}
}

// config convert's output is a native file that loads to the same
// effective configuration as the Trusted Server file it came from.
func TestNativeTOMLOfATrustedServerFileLoadsTheSame(t *testing.T) {
	for _, path := range []string{"testdata/ts-every-section.toml", writeFile(t, tsMinimal)} {
		ts, err := Load(path, []string{"TRUSTED_SERVER__AUCTION__TIMEOUT_MS=300"})
		if err != nil {
			t.Fatal(err)
		}
		native, err := ts.NativeTOML()
		if err != nil {
			t.Fatal(err)
		}
		c, err := Load(writeFile(t, string(native)), nil)
		if err != nil {
			t.Fatalf("%s: the converted file does not load: %v\n%s", path, err, native)
		}
		if c.Source.Format != FormatSSATD {
			t.Errorf("%s: converted file read as %q", path, c.Source.Format)
		}
		// [ec] holds secrets, which NativeTOML leaves out
		// (SecretsLeftOut): the rest loads the same.
		ts.EC = ECConfig{}
		var a, b bytes.Buffer
		if err := ts.WriteEffective(&a); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteEffective(&b); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Errorf("%s: effective configurations differ:\n%s\n---\n%s\nconverted:\n%s", path, a.String(), b.String(), native)
		}
		if !strings.Contains(string(native), "domain = 'news.test'") {
			t.Errorf("%s: publisher.domain not written:\n%s", path, native)
		}
	}
}

// A Trusted Server file decides consent as upstream, which fails closed
// where the jurisdiction is unknown: without a location ssatd says so.
func TestUpstreamConsentWithoutLocationWarns(t *testing.T) {
	slots := "\n[creative_opportunities]\ngam_network_id = \"1\"\n\n[[creative_opportunities.slot]]\nid = \"a\"\npage_patterns = [\"/\"]\nformats = [{ width = 1, height = 1 }]\n"
	tests := []struct {
		name    string
		doc     string
		environ []string
		warn    bool
	}{
		{"no location", tsMinimal + "\n[auction]\nenabled = true\n" + slots, nil, true},
		{"auction off", tsMinimal + slots, nil, false},
		{"jurisdiction", tsMinimal + "\n[auction]\nenabled = true\n" + slots + "\n[ssatd.consent]\njurisdiction = \"non-regulated\"\n", nil, false},
		{"country", tsMinimal + "\n[auction]\nenabled = true\n" + slots, []string{"SSATD_GEO_COUNTRY=US"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadTS(t, tt.doc, tt.environ...)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Contains(strings.Join(c.Warnings(), "\n"), "the jurisdiction is unknown")
			if got != tt.warn {
				t.Errorf("warning %v, want %v: %q", got, tt.warn, c.Warnings())
			}
		})
	}
}

// TestSSATDTableProblemsNameTheTableKey: a value in a Trusted Server
// file's [ssatd] table that fails validation is named as the file spells
// it (ssatd.server.listen), not by its native key; one from an SSATD_
// variable keeps the variable's native name.
func TestSSATDTableProblemsNameTheTableKey(t *testing.T) {
	doc := tsMinimal + "\n[ssatd.server]\nlisten = \"nonsense\"\n"
	_, err := loadTS(t, doc)
	if err == nil || !strings.Contains(err.Error(), "ssatd.server.listen: must be") {
		t.Errorf("error %v, want one naming ssatd.server.listen", err)
	}
	_, err = loadTS(t, doc, "SSATD_SERVER_LISTEN=also-bad")
	if err == nil || !strings.Contains(err.Error(), "SSATD_SERVER_LISTEN: server.listen: must be") {
		t.Errorf("error %v, want one naming SSATD_SERVER_LISTEN and server.listen", err)
	}
}

// Creative sanitizing is served (internal/firstparty, wired in
// internal/proxy): a file that turns it on gets no note for it.
func TestTrustedServerSanitizeCreativesIsNotNoted(t *testing.T) {
	c, err := loadTS(t, tsMinimal+"\n[auction]\nenabled = true\nsanitize_creatives = true\n")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got := noteKeys(c); len(got) != 0 {
		t.Errorf("notes %q, want none", got)
	}
}
