package rewrite

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/testutil"
)

// spellingCase is a URL attribute value that names the origin in a
// spelling the WHATWG URL parser accepts (docs/behaviour.md, "URL
// rewriting"), and the value ssatd writes for it.
type spellingCase struct {
	origin, in, want string
}

const spellingRequestHost = "www.pub.example"

var spellingCases = []spellingCase{
	// A backslash is a slash in a special URL; any two of them start an
	// authority, with or without the scheme.
	{"origin.pub.example", `http:\\origin.pub.example/a`, `https:\\www.pub.example/a`},
	{"origin.pub.example", `\\origin.pub.example/a`, `\\www.pub.example/a`},
	{"origin.pub.example", `/\origin.pub.example/a`, `/\www.pub.example/a`},
	{"origin.pub.example", `\/origin.pub.example/a`, `\/www.pub.example/a`},
	{"origin.pub.example", `http:/\origin.pub.example/a`, `https:/\www.pub.example/a`},
	{"origin.pub.example", `https:\/ORIGIN.pub.example/a`, `https:\/www.pub.example/a`},
	{"origin.pub.example", `https:///origin.pub.example/a`, `https:///www.pub.example/a`},
	// A userinfo ends at the authority's last '@'; it is dropped.
	{"origin.pub.example", `http://user@origin.pub.example/a`, `https://www.pub.example/a`},
	{"origin.pub.example", `https://u:p@evil.example@origin.pub.example:443/a`, `https://www.pub.example/a`},
	{"origin.pub.example", `//user@origin.pub.example/a`, `//www.pub.example/a`},
	// A port is a number: leading zeros do not make another port.
	{"origin.pub.example", `https://origin.pub.example:0443/a`, `https://www.pub.example/a`},
	{"origin.pub.example", `//origin.pub.example:00443/a`, `//www.pub.example/a`},
	{"origin.pub.example:8080", `//origin.pub.example:08080/a`, `//www.pub.example/a`},
	// The host is percent-decoded.
	{"127.0.0.1:8080", `https://%31%32%37.0.0.1:8080/a`, `https://www.pub.example/a`},
	// An IPv4 origin in the other forms of its address.
	{"127.0.0.1:8080", `http://127%2e0%2e0%2e1:8080/a`, `https://www.pub.example/a`},
	{"127.0.0.1:8080", `//127.1:8080/a`, `//www.pub.example/a`},
	{"127.0.0.1:8080", `//0x7f.0.0.1:8080/a`, `//www.pub.example/a`},
	{"127.0.0.1:8080", `//0177.0.0.1:8080/a`, `//www.pub.example/a`},
	{"127.0.0.1:8080", `//2130706433:8080/a`, `//www.pub.example/a`},
	{"127.0.0.1:8080", `//127.0.1:8080/a`, `//www.pub.example/a`},
	{"127.0.0.1:8080", `https://x@0X7F.1:08080/a`, `https://www.pub.example/a`},
	{"127.0.0.1:8080", `\\127.0.0.1.:8080/a`, `\\www.pub.example/a`},
	// Not the origin: left as they are.
	{"origin.pub.example", `//origin.pub.example@evil.example/a`, `//origin.pub.example@evil.example/a`},
	{"origin.pub.example", `//origin.pub.example.evil.example/a`, `//origin.pub.example.evil.example/a`},
	{"origin.pub.example", `https://origin.pub.example:0080/a`, `https://origin.pub.example:0080/a`},
	{"origin.pub.example", `\\origin.pub.example:8443/a`, `\\origin.pub.example:8443/a`},
	{"127.0.0.1:8080", `//127.1:8081/a`, `//127.1:8081/a`},
	{"127.0.0.1:8080", `//127.0.0.2:8080/a`, `//127.0.0.2:8080/a`},
	{"127.0.0.1:8080", `//0x7f.1.evil.example:8080/a`, `//0x7f.1.evil.example:8080/a`},
}

// leftSpellings name the origin to the URL parser but are left as they are
// on purpose (docs/behaviour.md, "URL rewriting", "Spellings of the
// origin"): TestOriginSpellingsResolveAsWHATWGURL holds the list to that.
var leftSpellings = []spellingCase{
	{"origin.pub.example", `http:/origin.pub.example/a`, `http:/origin.pub.example/a`}, // one slash: the origin only on a page of the other scheme
	{"origin.pub.example", `http:origin.pub.example/a`, `http:origin.pub.example/a`},   // no slash: the same
	{"origin.pub.example", `//origin%2Epub%2eexample/a`, `//origin%2Epub%2eexample/a`}, // a domain percent-encoded: see mayRespell
	{"origin.pub.example", "//ｏrigin.pub.example/a", "//ｏrigin.pub.example/a"},         // IDNA maps the full-width o
	{"origin.pub.example", `//origin.pub.example:/a`, `//origin.pub.example:/a`},       // an empty port
	{"origin.pub.example", "//origin.pub.ex	ample/a", "//origin.pub.ex	ample/a"},       // the parser removes tabs and newlines
	{"[::1]:8080", `//[0:0::1]:8080/a`, `//[0:0::1]:8080/a`},                           // an IPv6 origin in another spelling
}

// TestOriginSpellingsRewritten: links that spell the origin as Chromium's
// URL parser reads it (a backslash for a slash, a userinfo, a port with
// leading zeros, a percent-encoded host, another form of an IPv4 address)
// went to the origin; they get the request host, in href, src, action and
// srcset, inside a page and as a response header's value would.
func TestOriginSpellingsRewritten(t *testing.T) {
	for k, tc := range append(append([]spellingCase{}, spellingCases...), leftSpellings...) {
		t.Run(tc.origin+" "+tc.in, func(t *testing.T) {
			tags := []string{`<a href="%s">`, `<img src='%s'>`, `<form action=%s>`, `<img srcset="a.png 1x, %s 2x">`}
			if k >= len(spellingCases) {
				tags = tags[:3] // srcset's bare host at a boundary applies to some of them
			}
			for _, tag := range tags {
				for _, inline := range []bool{false, true} {
					page := strings.Replace(tag, "%s", tc.in, 1)
					want := strings.Replace(tag, "%s", tc.want, 1)
					var out bytes.Buffer
					o := &Options{OriginHost: tc.origin, RequestHost: spellingRequestHost, RequestScheme: "https", Inline: inline}
					if _, err := Rewrite(&out, strings.NewReader(page), o); err != nil {
						t.Fatal(err)
					}
					if out.String() != want {
						t.Errorf("inline %v: %s\n got %s\nwant %s", inline, page, out.String(), want)
					}
				}
			}
		})
	}
}

// TestOriginSpellingsResolveAsWHATWGURL: Node's URL, a WHATWG URL parser
// as Chromium's is, reads every spelling of spellingCases that the rules
// rewrite as the origin (host and port), on an https page of the request
// host, and its rewritten value as the request host; the values left as
// they are name another host.
func TestOriginSpellingsResolveAsWHATWGURL(t *testing.T) {
	node := testutil.RequireTool(t, "node", "nodejs")
	var urls []string
	for _, tc := range spellingCases {
		urls = append(urls, tc.in, tc.want)
	}
	for _, tc := range leftSpellings {
		urls = append(urls, tc.in)
	}
	arg, err := json.Marshal(urls)
	if err != nil {
		t.Fatal(err)
	}
	const script = `const base = "https://` + spellingRequestHost + `/page";
const out = JSON.parse(process.argv[1]).map(u => { try { return new URL(u, base).host } catch (e) { return "invalid" } });
process.stdout.write(JSON.stringify(out));`
	res, err := exec.Command(node, "-e", script, string(arg)).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var hosts []string
	if err := json.Unmarshal(res, &hosts); err != nil {
		t.Fatalf("node's output %q: %v", res, err)
	}
	for i, tc := range spellingCases {
		in, out := hosts[2*i], hosts[2*i+1]
		originHost := strings.ToLower(tc.origin)
		if tc.in == tc.want {
			if in == originHost {
				t.Errorf("%s (origin %s) is left as it is, but names the origin to the URL parser", tc.in, tc.origin)
			}
			continue
		}
		if in != originHost {
			t.Errorf("%s names %s to the URL parser, not the origin %s", tc.in, in, tc.origin)
		}
		if out != spellingRequestHost {
			t.Errorf("%s is rewritten to %s, which names %s, not %s", tc.in, tc.want, out, spellingRequestHost)
		}
	}
	for i, tc := range leftSpellings {
		if got := hosts[2*len(spellingCases)+i]; got != strings.ToLower(tc.origin) {
			t.Errorf("%q, documented as an origin link left as it is, names %s to the URL parser, not the origin %s", tc.in, got, tc.origin)
		}
	}
}
