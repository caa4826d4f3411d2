package forwarded

import (
	"reflect"
	"testing"
)

// FuzzParseLine: any line parses without panicking, and an element passed
// on (String) reads back as the same pairs, so the copy the origin gets
// says what ssatd read.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		`for="_gazonk"`, `For="[2001:db8:cafe::17]:4711"`, `for=192.0.2.60;proto=http;by=203.0.113.43`,
		`for=192.0.2.43, for=198.51.100.17`, `for=192.0.2.1;note="a, for=203.0.113.66";proto=https`,
		`ext="a\"b\\c"`, `for="10.0.0.1, for=10.0.0.2`, `for="1"x;;, ,f or=2`, `a="x\`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, e := range ParseLine(s) {
			if len(e) == 0 {
				t.Fatalf("ParseLine(%q) has an empty element", s)
			}
			again := ParseLine(e.String(""))
			if len(again) != 1 || !reflect.DeepEqual(again[0], e) {
				t.Fatalf("element %q of %q reads back as %q", e, s, again)
			}
			for _, p := range e {
				if _, ok := NodeAddr(p.Value); ok && p.Value == "" {
					t.Fatalf("NodeAddr of an empty value found an address")
				}
			}
		}
	})
}
