package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestTrustedServerFirstPartySettingsAreMapped(t *testing.T) {
	cases := []struct {
		name, doc string
		environ   []string
		want      FirstPartyConfig
	}{
		{"upstream's defaults", tsMinimal, nil, FirstPartyConfig{
			ProxySecret: "proxy-secret-SECRET-0123456789abcdef", CertificateCheck: true, RewriteCreatives: true}},
		{"every key", tsMinimal + `
[proxy]
certificate_check = false
allowed_domains = ["cdn.example", "*.ads.example"]
[rewrite]
exclude_domains = ["static.news.test"]
[auction]
rewrite_creatives = false
sanitize_creatives = true
`, nil, FirstPartyConfig{ProxySecret: "proxy-secret-SECRET-0123456789abcdef",
			AllowedDomains: []string{"cdn.example", "*.ads.example"}, ExcludeDomains: []string{"static.news.test"},
			SanitizeCreatives: true}},
		{"secret from the environment", tsMinimal, []string{"TRUSTED_SERVER__PUBLISHER__PROXY_SECRET=from-env-0123456789"},
			FirstPartyConfig{ProxySecret: "from-env-0123456789", CertificateCheck: true, RewriteCreatives: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := loadTS(t, c.doc, c.environ...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.FirstParty, c.want) {
				t.Errorf("got %#v\nwant %#v", flat(cfg.FirstParty), flat(c.want))
			}
		})
	}
}

// flat shows a FirstPartyConfig with its secret, for a failure message.
func flat(f FirstPartyConfig) string {
	return fmt.Sprintf("secret=%s domains=%q check=%v exclude=%q rewrite=%v sanitize=%v",
		f.ProxySecret.Expose(), f.AllowedDomains, f.CertificateCheck, f.ExcludeDomains, f.RewriteCreatives, f.SanitizeCreatives)
}

func TestProxySecretIsNeverShown(t *testing.T) {
	const secret = "proxy-secret-SECRET-0123456789abcdef"
	cfg, err := loadTS(t, tsMinimal)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.FirstParty.ProxySecret.Expose() != secret {
		t.Fatalf("secret not mapped")
	}
	var eff bytes.Buffer
	if err := cfg.WriteEffective(&eff); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(cfg.FirstParty)
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]string{
		"WriteEffective": eff.String(),
		"JSON":           string(js),
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		shown[verb] = fmt.Sprintf(verb, cfg.FirstParty) + fmt.Sprintf(verb, cfg.FirstParty.ProxySecret)
	}
	for how, s := range shown {
		if strings.Contains(s, "SECRET") || strings.Contains(s, "5345435245") { // hex of "SECRET"
			t.Errorf("%s shows the secret: %s", how, s)
		}
	}
}

// [proxy] allowed_domains is normalized as upstream's Proxy::normalize
// does (trimmed, lower-cased, empty entries and a bare "*" dropped, the
// latter with a warning), and a pattern internal/firstparty cannot use is
// a problem naming its key. Both made `serve` fail at start (the family
// refused "*" and " CDN.Example ") while `config check` passed.
func TestTrustedServerAllowedDomainsAreNormalizedAndChecked(t *testing.T) {
	cases := []struct {
		name, doc   string
		wantDomains []string
		wantWarning string
		wantErr     string
	}{
		{"normalized", "[proxy]\nallowed_domains = [\" CDN.Example \", \"\", \"*.Ads.example\"]\n",
			[]string{"cdn.example", "*.ads.example"}, "", ""},
		{"bare * dropped", "[proxy]\nallowed_domains = [\"*\"]\n", nil, `proxy.allowed_domains: bare "*" is not a valid pattern`, ""},
		{"a URL is no pattern", "[proxy]\nallowed_domains = [\"cdn.example\", \"https://cdn.example\"]\n", nil, "",
			`proxy.allowed_domains[1]: "https://cdn.example" is not a host or *.domain`},
		{"nor in exclude_domains", "[rewrite]\nexclude_domains = [\"cdn.example/x\"]\n", nil, "",
			`rewrite.exclude_domains[0]: "cdn.example/x" is not a host or *.domain`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := loadTS(t, tsMinimal+c.doc)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %s", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.FirstParty.AllowedDomains, c.wantDomains) {
				t.Errorf("allowed_domains %q, want %q", cfg.FirstParty.AllowedDomains, c.wantDomains)
			}
			warned := strings.Join(cfg.Warnings(), "\n")
			if (c.wantWarning == "") != !strings.Contains(warned, "allowed_domains") ||
				c.wantWarning != "" && !strings.Contains(warned, c.wantWarning) {
				t.Errorf("warnings %q, want %q", cfg.Warnings(), c.wantWarning)
			}
		})
	}
}
