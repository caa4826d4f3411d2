package rewrite

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/ssatd/ssatd/internal/testutil"
)

// The scanner against the reference rewriter built on x/net/html's
// Tokenizer: byte-identical output and the same stats, on real pages, on
// the fuzz seeds and on random input, however the input is split into
// reads. The reference applies the rules Rewrite does where the Tokenizer
// alone would not: foreign content (reference_foreign_test.go) and the
// script data states (reference_script_test.go,
// TestScriptEscapedLessThanFollowsStandard).

// diffOptions are the option sets every input is compared under: URL
// rewriting of host, and the SSAT injections.
func diffOptions(host string) []*Options {
	bids := func() []byte { return []byte("<script>BIDS</script>") }
	return []*Options{
		{OriginHost: host, RequestHost: "www.pub.example", RequestScheme: "https"},
		{OriginHost: host, RequestHost: "www.pub.example", RequestScheme: "https",
			HeadPrepend: []byte("<script>HEAD</script>"), BodyEnd: bids},
		{HeadPrepend: []byte("[H]"), BodyEnd: bids},
		{OriginHost: host, RequestHost: "www.pub.example", RequestScheme: "https", Inline: true,
			HeadPrepend: []byte("<script>HEAD</script>"), BodyEnd: bids},
		{OriginHost: host, RequestHost: "[::1]:8443", RequestScheme: "http", Inline: true},
	}
}

// compareWithReference fails t when the scanner's output or stats differ
// from the reference's, for the whole input in one read and for random
// splits drawn from seed.
func compareWithReference(t testing.TB, name string, in []byte, o *Options, seed uint64) {
	t.Helper()
	var want bytes.Buffer
	wantSt, wantErr := referenceRewrite(&want, bytes.NewReader(in), o)
	for k, src := range []func() *randomChunks{
		func() *randomChunks { return &randomChunks{s: string(in), rng: newRand(int64(seed))} },
		func() *randomChunks { return &randomChunks{s: string(in), rng: newRand(int64(seed) + 1), max: 8} },
	} {
		var got bytes.Buffer
		gotSt, gotErr := Rewrite(&got, src(), o)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%s: err %v, reference %v", name, gotErr, wantErr)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			at := firstDiff(got.Bytes(), want.Bytes())
			t.Fatalf("%s (split %d, opts %+v): output differs from the reference at byte %d:\n got %q\nwant %q",
				name, k, *o, at, around(got.Bytes(), at), around(want.Bytes(), at))
		}
		if gotSt != wantSt {
			t.Fatalf("%s (split %d): stats %+v, reference %+v", name, k, gotSt, wantSt)
		}
	}
	var whole bytes.Buffer
	if _, err := Rewrite(&whole, bytes.NewReader(in), o); err != nil || !bytes.Equal(whole.Bytes(), want.Bytes()) {
		t.Fatalf("%s: one read differs from the reference (err %v)", name, err)
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func around(b []byte, i int) []byte { return b[max(0, i-60):min(len(b), i+60)] }

var canonicalHost = regexp.MustCompile(`(?i)<link[^>]+rel=["']?canonical["']?[^>]*href=["']?https?://([a-z0-9.-]+)`)

func TestDifferentialCorpus(t *testing.T) {
	files := testutil.RequireCorpus(t)
	rewritten := 0
	for i, f := range files {
		page, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		host := "absent.invalid"
		if m := canonicalHost.FindSubmatch(page); m != nil {
			host = string(m[1])
		}
		// The request host with a port and brackets (the last set) is left
		// to the fuzz and random documents: the corpus runs long under -race.
		opts := diffOptions(host)
		for _, o := range opts[:len(opts)-1] {
			compareWithReference(t, filepath.Base(f), page, o, uint64(i))
		}
		var out bytes.Buffer
		st, _ := Rewrite(&out, bytes.NewReader(page), diffOptions(host)[0])
		rewritten += st.URLsRewritten
	}
	if rewritten == 0 {
		t.Fatal("no URL rewritten on any page: the comparison did not cover URL rewriting")
	}
}

// diffSeeds are inputs at the edges of the tokenizer's states.
var diffSeeds = []string{
	`<a href="http:\\origin.pub.example/a">x</a><img srcset="a 1x, //u@ORIGIN.pub.example:0443/b 2x"><p>/\origin.pub.example</p>`,
	`<a href="//127%2e0%2e0%2e1:8080/a"><img src="\\0x7f.1:08080/b"><a href=//origin%2Epub.example/>`,
	"<script><!--<!<script></script><head></script><head>", "<script><!-- <1 --></script><head>",
	"<script><!--<script></script>--></script><a href=//origin.pub.example/>",
	"<script><!--</script><a href=//origin.pub.example/>",
	"<script><!-- <script> </script> --> </script><head>",
	"<script><!--<scRIPT>x</SCRIPT>-->--></script><head>",
	"<script>a<!-x</script><head>", "<script><!---->x</script><head>", "<script><!-->x</script><head>",
	"<SCRIPT>x</scripT\t><head>", "<script>x</script/><head>", "<script>x</scripts><head></script><head>",
	"<style></style ><head>", "<textarea></textareax></TEXTAREA><head>", "<title>&amp;</title x=\">\"><head>",
	"<xmp><head></xmp><head>", "<iframe><head></iframe><head>", "<noscript><head></noscript><head>",
	"<noembed></noembed><noframes></noframes><head>", "<plaintext></plaintext><head>",
	"<!--><head>", "<!---><head>", "<!----!><head>", "<!--x--!-><head>-->", "<!-- -- --><head>", "<!--<!-- --><head>",
	"<!DOCTYPE html><head>", "<!doctype x '>'><head>", "<![CDATA[ > ]]><head>", "<?xml ?><head>", "</ x><head>",
	"</><head>", "</ >", "<!><head>", "<!-x><head>", "<a b='>'><head>", "<a b=\">\" c><head>", "<a =\">\"><head>",
	"<a b=c\">\"><head>", "<a b = '>'><head>", "<a/b='>'><head>", "<a b='x'c='>'><head>", "</body x='>'><head></body>",
	"<head/><body></body>", "<he\x00ad><head>", "<HEAD\n><BODY></BODY\f>", "<a href=//origin.pub.example/x/>",
	"<img src='//origin.pub.example/a.png'srcset=origin.pub.example/b 2x>", "<a\thref\n=\n\"&#47;/origin.pub.example\">",
	"<a href='https://origin&period;pub.example/?a=1&times=2'>", "<img srcset='&copyorigin.pub.example/a 1x&amp;'>",
	"<a href=//origin.pub.example/?a&amp;b&timestamp=1&#x2e;>", "<a href='//origin&#46;pub.example'>",
	"<p>https%3A%2F%2Forigin.pub.example%3A443%2F x</p><!-- //origin.pub.example --><!x //origin.pub.example>",
	`<script type=x>"https:\u002F\u002Forigin.pub.example\u002F" //origin.pub.example:80</script>`,
	`<a href="//x/?u=http%253A%252F%252FORIGIN.pub.example%252F" data-u="\/\/origin.pub.example" xmlns="//origin.pub.example">`,
	`<!DOCTYPE x "http://origin.pub.example/"><textarea>//origin.pub.example&amp;</textarea><title>http:\/\/origin.pub.example</title>`,
	"<b title='http%3A%2F%2Forigin.pub.example%3A443'>%2F%2Forigin.pub.example%3A8080 %2f%2forigin.pub.examplE%3</b>",
	// Foreign content: raw-text names that are MathML or SVG elements, or
	// HTML again at an integration point or after a breakout.
	"<head><math><mi><malignmark><style></math><a href=//origin.pub.example/></style></body>",
	"<head><math><annotation-xml encoding=Text/HTML><title></math><a href=//origin.pub.example/></title></body>",
	"<head><svg><font size=1><title><a href=//origin.pub.example/></title></svg><svg><font><title></svg></title></body>",
}

// FuzzDifferential compares the scanner with the reference on arbitrary
// input, split into reads at random.
func FuzzDifferential(f *testing.F) {
	for i, s := range append(append(append([]string{}, diffSeeds...), treeSeeds...), fuzzSeeds...) {
		f.Add([]byte(s), uint64(i))
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		for _, o := range diffOptions("origin.pub.example") {
			compareWithReference(t, "input", in, o, seed)
		}
		compareWithReference(t, "input, IPv4 origin", in, diffOptions("127.0.0.1:8080")[3], seed)
	})
}

// Random HTML-ish documents built from the pieces the states care about.
func TestDifferentialRandomDocuments(t *testing.T) {
	pieces := []string{
		"<", ">", "/", "!", "-", "--", "=", "'", "\"", " ", "\n", "a", "x", "<!--", "-->", "--!>", "<!", "</",
		"<script>", "</script>", "<SCRIPT ", "<style>", "</style>", "<title>", "</title>", "<textarea>",
		"<head>", "<body>", "</body>", "<a href=", "//origin.pub.example/", "https://origin.pub.example",
		"&amp;", "&#47;", "&#46;", "&times", "&period;", "origin", ".pub.example", "<!DOCTYPE html>", "<![CDATA[", "]]>", "<?", "<plaintext>", "<img src='",
		"<!<", "<x", "<1", "<noscript>", "</noscript>", "<iframe>", "</IFRAME>", "<xmp>", "</xmp>", "<scr", "ipt>",
		"%2F%2F", "https%3A", "%3A", "443", "%252F", `\u002F`, `\/`, "http:", "<b data-u=", " xmlns=", "<p>", "?u=",
		`\`, `\\`, "@", "user@", ":0443", "%2e", "%6F", "127.1", "0x7f.0.0.1", "127.0.0.1", ":8080", "<img srcset=",
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for k := range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(40) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		in := []byte(b.String())
		for _, o := range diffOptions("origin.pub.example") {
			compareWithReference(t, fmt.Sprintf("document %d %q", k, in), in, o, uint64(k))
		}
		if k%3 == 0 { // an IPv4 origin, whose other spellings the URL attributes follow
			for _, o := range diffOptions("127.0.0.1:8080")[3:] {
				compareWithReference(t, fmt.Sprintf("document %d %q, IPv4 origin", k, in), in, o, uint64(k))
			}
		}
	}
}

// Random documents with SVG and MathML: the foreign-content rules
// (integration points, breakouts, CDATA, raw-text names that open no raw
// text) and the script data states against the reference's.
func TestDifferentialRandomForeignDocuments(t *testing.T) {
	pieces := []string{
		"<svg>", "</svg>", "<math>", "</math>", "<svg/>", "<title>", "</title>", "<style>", "</style>",
		"<script>", "</script>", "<textarea>", "</textarea>", "<noscript>", "<plaintext>", "<foreignObject>",
		"</foreignobject>", "<desc>", "</desc>", "<mi>", "</mi>", "<mtext>", "<mglyph>", "<annotation-xml>",
		`<annotation-xml encoding="TEXT/html">`, "</annotation-xml>", "<font color=red>", "<font>", "<p>", "</p>",
		"<div>", "</div>", "<b>", "<g>", "</g>", "<g/>", "<malignmark>", "<mo>", "<ms/>", "<![CDATA[", "]]>", "]]", "<head>", "</head>", "<body>",
		"</body>", "<!--", "-->", "<!--<script>", "<!<", "<a href=//origin.pub.example/>", "//origin.pub.example/",
		"<img src='https://origin.pub.example/a'>", "x", " ", "<", ">", "/", "-", "--", "<table>", "<br>", "<meta>",
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for k := range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(30) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		in := []byte(b.String())
		for _, o := range diffOptions("origin.pub.example") {
			compareWithReference(t, fmt.Sprintf("document %d %q", k, in), in, o, uint64(k))
		}
	}
}

// The reference bounds its foreign stack as the scanner does, so that the
// differential covers a page past the bound (treeSeeds reach it).
func TestReferenceForeignBoundsAreTheScanners(t *testing.T) {
	if refForeignDepth != maxForeignDepth || refForeignNameBytes != maxForeignNames {
		t.Fatalf("reference bounds %d elements, %d bytes; the scanner's %d, %d",
			refForeignDepth, refForeignNameBytes, maxForeignDepth, maxForeignNames)
	}
}

// In a script's escaped text, "<" followed by neither "/" nor a letter stays
// in the escaped state (WHATWG §13.2.5.23). x/net/html's Tokenizer returns
// to plain script data instead, so a later "<script>" no longer
// double-escapes and the first "</script>" ends the element. Browsers keep
// the element open: here the first <head> is script text, and only the
// second is a tag. The reference reads a script's text by the standard's
// states (reference_script_test.go) for this reason, checked here too.
func TestScriptEscapedLessThanFollowsStandard(t *testing.T) {
	in := "<script><!--<!<script></script><head></script><head>"
	o := &Options{HeadPrepend: []byte("[H]")}
	want := "<script><!--<!<script></script><head></script><head>[H]"
	got, _ := run(t, in, o)
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	var ref bytes.Buffer
	if _, err := referenceRewrite(&ref, strings.NewReader(in), o); err != nil || ref.String() != want {
		t.Fatalf("the reference: %q (%v)\nwant %q", ref.String(), err, want)
	}
	z := html.NewTokenizer(strings.NewReader(in))
	z.Next()
	if z.Next(); string(z.Raw()) != "<!--<!<script>" {
		t.Fatalf("the Tokenizer reads the script's text as %q: if it follows the standard now, the reference may read scripts with it again", z.Raw())
	}
}
