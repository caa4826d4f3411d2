package main

import (
	"fmt"
	"io"

	"github.com/ssatd/ssatd/internal/config"
)

// cmdConfigConvert writes the native equivalent of a Trusted Server file
// (with its TRUSTED_SERVER__ variables applied) and says on stderr what
// it dropped: what ssatd accepts and does not emulate.
func cmdConfigConvert(args []string, stdout, stderr io.Writer, environ []string) int {
	cfg, path, _, code := loadConfig("config convert", positionalConfig(args), stdout, stderr, environ)
	if cfg == nil {
		return code
	}
	if cfg.Source.Format != config.FormatTrustedServer {
		fmt.Fprintf(stderr, "ssatd config convert: configuration %s is already in ssatd's format\n", describe(path))
		return 1
	}
	out, err := cfg.NativeTOML()
	if err != nil {
		fmt.Fprintf(stderr, "ssatd config convert: %v\n", err)
		return 1
	}
	for _, n := range cfg.Source.NotEmulated {
		fmt.Fprintf(stderr, "dropped (accepted, not emulated): %s\n", n)
	}
	if cfg.FirstParty.ProxySecret.Expose() != "" {
		// Served from a Trusted Server file only: no native key holds them.
		fmt.Fprintf(stderr, "dropped (no native key): publisher.proxy_secret, [proxy] allowed_domains and certificate_check, "+
			"[rewrite] exclude_domains, auction.rewrite_creatives and sanitize_creatives: the native file serves no "+
			"/first-party/* routes and passes creatives as bidders send them\n")
	}
	for _, s := range cfg.SecretsLeftOut() {
		fmt.Fprintf(stderr, "left out (secret): %s\n", s)
	}
	fmt.Fprintf(stdout, "# ssatd's format, converted from the Trusted Server file %s by ssatd config convert;\n# keys left out have ssatd's defaults (README.md, \"Configuration\").\n\n", describe(path))
	_, err = stdout.Write(out)
	if err != nil {
		fmt.Fprintf(stderr, "ssatd config convert: %v\n", err)
		return 1
	}
	return 0
}
