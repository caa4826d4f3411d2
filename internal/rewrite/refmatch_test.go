package rewrite

import (
	"bytes"
	"strings"
	"testing"
)

// TestMatcherDecidesAlikeInEveryEscaping: a scheme, a port and the host's
// end are decided alike whether the separators are written as they are or
// percent-encoded once or twice or \u-escaped, in a URL attribute and in
// text: the decisions are matchRef's, the escaping only its parameter.
func TestMatcherDecidesAlikeInEveryEscaping(t *testing.T) {
	var h hostRewriter
	h.reset("origin.example", "www.pub.example", "https")
	for _, c := range []struct {
		before, after string
		want          bool
	}{
		{"https://", "/a", true},
		{"HTTPS://", "/a", true},
		{"http://", "", true},
		{"//", "?q", true},
		{"https://", ":443/a", true},
		{"https://", ":00443/a", true},   // five digits, leading zeros
		{"https://", ":000443/a", false}, // maxPortDigits
		{"https://", ":80/a", false},     // not https' default
		{"http://", ":80/a", true},
		{"//", ":80/a", true},
		{"https://", ":8080/a", false},
		{"https://", ":/a", false},
		{"https://", ".evil/a", false},
		{"https://", "-x/a", false},
		{"ftp://", "/a", true}, // a relative form after "ftp:", which stays
	} {
		for k := range escapings {
			e := &escapings[k]
			esc := func(s string) string {
				if e.slash == "" {
					return s
				}
				return strings.NewReplacer("/", e.slash, ":", e.colon).Replace(s)
			}
			v := []byte(esc(c.before) + "origin.example" + esc(c.after))
			at := bytes.Index(v, []byte("origin.example"))
			kinds := []attrKind{kindContent, kindCSS}
			if k == escPlain {
				kinds = append(kinds, kindURL, kindSrcset)
			} else if got := escapingAt(v, 0, at); got != k {
				t.Fatalf("escapingAt(%q) = %d, want %d", v, got, k)
			}
			for _, kind := range kinds {
				m, ok, more := h.matchRef(v, 0, at, refScan{kind: kind, esc: e, final: true})
				if ok != c.want || more {
					t.Errorf("%q (kind %d): ok %v more %v, want %v", v, kind, ok, more, c.want)
				}
				if ok && m.scheme != strings.HasPrefix(strings.ToLower(c.before), "http") {
					t.Errorf("%q (kind %d): scheme %v", v, kind, m.scheme)
				}
			}
		}
	}
}

// TestEscapedNULGuardAtEverySplit: a NUL before an escaped relative form
// leaves it alone however the text is cut: the matcher decides the NUL
// before it asks for more text, and the escaped forms' hold-back
// (encMaxPrefix) keeps every byte that decision reads.
func TestEscapedNULGuardAtEverySplit(t *testing.T) {
	var h hostRewriter
	h.reset("origin.pub.example", "www.pub.example", "https")
	h.enc.reset(true, h.name, "www.pub.example")
	for pad := 0; pad < 14; pad++ {
		for _, sep := range []string{`\u002f\u002f`, "%252F%252F", "%2f%2F"} {
			in := "\x00" + strings.Repeat("x", pad) + sep + "origin.pub.example/a"
			var whole appendSink
			h.encRun(&whole, []byte(in), 0, true)
			if changed := string(whole.b) != in; changed != (pad >= nulWindow) {
				t.Fatalf("%q: rewritten %v (%q)", in, changed, whole.b)
			}
			for n := 1; n <= len(in); n++ {
				var out appendSink
				e := encStream{hosts: &h, out: &out, count: new(int)}
				for s := in; len(s) > 0; s = s[min(n, len(s)):] {
					e.write([]byte(s[:min(n, len(s))]))
				}
				e.finish()
				if !bytes.Equal(out.b, whole.b) {
					t.Fatalf("%q in pieces of %d: %q, want %q", in, n, out.b, whole.b)
				}
			}
		}
	}
}
