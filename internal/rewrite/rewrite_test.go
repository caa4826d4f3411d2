package rewrite

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"golang.org/x/net/html"
)

const (
	testOrigin = "origin.pub.example"
	testHost   = "www.pub.example"
)

func testOpts() *Options {
	return &Options{OriginHost: testOrigin, RequestHost: testHost, RequestScheme: "https"}
}

func run(t *testing.T, in string, o *Options) (string, Stats) {
	t.Helper()
	var out bytes.Buffer
	st, err := Rewrite(&out, strings.NewReader(in), o)
	if err != nil {
		t.Fatalf("Rewrite(%q): %v", in, err)
	}
	return out.String(), st
}

func TestURLRewriting(t *testing.T) {
	tests := []struct{ name, in, want string }{
		// The examples of "URL rewriting" in docs/behaviour.md.
		{"https href", `<a href="https://origin.pub.example/a">`, `<a href="https://www.pub.example/a">`},
		{"protocol-relative src", `<img src="//origin.pub.example/i.png">`, `<img src="//www.pub.example/i.png">`},
		{"bare prefix", `<a href="origin.pub.example/bare">`, `<a href="www.pub.example/bare">`},
		{"http action", `<form action="http://origin.pub.example/s">`, `<form action="https://www.pub.example/s">`},
		{"srcset", `<img srcset="https://origin.pub.example/a.png 1x, origin.pub.example/b.png 2x">`,
			`<img srcset="https://www.pub.example/a.png 1x, www.pub.example/b.png 2x">`},
		// Quoting styles and case.
		{"single quotes", `<a href='https://origin.pub.example/a'>`, `<a href='https://www.pub.example/a'>`},
		{"unquoted", `<a href=https://origin.pub.example/a>`, `<a href=https://www.pub.example/a>`},
		{"unquoted self-closing", `<img src=//origin.pub.example/a.png/>`, `<img src=//www.pub.example/a.png/>`},
		{"upper-case tag and attr", `<A HREF="https://origin.pub.example/a">x</A>`, `<A HREF="https://www.pub.example/a">x</A>`},
		{"mixed-case attr", `<IMG SrC="//origin.pub.example/i">`, `<IMG SrC="//www.pub.example/i">`},
		{"spaces around equals", `<a href = "https://origin.pub.example/a" >`, `<a href = "https://www.pub.example/a" >`},
		{"newlines between attrs", "<a\nclass=x\nhref=\"http://origin.pub.example/\"\n>", "<a\nclass=x\nhref=\"https://www.pub.example/\"\n>"},
		{"host only", `<a href="https://origin.pub.example">`, `<a href="https://www.pub.example">`},
		{"bare host only", `<a href="origin.pub.example">`, `<a href="www.pub.example">`},
		{"bare with query", `<a href="origin.pub.example?q=1">`, `<a href="www.pub.example?q=1">`},
		{"bare with fragment", `<a href="origin.pub.example#top">`, `<a href="www.pub.example#top">`},
		{"query keeps other host", `<a href="https://origin.pub.example/r?u=https://origin.pub.example/x">`,
			`<a href="https://www.pub.example/r?u=https://www.pub.example/x">`},
		{"any element", `<link rel=preload href="//origin.pub.example/f.woff2">`, `<link rel=preload href="//www.pub.example/f.woff2">`},
		{"imagesrcset scheme forms", `<link imagesrcset="https://origin.pub.example/a 1x, //origin.pub.example/b 2x">`,
			`<link imagesrcset="https://www.pub.example/a 1x, //www.pub.example/b 2x">`},
		// Entity-encoded values are matched decoded and re-encoded.
		{"entity in query kept", `<a href="https://origin.pub.example/a?x=1&amp;y=2">`, `<a href="https://www.pub.example/a?x=1&amp;y=2">`},
		{"encoded slashes", `<a href="https:&#x2F;&#x2F;origin.pub.example/a?x=1&amp;y=&quot;">`, `<a href="https://www.pub.example/a?x=1&amp;y=&quot;">`},
		{"encoded host dot", `<a href="https://origin&period;pub.example/a">`, `<a href="https://www.pub.example/a">`},
		{"encoded in single quotes", `<a href='https:&#47;&#47;origin.pub.example/it&#39;s'>`, `<a href='https://www.pub.example/it&#39;s'>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := run(t, tt.in, testOpts())
			if got != tt.want {
				t.Errorf("\n in: %s\ngot: %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestNotRewritten(t *testing.T) {
	tests := []struct{ name, in string }{
		{"text", `<p>visit https://origin.pub.example/a today</p>`},
		{"inline script", `<script>var u="https://origin.pub.example/a";</script>`},
		{"inline style", `<style>a{background:url(//origin.pub.example/i.png)}</style>`},
		{"style attribute", `<div style="background:url(//origin.pub.example/i.png)">`},
		{"meta content", `<meta property="og:url" content="https://origin.pub.example/a">`},
		{"data attribute", `<div data-src="https://origin.pub.example/a">`},
		{"other host", `<a href="https://cdn.example/origin.pub.example/x">`},
		{"longer host", `<a href="https://origin.pub.example.evil.com/a">`},
		{"host with other port", `<a href="https://origin.pub.example:8443/a">`},
		{"bare not at start", `<a href="/go?origin.pub.example">`},
		{"subdomain bare in srcset", `<img srcset="img.origin.pub.example/a.png 1x">`},
		{"imagesrcset bare", `<link imagesrcset="origin.pub.example/a.png 1x">`},
		{"comment", `<!-- <a href="https://origin.pub.example/a"> -->`},
		{"textarea", `<textarea><a href="https://origin.pub.example/a"></textarea>`},
		{"end tag attrs", `</a href="https://origin.pub.example/a">`},
		{"attribute without value", `<a href>origin.pub.example</a>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st := run(t, tt.in, testOpts())
			if got != tt.in || st.URLsRewritten != 0 {
				t.Errorf("changed:\n in: %s\ngot: %s (%d rewritten)", tt.in, got, st.URLsRewritten)
			}
		})
	}
}

// Malformed and odd markup is copied through byte for byte.
func TestMalformedCopiedExactly(t *testing.T) {
	inputs := []string{
		"", "plain text", "<", "<a", "<a href=", `<a href="x`, "</", "</>", "<!", "<!--", "<!-- x",
		"<?xml version='1.0'?>", "<!DOCTYPE html>", "<![CDATA[x]]>", "a < b > c", "<3 <a/b>",
		"<script>if(a<b)document.write('</scr'+'ipt>')</script>", "<script>never closed",
		"<title><b>x</b></title>", "<plaintext><a href=x>", "\x00<a\x00 href=\x00>", "<a href=\"x\"\"y\">",
		"<a \"b\"='c' =d>", "<br/><img/ src=x/>", "\r\n<p>\r\n", "&amp;&notanentity;&#xZZ;",
		"<head<body>", "<HEAD><BODY></BODY>", strings.Repeat("<a></b>", 1000),
	}
	for _, in := range inputs {
		got, _ := run(t, in, &Options{})
		if got != in {
			t.Errorf("not copied exactly:\n in: %q\ngot: %q", in, got)
		}
	}
}

func TestHeadAndBodyInjection(t *testing.T) {
	bids := func() []byte { return []byte("[BIDS]") }
	tests := []struct {
		name, in, want string
		head, body     bool
	}{
		{"basic", "<html><head><title>t</title></head><body>x</body></html>",
			"<html><head>[HEAD]<title>t</title></head><body>x[BIDS]</body></html>", true, true},
		{"head with attrs upper case", `<HEAD lang="en"><BODY></BODY>`, `<HEAD lang="en">[HEAD]<BODY>[BIDS]</BODY>`, true, true},
		{"no head", "<html><body>x</body></html>", "<html><body>x</body></html>", false, true},
		{"several bodies", "<head></head><body>a</body><body>b</body>", "<head>[HEAD]</head><body>a[BIDS]</body><body>b</body>", true, true},
		{"no body end", "<head></head><body>a", "<head>[HEAD]</head><body>a[BIDS]", true, false},
		{"header is not head", "<header></header><head>", "<header></header><head>[HEAD][BIDS]", true, false},
		{"only first head", "<head><head></head>", "<head>[HEAD]<head></head>[BIDS]", true, false},
		{"body end inside script", "<head><script>\"</body>\"</script></head></body>", "<head>[HEAD]<script>\"</body>\"</script></head>[BIDS]</body>", true, true},
		{"body end in comment", "<head><!--</body>--></body>", "<head>[HEAD]<!--</body>-->[BIDS]</body>", true, true},
		// FuzzTreeDifferential: the ad slots without their bids, unreported.
		{"body end before head", "</body><head>", "</body><head>[HEAD][BIDS]", true, true},
		{"body end before and after head", "</body><head></body>", "</body><head>[HEAD][BIDS]</body>", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOpts()
			o.HeadPrepend = []byte("[HEAD]")
			o.BodyEnd = bids
			got, st := run(t, tt.in, o)
			if got != tt.want {
				t.Errorf("\n in: %s\ngot: %s\nwant %s", tt.in, got, tt.want)
			}
			if st.HeadFound != tt.head || st.BodyEndFound != tt.body {
				t.Errorf("stats head=%v body=%v, want %v %v", st.HeadFound, st.BodyEndFound, tt.head, tt.body)
			}
		})
	}
}

func TestBodyEndCalledOnceAfterBeforeWait(t *testing.T) {
	var calls []string
	o := testOpts()
	o.HeadPrepend = []byte("H")
	o.BeforeWait = func() error { calls = append(calls, "flush"); return nil }
	o.BodyEnd = func() []byte { calls = append(calls, "bids"); return nil }
	run(t, "<head></head><body></body></body>", o)
	if strings.Join(calls, ",") != "flush,bids" {
		t.Fatalf("calls = %v", calls)
	}
}

// The rewrite must not depend on where the input is split: every split of a
// small document and random splits of a larger one give the same output.
func TestSplitIndependence(t *testing.T) {
	doc := `<!DOCTYPE html><HTML><head lang=en><meta charset=utf-8><title>a<b</title>` +
		`<link href='//origin.pub.example/s.css' rel=stylesheet><script>var x="</body>";</script></head>` +
		`<body><a href="https://origin.pub.example/a?x=1&amp;y=2">t</a><img srcset="origin.pub.example/a 1x, ` +
		`https://origin.pub.example/b 2x"><!-- <a href=//origin.pub.example/> --></body></html>`
	o := testOpts()
	o.HeadPrepend = []byte("<script>h</script>")
	o.BodyEnd = func() []byte { return []byte("<script>b</script>") }
	want, _ := run(t, doc, o)
	if want == doc {
		t.Fatal("nothing rewritten: the test document is wrong")
	}
	for i := 0; i <= len(doc); i++ {
		for j := i; j <= len(doc); j += 7 {
			r := io.MultiReader(iotest.OneByteReader(strings.NewReader(doc[:i])), strings.NewReader(doc[i:j]), strings.NewReader(doc[j:]))
			var out bytes.Buffer
			if _, err := Rewrite(&out, r, o); err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Fatalf("split at %d,%d differs:\n%s\nwant\n%s", i, j, out.String(), want)
			}
		}
	}
	big := strings.Repeat(doc, 200)
	wantBig, _ := run(t, big, o)
	rng := rand.New(rand.NewPCG(1, 2))
	for k := 0; k < 50; k++ {
		var out bytes.Buffer
		if _, err := Rewrite(&out, &randomChunks{s: big, rng: rng}, o); err != nil {
			t.Fatal(err)
		}
		if out.String() != wantBig {
			t.Fatalf("random split run %d differs", k)
		}
	}
}

// randomChunks returns s in reads of random sizes, up to max bytes (3000
// when max is 0).
type randomChunks struct {
	s   string
	rng *rand.Rand
	max int
}

func (r *randomChunks) Read(p []byte) (int, error) {
	if len(r.s) == 0 {
		return 0, io.EOF
	}
	limit := r.max
	if limit == 0 {
		limit = 3000
	}
	n := 1 + r.rng.IntN(min(len(p), limit))
	n = copy(p, r.s[:min(n, len(r.s))])
	r.s = r.s[n:]
	return n, nil
}

func TestSourceErrorReturned(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("<html><head><a href=x>"), iotest.ErrReader(boom))
	var out bytes.Buffer
	_, err := Rewrite(&out, r, testOpts())
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the source error", err)
	}
}

func TestWriteErrorWrapped(t *testing.T) {
	_, err := Rewrite(failWriter{}, strings.NewReader("<p>x</p>"), testOpts())
	if !errors.Is(err, ErrWrite) {
		t.Fatalf("err = %v, want ErrWrite", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("client went away") }

// The rewritten document still parses to the same tree shape.
func TestOutputParses(t *testing.T) {
	in := `<html><head><title>x</title></head><body><a href="//origin.pub.example/">a</a></body></html>`
	o := testOpts()
	o.HeadPrepend = []byte(`<script>1</script>`)
	got, _ := run(t, in, o)
	doc, err := html.Parse(strings.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	var hrefs []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for _, a := range n.Attr {
			if a.Key == "href" {
				hrefs = append(hrefs, a.Val)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if len(hrefs) != 1 || hrefs[0] != "//www.pub.example/" {
		t.Fatalf("hrefs = %v", hrefs)
	}
}

func newRand(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 7)) }

// Tags larger than MaxTokenBytes do not grow memory without bound: the
// rest of the page is copied through unchanged, whatever the input splits,
// and the bids go just before the tag, the last place the scanner knows.
func TestOversizeTagCopiedThrough(t *testing.T) {
	cases := map[string]string{
		"huge attribute":   `<head><a title="` + strings.Repeat("z", 5000) + `" href="//origin.pub.example/">x</a></body>`,
		"unterminated tag": `<head><a href="//origin.pub.example/" title="` + strings.Repeat("z", 5000),
		"huge end tag":     `<head></body title="` + strings.Repeat("z", 5000) + `"><a href="//origin.pub.example/"></body>`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			o := testOpts()
			o.MaxTokenBytes = 1024
			o.HeadPrepend = []byte("[H]")
			o.BodyEnd = func() []byte { return []byte("[B]") }
			var want bytes.Buffer
			st, err := Rewrite(&want, strings.NewReader(in), o)
			if err != nil {
				t.Fatal(err)
			}
			if !st.Oversize || st.BodyEndFound {
				t.Fatalf("oversize %v, body end found %v: want the oversize tag detected and nothing after it", st.Oversize, st.BodyEndFound)
			}
			if got := want.String(); got != "<head>[H][B]"+in[len("<head>"):] {
				t.Fatalf("output is not the input plus injections:\n%.200q", got)
			}
			compareWithReference(t, name, []byte(in), o, 1) // the Tokenizer's ErrBufferExceeded
			for k := 0; k < 20; k++ {
				var out bytes.Buffer
				if _, err := Rewrite(&out, &randomChunks{s: in, rng: newRand(int64(k))}, o); err != nil {
					t.Fatal(err)
				}
				if out.String() != want.String() {
					t.Fatalf("split run %d differs", k)
				}
			}
		})
	}
}

// Text, comments and raw text are written as they are scanned, never held:
// however long, they leave the read buffer at its size and the page is
// still rewritten after them.
func TestLongTokensStreamed(t *testing.T) {
	long := strings.Repeat("x-< y\n", 400_000) // 2.4 MB, more than DefaultMaxTokenBytes
	cases := map[string]string{
		"script":               "<head><script>" + long + "</script></body>",
		"unterminated script":  "<head><script>" + long,
		"comment":              "<head><!--" + long + "--></body>",
		"unterminated comment": "<head><!--" + long,
		"text":                 "<head>" + long + "</body>",
		"textarea":             "<head><textarea>" + long + "</textarea></body>",
		"bogus comment":        "<head><!" + strings.ReplaceAll(long, "<", "") + "></body>",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			o := &Options{HeadPrepend: []byte("[H]"), BodyEnd: func() []byte { return []byte("[B]") }}
			rw := &rewriter{scanner: scanner{buf: make([]byte, readSize)}}
			var out bytes.Buffer
			rw.reset(&out, o)
			if err := rw.run(&randomChunks{s: in, rng: newRand(1)}); err != nil {
				t.Fatal(err)
			}
			if rw.stats.Oversize || cap(rw.buf) != readSize {
				t.Fatalf("oversize %v, buffer grew to %d bytes", rw.stats.Oversize, cap(rw.buf))
			}
			want := strings.Replace(in, "<head>", "<head>[H]", 1)
			switch {
			case strings.HasSuffix(in, "</body>"):
				want = strings.TrimSuffix(want, "</body>") + "[B]</body>"
			case name == "unterminated script":
				// The page ends inside the script: bids there would be
				// script text, so none are injected.
				if rw.stats.BodyEndSkipped != "script" {
					t.Errorf("BodyEndSkipped %q, want script", rw.stats.BodyEndSkipped)
				}
			default:
				want += "[B]"
			}
			if out.String() != want {
				t.Fatalf("output is not the input plus injections (%d bytes, want %d)", out.Len(), len(want))
			}
		})
	}
}

// A page costs no allocation once the pool is warm: unchanged input is
// written from the read buffer, and only rewritten URLs allocate (urls.go).
func TestRewriteAllocatesNothingPerPage(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	page := strings.Repeat(`<div class="a"><a href="/x?y=1">t</a><script>if(a<b){}</script><!-- c --><style>p{}</style></div>`, 2000)
	page = "<!DOCTYPE html><html><head><title>t</title></head><body>" + page + "</body></html>"
	bids := []byte("<script>b</script>")
	o := &Options{OriginHost: testOrigin, RequestHost: testHost, RequestScheme: "https",
		HeadPrepend: []byte("<script>h</script>"), BodyEnd: func() []byte { return bids }}
	var src strings.Reader
	var out discard
	allocs := testing.AllocsPerRun(20, func() {
		src.Reset(page)
		if _, err := Rewrite(&out, &src, o); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per page, want 0", allocs)
	}
}
