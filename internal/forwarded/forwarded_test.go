package forwarded

import (
	"fmt"
	"net/netip"
	"reflect"
	"testing"
)

// pairs renders elements as name=value lists, for comparing.
func pairs(els []Element) [][]string {
	var out [][]string
	for _, e := range els {
		var ps []string
		for _, p := range e {
			ps = append(ps, p.Name+"="+p.Value)
		}
		out = append(out, ps)
	}
	return out
}

// TestParse: the examples of RFC 7239 §4, §6 and §7.1, then quoted-strings
// holding the delimiters, quoted-pairs, and malformed values.
func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  [][]string
	}{
		// RFC 7239 §4.
		{"§4 obfuscated", []string{`for="_gazonk"`}, [][]string{{"for=_gazonk"}}},
		{"§4 IPv6 with port, name in upper case", []string{`For="[2001:db8:cafe::17]:4711"`}, [][]string{{"for=[2001:db8:cafe::17]:4711"}}},
		{"§4 three pairs", []string{`for=192.0.2.60;proto=http;by=203.0.113.43`}, [][]string{{"for=192.0.2.60", "proto=http", "by=203.0.113.43"}}},
		{"§4 two elements", []string{`for=192.0.2.43, for=198.51.100.17`}, [][]string{{"for=192.0.2.43"}, {"for=198.51.100.17"}}},
		// RFC 7239 §7.1: one list, however it is split into lines.
		{"§7.1 one line, no spaces", []string{`for=192.0.2.43,for="[2001:db8:cafe::17]",for=unknown`},
			[][]string{{"for=192.0.2.43"}, {"for=[2001:db8:cafe::17]"}, {"for=unknown"}}},
		{"§7.1 two lines", []string{`for=192.0.2.43`, `for="[2001:db8:cafe::17]", for=unknown`},
			[][]string{{"for=192.0.2.43"}, {"for=[2001:db8:cafe::17]"}, {"for=unknown"}}},
		// RFC 7239 §6 nodes, quoted.
		{"§6 IPv4 with port", []string{`for="192.0.2.43:47011"`}, [][]string{{"for=192.0.2.43:47011"}}},
		{"§6.3 obfuscated port", []string{`for="[2001:db8:cafe::17]:_Vx3"`}, [][]string{{"for=[2001:db8:cafe::17]:_Vx3"}}},
		// Quoted-strings (RFC 7230 §3.2.6) split nothing.
		{"comma in a quoted value", []string{`for=192.0.2.1;ext="a, for=203.0.113.66";proto=https, for=10.0.0.1`},
			[][]string{{"for=192.0.2.1", "ext=a, for=203.0.113.66", "proto=https"}, {"for=10.0.0.1"}}},
		{"semicolon in a quoted value", []string{`by="x;proto=http";proto=https`}, [][]string{{"by=x;proto=http", "proto=https"}}},
		{"quoted-pairs", []string{`ext="a\"b\\c"`}, [][]string{{`ext=a"b\c`}}},
		// Lenient: whitespace around delimiters, unquoted nodes with ':'.
		{"spaces around ';'", []string{`for=192.0.2.60 ; proto=https`}, [][]string{{"for=192.0.2.60", "proto=https"}}},
		{"unquoted port", []string{`for=192.0.2.43:47011`}, [][]string{{"for=192.0.2.43:47011"}}},
		{"empty elements and pairs", []string{`, ;for=1.2.3.4;;, ,`}, [][]string{{"for=1.2.3.4"}}},
		// Malformed: kept as sent, so no reader takes it for an address.
		{"text after the closing quote", []string{`for="192.0.2.1"x;proto=https`}, [][]string{{`for="192.0.2.1"x`, "proto=https"}}},
		{"quote left open", []string{`for=192.0.2.1, for="10.0.0.1, for=10.0.0.2`}, [][]string{{"for=192.0.2.1"}, {`for="10.0.0.1, for=10.0.0.2`}}},
		{"no '='", []string{`secret;proto=https`}, [][]string{{"=", "proto=https"}}},
		{"name not a token", []string{`f or=1.2.3.4`}, [][]string{{"="}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pairs(Parse(tt.lines)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q) = %q, want %q", tt.lines, got, tt.want)
			}
		})
	}
}

// TestElementString passes an element on as it came, less the pairs it is
// told to drop; a quoted value stays quoted.
func TestElementString(t *testing.T) {
	for _, tt := range []struct{ in, drop, want string }{
		{`for="[2001:db8::1]:80";host="a;b";proto=https`, "host", `for="[2001:db8::1]:80";proto=https`},
		{`for=192.0.2.1 ; Host=evil.example`, "host", `for=192.0.2.1`},
		{`for=192.0.2.1;secret`, "", `for=192.0.2.1;secret`},
	} {
		els := ParseLine(tt.in)
		if len(els) != 1 {
			t.Fatalf("ParseLine(%q) = %d elements", tt.in, len(els))
		}
		if got := els[0].String(tt.drop); got != tt.want {
			t.Errorf("String(%q) of %q = %q, want %q", tt.drop, tt.in, got, tt.want)
		}
	}
}

func TestElementGet(t *testing.T) {
	e := ParseLine(`For=192.0.2.1;PROTO=https;proto=http`)[0]
	if v, ok := e.Get("proto"); !ok || v != "https" {
		t.Errorf(`Get("proto") = %q, %v; want the first, "https"`, v, ok)
	}
	if _, ok := e.Get("host"); ok {
		t.Error(`Get("host") found a pair that is not there`)
	}
}

// TestNodeAddr: the node forms of RFC 7239 §6, and the bare IPv6 of
// X-Forwarded-For.
func TestNodeAddr(t *testing.T) {
	for _, tt := range []struct {
		node string
		want string // "" = no address
	}{
		{"192.0.2.43", "192.0.2.43"},
		{"192.0.2.43:47011", "192.0.2.43"},
		{"[2001:db8:cafe::17]", "2001:db8:cafe::17"},
		{"[2001:db8:cafe::17]:4711", "2001:db8:cafe::17"},
		{"[2001:db8:cafe::17]:_Vx3", "2001:db8:cafe::17"}, // §6.3 obfuscated port
		{"192.0.2.43:_p.1-x", "192.0.2.43"},
		{"2001:db8::1", "2001:db8::1"},
		{"::ffff:192.0.2.1", "192.0.2.1"},
		{"unknown", ""},           // §6.2
		{"_hidden", ""},           // §6.3
		{"_SEVKISEK", ""},         // §6.3
		{"unknown:4711", ""},      // unknown with a port is still no address
		{"[192.0.2.1]", ""},       // brackets hold IPv6 only
		{"[2001:db8::1]x", ""},    // text after the bracket
		{"[2001:db8::1]:", ""},    // empty port
		{"192.0.2.43:123456", ""}, // six digits
		{"192.0.2.43:_", ""},      // empty obfuscated port
		{"192.0.2.43:_a b", ""},   // space in it
		{`"192.0.2.43"`, ""},      // still quoted: a malformed value
		{"[2001:db8::1", ""},      // no closing bracket
		{"", ""},
	} {
		t.Run(fmt.Sprintf("%q", tt.node), func(t *testing.T) {
			a, ok := NodeAddr(tt.node)
			if tt.want == "" {
				if ok {
					t.Fatalf("NodeAddr = %v, want no address", a)
				}
				return
			}
			if !ok || a != netip.MustParseAddr(tt.want) {
				t.Fatalf("NodeAddr = %v, %v; want %s", a, ok, tt.want)
			}
		})
	}
}
