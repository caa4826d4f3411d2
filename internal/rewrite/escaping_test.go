package rewrite

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// tagAttrs is the attributes of the first tag of doc, as the Tokenizer
// reads them.
func tagAttrs(t *testing.T, doc string) []html.Attribute {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(doc))
	if tt := z.Next(); tt != html.StartTagToken && tt != html.SelfClosingTagToken {
		t.Fatalf("%q does not start with a tag", doc)
	}
	return z.Token().Attr
}

// TestRewrittenValueDecodesToRewrittenURL catches a rewritten attribute
// value that a browser reads as something else than the rewritten URL: an
// unquoted value holding '"' that was wrapped in double quotes without
// escaping it (the value ended at that '"' and the rest became another
// attribute), and a CR written as it is where the page had &#13; (input
// preprocessing reads a CR as a LF, WHATWG §13.2.3.5).
func TestRewrittenValueDecodesToRewrittenURL(t *testing.T) {
	tests := []struct{ name, in, want, url string }{
		{"quote in unquoted value", `<a href=//origin.pub.example/?q="x>`,
			`<a href="//www.pub.example/?q=&quot;x">`, `//www.pub.example/?q="x`},
		{"quote and equals in unquoted value", `<a href=//origin.pub.example/"=x' class=c>`,
			`<a href="//www.pub.example/&quot;=x'" class=c>`, `//www.pub.example/"=x'`},
		{"CR reference", `<a href="//origin&#46;pub.example/&#13;">`, `<a href="//www.pub.example/&#13;">`, "//www.pub.example/\r"},
		{"CR reference in single quotes", `<a href='//origin&#46;pub.example/&#13;'>`, `<a href='//www.pub.example/&#13;'>`, "//www.pub.example/\r"},
		// A CR of the page is a LF to a browser: it is not escaped to &#13;.
		{"CR of the page", "<a href=\"//origin&#46;pub.example/\r\nx\ry\">", "<a href=\"//www.pub.example/\nx\ny\">", "//www.pub.example/\nx\ny"},
		{"CR of the page with the host spelled out", "<a href=\"//origin.pub.example/&copy;\r\nx\">", "<a href=\"//www.pub.example/&copy;\r\nx\">", "//www.pub.example/\u00a9\nx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st := run(t, tt.in, testOpts())
			if got != tt.want || st.URLsRewritten != 1 {
				t.Errorf("\n in: %q\ngot: %q (%d rewritten)\nwant %q", tt.in, got, st.URLsRewritten, tt.want)
			}
			attrs := tagAttrs(t, got)
			if len(attrs) != len(tagAttrs(t, tt.in)) || attrs[0].Key != "href" || attrs[0].Val != tt.url {
				t.Errorf("%q reads as %q, want href=%q", got, attrs, tt.url)
			}
		})
	}
}

// TestRepeatedAttributeRewritten: a browser ignores an attribute that
// repeats a name on the same tag (WHATWG §13.2.5.33), but another parser
// may keep the last one, so each is rewritten (docs/behaviour.md).
func TestRepeatedAttributeRewritten(t *testing.T) {
	in := `<a href="/x" HREF="//origin.pub.example/a" href=origin.pub.example/b>`
	want := `<a href="/x" HREF="//www.pub.example/a" href=www.pub.example/b>`
	if got, st := run(t, in, testOpts()); got != want || st.URLsRewritten != 2 {
		t.Errorf("\n in: %s\ngot: %s (%d rewritten)\nwant %s", in, got, st.URLsRewritten, want)
	}
}
