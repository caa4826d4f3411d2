package config

import "fmt"

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
	return FirstPartyConfig{
		ProxySecret:       Secret(ts.Publisher.ProxySecret),
		AllowedDomains:    ts.Proxy.AllowedDomains,
		CertificateCheck:  ts.Proxy.CertificateCheck,
		ExcludeDomains:    ts.Rewrite.ExcludeDomains,
		RewriteCreatives:  ts.Auction.RewriteCreatives,
		SanitizeCreatives: ts.Auction.SanitizeCreatives,
	}
}
