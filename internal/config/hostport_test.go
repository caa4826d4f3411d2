package config

import (
	"strings"
	"testing"
)

// TestCheckHostPort: a configured host is split as a Host header is
// (hostport.Split), with net.SplitHostPort's refusals kept: one colon
// outside brackets, brackets only around a whole IPv6 host. A trailing
// dot is refused, not trimmed (hostport's package comment says why).
func TestCheckHostPort(t *testing.T) {
	const plain = `with no scheme, path or credentials, got "`
	for _, c := range []struct{ in, want string }{
		{"www.pub.example", ""},
		{"WWW.Pub.Example:8443", ""},
		{"127.0.0.1:80", ""},
		{"[::1]", ""},
		{"[2001:db8::1]:443", ""},
		{"[1.2.3.4]:80", ""}, // as net.SplitHostPort splits it
		{"www.pub.example.", "(invalid host name)"},
		{"www.pub.example.:443", "(invalid host name)"},
		{"www.pub.example:", "(port must be 1-65535)"},
		{"www.pub.example:0", "(port must be 1-65535)"},
		{"a:b:80", plain},
		{"[::1]x:80", plain},
		{"[::1:80", plain},
		{"a[b:80", plain},
		{"a]b:80", plain},
		{"a:8[0", plain},
		{"[[::1]]:80", plain},
		{"[::1]:80]", "(not an IPv6 address)"}, // bracketed whole
		{"[fe80::1%25eth0]:80", "(not an IPv6 address)"},
	} {
		err := checkHostPort(c.in)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("checkHostPort(%q) = %v, want nil", c.in, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("checkHostPort(%q) = %v, want an error with %q", c.in, err, c.want)
		case c.want == plain && strings.HasSuffix(err.Error(), ")"):
			t.Errorf("checkHostPort(%q) = %v, want the plain refusal", c.in, err)
		}
	}
}
