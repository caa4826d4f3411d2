package hostport

import "testing"

func TestSplit(t *testing.T) {
	for _, c := range []struct{ in, host, port, bare string }{
		{"example.com", "example.com", "", "example.com"},
		{"example.com:8080", "example.com", "8080", "example.com"},
		{"Example.COM:443", "Example.COM", "443", "Example.COM"}, // case kept: callers fold
		{"example.com:", "example.com", "", "example.com"},       // empty port: none
		{"example.com.", "example.com.", "", "example.com."},     // trailing dot kept
		{"example.com.:80", "example.com.", "80", "example.com."},
		{"127.0.0.1:0", "127.0.0.1", "0", "127.0.0.1"},
		{"[::1]", "[::1]", "", "::1"},
		{"[::1]:8443", "[::1]", "8443", "::1"},
		{"[2001:DB8::1]:", "[2001:DB8::1]", "", "2001:DB8::1"},
		{"[fe80::1%25en0]:80", "[fe80::1%25en0]", "80", "fe80::1%25en0"},
		{":8080", "", "8080", ""}, // a listen address's any host
		{"", "", "", ""},
		{"::1", "::1", "", "::1"},       // bare IPv6: no port
		{"a:b:c", "a:b:c", "", "a:b:c"}, // not host:port
		{"[::1]x", "[::1]x", "", "[::1]x"},
	} {
		host, port := Split(c.in)
		if host != c.host || port != c.port {
			t.Errorf("Split(%q) = %q, %q; want %q, %q", c.in, host, port, c.host, c.port)
		}
		if got := Name(c.in); got != c.bare {
			t.Errorf("Name(%q) = %q, want %q", c.in, got, c.bare)
		}
	}
}

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"example.com": "example.com", "EXAMPLE.com.": "example.com", "localhost.": "localhost",
		"": "", ".": "", "a..": "a.", "::1": "::1",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSameName(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"www.pub.example", "www.pub.example", true},
		{"WWW.Pub.Example:8443", "www.pub.example", true}, // ports aside, any case
		{"www.pub.example.", "www.pub.example:443", true}, // RFC 1034 §3.1
		{"www.pub.example", "pub.example", false},
		{"www.pub.example", "www.pub.example.evil", false},
		{"[::1]:8443", "[::1]:80", true},
		{"", "", false},
		{":80", ":443", false},
	} {
		if got := SameName(c.a, c.b); got != c.want {
			t.Errorf("SameName(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := SameName(c.b, c.a); got != c.want {
			t.Errorf("SameName(%q, %q) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}

// TestSameNameBracketedIPv6WithoutPort: a bracketed IPv6 host without a
// port is the same host as with one. The referer check it replaces split
// with net.SplitHostPort, which fails on "[::1]" and so compared the
// brackets of one side with the bare address of the other.
func TestSameNameBracketedIPv6WithoutPort(t *testing.T) {
	if !SameName("[::1]", "[::1]:8443") {
		t.Error(`SameName("[::1]", "[::1]:8443") = false, want true`)
	}
}
