package identity

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/netip"
	"regexp"
	"testing"
)

// The pattern and attributes are checked apart from the generator: the
// value by upstream's regular expression (ec/generation.rs:141-171), the
// attributes by net/http's Set-Cookie parser, and the hash by an HMAC
// taken here of the address upstream's normalisation gives.
var idPattern = regexp.MustCompile(`^[0-9a-f]{64}\.[A-Za-z0-9]{6}$`)

func TestEdgeCookieValueIsUpstreamsHMACAndSuffix(t *testing.T) {
	tests := []struct {
		addr, normalised string
	}{
		{"192.168.1.100", "192.168.1.100"}, // generation.rs tests: IPv4 unchanged
		// IPv6: the /64 as four zero-padded groups without separators
		{"2001:db8:85a3:0:8a2e:370:7334:1234", "20010db885a30000"},
		{"2001:db8:abcd:1:aaaa:bbbb:cccc:dddd", "20010db8abcd0001"},
		{"::ffff:10.0.0.1", "10.0.0.1"}, // a mapped IPv4 peer is its IPv4 address
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		if got := NormalizeIP(a); got != tt.normalised {
			t.Errorf("NormalizeIP(%s) = %q, want %q", tt.addr, got, tt.normalised)
		}
		mac := hmac.New(sha256.New, []byte(testPassphrase))
		mac.Write([]byte(tt.normalised))
		wantHash := hex.EncodeToString(mac.Sum(nil))
		seen := map[string]bool{}
		for range 20 {
			id, err := Generate(testPassphrase, a)
			if err != nil {
				t.Fatal(err)
			}
			if !idPattern.MatchString(id) || !Valid(id) {
				t.Fatalf("id %q does not match %s", id, idPattern)
			}
			if id[:64] != wantHash {
				t.Errorf("%s: hash %s, want HMAC-SHA256 of %q: %s", tt.addr, id[:64], tt.normalised, wantHash)
			}
			seen[id[65:]] = true
		}
		if len(seen) < 15 {
			t.Errorf("%s: %d distinct suffixes in 20 ids: not random", tt.addr, len(seen))
		}
	}
}

func TestEdgeCookieValidationIsUpstreams(t *testing.T) {
	a64 := "aaaaaaaabbbbbbbbccccccccddddddddeeeeeeeeffffffff0000000011111111"
	for id, want := range map[string]bool{
		a64 + ".abcXYZ":           true,
		a64 + ".Ab12z9":           true,
		a64:                       false, // no suffix
		a64[:63] + "g.Ab12z9":     false,
		a64 + ".ab-129":           false,
		a64 + ".Ab12z9.zz":        false,
		"A" + a64[1:] + ".Ab12z9": false, // upper-case hex is not an id until normalised
		a64 + ".Ab12z":            false,
	} {
		if Valid(id) != want {
			t.Errorf("Valid(%q) = %v, want %v", id, !want, want)
		}
	}
}

// TestEdgeCookieAttributesAreUpstreams: upstream's own vector
// (cookies.rs tests create_ec_cookie_uses_computed_domain,
// expire_ec_cookie_matches_security_attributes), then the attributes as
// a browser's parser reads them.
func TestEdgeCookieAttributesAreUpstreams(t *testing.T) {
	const id = "aaaaaaaabbbbbbbbccccccccddddddddeeeeeeeeffffffff0000000011111111.abcXYZ"
	set := SetCookie("test-publisher.com", id)
	if want := "ts-ec=" + id + "; Domain=.test-publisher.com; Path=/; Secure; SameSite=Lax; Max-Age=31536000; HttpOnly"; set != want {
		t.Errorf("Set-Cookie %q\nwant        %q", set, want)
	}
	if want := "ts-ec=; Domain=.test-publisher.com; Path=/; Secure; SameSite=Lax; Max-Age=0; HttpOnly"; ExpireCookie("test-publisher.com") != want {
		t.Errorf("expiry %q, want %q", ExpireCookie("test-publisher.com"), want)
	}
	c, err := http.ParseSetCookie(set)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "ts-ec" || c.Value != id || c.Domain != ".test-publisher.com" || c.Path != "/" || !c.Secure || !c.HttpOnly ||
		c.SameSite != http.SameSiteLaxMode || c.MaxAge != 365*24*60*60 {
		t.Errorf("parsed %+v", c)
	}
}
