package firstparty

import (
	"net/netip"
	"testing"
)

// Upstream's is_host_allowed cases (core/proxy.rs:5316-5500).
func TestHostAllowedAsUpstream(t *testing.T) {
	cases := []struct {
		host, pattern string
		want          bool
	}{
		{"example.com", "example.com", true},
		{"other.com", "example.com", false},
		{"sub.example.com", "*.example.com", true},
		{"a.b.example.com", "*.example.com", true},
		{"example.com", "*.example.com", true},
		{"evil-example.com", "*.example.com", false},
		{"EXAMPLE.com", "example.com", true},
		{"example.com", "*.EXAMPLE.COM", true},
		{"example.com.evil.net", "example.com", false},
		{"1.2.3.4", "example.com", false},
	}
	for _, c := range cases {
		if got := hostAllowed(c.host, c.pattern); got != c.want {
			t.Errorf("hostAllowed(%q, %q) = %v", c.host, c.pattern, got)
		}
	}
}

func TestPublicAddrRefusesInternalRanges(t *testing.T) {
	cases := map[string]bool{
		"93.184.216.34":      true,
		"2606:2800:220:1::1": true,
		"127.0.0.1":          false,
		"127.9.9.9":          false,
		"::1":                false,
		"10.1.2.3":           false,
		"172.16.0.1":         false,
		"192.168.1.1":        false,
		"169.254.169.254":    false, // cloud metadata
		"100.100.100.200":    false, // Alibaba metadata, CGNAT
		"fd00:ec2::254":      false, // AWS IPv6 metadata
		"fe80::1":            false,
		"0.0.0.0":            false,
		"::":                 false,
		"::ffff:127.0.0.1":   false,
		"::ffff:10.0.0.1":    false,
		"64:ff9b::a9fe:a9fe": false, // NAT64 of 169.254.169.254
		"64:ff9b::5db8:d822": true,  // NAT64 of a public address
		"224.0.0.1":          false,
		"255.255.255.255":    false,
		"198.18.0.1":         false,
	}
	for s, want := range cases {
		if got := publicAddr(netip.MustParseAddr(s)); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", s, got, want)
		}
	}
}
