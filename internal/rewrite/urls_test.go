package rewrite

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSrcsetOriginHostInsideCandidate catches a bare origin host in the
// middle of a srcset candidate being left alone: Jetpack's image CDN
// (i0.wp.com) carries the origin host in its path, on real WordPress pages.
func TestSrcsetOriginHostInsideCandidate(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"jetpack", `<img srcset="https://i0.wp.com/origin.pub.example/wp-content/a.png?w=1650 1650w, https://i0.wp.com/origin.pub.example/wp-content/a.png?resize=300%2C200 300w">`,
			`<img srcset="https://i0.wp.com/www.pub.example/wp-content/a.png?w=1650 1650w, https://i0.wp.com/www.pub.example/wp-content/a.png?resize=300%2C200 300w">`},
		{"jetpack with ssl query", `<img srcset="https://i1.wp.com/origin.pub.example/a.jpg?ssl=1 2x">`,
			`<img srcset="https://i1.wp.com/www.pub.example/a.jpg?ssl=1 2x">`},
		{"in a query value", `<img srcset="/img?u=origin.pub.example/a.png 1x">`, `<img srcset="/img?u=www.pub.example/a.png 1x">`},
		{"mixed with candidate start", `<img srcset="origin.pub.example/a.png 1x, https://cdn.example/origin.pub.example/b.png 2x">`,
			`<img srcset="www.pub.example/a.png 1x, https://cdn.example/www.pub.example/b.png 2x">`},
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

// TestOriginHostNotMatchedInsideLongerHost checks the host boundary of the
// srcset rule: a longer host that merely contains the origin name is not
// the origin, and href keeps its rule of a bare host only at the start.
func TestOriginHostNotMatchedInsideLongerHost(t *testing.T) {
	for _, in := range []string{
		`<img srcset="https://i0.wp.com/img.origin.pub.example/a.png 1x">`,
		`<img srcset="https://i0.wp.com/xorigin.pub.example/a.png 1x">`,
		`<img srcset="https://i0.wp.com/origin.pub.example.evil.com/a.png 1x">`,
		`<img srcset="https://i0.wp.com/origin.pub.example:8443/a.png 1x">`,
		`<a href="https://cdn.example/origin.pub.example/x">`,
		`<link imagesrcset="https://cdn.example/origin.pub.example/x 1x">`,
	} {
		got, st := run(t, in, testOpts())
		if got != in || st.URLsRewritten != 0 {
			t.Errorf("changed:\n in: %s\ngot: %s", in, got)
		}
	}
}

// TestUpperCaseOriginHostRewritten catches links that spell the origin host
// (or the scheme) in upper or mixed case being left pointing at the origin;
// host names compare case-insensitively (RFC 3986 §3.2.2).
func TestUpperCaseOriginHostRewritten(t *testing.T) {
	local := &Options{OriginHost: "localhost:18000", RequestHost: testHost, RequestScheme: "https"}
	tests := []struct {
		name, in, want string
		o              *Options
	}{
		{"upper-case host and port", `<a href="http://LOCALHOST:18000/a">`, `<a href="https://www.pub.example/a">`, local},
		{"upper-case scheme", `<a href="HTTP://localhost:18000/a">`, `<a href="https://www.pub.example/a">`, local},
		{"mixed case", `<img src="//Origin.Pub.Example/i.png">`, `<img src="//www.pub.example/i.png">`, testOpts()},
		{"upper-case bare srcset", `<img srcset="ORIGIN.PUB.EXAMPLE/a.png 1x">`, `<img srcset="www.pub.example/a.png 1x">`, testOpts()},
		{"path case kept", `<a href="https://ORIGIN.pub.example/Path/A?Q=B">`, `<a href="https://www.pub.example/Path/A?Q=B">`, testOpts()},
		{"entity-encoded", `<a href="HTTPS:&#x2F;&#x2F;ORIGIN.pub.example/a?x=1&amp;y=2">`, `<a href="https://www.pub.example/a?x=1&amp;y=2">`, testOpts()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st := run(t, tt.in, tt.o)
			if got != tt.want || st.URLsRewritten != 1 {
				t.Errorf("\n in: %s\ngot: %s (%d rewritten)\nwant %s", tt.in, got, st.URLsRewritten, tt.want)
			}
		})
	}
}

// TestDefaultPortSpellingsMatch catches a link that writes the origin's
// default port out (https://origin:443/) not being rewritten when origin_url
// has no port, and the other way round (config.Validate drops a default port
// from OriginHost, so both reach the rewriter as the bare host name).
func TestDefaultPortSpellingsMatch(t *testing.T) {
	tests := []struct{ in, want string }{
		{`<a href="https://origin.pub.example:443/a">`, `<a href="https://www.pub.example/a">`},
		{`<a href="http://origin.pub.example:80/a">`, `<a href="https://www.pub.example/a">`},
		{`<a href="//origin.pub.example:443/a">`, `<a href="//www.pub.example/a">`},
		{`<img srcset="origin.pub.example:443/a.png 1x">`, `<img srcset="www.pub.example/a.png 1x">`},
		{`<a href="https://origin.pub.example/a">`, `<a href="https://www.pub.example/a">`},
		// A default port of the other scheme is a different origin.
		{`<a href="https://origin.pub.example:80/a">`, `<a href="https://origin.pub.example:80/a">`},
		{`<a href="http://origin.pub.example:443/a">`, `<a href="http://origin.pub.example:443/a">`},
		{`<a href="https://origin.pub.example:4430/a">`, `<a href="https://origin.pub.example:4430/a">`},
	}
	for _, tt := range tests {
		got, _ := run(t, tt.in, testOpts())
		if got != tt.want {
			t.Errorf("\n in: %s\ngot: %s\nwant %s", tt.in, got, tt.want)
		}
	}
	// An origin on a non-default port matches only that port.
	o := &Options{OriginHost: "origin.pub.example:8443", RequestHost: testHost, RequestScheme: "https"}
	for _, in := range []string{`<a href="https://origin.pub.example/a">`, `<a href="https://origin.pub.example:443/a">`} {
		if got, _ := run(t, in, o); got != in {
			t.Errorf("origin :8443 rewrote %s to %s", in, got)
		}
	}
	if got, _ := run(t, `<a href="https://origin.pub.example:8443/a">`, o); got != `<a href="https://www.pub.example/a">` {
		t.Errorf("origin :8443: got %s", got)
	}
}

// TestContainsFold compares the allocation-free quick test with lower-casing
// and bytes.Contains on random inputs over a small alphabet, so that
// overlapping and interleaved upper- and lower-case candidates occur.
func TestContainsFold(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aAbB.:"
	for range 20000 {
		s := make([]byte, rng.IntN(12))
		for i := range s {
			s[i] = alphabet[rng.IntN(len(alphabet))]
		}
		sub := make([]byte, 1+rng.IntN(3))
		for i := range sub {
			sub[i] = bytes.ToLower([]byte{alphabet[rng.IntN(len(alphabet))]})[0]
		}
		want := bytes.Contains(bytes.ToLower(s), sub)
		if got := containsFold(s, sub); got != want {
			t.Fatalf("containsFold(%q, %q) = %v, want %v", s, sub, got, want)
		}
	}
}

// TestURLRulesMatchOracle catches the allocation-free URL rules (urls.go)
// giving another value than the plain rules of urls_oracle_test.go, which
// decode with the Tokenizer and escape with their own table, on values built
// from the pieces they decide on: schemes, ports, host boundaries, letter
// case, character references that do and do not decode to part of the host
// (&#46; &period; &fjlig; legacy names without ';' such as the "&times" of
// "&timestamp"), and characters that need escaping once decoded. A value is
// tried in each quoting context it can appear in. Besides matching the
// oracle byte for byte, every rewritten value must decode, in its quotes,
// to the rewritten decoded value: an escaping bug fails both.
func TestURLRulesMatchOracle(t *testing.T) {
	pieces := []string{
		"origin.pub.example", "ORIGIN.Pub.example", "origin", "pub.example", ".pub.example", "https://", "HTTP://", "//", "/",
		":443", ":80", ":8443", "?", "#", ",", " ", "\\", "x", "img.", "a", "1x", "=", "'", "\"", "<", ">", "`", "\t",
		"@", "u:p@", "http:", "https:\\", "/\\", ":0443", ":00080", "%2e", "%2E", "%6F", "%", "127.1", "0x7f.0.0.1", "127.0.0.1", "0177.1", ":8080", ":08080", ".",
		"&amp;", "&AMP;", "&", "&#46;", "&#x2F;", "&#47;", "&period;", "&sol;", "&colon;", "&fjlig;", "&lt;", "&gt;",
		"&quot;", "&times", "tamp=1", "&copy", "&amp", "&b=2", "&;", "&#", "&#x", "&ampfoo;", "&nbsp;",
		"&#39;", "&apos;", "&#x22;", "&Tab;", "&NewLine;", "&#32;", "&grave;", "&equals;", "&#10;", "&#13;",
	}
	hosts := []string{"origin.pub.example", "origin.pub.example:8443", "[::1]:8080", "fj.example", "ñ.example", "127.0.0.1:8080", "127.0.0.1"}
	fixed := []string{"//origin&#46;pub.example/", "https://origin&period;pub.example/?a=1&times=2",
		"&copyorigin.pub.example/a 1x", "//origin.pub.example/?a=1&amp;b=2&lt;&quot;&gt;", "&amp;origin.pub.example/a 1x",
		"//origin.pub.example/?a&amp;b&timestamp=1", "//&#x6f;rigin.pub.example", "//&ntilde.example/a",
		"//origin&#46;pub.example/&#39;&quot;&lt;&gt;&#96;&#61;&#32;&#9;"}
	escaped := map[byte]int{}
	rng := rand.New(rand.NewPCG(5, 6))
	for k := range 20000 {
		var b strings.Builder
		if k < len(fixed)*len(hosts) {
			b.WriteString(fixed[k/len(hosts)])
		} else {
			for range 1 + rng.IntN(8) {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
		}
		raw := b.String()
		host := hosts[k%len(hosts)]
		var h hostRewriter
		reqHost := []string{"www.pub.example:8080", "amp.example", "[::2]"}[k%3] // host names, as Options.RequestHost requires
		h.reset(host, reqHost, "https")
		oracle := newRefRules(host, reqHost, "https")
		for _, name := range []string{"href", "srcset", "imagesrcset"} {
			kind, refK := classifyAttr([]byte(name)), refKind(name)
			for _, quote := range []byte{'"', '\'', 0} {
				if !rawValueFits(raw, quote) {
					continue
				}
				got, gotOK := h.rewriteRawValue([]byte(raw), quote, kind)
				want, wantOK := oracle.rewriteRaw(raw, quote, refK)
				if gotOK != wantOK || (gotOK && string(got) != want) {
					t.Fatalf("host %s %s quote %q value %q: got %q %v, oracle %q %v", host, name, quote, raw, got, gotOK, want, wantOK)
				}
				if !gotOK {
					continue
				}
				decoded, _ := oracle.rewrite(refDecode(raw, quote), refK)
				if d := refDecode(string(got), quote); d != decoded {
					t.Fatalf("host %s %s quote %q value %q: rewritten to %q, which decodes to %q, want %q", host, name, quote, raw, got, d, decoded)
				}
				if want == refEscape(decoded, quote) && strings.ContainsAny(decoded, "\"'<>`= \t\n") {
					escaped[quote]++
				}
			}
			got, gotOK := h.rewriteString(raw, kind)
			want, wantOK := oracle.rewrite(raw, refK)
			if got != want || gotOK != wantOK {
				t.Fatalf("host %s %s string %q: got %q, oracle %q", host, name, raw, got, want)
			}
		}
	}
	for _, q := range []byte{'"', '\'', 0} {
		if escaped[q] < 10 {
			t.Errorf("only %d values in quotes %q were escaped: the test no longer exercises the escaping", escaped[q], q)
		}
	}
}

// rawValueFits reports whether raw can be an attribute value's raw text in
// the quoting context: a quoted value holds no raw quote of its kind, and an
// unquoted one no white space or '>', and starts with no quote.
func rawValueFits(raw string, quote byte) bool {
	if quote != 0 {
		return strings.IndexByte(raw, quote) < 0
	}
	return raw != "" && !strings.ContainsAny(raw, " \t\n\r\f>") && raw[0] != '"' && raw[0] != '\''
}
