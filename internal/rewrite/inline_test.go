package rewrite

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
)

func rewriteInline(t *testing.T, page string, inline bool, src func(string) *splitReader) (string, Stats) {
	t.Helper()
	var out bytes.Buffer
	o := &Options{OriginHost: "origin.pub.example", RequestHost: "www.pub.example", RequestScheme: "https", Inline: inline}
	var r interface{ Read([]byte) (int, error) } = strings.NewReader(page)
	if src != nil {
		r = src(page)
	}
	st, err := Rewrite(&out, r, o)
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), st
}

func TestInlineRules(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"og image", `<meta property="og:image" content="https://origin.pub.example/a.png">`,
			`<meta property="og:image" content="https://www.pub.example/a.png">`},
		{"twitter url list", `<meta name="twitter:image" content="//origin.pub.example/a.png, https://ORIGIN.pub.example/b.png">`,
			`<meta name="twitter:image" content="//www.pub.example/a.png, https://www.pub.example/b.png">`},
		{"refresh", `<meta http-equiv="refresh" content="0; url=http://origin.pub.example/next">`,
			`<meta http-equiv="refresh" content="0; url=https://www.pub.example/next">`},
		{"meta prose bare host kept", `<meta name="description" content="origin.pub.example news">`,
			`<meta name="description" content="origin.pub.example news">`},
		{"style attribute", `<div style="background:url('https://origin.pub.example/b.png')">`,
			`<div style="background:url('https://www.pub.example/b.png')">`},
		{"style attribute entity", `<div style="background:url(&quot;//origin.pub.example/b.png&quot;)">`,
			`<div style="background:url(&quot;//www.pub.example/b.png&quot;)">`},
		{"style element", `<style>a{b:url(//origin.pub.example/x.png)} @import "origin.pub.example/y.css";</style>`,
			`<style>a{b:url(//www.pub.example/x.png)} @import "origin.pub.example/y.css";</style>`},
		{"json-ld", `<script type="application/ld+json">{"url":"https:\/\/origin.pub.example\/","logo":"https://origin.pub.example/l.png"}</script>`,
			`<script type="application/ld+json">{"url":"https:\/\/www.pub.example\/","logo":"https://www.pub.example/l.png"}</script>`},
		{"inline script strings", `<script>var a="https://origin.pub.example/x", b='\/\/ORIGIN.pub.example\/y', h='origin.pub.example', c=n/origin.pub.example;</script>`,
			`<script>var a="https://www.pub.example/x", b='\/\/www.pub.example\/y', h='origin.pub.example', c=n/origin.pub.example;</script>`},
		{"module script", `<script type=module>import x from "//origin.pub.example/m.js"</script>`,
			`<script type=module>import x from "//www.pub.example/m.js"</script>`},
		{"template script", `<script type="text/template"><a href="https://origin.pub.example/"></script>`,
			`<script type="text/template"><a href="https://www.pub.example/"></script>`},
		{"escaped script", `<script><!-- document.write("<script>u='https://origin.pub.example/'</script>") --></script>`,
			`<script><!-- document.write("<script>u='https://www.pub.example/'</script>") --></script>`},
		{"unterminated script", `<script>u="https://origin.pub.example`, `<script>u="https://www.pub.example`},
		{"textarea", `<textarea>https://origin.pub.example/</textarea>`, `<textarea>https://www.pub.example/</textarea>`},
		{"title", `<title>HTTP://Origin.Pub.Example/ news</title>`, `<title>https://www.pub.example/ news</title>`},
		{"text node", `<p>See https://origin.pub.example/a and //origin.pub.example/b.</p>`,
			`<p>See https://www.pub.example/a and //www.pub.example/b.</p>`},
		{"text bare host kept", `<p>origin.pub.example news, ads@origin.pub.example</p>`, `<p>origin.pub.example news, ads@origin.pub.example</p>`},
		{"comment", `<!-- canonical: https://origin.pub.example/a -->`, `<!-- canonical: https://www.pub.example/a -->`},
		{"conditional comment", `<!--[if lt IE 9]><script src="//origin.pub.example/shiv.js"></script><![endif]-->`,
			`<!--[if lt IE 9]><script src="//www.pub.example/shiv.js"></script><![endif]-->`},
		{"noscript", `<noscript><img src="https://origin.pub.example/p.gif"></noscript>`,
			`<noscript><img src="https://www.pub.example/p.gif"></noscript>`},
		{"data attribute", `<img data-src="//origin.pub.example/a.jpg" data-x='{"u":"https:\/\/origin.pub.example\/"}'>`,
			`<img data-src="//www.pub.example/a.jpg" data-x='{"u":"https:\/\/www.pub.example\/"}'>`},
		{"event handler", `<a onclick="go('https://origin.pub.example/x')">`, `<a onclick="go('https://www.pub.example/x')">`},
		{"namespace kept", `<svg xmlns="http://origin.pub.example/ns" xmlns:x="http://origin.pub.example/x"></svg>`,
			`<svg xmlns="http://origin.pub.example/ns" xmlns:x="http://origin.pub.example/x"></svg>`},
		{"doctype kept", `<!DOCTYPE html SYSTEM "http://origin.pub.example/x.dtd"><p>//origin.pub.example/</p>`,
			`<!DOCTYPE html SYSTEM "http://origin.pub.example/x.dtd"><p>//www.pub.example/</p>`},
		{"bogus comment kept", `<?xml-stylesheet href="https://origin.pub.example/s.xsl"?>`, `<?xml-stylesheet href="https://origin.pub.example/s.xsl"?>`},
		{"text at the end", `<p>x</p>//origin.pub.example`, `<p>x</p>//www.pub.example`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := rewriteInline(t, tc.in, true, nil)
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			for seed := int64(0); seed < 20; seed++ {
				split, _ := rewriteInline(t, tc.in, true, func(s string) *splitReader { return &splitReader{s: s, rng: rand.New(rand.NewSource(seed))} })
				if split != got {
					t.Fatalf("seed %d: output depends on the reads: %q", seed, split)
				}
			}
			off, _ := rewriteInline(t, tc.in, false, nil)
			if want, _ := rewriteInline(t, tc.in, false, nil); off != want || strings.Contains(tc.name, "script") && strings.Contains(off, "www.pub.example") {
				t.Errorf("with Inline off the rules still ran: %q", off)
			}
		})
	}
}

// inlineAnyReads checks that the inline rules rewrite in to want in one
// read and in each of splits random splits into reads.
func inlineAnyReads(t *testing.T, in, want string, splits int) {
	t.Helper()
	for seed := int64(-1); seed < int64(splits); seed++ {
		var split func(string) *splitReader
		if seed >= 0 {
			split = func(s string) *splitReader { return &splitReader{s: s, rng: rand.New(rand.NewSource(seed))} }
		}
		if got, _ := rewriteInline(t, in, true, split); got != want {
			t.Fatalf("reads %d: got  %q\nwant %q", seed, got, want)
		}
	}
}

// TestInlineEscapedForms: origin URLs whose "://" is percent-encoded
// (once or twice) or written with JavaScript's \u escapes get the request
// host in the same escape; hex digits in either case, and the \u only in
// lower case: "\U002F" is the text U002F, no escape (ECMA-262, "String
// Literals"; RFC 8259 §7).
func TestInlineEscapedForms(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"share link", `<a href="https://s.example/share?u=https%3A%2F%2Forigin.pub.example%2Fa">`,
			`<a href="https://s.example/share?u=https%3A%2F%2Fwww.pub.example%2Fa">`},
		{"lower-case hex", `<p>u=http%3a%2f%2fOrigin.pub.example%2fa</p>`, `<p>u=https%3a%2f%2fwww.pub.example%2fa</p>`},
		{"percent-encoded twice", `<img data-u="https%253A%252F%252Forigin.pub.example%252F">`,
			`<img data-u="https%253A%252F%252Fwww.pub.example%252F">`},
		{"javascript escapes", `<script>u="https:\u002F\u002Forigin.pub.example\u002Fa"</script>`,
			`<script>u="https:\u002F\u002Fwww.pub.example\u002Fa"</script>`},
		{"escaped colon", `<script>u="https\u003a\u002f\u002forigin.pub.example"</script>`,
			`<script>u="https\u003a\u002f\u002fwww.pub.example"</script>`},
		{"upper-case U is no escape", `<script>u="https:\U002F\U002Forigin.pub.example"</script>`,
			`<script>u="https:\U002F\U002Forigin.pub.example"</script>`},
		{"upper-case U in the colon", `<script>u="https\U003a\u002f\u002forigin.pub.example"</script>`,
			`<script>u="https\U003a\u002f\u002fwww.pub.example"</script>`},
		{"another host", `<p>u=https%3A%2F%2Forigin.pub.example.evil%2F</p>`, `<p>u=https%3A%2F%2Forigin.pub.example.evil%2F</p>`},
	} {
		t.Run(tc.name, func(t *testing.T) { inlineAnyReads(t, tc.in, tc.want, 20) })
	}
}

// TestInlineNULLeavesReference: the parser drops a NUL from a page's
// text (and makes it U+FFFD elsewhere), so a NUL right after an origin
// reference, or where the scheme of a relative one would be, leaves the
// reference as it is (nulBefore), however the page arrives; one further
// away changes nothing.
func TestInlineNULLeavesReference(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"after the host", "<p>//origin.pub.example\x00y</p>", "<p>//origin.pub.example\x00y</p>"},
		{"after the port", "<p>https://origin.pub.example:443\x00/</p>", "<p>https://origin.pub.example:443\x00/</p>"},
		{"in the scheme", "<p>htt\x00p://origin.pub.example/</p>", "<p>htt\x00p://origin.pub.example/</p>"},
		{"after the scheme", "<p>http:\x00//origin.pub.example/</p>", "<p>http:\x00//origin.pub.example/</p>"},
		{"at the page's start", "\x00//origin.pub.example", "\x00//origin.pub.example"},
		{"escaped scheme", "<p>ht\x00tps\\u003a\\u002f\\u002forigin.pub.example</p>", "<p>ht\x00tps\\u003a\\u002f\\u002forigin.pub.example</p>"},
		{"percent-encoded", "<p>http\x00%3A%2F%2Forigin.pub.example%2F</p>", "<p>http\x00%3A%2F%2Forigin.pub.example%2F</p>"},
		{"attribute", `<a data-u="//origin.pub.example` + "\x00" + `">`, `<a data-u="//origin.pub.example` + "\x00" + `">`},
		{"before a scheme form", "<p>\x00https://origin.pub.example/</p>", "<p>\x00https://www.pub.example/</p>"},
		{"further on", "<p>//origin.pub.example/\x00</p>", "<p>//www.pub.example/\x00</p>"},
		{"far before", "<p>\x00 and so on, then //origin.pub.example/</p>", "<p>\x00 and so on, then //www.pub.example/</p>"},
		// A comment is a node of its own: no NUL beside it joins its text.
		{"in text before a comment", "<p>\x00<!--//origin.pub.example/--></p>", "<p>\x00<!--//www.pub.example/--></p>"},
		{"in a comment before text", "<p><!--\x00-->//origin.pub.example/</p>", "<p><!--\x00-->//www.pub.example/</p>"},
		{"in a short comment before text", "<p><!--\x00>-->//origin.pub.example/</p>", "<p><!--\x00>-->//www.pub.example/</p>"},
		{"in a comment, before the host", "<p><!--\x00//origin.pub.example/--></p>", "<p><!--\x00//origin.pub.example/--></p>"},
	} {
		t.Run(tc.name, func(t *testing.T) { inlineAnyReads(t, tc.in, tc.want, 30) })
	}
}

// TestInlineCountsForOriginHost: a page that names the origin only in a
// script is not a page without the origin host.
func TestInlineCountsForOriginHost(t *testing.T) {
	_, st := rewriteInline(t, `<script>u="https://origin.pub.example/"</script>`, true, nil)
	if st.InlineRewritten != 1 || st.URLsRewritten != 0 {
		t.Fatalf("stats %+v, want one inline rewrite", st)
	}
}

// FuzzInlineText: the content of a script or style element is rewritten as
// refText rewrites it alone, however the page is split into reads, with
// the vector name search and with the IndexByte one of other machines.
func FuzzInlineText(f *testing.F) {
	for i, s := range textSeeds {
		f.Add(s, int64(i), uint8(i))
	}
	f.Fuzz(func(t *testing.T, body string, seed int64, which uint8) {
		body = strings.ReplaceAll(body, "<", "") // the element's end is not what is tested here
		open := []string{"<script>", `<script type="application/ld+json">`, "<style>"}[int(which)%3]
		close := "</" + open[1:6] + ">"
		if open == "<style>" {
			close = "</style>"
		}
		page := "<p>" + open + body + close + "<p>"
		want := "<p>" + open + refTextResponse(body, "origin.pub.example", "www.pub.example", "https", bareNever) + close + "<p>"
		saved := havePairVector
		defer func() { havePairVector = saved }()
		for _, on := range []bool{saved, false} {
			havePairVector = on
			got, _ := rewriteInline(t, page, true, func(s string) *splitReader { return &splitReader{s: s, rng: rand.New(rand.NewSource(seed))} })
			if got != want {
				t.Fatalf("vector search %v, page %q:\n got %q\nwant %q", on, page, got, want)
			}
		}
	})
}

// TestInlineBackslashSpellingsRewritten: inside a page's text, scripts and
// other attributes, and in text responses, a backslash is a slash before
// the origin's host, as the URL parser reads it, and a port's leading
// zeros do not make another port: such references went to the origin.
func TestInlineBackslashSpellingsRewritten(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"text", `<p>See http:\\origin.pub.example/a</p>`, `<p>See https:\\www.pub.example/a</p>`},
		{"script, escaped backslashes", `<script>u="\\\\origin.pub.example/a"</script>`, `<script>u="\\\\www.pub.example/a"</script>`},
		{"script, mixed", `<script>u="https:\/origin.pub.example"+"/\\origin.pub.example"</script>`, `<script>u="https:\/www.pub.example"+"/\\www.pub.example"</script>`},
		{"meta content", `<meta property="og:image" content="/\origin.pub.example/i.png">`, `<meta property="og:image" content="/\www.pub.example/i.png">`},
		{"port zeros", `<p>https://origin.pub.example:0443/ //origin.pub.example:00443/</p>`, `<p>https://www.pub.example/ //www.pub.example/</p>`},
		{"one backslash stays", `<p>\origin.pub.example http:\origin.pub.example</p>`, `<p>\origin.pub.example http:\origin.pub.example</p>`},
	} {
		t.Run(tc.name, func(t *testing.T) { inlineAnyReads(t, tc.in, tc.want, 20) })
	}
	for _, tc := range []struct {
		in, want string
		script   bool
	}{
		{`{"a":"http:\\\\origin.pub.example\/x"}`, `{"a":"https:\\\\www.pub.example:8443\/x"}`, true},
		{`a{b:url(http:\\origin.pub.example/i.png)}`, `a{b:url(https:\\www.pub.example:8443/i.png)}`, false},
		{`x="https://origin.pub.example:00443/"`, `x="https://www.pub.example:8443/"`, true},
	} {
		c := textCase{"origin.pub.example", tc.script}
		for n := 1; n <= len(tc.in); n += 5 {
			if got := rewriteTextString(t, tc.in, c, &fixedReader{s: tc.in, n: n}); got != tc.want {
				t.Fatalf("text response %q in reads of %d: got %q, want %q", tc.in, n, got, tc.want)
			}
		}
	}
}
