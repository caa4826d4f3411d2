package config

import (
	"fmt"
	"regexp"
	"strings"
)

// HandlerConfig is one [[handlers]] entry: HTTP Basic authentication asked
// of every request whose raw path Path matches, before routing
// (IABTechLab/trusted-server crates/trusted-server-core/src/settings.rs:
// 556-567; auth.rs; internal/basicauth). Path is a regular expression,
// unanchored as upstream's Regex::is_match: "^/_ts/admin" covers the admin
// routes, "^/preview" a section of the site.
type HandlerConfig struct {
	Path     string `toml:"path"`
	Username Secret `toml:"username"`
	Password Secret `toml:"password"`
}

// AdminEndpoints are the admin routes ssatd serves, which a handler must
// cover whenever they are served (request_signing.key_dir set), as
// upstream refuses to start when one is uncovered (settings.rs:2912-3005,
// ADMIN_ENDPOINTS and validate_admin_coverage).
var AdminEndpoints = []string{"/_ts/admin/keys/rotate", "/_ts/admin/keys/deactivate"}

// handlerPasswordPlaceholders are upstream's known placeholders, refused on
// every handler (settings.rs:570-585, 3011-3028).
var handlerPasswordPlaceholders = []string{
	"replace-with-admin-password-32-bytes",
	"replace-with-admin-password",
	"change-me-admin-password",
}

func (c *Config) validateHandlers(p *problems) {
	var compiled []*regexp.Regexp
	for i, h := range c.Handlers {
		key := fmt.Sprintf("handlers[%d]", i)
		re, err := regexp.Compile(h.Path)
		switch {
		case h.Path == "":
			p.addf(key+".path", "is required: a regular expression the request path must match")
		case err != nil:
			// settings.rs:3187-3194, validate_path: the pattern compiles.
			p.addf(key+".path", "is not a regular expression: %v", err)
		default:
			compiled = append(compiled, re)
		}
		if h.Username.Expose() == "" {
			p.addf(key+".username", "is required")
		}
		if h.Password.Expose() == "" {
			p.addf(key+".password", "is required")
		} else if isPlaceholderPassword(h.Password.Expose()) {
			p.addf(key+".password", "is a placeholder; configure a strong secret")
		}
	}
	if c.RequestSigning.KeyDir == "" || len(compiled) != len(c.Handlers) {
		return
	}
	var uncovered []string
	for _, path := range AdminEndpoints {
		if !anyMatch(compiled, path) {
			uncovered = append(uncovered, path)
		}
	}
	if len(uncovered) > 0 {
		p.addf("handlers", "no handler covers the admin route(s) %s, served because request_signing.key_dir is set: "+
			"add a [[handlers]] entry whose path matches them, such as path = \"^/_ts/admin\"", strings.Join(uncovered, ", "))
	}
}

func anyMatch(res []*regexp.Regexp, path string) bool {
	for _, re := range res {
		if re.MatchString(path) {
			return true
		}
	}
	return false
}

func isPlaceholderPassword(pw string) bool {
	pw = strings.TrimSpace(pw)
	for _, ph := range handlerPasswordPlaceholders {
		if strings.EqualFold(pw, ph) {
			return true
		}
	}
	return false
}

// maskedHandlers is hs with their credentials masked, as upstream redacts
// both (settings.rs:559-562): the TOML encoder writes a Secret's string,
// not its MarshalText.
func maskedHandlers(hs []HandlerConfig) []HandlerConfig {
	if hs == nil {
		return nil
	}
	out := make([]HandlerConfig, len(hs))
	for i, h := range hs {
		out[i] = HandlerConfig{Path: h.Path, Username: maskedSecret, Password: maskedSecret}
	}
	return out
}
