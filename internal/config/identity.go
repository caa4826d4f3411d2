package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// ECConfig is the [ec] section: Trusted Server's edge cookie (ts-ec) and
// the partners that read and sync it (internal/identity;
// docs/behaviour.md, "Edge cookie"). Upstream's [ec] (IABTechLab/
// trusted-server crates/trusted-server-core/src/settings.rs:271-327,
// 424-520).
type ECConfig struct {
	// Passphrase keys the HMAC-SHA256 of the client's address that an edge
	// cookie begins with; "" sets no edge cookie and serves no partner
	// routes. At least 32 characters (settings.rs:494-515).
	Passphrase string `toml:"passphrase" env:"PASSPHRASE"`
	// Partners read ids through /_ts/api/v1/identify and sync theirs
	// through /_ts/api/v1/batch-sync.
	Partners []ECPartner `toml:"partners,omitempty" env:"-"`
}

// ECPartner is one [[ec.partners]] (settings.rs:271-327).
type ECPartner struct {
	Name         string `toml:"name"`
	SourceDomain string `toml:"source_domain"`
	// APIToken is the partner's bearer token; only its SHA-256 is kept.
	APIToken string `toml:"api_token"`
	// OpenRTBAtype is the eid's atype; 0 is upstream's default, 3.
	OpenRTBAtype int `toml:"openrtb_atype"`
	// BatchRateLimit is batch-sync requests a minute; 0 is upstream's 60.
	BatchRateLimit int `toml:"batch_rate_limit"`
	// BidstreamEnabled puts the partner's uid in bid requests'
	// user.ext.eids.
	BidstreamEnabled bool `toml:"bidstream_enabled"`
}

// StoreConfig is the [store] section: the shared store identity state
// lives in when several instances serve one site. Without url the store
// is embedded, in server.data_dir.
type StoreConfig struct {
	// URL is Redis's (or Valkey's): redis://[user:password@]host:port[/db],
	// or rediss:// for TLS.
	URL string `toml:"url" env:"URL"`
	// PoolSize bounds the connections to Redis; 0 is 32.
	PoolSize int `toml:"pool_size" env:"POOL_SIZE"`
}

// Upstream's defaults for a partner (settings.rs:398-406) and its bounds.
const (
	DefaultPartnerAtype          = 3
	DefaultPartnerBatchRateLimit = 60
	minECPassphrase              = 32
	minPartnerToken              = 32
)

func (c *Config) validateEC(p *problems) {
	e := &c.EC
	if e.Passphrase != "" && len(e.Passphrase) < minECPassphrase {
		p.addf("ec.passphrase", "is %d characters, at least %d are needed (HMAC-SHA256 key strength, as upstream)", len(e.Passphrase), minECPassphrase)
	}
	seen := map[string]bool{}
	for i := range e.Partners {
		pt := &e.Partners[i]
		key := fmt.Sprintf("ec.partners[%d]", i)
		switch {
		case pt.Name == "":
			p.addf(key+".name", "is required")
		case !validSourceDomain(pt.SourceDomain):
			p.addf(key+".source_domain", "%q is not a domain name (letters, digits and hyphens in dot-separated labels)", pt.SourceDomain)
		case seen[strings.ToLower(pt.SourceDomain)]:
			p.addf(key+".source_domain", "%q is listed twice", pt.SourceDomain)
		case len(pt.APIToken) < minPartnerToken:
			p.addf(key+".api_token", "is %d bytes, at least %d are needed", len(pt.APIToken), minPartnerToken)
		case pt.BatchRateLimit < 0 || pt.OpenRTBAtype < 0:
			p.addf(key, "batch_rate_limit and openrtb_atype cannot be negative")
		}
		seen[strings.ToLower(pt.SourceDomain)] = true
		if pt.OpenRTBAtype == 0 {
			pt.OpenRTBAtype = DefaultPartnerAtype
		}
		if pt.BatchRateLimit == 0 {
			pt.BatchRateLimit = DefaultPartnerBatchRateLimit
		}
	}
	if s := c.Store.URL; s != "" {
		if u, err := url.Parse(s); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
			p.addf("store.url", "want redis://host:port[/db] or rediss://, got %q", s)
		}
	}
	if c.Store.PoolSize < 0 {
		p.addf("store.pool_size", "cannot be negative")
	}
}

// validSourceDomain is upstream's EcPartner::validate_source_domain
// (settings.rs:340-395): ASCII labels of letters, digits and inner
// hyphens, no scheme, path or port.
func validSourceDomain(s string) bool {
	if s == "" || strings.TrimSpace(s) != s || len(s) > 255 || strings.ContainsAny(s, "/:") {
		return false
	}
	n := strings.ToLower(strings.TrimSuffix(s, "."))
	if n == "" {
		return false
	}
	for _, label := range strings.Split(n, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			b := label[i]
			if !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-') {
				return false
			}
		}
	}
	return true
}

// HasStore reports whether identity state has somewhere to live: Redis,
// or the embedded store in server.data_dir.
func (c *Config) HasStore() bool { return c.Store.URL != "" || c.Server.DataDir != "" }

// withSecretsMasked is e with the passphrase and partner tokens replaced
// by as many x as they have characters: the effective configuration then
// shows them masked and still loads (their lengths are checked).
func (e ECConfig) withSecretsMasked() ECConfig {
	mask := func(s string) string { return strings.Repeat("x", len(s)) }
	e.Passphrase = mask(e.Passphrase)
	if e.Partners == nil {
		return e
	}
	e.Partners = slices.Clone(e.Partners)
	for i := range e.Partners {
		e.Partners[i].APIToken = mask(e.Partners[i].APIToken)
	}
	return e
}

// storeWarning says that edge cookies are configured with nowhere to keep
// them: upstream then sets none (ec/finalize.rs:98-104).
func (c *Config) storeWarning() []string {
	if c.EC.Passphrase == "" || c.HasStore() {
		return nil
	}
	return []string{"ec.passphrase is set but there is no store (server.data_dir or store.url; in a Trusted Server file, [ssatd.server] or [ssatd.store]): " +
		"no ts-ec cookie is set and the partner routes answer without identities, as Trusted Server without its KV store"}
}
