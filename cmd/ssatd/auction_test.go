package main

import (
	"strings"
	"testing"
)

const openrtbConfig = `
[publisher]
domain = "www.example.com"
origin_url = "https://origin.example.com"

[auction]
enabled = true
provider = "openrtb"

[[auction.openrtb]]
name = "pbs"
url = "URL"
headers = { "X-Api-Key" = "s3cret-key" }

[[creative_opportunities.slot]]
id = "top"
page_patterns = ["/**"]
`

// TestConfigCheckOpenRTB: config check rejects a bad endpoint URL, naming
// the key, and prints a good configuration with the header values masked.
func TestConfigCheckOpenRTB(t *testing.T) {
	for _, bad := range []string{"prebid-server:8000/openrtb2/auction", "ftp://pbs/a", "http://user:pw@pbs/a", "http://pbs:0/a"} {
		got := invoke(t, []string{"config", "check", "-config", writeConfig(t, strings.Replace(openrtbConfig, "URL", bad, 1))}, nil)
		if got.code != 1 || !strings.Contains(got.stderr, "auction.openrtb[0].url") || strings.Contains(got.stderr, "pw@") {
			t.Errorf("url %q: exit %d, stderr %q; want 1 naming auction.openrtb[0].url", bad, got.code, got.stderr)
		}
	}
	got := invoke(t, []string{"config", "check", "-config", writeConfig(t, strings.Replace(openrtbConfig, "URL", "https://pbs.example/openrtb2/auction", 1))}, nil)
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	if strings.Contains(got.stdout, "s3cret-key") || !strings.Contains(got.stdout, "X-Api-Key = 'xxxxx'") {
		t.Errorf("the header value is not masked:\n%s", got.stdout)
	}
}
