package firstparty

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

func testSigner(t *testing.T) *Signer {
	t.Helper()
	s, err := NewSigner("unit-test-proxy-secret")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// firstPartyURLs finds the first-party URLs in rewritten markup and returns
// what each verifies to ("proxy https://..." or "click https://..."), in order.
// A URL whose token does not verify fails the test.
func firstPartyURLs(t *testing.T, s *Signer, markup string) []string {
	t.Helper()
	re := regexp.MustCompile(`(?:https?://[a-z0-9.:]+)?/first-party/(proxy|click)\?[^"' )]+`)
	var got []string
	for _, m := range re.FindAllStringSubmatch(markup, -1) {
		raw := strings.ReplaceAll(m[0], "&amp;", "&")
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		tg, err := s.verifyQuery(u.RawQuery, time.Now())
		if err != nil {
			t.Fatalf("%q does not verify: %v", raw, err)
		}
		got = append(got, m[1]+" "+tg.url)
	}
	return got
}

func TestProcessCreativeRewritesWhatUpstreamRewrites(t *testing.T) {
	s := testSigner(t)
	cases := []struct {
		name, adm string
		want      []string
	}{
		{"img src and data-src", `<img src="https://cdn.example/a.png?x=1" data-src="//cdn.example/b.png">`,
			[]string{"proxy https://cdn.example/a.png?x=1", "proxy https://cdn.example/b.png"}},
		{"script", `<script src="https://ads.example/t.js?c=3&amp;b=2"></script>`,
			[]string{"proxy https://ads.example/t.js?c=3&b=2"}},
		{"stylesheet, preload, prefetch", `<link rel="stylesheet" href="https://a.example/s.css"><link rel="preload" href="https://a.example/p.woff"><link rel="prefetch" href="https://a.example/n.js">`,
			[]string{"proxy https://a.example/s.css", "proxy https://a.example/p.woff", "proxy https://a.example/n.js"}},
		{"media", `<video src="https://v.example/v.mp4"></video><audio src="https://v.example/a.mp3"></audio><source src="https://v.example/s.webm">`,
			[]string{"proxy https://v.example/v.mp4", "proxy https://v.example/a.mp3", "proxy https://v.example/s.webm"}},
		{"object and embed", `<object data="https://o.example/o.swf"></object><embed src="https://o.example/e.swf">`,
			[]string{"proxy https://o.example/o.swf", "proxy https://o.example/e.swf"}},
		{"input type=image", `<input type="IMAGE" src="https://i.example/b.png">`, []string{"proxy https://i.example/b.png"}},
		{"svg image and use", `<svg><image href="https://s.example/i.svg"/><use xlink:href="https://s.example/u.svg#x"/></svg>`,
			[]string{"proxy https://s.example/i.svg", "proxy https://s.example/u.svg"}},
		{"iframe", `<iframe src="https://f.example/frame.html"></iframe>`, []string{"proxy https://f.example/frame.html"}},
		{"srcset", `<img srcset="https://c.example/1.png 1x,https://c.example/2.png 2x, /rel.png 3x">`,
			[]string{"proxy https://c.example/1.png", "proxy https://c.example/2.png"}},
		{"url() in style attribute and block", `<div style="background:url('https://b.example/bg.png')"></div><style>.x{background:url( https://b.example/s.png )}</style>`,
			[]string{"proxy https://b.example/bg.png", "proxy https://b.example/s.png"}},
		{"click", `<a href="https://adv.example/landing?id=7">go</a><area href="https://adv.example/area">`,
			[]string{"click https://adv.example/landing?id=7", "click https://adv.example/landing?id=7", "click https://adv.example/area", "click https://adv.example/area"}},
		// Cases from upstream's tests (core/creative.rs:1593-1621, 1941-1950).
		{"rel case and several values", `<link REL='StyleSheet preload' href='https://cdn.example/s.css' imagesrcset='https://cdn.example/a.png 1x, /local.png 1x'>`,
			[]string{"proxy https://cdn.example/s.css", "proxy https://cdn.example/a.png"}},
		{"several url() and relative ones", `<div style="background-image:url(https://cdn.example/a.png); mask: url(../rel.svg) center no-repeat; border-image:url('//cdn.example/b.png') 30 fill"></div>`,
			[]string{"proxy https://cdn.example/a.png", "proxy https://cdn.example/b.png"}},
		{"white space around a URL, a port kept", `<img src="   https://cdn.example:8443/a   ">`, []string{"proxy https://cdn.example:8443/a"}},
		{"left alone", `<img src="/rel.png"><img src="data:image/png;base64,AA=="><a href="mailto:x@y">m</a><a href="javascript:void(0)">j</a><link rel="icon" href="https://a.example/i.ico">`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := ProcessCreative(c.adm, CreativeOptions{Signer: s, Rewrite: true})
			got := firstPartyURLs(t, s, out)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("out %s\n got %q\nwant %q", out, got, c.want)
			}
		})
	}
}

func TestProcessCreativeExactOutput(t *testing.T) {
	s := testSigner(t)
	cases := []struct {
		name, adm string
		o         CreativeOptions
		want      string
	}{
		{"untouched tags keep their bytes", `<DIV Class=x>hi &amp; bye</DIV><p>`, CreativeOptions{Signer: s, Rewrite: true}, `<DIV Class=x>hi &amp; bye</DIV><p>`},
		{"base removed", `<head><base href="https://evil.example/"></head><img src="/a.png">`, CreativeOptions{Signer: s, Rewrite: true}, `<head></head><img src="/a.png">`},
		{"bundle at the start of body", `<html><body class="c"><p>x</p></body></html>`, CreativeOptions{Signer: s, Rewrite: true, BundleTag: "<script src=/b.js></script>"},
			`<html><body class="c"><script src=/b.js></script><p>x</p></body></html>`},
		{"bundle once with two bodies", `<body>one</body><body>two</body>`, CreativeOptions{Signer: s, Rewrite: true, BundleTag: "<b/>"},
			`<body><b/>one</body><body>two</body>`},
		{"bundle before a fragment", `<p>x</p>`, CreativeOptions{Signer: s, Rewrite: true, BundleTag: "<script src=/b.js></script>"}, `<script src=/b.js></script><p>x</p>`},
		{"no bundle into an empty creative", ``, CreativeOptions{Signer: s, Rewrite: true, BundleTag: "<script></script>"}, ``},
		{"vector url as upstream mints it", `<img src="https://cdn.example/a.png">`, CreativeOptions{Signer: s, Rewrite: true},
			`<img src="/first-party/proxy?tsurl=https%3A%2F%2Fcdn.example%2Fa.png&amp;tstoken=khZxp4u3sJa1nEmYtIZeJ6uaS1IRKef9MMtmMPgDWaw">`},
		{"absolute under a base origin", `<img src="https://cdn.example/a.png?x=1">`, CreativeOptions{Signer: s, Rewrite: true, BaseOrigin: "https://pub.example"},
			`<img src="https://pub.example/first-party/proxy?tsurl=https%3A%2F%2Fcdn.example%2Fa.png&amp;x=1&amp;tstoken=ErEYFs8NzlbhKXVjbiUguumWH9Ln6tf0pKPQGYaqP2w">`},
		{"excluded domain left alone", `<img src="https://static.pub.example/a.png">`, CreativeOptions{Signer: s, Rewrite: true, ExcludeDomains: []string{"*.pub.example"}}, `<img src="https://static.pub.example/a.png">`},
		{"neither mode is pass-through", `<base href=x><script>1</script>`, CreativeOptions{}, `<base href=x><script>1</script>`},
		{"sanitize removes elements and handlers", `<div onclick="x()" style="width:expression(1)"><script>alert(1)</script><object><param></object><form><input></form><a href="javascript:x">a</a><img src="data:image/svg+xml,<svg/>" srcset="data:image/png;base64,A 1x"><meta http-equiv=refresh><noscript><p>n</p></noscript></div>`,
			CreativeOptions{Sanitize: true}, `<div><a>a</a><img srcset="data:image/png;base64,A 1x"></div>`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ProcessCreative(c.adm, c.o); got != c.want {
				t.Errorf("\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestProcessCreativeCapsAtOneMiB(t *testing.T) {
	s := testSigner(t)
	o := CreativeOptions{Signer: s, Rewrite: true}
	pad := strings.Repeat("x", MaxCreativeBytes-len("<p></p>"))
	if got := ProcessCreative("<p>"+pad+"</p>", o); len(got) != MaxCreativeBytes {
		t.Fatalf("a creative of exactly 1 MiB: got %d bytes", len(got))
	}
	if got := ProcessCreative("<p>"+pad+"x</p>", CreativeOptions{}); got != "" {
		t.Fatalf("over 1 MiB passed through untouched modes: %d bytes", len(got))
	}
	// Under the cap in, over it out: rewriting grows every URL.
	img := `<img src="https://cdn.example/a.png">`
	many := strings.Repeat(img, MaxCreativeBytes/len(img)-1)
	if got := ProcessCreative(many, o); got != "" {
		t.Fatalf("rewritten past the cap: %d bytes", len(got))
	}
}

func TestExpandAuctionPrice(t *testing.T) {
	cases := []struct {
		in   string
		cpm  float64
		want string
	}{
		{"p=${AUCTION_PRICE}&q=${AUCTION_PRICE:B64}", 1.25, "p=1.25&q=${AUCTION_PRICE:B64}"},
		{"${AUCTION_PRICE}", 2, "2"},
		{"${AUCTION_PRICE}", 1e21, "1000000000000000000000"},
		{"${AUCTION_PRICE}", 0.1, "0.1"},
		{"no macro", 3, "no macro"},
	}
	for _, c := range cases {
		if got := ExpandAuctionPrice(c.in, c.cpm); got != c.want {
			t.Errorf("ExpandAuctionPrice(%q, %v) = %q, want %q", c.in, c.cpm, got, c.want)
		}
	}
}

func TestSplitSrcsetKeepsDataURLComma(t *testing.T) {
	got := splitSrcset("data:image/png;base64,AAAA 1x,https://a.example/b.png 2x")
	want := []string{"data:image/png;base64,AAAA 1x", "https://a.example/b.png 2x"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q want %q", got, want)
	}
}
