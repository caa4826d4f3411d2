package config

import "strings"

// TesterCookieConfig is [tester_cookie]: Trusted Server's /_ts/set-tester
// and /_ts/clear-tester, which set and clear the ts-tester cookie
// (IABTechLab/trusted-server crates/trusted-server-core/src/
// tester_cookie.rs; settings.rs:2593-2605; internal/tester).
type TesterCookieConfig struct {
	// Enabled serves the two routes; off, they answer 404 as upstream's.
	Enabled bool `toml:"enabled" env:"ENABLED"`
	// CookieDomain is the cookie's Domain: upstream's
	// publisher.cookie_domain, which a Trusted Server file maps here.
	// Required when Enabled.
	CookieDomain string `toml:"cookie_domain" env:"COOKIE_DOMAIN"`
}

func (c *Config) validateTesterCookie(p *problems) {
	t := c.TesterCookie
	switch {
	case t.Enabled && t.CookieDomain == "":
		p.addf("tester_cookie.cookie_domain", "is required when tester_cookie.enabled is true (in a Trusted Server file, publisher.cookie_domain)")
	case t.Enabled && strings.ContainsFunc(t.CookieDomain, func(r rune) bool { return r <= ' ' || r >= 0x7f || r == ';' || r == ',' }):
		// It is written into Set-Cookie as it is (tester_cookie.rs:11-16).
		p.addf("tester_cookie.cookie_domain", "must be a domain (no space, ';', ',' or control character), got %q", t.CookieDomain)
	}
}
