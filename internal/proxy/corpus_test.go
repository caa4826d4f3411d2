package proxy

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"

	"github.com/ssatd/ssatd/internal/testutil"
)

// corpusPages returns the HTML pages of $SSATD_CORPUS, or skips (fails
// under SSATD_STRICT=1).
func corpusPages(tb testing.TB) map[string][]byte {
	tb.Helper()
	files := testutil.RequireCorpus(tb)
	pages := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		pages[filepath.Base(f)] = b
	}
	return pages
}

var canonicalRe = regexp.MustCompile(`(?i)<link[^>]+rel=["']?canonical["']?[^>]*href=["']?https?://([a-z0-9.-]+)|property=["']og:url["'][^>]*content=["']https?://([a-z0-9.-]+)`)

// pageHost is the host the page's own absolute links name, taken from its
// canonical link or og:url ("" when it has neither).
func pageHost(page []byte) string {
	m := canonicalRe.FindSubmatch(page)
	if m == nil {
		return ""
	}
	if len(m[1]) > 0 {
		return string(m[1])
	}
	return string(m[2])
}

func sortedNames(pages map[string][]byte) []string {
	names := make([]string, 0, len(pages))
	for n := range pages {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Every corpus page, served by a real origin as identity, gzip, deflate
// and br, decodes to the same rewritten page, and that page still parses
// with the same elements plus the injected scripts.
func TestCorpusMirrorEquivalence(t *testing.T) {
	pages := corpusPages(t)
	var current []byte
	e := newEnv(t, serveCoded(func() []byte { return current }, compress.Brotli, compress.Gzip, compress.Deflate))
	rewrittenPages := 0
	for _, name := range sortedNames(pages) {
		page := pages[name]
		served := page
		if h := pageHost(page); h != "" {
			// Make the page's own links name the test origin so that the
			// URL rules have real work to do.
			served = bytes.ReplaceAll(page, []byte("//"+h), []byte("//"+e.host))
		}
		current = served
		var want []byte
		for _, c := range allCodings {
			resp, body := e.mustGet(t, "/"+name, navigate, header("Accept-Encoding", string(c)))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s %s: status %d: %.200s", name, c, resp.StatusCode, body)
			}
			plain := decode(t, c, body)
			if want == nil {
				want = plain
				continue
			}
			if !bytes.Equal(plain, want) {
				t.Fatalf("%s: %s output differs from identity output (%d vs %d bytes)", name, c, len(plain), len(want))
			}
		}
		if !bytes.Equal(served, page) && bytes.Contains(want, []byte("//"+testDomain)) {
			rewrittenPages++
		}
		if left := originURLAttrs(t, want, e.host); len(left) > 0 {
			t.Errorf("%s: href/src/action values still name the origin: %q", name, left)
		}
		inTags, outTags := countElements(t, served), countElements(t, want)
		injected := 0
		if bytes.Contains(want, []byte(`id="trustedserver-js"`)) {
			injected = 3 // ad slots, bundle tag, bids
		}
		if outTags != inTags+injected {
			t.Errorf("%s: %d elements after the rewrite, want %d + %d injected", name, outTags, inTags, injected)
		}
	}
	if rewrittenPages == 0 {
		t.Fatal("no corpus page had a link rewritten: the host substitution is broken")
	}
	t.Logf("%d pages, %d with rewritten links", len(pages), rewrittenPages)
}

// originURLAttrs lists href, src and action values of the parsed page that
// still point at host with a scheme or as protocol-relative URLs.
func originURLAttrs(t *testing.T, page []byte, host string) []string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	var left []string
	var walk func(*html.Node)
	walk = func(x *html.Node) {
		for _, a := range x.Attr {
			if a.Key != "href" && a.Key != "src" && a.Key != "action" {
				continue
			}
			for _, p := range []string{"//" + host + "/", "//" + host + "?", "//" + host + "#"} {
				if strings.Contains(a.Val, p) || strings.HasSuffix(a.Val, "//"+host) {
					left = append(left, a.Val)
				}
			}
		}
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return left
}

func countElements(t *testing.T, page []byte) int {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	n := 0
	var walk func(*html.Node)
	walk = func(x *html.Node) {
		if x.Type == html.ElementNode {
			n++
		}
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return n
}

// benchModes are the guest pipeline modes of docs/measuring.md.
var benchModes = []struct {
	name    string
	in, out compress.Coding
}{
	{"identity", compress.Identity, compress.Identity},
	{"gzip_mirror", compress.Gzip, compress.Gzip},
	{"deflate_mirror", compress.Deflate, compress.Deflate},
	{"br_mirror", compress.Brotli, compress.Brotli},
	{"gzip_to_identity", compress.Gzip, compress.Identity},
	{"br_to_identity", compress.Brotli, compress.Identity},
}

// benchPages are the corpus pages benchmarked: the three largest (home-page
// sized) and one typical article.
var benchPages = []string{"yahoo-3.html", "guardian-1.html", "nytimes-5.html", "ars-1.html"}

// BenchmarkGuest times the guest body pipeline (decode, rewrite, encode) per
// mode on corpus pages, as an eligible navigation with the SSAT injection.
// MB/s is of the identity page size.
func BenchmarkGuest(b *testing.B) {
	pages := corpusPages(b)
	for _, name := range benchPages {
		page, ok := pages[name]
		if !ok {
			b.Fatalf("corpus lacks %s", name)
		}
		host := pageHost(page)
		g := benchGuest(b, host)
		for _, m := range benchModes {
			src := encode(b, m.in, page)
			b.Run(fmt.Sprintf("page=%s/mode=%s", strings.TrimSuffix(name, ".html"), m.name), func(b *testing.B) {
				req := httptest.NewRequest(http.MethodGet, "/"+name, nil)
				req.Host = testDomain
				req.Header.Set("Sec-Fetch-Dest", "document")
				b.SetBytes(int64(len(page)))
				b.ReportAllocs()
				var out countingDiscard
				for b.Loop() {
					if _, err := g.Transform(&out, bytes.NewReader(src), m.in, m.out, req); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(out.n)/float64(b.N), "out-B/op")
			})
		}
	}
}

type countingDiscard struct{ n int64 }

func (c *countingDiscard) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func benchGuest(b *testing.B, host string) *Guest {
	b.Helper()
	if host == "" {
		host = "origin.pub.example"
	}
	cfg := testConfig(&testing.T{}, "https://"+host)
	g, err := New(cfg, Options{Bundle: []byte("bundle")})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// Offload over the corpus: for every page and every coding the origin may
// send despite being asked for identity, the page delivered through the
// edge decodes to exactly the mirror-mode page.
func TestCorpusOffloadEqualsMirror(t *testing.T) {
	pages := corpusPages(t)
	var current []byte
	var originCoding compress.Coding
	var asked string
	var off, mir *env
	serve := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		stubbornOrigin(originCoding, func() []byte { return current }, &asked)(w, r)
	})
	// The test origin encodes each page per request before its headers,
	// which under -race on a loaded machine can outlast the 2 s header
	// timeout of testConfig; this test is not about that timeout.
	slowOrigin := func(c *config.Config) { c.Publisher.OriginHeaderTimeout = config.Duration{Duration: time.Minute} }
	off = newEnv(t, serve, offload("builtin"), slowOrigin)
	mir = newEnv(t, serve, slowOrigin)
	for _, name := range sortedNames(pages) {
		page := pages[name]
		for _, c := range allCodings {
			originCoding = c
			current = page
			if h := pageHost(page); h != "" {
				current = bytes.ReplaceAll(page, []byte("//"+h), []byte("//"+off.host))
			}
			resp, body := off.mustGet(t, "/"+name, navigate, header("Accept-Encoding", "br, gzip"))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s offload: status %d: %.200s", name, resp.StatusCode, body)
			}
			if resp.Header.Get("Content-Encoding") != "br" || asked != "identity" {
				t.Fatalf("%s/%s: delivered %q, origin asked %q", name, c, resp.Header.Get("Content-Encoding"), asked)
			}
			got := bytes.ReplaceAll(decode(t, compress.Brotli, body), []byte(off.host), []byte("ORIGIN"))
			if h := pageHost(page); h != "" {
				current = bytes.ReplaceAll(page, []byte("//"+h), []byte("//"+mir.host))
			}
			mresp, mbody := mir.mustGet(t, "/"+name, navigate, header("Accept-Encoding", "gzip, deflate, br"))
			if mresp.StatusCode != http.StatusOK {
				t.Fatalf("%s mirror: status %d: %.200s", name, mresp.StatusCode, mbody)
			}
			want := decode(t, compress.Coding(orIdentity(mresp.Header.Get("Content-Encoding"))), mbody)
			want = bytes.ReplaceAll(want, []byte(mir.host), []byte("ORIGIN"))
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: origin %s: offload page (%d bytes) differs from mirror page (%d bytes)", name, c, len(got), len(want))
			}
		}
	}
}
