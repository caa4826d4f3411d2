package config

import (
	"os"
	"path/filepath"
	"testing"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ssatd.toml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// valid returns Defaults plus the required keys, the smallest config that
// passes Validate.
func valid() *Config {
	c := Defaults()
	c.Publisher.Domain = "www.example.com"
	c.Publisher.OriginURL = "https://origin.example.com"
	return c
}

const minimalTOML = `
[publisher]
domain = "www.example.com"
origin_url = "https://origin.example.com"
`
