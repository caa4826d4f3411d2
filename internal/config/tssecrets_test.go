package config

import (
	"strings"
	"testing"
)

// A secret of the wrong kind (a passphrase written unquoted, a token set
// by a variable to JSON) is refused naming its key and the kind found,
// never its value.
func TestSecretOfTheWrongTypeIsNotQuoted(t *testing.T) {
	pub := "[publisher]\ndomain = \"news.test\"\ncookie_domain = \".news.test\"\norigin_url = \"https://origin.news.test\"\n"
	tests := []struct {
		name    string
		doc     string
		environ []string
		key     string
	}{
		{"proxy_secret unquoted", pub + "proxy_secret = 918273645\n", nil, "publisher.proxy_secret: found an integer, wants a string"},
		{"passphrase a boolean", tsMinimal + "\n[ec]\npassphrase = true\n", nil, "ec.passphrase: found a boolean"},
		{"handler password a number", tsMinimal + "\n[[handlers]]\npath = \"^/a\"\nusername = \"u\"\npassword = 918273.645\n", nil, "handlers[0].password: found a number"},
		{"partner token from a variable", tsMinimal, []string{`TRUSTED_SERVER__EC__PARTNERS=[{"name":"p","source_domain":"p.test","api_token":918273645}]`}, "ec.partners[0].api_token: found an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadTS(t, tt.doc, tt.environ...)
			if err == nil {
				t.Fatal("loaded")
			}
			if !strings.Contains(err.Error(), tt.key) {
				t.Errorf("the problem does not name %q: %v", tt.key, err)
			}
			for _, v := range []string{"918273", "true"} {
				if strings.Contains(err.Error(), v) {
					t.Errorf("the secret %q is quoted: %v", v, err)
				}
			}
		})
	}
	// A key that is not a secret still shows what was found.
	_, err := loadTS(t, tsMinimal+"\n[auction]\ntimeout_ms = \"fast\"\n")
	if err == nil || !strings.Contains(err.Error(), `found the string "fast"`) {
		t.Errorf("ordinary key: %v", err)
	}
}

// Upstream's guide sets cookie_domain and proxy_secret by variables; a
// file without them, and no section of its own, is still told by the keys
// only Trusted Server has in the sections both formats share.
func TestTrustedServerFileWithSecretsInTheEnvironmentIsDetected(t *testing.T) {
	doc := "[publisher]\ndomain = \"news.test\"\norigin_url = \"https://origin.news.test\"\n\n[creative_opportunities]\ngam_network_id = \"1\"\n\n[[creative_opportunities.slot]]\nid = \"a\"\npage_patterns = [\"/\"]\nformats = [{ width = 300, height = 250 }]\n"
	c, err := loadTS(t, doc, "TRUSTED_SERVER__PUBLISHER__COOKIE_DOMAIN=.news.test", "TRUSTED_SERVER__PUBLISHER__PROXY_SECRET=from-the-environment")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.Source.Format != FormatTrustedServer || len(c.CreativeOpportunities.Slots) != 1 {
		t.Errorf("format %q, %d slots", c.Source.Format, len(c.CreativeOpportunities.Slots))
	}
	tests := []struct {
		name string
		doc  string
		want Format
	}{
		{"auction.rewrite_creatives", "[auction]\nrewrite_creatives = true\n", FormatTrustedServer},
		// A native file's typo of a native key is not taken for the other format.
		{"native auction.provider misspelt", "[publisher]\ndomain = \"a\"\n[auction]\nproviders = \"prebid\"\n", FormatSSATD},
		{"native keys only", minimalTOML, FormatSSATD},
		{"empty", "", FormatSSATD},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := detectFormat([]byte(tt.doc), ""); err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// A problem Validate finds in a value a Trusted Server key set names that
// key, not the native one it was mapped onto, at the key's line.
func TestTrustedServerProblemNamesTheUpstreamKey(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"page auction timeout", tsMinimal + "\n[creative_opportunities]\ngam_network_id = \"1\"\nauction_timeout_ms = -1\n", "line 9: creative_opportunities.auction_timeout_ms: must be a positive number"},
		{"auction timeout", tsMinimal + "\n[auction]\ntimeout_ms = -5\n", "line 8: auction.timeout_ms: must be a positive number"},
		{"price granularity", tsMinimal + "\n[creative_opportunities]\ngam_network_id = \"1\"\nprice_granularity = \"weird\"\n", "line 9: creative_opportunities.price_granularity: must be one of"},
		{"prebid server", tsMinimal + "\n[auction]\nproviders = [\"prebid\"]\n\n[integrations.prebid]\nenabled = true\nserver_url = \"ftp://pbs.test\"\n", "line 12: integrations.prebid.server_url: scheme must be http or https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadTS(t, tt.doc)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// TRUSTED_SERVER__ variables beside a file in ssatd's format (a file
// made by config convert, in the deployment's old environment) are not
// read; that is said, naming them and never their values.
func TestTrustedServerVariablesBesideANativeFileWarn(t *testing.T) {
	environ := []string{"TRUSTED_SERVER__PUBLISHER__ORIGIN_URL=https://SECRET-origin.test", "TRUSTED_SERVER__AUCTION__TIMEOUT_MS=300"}
	c, err := Load(writeFile(t, minimalTOML), environ)
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(c.Warnings(), "\n")
	for _, name := range []string{"TRUSTED_SERVER__AUCTION__TIMEOUT_MS", "TRUSTED_SERVER__PUBLISHER__ORIGIN_URL", "ssatd's format"} {
		if !strings.Contains(w, name) {
			t.Errorf("warnings do not name %q: %q", name, w)
		}
	}
	if strings.Contains(w, "SECRET") {
		t.Errorf("a value is shown: %q", w)
	}
	// Read by a Trusted Server file, they draw no such warning.
	c, err = loadTS(t, tsMinimal, environ...)
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(c.Warnings(), "\n"); strings.Contains(w, "TRUSTED_SERVER__AUCTION") {
		t.Errorf("a Trusted Server file warns: %q", w)
	}
}

// A variable's JSON for a table or a list of tables that does not parse is
// refused as such, never quoting its text: it holds the table's secrets.
func TestBrokenJSONVariableDoesNotEchoItsSecrets(t *testing.T) {
	tests := []struct {
		name, variable, want string
	}{
		{"handlers, bracket missing", `TRUSTED_SERVER__HANDLERS=[{"path":"^/a","username":"u","password":"S3CRET"}`, "TRUSTED_SERVER__HANDLERS: handlers: the value is not valid JSON"},
		{"ec, trailing comma", `TRUSTED_SERVER__EC={"passphrase":"S3CRET",}`, "TRUSTED_SERVER__EC: ec: the value is not valid JSON"},
		{"partners", `TRUSTED_SERVER__EC__PARTNERS=[{"name":"p","api_token":"S3CRET"},]`, "TRUSTED_SERVER__EC__PARTNERS: ec.partners: the value is not valid JSON"},
		{"a table as a word", `TRUSTED_SERVER__REQUEST_SIGNING=S3CRET`, "request_signing: found a string, wants a table"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadTS(t, tsMinimal, tt.variable)
			if err == nil {
				t.Fatal("loaded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "S3CRET") {
				t.Errorf("the value is quoted: %v", err)
			}
		})
	}
}

// A warning about values a Trusted Server file set names the file's keys.
func TestTrustedServerWarningNamesTheUpstreamKeys(t *testing.T) {
	doc := tsMinimal + `
[auction]
enabled = true
providers = ["prebid"]

[integrations.prebid]
server_url = "http://127.0.0.1:9"
timeout_ms = 1000

[creative_opportunities]
gam_network_id = "1"
auction_timeout_ms = 500

[[creative_opportunities.slot]]
id = "a"
page_patterns = ["/"]
formats = [{ width = 300, height = 250 }]

[ssatd.consent]
jurisdiction = "non-regulated"
`
	c, err := loadTS(t, doc)
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(c.Warnings(), "\n")
	want := "integrations.prebid.timeout_ms (1000) is longer than creative_opportunities.auction_timeout_ms (500)"
	if !strings.Contains(w, want) {
		t.Errorf("warnings %q, want %q", w, want)
	}
	// A native file's warning keeps its keys.
	n, err := Load(writeFile(t, minimalTOML+"\n[auction]\nenabled = true\ntimeout_ms = 500\n\n[[auction.openrtb]]\nname = \"p\"\nurl = \"http://127.0.0.1:9\"\ntimeout_ms = 1000\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(n.Warnings(), "\n"); !strings.Contains(w, "auction.openrtb[0].timeout_ms (1000) is longer than auction.timeout_ms (500)") {
		t.Errorf("native warnings %q", w)
	}
}
