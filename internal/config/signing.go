package config

// RequestSigningConfig is the [request_signing] section: Trusted Server's
// Ed25519 signature on every bid request, and the routes that publish and
// rotate its keys (internal/signing; docs/behaviour.md, "Request
// signing").
type RequestSigningConfig struct {
	// Enabled signs every bid request (ext.trusted_server), as upstream's
	// request_signing.enabled (settings.rs:621-632). The key routes are
	// served whenever KeyDir is set, enabled or not, as upstream serves
	// them whatever the switch.
	Enabled bool `toml:"enabled" env:"ENABLED"`
	// KeyDir is the key directory, ssatd's stand-in for upstream's
	// config_store_id and secret_store_id stores: `ssatd keys init -dir
	// DIR` creates its first key. Required when Enabled.
	KeyDir string `toml:"key_dir" env:"KEY_DIR"`
}

func (c *Config) validateRequestSigning(p *problems) {
	if c.RequestSigning.Enabled && c.RequestSigning.KeyDir == "" {
		p.addf("request_signing.key_dir", "is required when request_signing.enabled is true: the key directory, in [request_signing] "+
			"(in a Trusted Server file, [ssatd.request_signing]) or SSATD_REQUEST_SIGNING_KEY_DIR; ssatd keys init -dir DIR creates its first key")
	}
}
