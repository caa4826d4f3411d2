package rewrite

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"
)

// Which bare hosts refText rewrites.
const (
	bareAtBoundary = iota // CSS, JSON and other text responses
	bareAfterQuote        // JavaScript responses
	bareNever             // inside pages (Options.Inline)
)

// refText is the text rules (docs/behaviour.md, "Text responses") written
// plainly on strings, sharing nothing with text.go: it looks at the whole
// text at once, and reads a port's digits however many there are.
func refText(text, origin, reqHost, scheme string, bare int) string {
	name, port := origin, ""
	if i := strings.LastIndex(origin, ":"); i >= 0 && !strings.Contains(origin[i:], "]") {
		name, port = origin[:i], origin[i+1:]
	}
	name = asciiLowerRef(name)
	low := asciiLowerRef(text)
	hostChar := func(c byte) bool {
		return strings.IndexByte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._", c) >= 0
	}
	var out strings.Builder
	last, i := 0, 0
	for {
		k := strings.Index(low[i:], name)
		if k < 0 {
			break
		}
		at := i + k
		i = at + len(name)
		from, repl, sch := 0, "", ""
		// A scheme and slashes or backslashes, or slashes alone, JSON's
		// "\/" among them (refSeparators): the separators stay as written.
		form, start, keep, found := refSeparators(low, last, at)
		if found {
			from, repl, sch = start, text[keep:at]+reqHost, form
			if form == "//" {
				sch = ""
			} else {
				repl = scheme + repl
			}
		}
		if !found {
			var prev byte
			if at > 0 {
				prev = text[at-1]
			}
			ok := !hostChar(prev) && prev != ':' && prev != '@'
			switch bare {
			case bareAfterQuote:
				ok = prev == '"' || prev == '\'' || prev == '`'
			case bareNever:
				ok = false
			}
			if !ok {
				continue
			}
			from, repl, sch = at, reqHost, "bare"
		}
		to := at + len(name)
		if to < len(text) && text[to] == ':' {
			p := to + 1
			for p < len(text) && text[p] >= '0' && text[p] <= '9' {
				p++
			}
			got, portOK := refPortNumber(text[to+1 : p])
			switch {
			case !portOK:
			case port != "":
				portOK = got == port
			case sch == "https":
				portOK = got == "443"
			case sch == "http":
				portOK = got == "80"
			default:
				portOK = got == "443" || got == "80"
			}
			if !portOK {
				continue
			}
			to = p
		} else if port != "" {
			continue
		}
		if to < len(text) && (hostChar(text[to]) || text[to] == ':') {
			continue
		}
		// Inside pages a NUL right after the reference, or among the eleven
		// bytes before a relative one, leaves it as it is: the DOM drops or
		// replaces the NUL.
		if bare == bareNever && (to < len(text) && text[to] == 0 || sch == "" && strings.Contains(text[max(0, from-11):from], "\x00")) {
			continue
		}
		out.WriteString(text[last:from])
		out.WriteString(repl)
		last, i = to, to
	}
	out.WriteString(text[last:])
	return out.String()
}

// refTextResponse is the whole of a text response's rules, and those of a
// script or style element's content: refText, then the escaped forms of
// the reference's inline rules (reference_inline_test.go).
func refTextResponse(text, origin, reqHost, scheme string, bare int) string {
	out, _ := newRefRules(origin, reqHost, scheme).refInline(refText(text, origin, reqHost, scheme, bare), false)
	return out
}

func asciiLowerRef(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// splitReader returns s in reads of random sizes from 1 to 40 bytes.
type splitReader struct {
	s   string
	rng *rand.Rand
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.s) == 0 {
		return 0, io.EOF
	}
	n := min(1+r.rng.Intn(40), len(p), len(r.s))
	copy(p, r.s[:n])
	r.s = r.s[n:]
	return n, nil
}

var textSeeds = []string{
	"", "origin.pub.example", `{"url":"https:\/\/origin.pub.example\/a.png"}`,
	`a{background:url(//ORIGIN.pub.example/i.png)}`, "see https://origin.pub.example:443/x",
	"http://origin.pub.example:80/ http://origin.pub.example:443/ //origin.pub.example:8080/",
	"cdn.origin.pub.example origin.pub.example.evil mail@origin.pub.example a:origin.pub.example",
	`var u="origin.pub.example/x", v=example.origin.pub.example, w='origin.pub.example'`,
	"https://origin.pub.exampleorigin.pub.example", "origin.pub.example:0000000443/",
	"https://i0.wp.com/origin.pub.example/a.png", "<loc>https://origin.pub.example/</loc>",
	"HTTPS://Origin.Pub.Example/", `http:\/\/origin.pub.example`, `\/\/origin.pub.example\/`,
	`{"u":"/s?u=http%3A%2F%2Forigin.pub.example%2Fa","j":"http:\u002F\u002Forigin.pub.example\u002Fa"}`,
	`["\u002F\u002Forigin.pub.example:443\u002Fi.png","https%253A%252F%252FORIGIN.pub.example%253A8080"]`,
}

// textCase is one configuration the text rules run in.
type textCase struct {
	origin string
	script bool
}

func (c textCase) bare() int {
	if c.script {
		return bareAfterQuote
	}
	return bareAtBoundary
}

var textCases = []textCase{
	{"origin.pub.example", false}, {"origin.pub.example", true}, {"origin.pub.example:8080", false},
}

func rewriteTextString(t *testing.T, in string, c textCase, src io.Reader) string {
	t.Helper()
	var out bytes.Buffer
	o := &TextOptions{OriginHost: c.origin, RequestHost: "www.pub.example:8443", RequestScheme: "https", Script: c.script}
	if _, err := RewriteText(&out, src, o); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// FuzzTextRewrite compares RewriteText, read in random splits, with
// refText on the whole text, with the vector name search and without.
func FuzzTextRewrite(f *testing.F) {
	for i, s := range textSeeds {
		f.Add(s, int64(i), uint8(i))
	}
	f.Fuzz(func(t *testing.T, in string, seed int64, which uint8) {
		c := textCases[int(which)%len(textCases)]
		want := refTextResponse(in, c.origin, "www.pub.example:8443", "https", c.bare())
		saved := havePairVector
		defer func() { havePairVector = saved }()
		for _, on := range []bool{saved, false} {
			havePairVector = on
			got := rewriteTextString(t, in, c, &splitReader{s: in, rng: rand.New(rand.NewSource(seed))})
			if got != want {
				t.Fatalf("vector search %v, in %q (%+v):\n got %q\nwant %q", on, in, c, got, want)
			}
		}
	})
}

func TestTextRules(t *testing.T) {
	const o = "origin.pub.example"
	tests := []struct {
		name, in, want string
		c              textCase
	}{
		{"css url", "a{b:url(https://origin.pub.example/i.png)}", "a{b:url(https://www.pub.example:8443/i.png)}", textCase{o, false}},
		{"json escaped", `{"u":"https:\/\/origin.pub.example\/a"}`, `{"u":"https:\/\/www.pub.example:8443\/a"}`, textCase{o, false}},
		{"letter case", "HTTP://ORIGIN.PUB.EXAMPLE/", "https://www.pub.example:8443/", textCase{o, false}},
		{"default port named", "https://origin.pub.example:443/", "https://www.pub.example:8443/", textCase{o, false}},
		{"other port kept", "https://origin.pub.example:8080/", "https://origin.pub.example:8080/", textCase{o, false}},
		{"longer host kept", "https://origin.pub.example.evil/ cdn.origin.pub.example", "https://origin.pub.example.evil/ cdn.origin.pub.example", textCase{o, false}},
		{"mail kept", "ads@origin.pub.example", "ads@origin.pub.example", textCase{o, false}},
		{"bare in path", "https://i0.wp.com/origin.pub.example/a.png", "https://i0.wp.com/www.pub.example:8443/a.png", textCase{o, false}},
		{"script bare in string", `h="origin.pub.example";x/origin.pub.example`, `h="www.pub.example:8443";x/origin.pub.example`, textCase{o, true}},
		{"origin on a port", "//origin.pub.example:8080/a origin.pub.example/b", "//www.pub.example:8443/a origin.pub.example/b", textCase{o + ":8080", false}},
	}
	tests = append(tests, escapedTextCases...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := rewriteTextString(t, tc.in, tc.c, strings.NewReader(tc.in)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if ref := refTextResponse(tc.in, tc.c.origin, "www.pub.example:8443", "https", tc.c.bare()); ref != tc.want {
				t.Errorf("reference disagrees with the table: %q", ref)
			}
		})
	}
}

// escapedTextCases are the escaped forms of the inline rules in text
// responses: a JSON API's share link and a Nuxt payload's \u002F.
var escapedTextCases = []struct {
	name, in, want string
	c              textCase
}{
	{"json percent-encoded", `{"u":"/s?u=http%3A%2F%2FORIGIN.pub.example%2Fa"}`, `{"u":"/s?u=https%3A%2F%2Fwww.pub.example%3A8443%2Fa"}`, textCase{"origin.pub.example", false}},
	{"json u002F", `{"j":"http:\u002F\u002Forigin.pub.example\u002Fa"}`, `{"j":"https:\u002F\u002Fwww.pub.example:8443\u002Fa"}`, textCase{"origin.pub.example", false}},
	{"script percent-encoded twice", `x="?u=https%253A%252F%252Forigin.pub.example"`, `x="?u=https%253A%252F%252Fwww.pub.example%253A8443"`, textCase{"origin.pub.example", true}},
	{"escaped on another port", `"\u002F\u002Forigin.pub.example:8081\u002F"`, `"\u002F\u002Forigin.pub.example:8081\u002F"`, textCase{"origin.pub.example:8080", false}},
}

// TestTextResponsesRewriteEscapedOriginURLs: a JSON response's escaped
// origin URLs, which the same bytes inside a page lose, are rewritten too.
func TestTextResponsesRewriteEscapedOriginURLs(t *testing.T) {
	for _, tc := range escapedTextCases {
		t.Run(tc.name, func(t *testing.T) {
			for n := 1; n <= len(tc.in); n += 7 {
				if got := rewriteTextString(t, tc.in, tc.c, &fixedReader{s: tc.in, n: n}); got != tc.want {
					t.Fatalf("reads of %d bytes: got %q, want %q", n, got, tc.want)
				}
			}
		})
	}
}

// TestTextRewriteHoldsOnlyATail: a text read one byte at a time is written
// as it arrives but for a tail shorter than one host reference; it is never
// held whole. The request host has the origin's length, so input and output
// offsets line up.
func TestTextRewriteHoldsOnlyATail(t *testing.T) {
	in := strings.Repeat("x https://origin.pub.example/a \\/\\/origin.pub.example ", 500)
	w := &bytes.Buffer{}
	r := &lagReader{s: in, w: w, bound: textLookbehind + len("origin.pub.example") + maxPortDigits + 2}
	if _, err := RewriteText(w, r, &TextOptions{OriginHost: "origin.pub.example", RequestHost: "proxyy.pub.example", RequestScheme: "https"}); err != nil {
		t.Fatal(err)
	}
	if r.err != "" {
		t.Fatal(r.err)
	}
	if want := strings.ReplaceAll(in, "origin.", "proxyy."); w.String() != want {
		t.Fatalf("output differs from the input with the host replaced")
	}
}

// lagReader gives one byte per Read, and notes when more than bound bytes
// it gave have not been written to w.
type lagReader struct {
	s     string
	read  int
	w     *bytes.Buffer
	bound int
	err   string
}

func (r *lagReader) Read(p []byte) (int, error) {
	if lag := r.read - r.w.Len(); lag > r.bound && r.err == "" {
		r.err = fmt.Sprintf("held %d bytes", lag)
	}
	if r.read == len(r.s) {
		return 0, io.EOF
	}
	p[0] = r.s[r.read]
	r.read++
	return 1, nil
}

// TestTextRejectedHostNotDecidedAgain: a host that was refused ("http://"
// with port 443) is not decided again after a read boundary, where the
// scheme before it would be out of sight and it would pass as bare.
func TestTextRejectedHostNotDecidedAgain(t *testing.T) {
	for _, in := range textSeeds {
		for _, c := range textCases {
			want := refTextResponse(in, c.origin, "www.pub.example:8443", "https", c.bare())
			for n := 1; n <= 40; n++ {
				got := rewriteTextString(t, in, c, &fixedReader{s: in, n: n})
				if got != want {
					t.Fatalf("reads of %d bytes, %q (%+v):\n got %q\nwant %q", n, in, c, got, want)
				}
			}
		}
	}
}

// fixedReader returns s in reads of n bytes.
type fixedReader struct {
	s string
	n int
}

func (r *fixedReader) Read(p []byte) (int, error) {
	if len(r.s) == 0 {
		return 0, io.EOF
	}
	k := min(r.n, len(p), len(r.s))
	copy(p, r.s[:k])
	r.s = r.s[k:]
	return k, nil
}

// TestTextStreamsWhatCannotBeginAMatch: bytes that cannot begin an origin
// reference are written before the next read, so a slow text streams
// (the daemon's graceful-shutdown test sends half a body and waits).
func TestTextStreamsWhatCannotBeginAMatch(t *testing.T) {
	in := "first half of a slow body; second half, sent later; "
	w := &bytes.Buffer{}
	r := &lagReader{s: in, w: w, bound: 1} // one byte: "h" may begin "https://", "o" the host
	if _, err := RewriteText(w, r, &TextOptions{OriginHost: "origin.pub.example", RequestHost: "w.example", RequestScheme: "https"}); err != nil {
		t.Fatal(err)
	}
	if r.err != "" || w.String() != in {
		t.Fatalf("%s; output %q", r.err, w.String())
	}
}
