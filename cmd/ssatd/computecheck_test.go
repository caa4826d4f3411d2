package main

import (
	"fmt"
	"strings"
	"testing"
)

// computeConfig is a configuration under compute.limits = "fastly" with n
// OpenRTB endpoints and the given [compression] lines.
func computeConfig(n int, compression string) string {
	var b strings.Builder
	b.WriteString(`
[publisher]
domain = "www.example.com"
origin_url = "http://127.0.0.1:8000"

[compute]
limits = "fastly"

[compression]
` + compression + `

[auction]
enabled = true
provider = "openrtb"

[[creative_opportunities.slot]]
id = "top"
page_patterns = ["/"]
`)
	for i := range n {
		fmt.Fprintf(&b, "\n[[auction.openrtb]]\nname = \"e%d\"\nurl = \"https://bid%d.example.com/openrtb2/auction\"\n", i, i)
	}
	return b.String()
}

// config check refuses a configuration whose origin and OpenRTB endpoints
// can make more than Fastly's 32 backend requests per page, and warns
// when a page can hold more than Fastly's 128 MB heap.
func TestConfigCheckAppliesFastlyLimits(t *testing.T) {
	tests := []struct {
		name        string
		endpoints   int
		compression string
		code        int
		stderr      string // "" = no compute problem or warning
	}{
		{"31 endpoints", 31, "", 0, ""},
		{"32 endpoints", 32, "", 1, "auction.openrtb: 32 endpoints and the origin make 33 backend requests per page; Fastly Compute allows 32"},
		{"brotli 11 with a 16 MiB window", 1, "brotli_quality = 11\nbrotli_window = 24", 0, "128 MB heap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := invoke(t, []string{"config", "check", "-config", writeConfig(t, computeConfig(tt.endpoints, tt.compression))}, nil)
			if got.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", got.code, tt.code, got.stderr)
			}
			if tt.stderr == "" {
				if strings.Contains(got.stderr, "Fastly") {
					t.Errorf("stderr %q names a Fastly limit", got.stderr)
				}
				return
			}
			if !strings.Contains(got.stderr, tt.stderr) {
				t.Errorf("stderr %q, want %q", got.stderr, tt.stderr)
			}
		})
	}
}
