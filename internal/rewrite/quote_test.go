package rewrite

import "testing"

// Regression (found by FuzzTreeDifferential): an unquoted URL value that
// holds a '"' was quoted when rewritten without escaping it, so the '"'
// ended the value and the rest became another attribute.
func TestRewrittenUnquotedValueWithQuoteStaysOneAttribute(t *testing.T) {
	got, _ := run(t, `<a href=`+testOrigin+`#">x`, testOpts())
	if want := `<a href="` + testHost + `#&quot;">x`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
