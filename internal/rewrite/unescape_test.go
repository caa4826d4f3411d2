package rewrite

import (
	"bytes"
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"
)

func TestUnescapeAttrKeepsLegacyReferencesBeforeAlnum(t *testing.T) {
	tests := []struct{ in, want string }{
		{"?a=1&timestamp=2", "?a=1&timestamp=2"},
		{"?a=1&notify=2", "?a=1&notify=2"},
		{"?copy=1&copy=2", "?copy=1&copy=2"},
		{"&times;", "×"},
		{"&times x", "× x"},
		{"&times", "×"},
		{"&copy,", "©,"},
		{"&amp;timestamp", "&timestamp"},
		{"&timesx;", "&timesx;"},
		{"&#47;&#x2F;", "//"},
		{"a & b", "a & b"},
		{"&notin;", "∉"},
		{"&noti", "&noti"},
	}
	for _, tt := range tests {
		if got := unescapeAttr(tt.in); got != tt.want {
			t.Errorf("unescapeAttr(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestUnescapeAttrMatchesTheTokenizer compares unescapeAttr with the value
// x/net/html's tokenizer decodes for the same attribute.
func TestUnescapeAttrMatchesTheTokenizer(t *testing.T) {
	for _, v := range []string{"?a=1&timestamp=2&times;&times &copy=3&copy", "&para&para;&paragraph&not&notin;&lt=&ltx&lt",
		"&frac12&frac123&frac12;&amp&ampx&amp=", "&AMP&AMPx&Aacute&Aacutex&aacute="} {
		doc := `<a href="` + strings.ReplaceAll(v, `"`, "&quot;") + `">`
		n := tokenizerAttr(doc)
		if got := unescapeAttr(v); got != n {
			t.Errorf("unescapeAttr(%q) = %q, the tokenizer decodes %q", v, got, n)
		}
	}
}

// A URL value that names the origin and needs decoding keeps a query
// parameter that starts like a legacy reference (&timestamp=) intact; it
// used to come out as "×tamp=".
func TestQueryParameterLikeLegacyReferenceKept(t *testing.T) {
	// The host is spelt with a reference, so the value is decoded and
	// re-encoded rather than rewritten in its raw spelling.
	in := `<a href="//origin&#46;pub.example/p?a=1&timestamp=3">x</a>`
	var out bytes.Buffer
	if _, err := Rewrite(&out, strings.NewReader(in), &Options{OriginHost: "origin.pub.example", RequestHost: "www.pub.example", RequestScheme: "https"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "&amp;timestamp=3") || strings.Contains(out.String(), "×") {
		t.Errorf("got %s", out.String())
	}
	if !strings.Contains(out.String(), "www.pub.example/p") {
		t.Errorf("link not rewritten: %s", out.String())
	}
}

// tokenizerAttr returns the first attribute value of the first tag of doc
// as x/net/html's tokenizer decodes it.
func tokenizerAttr(doc string) string {
	z := xhtml.NewTokenizer(strings.NewReader(doc))
	z.Next()
	_, v, _ := z.TagAttr()
	return string(v)
}
