package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad: arbitrary TOML gives an error message or a valid config, never
// a panic; a config that loads validates again without problems.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		"", "[publisher]\ndomain = \"www.pub.example\"\norigin_url = \"https://o.example\"\n",
		"[server]\nlisten = \":8080\"\nshutdown_timeout = \"soon\"\n",
		"[[creative_opportunities.slot]]\nid = \"top\"\npage_patterns = [\"/**\"]\nformats = [[728, 90]]\ntargeting = {a = [\"b\"]}\n",
		"[publisher]\nunknown = 1\n", "a = [", "[auction]\nstatic_bids = 3\n",
		// Trusted Server files (tsformat.go).
		"[publisher]\ndomain = \"p.example\"\ncookie_domain = \".p.example\"\norigin_url = \"https://o.example\"\nproxy_secret = \"s\"\n" +
			"[auction]\nenabled = true\nproviders = [\"prebid\"]\n[integrations.prebid]\nserver_url = \"http://pbs.example\"\n" +
			"[creative_opportunities]\ngam_network_id = \"1\"\n[[creative_opportunities.slot]]\nid = \"a\"\npage_patterns = [\"/\"]\nformats = [{ width = 1, height = 1 }]\n" +
			"[ssatd.server]\nlisten = \":1\"\n",
		"[ec]\npassphrase = 1\n[[handlers]]\npath = [1]\n[ssatd]\npublisher = 2\n",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, toml string) {
		path := filepath.Join(dir, "c.toml")
		if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path, nil)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("a loaded config does not validate again: %v", err)
		}
	})
}
