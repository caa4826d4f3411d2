package config

import (
	"fmt"
	"strings"

	"github.com/ssatd/ssatd/internal/firstparty"
)

// FirstPartyConfig is what a Trusted Server file says about its
// /first-party/* routes and creative rewriting, for internal/firstparty.
// It has no native keys: only a Trusted Server file (or its
// TRUSTED_SERVER__* variables) fills it, and it is never written out.
type FirstPartyConfig struct {
	// ProxySecret is publisher.proxy_secret (settings.rs:48).
	ProxySecret Secret
	// AllowedDomains and CertificateCheck are [proxy]'s
	// (settings.rs:1569-1594; certificate_check defaults to true).
	AllowedDomains   []string
	CertificateCheck bool
	// ExcludeDomains is [rewrite] exclude_domains (settings.rs:519-553).
	ExcludeDomains []string
	// RewriteCreatives (default true) and SanitizeCreatives (default
	// false) are auction's (auction_config_types.rs:8-66).
	RewriteCreatives, SanitizeCreatives bool

	// droppedWildcard: allowed_domains had a bare "*", which upstream
	// removes with a warning (Warnings).
	droppedWildcard bool
}

// Secret is a configured secret. It prints, formats and marshals as
// maskedSecret, so that no log line, problem or dump shows it; Expose is
// the one way to its value.
type Secret string

// Expose returns the secret itself, for the code that keys with it.
func (s Secret) Expose() string { return string(s) }

func (s Secret) String() string   { return maskedSecret }
func (s Secret) GoString() string { return maskedSecret }

// Format masks every verb, %x and %q included.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(maskedSecret)) }

// MarshalText masks the secret in TOML, JSON and YAML output.
func (s Secret) MarshalText() ([]byte, error) { return []byte(maskedSecret), nil }

// tsFirstParty maps the upstream keys.
func tsFirstParty(ts *tsSettings) FirstPartyConfig {
	allowed, dropped := normalizeAllowedDomains(ts.Proxy.AllowedDomains)
	return FirstPartyConfig{
		ProxySecret:       Secret(ts.Publisher.ProxySecret),
		AllowedDomains:    allowed,
		droppedWildcard:   dropped,
		CertificateCheck:  ts.Proxy.CertificateCheck,
		ExcludeDomains:    ts.Rewrite.ExcludeDomains,
		RewriteCreatives:  ts.Auction.RewriteCreatives,
		SanitizeCreatives: ts.Auction.SanitizeCreatives,
	}
}

// normalizeAllowedDomains is upstream's Proxy::normalize
// (settings.rs:1615-1643): entries trimmed and lower-cased, empty ones
// dropped, and a bare "*", which matches no host, dropped with a warning
// (an empty list is open mode).
func normalizeAllowedDomains(in []string) (out []string, droppedWildcard bool) {
	for _, d := range in {
		switch d = strings.ToLower(strings.TrimSpace(d)); d {
		case "":
		case "*":
			droppedWildcard = true
		default:
			out = append(out, d)
		}
	}
	return out, droppedWildcard
}

// validate checks the domain patterns, which internal/firstparty would
// otherwise refuse only when the daemon starts.
func (f *FirstPartyConfig) validate(p *problems) {
	for _, l := range []struct {
		key  string
		list []string
	}{{"proxy.allowed_domains", f.AllowedDomains}, {"rewrite.exclude_domains", f.ExcludeDomains}} {
		for i, d := range l.list {
			if err := firstparty.CheckDomainPattern(d); err != nil {
				p.addf(fmt.Sprintf("%s[%d]", l.key, i), "%v", err)
			}
		}
	}
}

// warning is the warning for a bare "*" removed from allowed_domains.
func (f *FirstPartyConfig) warning() string {
	if !f.droppedWildcard {
		return ""
	}
	return `proxy.allowed_domains: bare "*" is not a valid pattern and has been removed; omit allowed_domains or leave it empty for open mode`
}
