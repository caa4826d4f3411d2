package rewrite

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/net/html"

	"github.com/ssatd/ssatd/internal/testutil"
)

// The scanner's attribute grammar (attr.go, scanAttrs) against the
// Tokenizer's: the same attributes, at the same byte ranges, on every start
// tag of the corpus and of fuzzed input. The scanner rewrites a URL value
// in place by these ranges, so a range that is off by a byte, a value that
// ends early or a name read as a value would change the page.

// attrRange is one attribute as the scanner finds it.
type attrRange struct {
	name, val [2]int
	quote     byte
	hasValue  bool
}

// scannerAttrRanges is the test hook on the scanner: the attributes its
// rewrite finds in a raw start tag.
func scannerAttrRanges(raw []byte) []attrRange {
	var out []attrRange
	for _, a := range scanAttrs(raw, nil) {
		out = append(out, attrRange{[2]int{a.nameStart, a.nameEnd}, [2]int{a.valStart, a.valEnd}, a.quote, a.hasValue})
	}
	return out
}

// compareAttrRanges returns an error when the scanner and the Tokenizer
// read the attributes of the raw start tag differently. An empty value has
// no position to compare (the Tokenizer places it at the name's end, the
// scanner where a value would start): both must agree it is empty.
func compareAttrRanges(raw []byte) (attrs int, err error) {
	tok, err := tokenizerAttrs(raw)
	if err != nil {
		return 0, err
	}
	sc := scannerAttrRanges(raw)
	if len(sc) != len(tok) {
		return 0, fmt.Errorf("%q: scanner finds %d attributes %v, the Tokenizer %d %v", raw, len(sc), sc, len(tok), tok)
	}
	for i, s := range sc {
		tk := tok[i]
		if s.name != tk.KeyAt {
			return 0, fmt.Errorf("%q: attribute %d: scanner's name at %v, the Tokenizer's %q at %v", raw, i, s.name, tk.Key, tk.KeyAt)
		}
		sEmpty, tEmpty := s.val[0] == s.val[1], tk.ValAt[0] == tk.ValAt[1]
		if sEmpty && tEmpty {
			continue
		}
		if s.val != tk.ValAt || !s.hasValue || s.quote != valueQuote(raw, tk.ValAt) {
			return 0, fmt.Errorf("%q: attribute %s: scanner's value at %v quote %q, the Tokenizer's at %v quote %q",
				raw, tk.Key, s.val, s.quote, tk.ValAt, valueQuote(raw, tk.ValAt))
		}
	}
	return len(sc), nil
}

// startTags calls f with the raw bytes of every start tag of page, as the
// Tokenizer finds them (not in raw text, comments or doctypes).
func startTags(page []byte, f func(raw []byte)) {
	z := html.NewTokenizer(bytes.NewReader(page))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return
		case html.StartTagToken, html.SelfClosingTagToken:
			f(append([]byte(nil), z.Raw()...))
		}
	}
}

func TestAttrRangesMatchTokenizerCorpus(t *testing.T) {
	files := testutil.RequireCorpus(t)
	tags, attrs, repeated := 0, 0, 0
	for _, f := range files {
		page, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		startTags(page, func(raw []byte) {
			tags++
			n, err := compareAttrRanges(raw)
			if err != nil {
				t.Errorf("%s: %v", filepath.Base(f), err)
			}
			attrs += n
			if n > len(tokenAttrs(raw)) {
				repeated++
			}
		})
	}
	t.Logf("%d pages: %d start tags, %d attributes, %d tags with a repeated attribute", len(files), tags, attrs, repeated)
	if attrs == 0 {
		t.Fatal("no attribute compared")
	}
}

// tokenAttrs is the attributes the Tokenizer reports for a raw tag, without
// those that repeat a name.
func tokenAttrs(raw []byte) []html.Attribute {
	z := html.NewTokenizer(bytes.NewReader(raw))
	z.Next()
	return z.Token().Attr
}

// attrSeeds are tags at the edges of the attribute states (WHATWG
// §13.2.5.32–39).
var attrSeeds = []string{
	"<a b>", "<a b=c>", "<a b='c'>", `<a b="c">`, "<a b = c >", "<a b= >", "<a b=>", `<a b="">`, "<a b=''>",
	"<a/b=c/>", "<a b=c/>", "<a b/c>", "<a b/=c>", "<a / =x>", "<a =x>", "<a ==x>", `<a ="x">`, "<a b==c>",
	`<a b='x'c="y"d=e>`, "<a b=c\"d'e<f=g`h>", "<a b\"c'd<e=f>", "<a\tb\nc\fd\re>", "<a b=c\x00d \x00=e>",
	"<a href=x HREF=y href=z>", "<a src=x SRC=y>", "<a b=1 b=2 b=3 c=4 b=5>", `<a b="x>y" c='>' d=>`,
	"<a b=\xc3\xa9 \xc3\xa9=c>", "<a \x80=1 b=2 b=3>", "<a\n/\n/b\n=\n'c'\n/>",
}

// FuzzAttrRanges compares the scanner's attribute ranges with the
// Tokenizer's on every start tag of arbitrary input.
func FuzzAttrRanges(f *testing.F) {
	for _, s := range attrSeeds {
		f.Add([]byte(s))
	}
	for _, s := range append(append([]string{}, diffSeeds...), fuzzSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		startTags(in, func(raw []byte) {
			if _, err := compareAttrRanges(raw); err != nil {
				t.Fatal(err)
			}
		})
	})
}

// TestAttrByteClasses: the attribute grammar's byte tests, which read the
// tag scanner's class table, are the WHATWG sets they stand for, for every
// byte.
func TestAttrByteClasses(t *testing.T) {
	for c := range 256 {
		b := byte(c)
		space := b == ' ' || b == '\n' || b == '\r' || b == '\t' || b == '\f'
		if isSpace(b) != space || spaceOrSlash(b) != (space || b == '/') || endsAttrName(b) != (space || b == '/' || b == '=') {
			t.Errorf("byte %#x: isSpace %v, spaceOrSlash %v, endsAttrName %v", b, isSpace(b), spaceOrSlash(b), endsAttrName(b))
		}
	}
}
