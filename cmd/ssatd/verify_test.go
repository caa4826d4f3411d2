package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/ssatdtest"
)

// verifyTarget is ssatd (offload mode, so that the edge compresses) in
// front of a small origin whose headers are those a cache would keep.
func verifyTarget(t *testing.T) (ssatdURL, originHost string) {
	t.Helper()
	var origin *httptest.Server
	origin = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := strings.TrimPrefix(origin.URL, "http://")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=600")
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Tue, 01 Dec 2026 10:00:00 GMT")
		_, _ = io.WriteString(w, `<!doctype html><html><head><title>t</title></head><body>`+
			`<a href="http://`+h+`/next">next</a><img src="//`+h+`/i.png"><div id="ad-atf"></div></body></html>`)
	}))
	t.Cleanup(origin.Close)
	bidder := ssatdtest.NewBidder(t, ssatdtest.Answer{Offers: []ssatdtest.Offer{{Slot: "atf", Seat: "alpha", Price: "1.50"}}})
	srv := ssatdtest.Start(t, `
[publisher]
domain = "127.0.0.1"
origin_url = "`+origin.URL+`"
ssat_compression_offload_enabled = true
[auction]
enabled = true
provider = "openrtb"
timeout_ms = 2000
[[auction.openrtb]]
name = "pbs"
url = "`+bidder.URL+`"
[[creative_opportunities.slot]]
id = "atf"
page_patterns = ["/**"]
formats = [[300, 250]]
`)
	return srv.URL, strings.TrimPrefix(origin.URL, "http://")
}

// verifyRows runs verify and returns its exit code and RESULT by check.
func verifyRows(t *testing.T, base, origin string) (int, map[string]string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"verify", "-url", base, "-origin", origin}, &out, &errOut, nil)
	rows := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) >= 3 && (f[2] == "pass" || f[2] == "FAIL") {
			rows[f[0]] = f[2]
		}
	}
	return code, rows, out.String() + errOut.String()
}

var verifyChecks = []string{"injected", "private", "no-validators", "vary", "prefetch", "bot", "non-navigation", "codings", "links", "bundle"}

func TestVerifyPassesAgainstSsatd(t *testing.T) {
	base, origin := verifyTarget(t)
	code, rows, out := verifyRows(t, base, origin)
	if code != 0 || len(rows) != len(verifyChecks) {
		t.Fatalf("exit %d, %d rows:\n%s", code, len(rows), out)
	}
	for _, c := range verifyChecks {
		if rows[c] != "pass" {
			t.Errorf("%s: %q\n%s", c, rows[c], out)
		}
	}
}

// breaker is a deployment broken in one way: a proxy in front of ssatd
// that changes the request before it or the response after it.
type breaker struct {
	req  func(*http.Request)
	resp func(*http.Response, []byte) []byte
}

// TestVerifyEachCheckCanFail puts ssatd behind a proxy that breaks one
// behaviour at a time: exactly the check for it fails.
func TestVerifyEachCheckCanFail(t *testing.T) {
	base, origin := verifyTarget(t)
	isBundle := func(r *http.Response) bool { return strings.HasPrefix(r.Request.URL.Path, "/static/") }
	breakers := map[string]breaker{
		"injected": {resp: func(_ *http.Response, b []byte) []byte {
			return regexp.MustCompile(`<script>\(window\.tsjs=[^<]*</script>`).ReplaceAll(b, nil)
		}},
		"private": {resp: func(r *http.Response, b []byte) []byte {
			setUnlessBundle(r, "Cache-Control", "public, max-age=60", isBundle)
			return b
		}},
		"no-validators": {resp: func(r *http.Response, b []byte) []byte { setUnlessBundle(r, "ETag", `W/"x"`, isBundle); return b }},
		"vary":          {resp: func(r *http.Response, b []byte) []byte { r.Header.Del("Vary"); return b }},
		"prefetch":      {req: func(r *http.Request) { r.Header.Del("Sec-Purpose") }},
		"bot": {req: func(r *http.Request) {
			if strings.Contains(r.UserAgent(), "Googlebot") {
				r.Header.Set("User-Agent", verifyBrowserUA)
			}
		}},
		"non-navigation": {req: func(r *http.Request) { r.Header.Set("Sec-Fetch-Dest", "document") }},
		"codings": {resp: func(r *http.Response, b []byte) []byte {
			if r.Request.Header.Get("X-Asked-Encoding") == "br" {
				return append(b, "<!-- only in br -->"...)
			}
			return b
		}},
		"links": {resp: func(_ *http.Response, b []byte) []byte {
			return bytes.ReplaceAll(b, []byte(`href="http://`), []byte(`href="http://`+origin+`/x?`))
		}},
		"bundle": {resp: func(r *http.Response, b []byte) []byte {
			if isBundle(r) {
				r.Header.Set("Cache-Control", "no-store")
			}
			return b
		}},
	}
	for _, check := range verifyChecks {
		t.Run(check, func(t *testing.T) {
			front := frontOf(t, base, breakers[check])
			code, rows, out := verifyRows(t, front, origin)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			for _, c := range verifyChecks {
				want := "pass"
				if c == check {
					want = "FAIL"
				}
				if rows[c] != want {
					t.Errorf("%s: %q, want %s\n%s", c, rows[c], want, out)
				}
			}
		})
	}
}

// A plain reverse proxy to the origin is no SSAT deployment.
func TestVerifyFailsAgainstAPlainReverseProxy(t *testing.T) {
	_, origin := verifyTarget(t)
	u, _ := url.Parse("http://" + origin)
	plain := httptest.NewServer(httputil.NewSingleHostReverseProxy(u))
	t.Cleanup(plain.Close)
	code, rows, out := verifyRows(t, plain.URL, origin)
	if code != 1 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, c := range []string{"injected", "private", "no-validators", "links", "bundle"} {
		if rows[c] != "FAIL" {
			t.Errorf("%s: %q, want FAIL\n%s", c, rows[c], out)
		}
	}
}

func setUnlessBundle(r *http.Response, k, v string, isBundle func(*http.Response) bool) {
	if !isBundle(r) {
		r.Header.Set(k, v)
	}
}

// frontOf is a proxy to ssatd at base that asks it for identity, then
// names its own host where ssatd named its, so that a correct ssatd looks
// correct through it, and applies b.
func frontOf(t *testing.T, base string, b breaker) string {
	t.Helper()
	target, _ := url.Parse(base)
	var front *httptest.Server
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Header.Set("X-Asked-Encoding", pr.In.Header.Get("Accept-Encoding"))
			pr.Out.Header.Set("Accept-Encoding", "identity")
			if b.req != nil {
				b.req(pr.Out)
			}
		},
		ModifyResponse: func(r *http.Response) error {
			body, err := io.ReadAll(r.Body)
			r.Body.Close()
			if err != nil {
				return err
			}
			body = bytes.ReplaceAll(body, []byte(target.Host), []byte(strings.TrimPrefix(front.URL, "http://")))
			if b.resp != nil {
				body = b.resp(r, body)
			}
			r.Header.Del("Content-Encoding")
			r.Header.Set("Content-Length", strconv.Itoa(len(body)))
			r.ContentLength = int64(len(body))
			r.Body = io.NopCloser(bytes.NewReader(body))
			return nil
		},
	}
	front = httptest.NewServer(rp)
	t.Cleanup(front.Close)
	return front.URL
}

// verify against the origin itself (-url equal to -origin) printed
// "6 absolute links name 127.0.0.1:PORT" and passed links: a link naming
// the host of -url was counted as the deployment's before it was looked
// at as the origin's, so the printed rule (none names -origin) was not
// the applied one.
func TestVerifyLinksFailsAgainstTheOriginItself(t *testing.T) {
	_, origin := verifyTarget(t)
	for _, spelling := range []string{origin, "http://" + origin, strings.ToUpper("http://" + origin + "/")} {
		code, rows, out := verifyRows(t, "http://"+origin, spelling)
		if code != 1 || rows["links"] != "FAIL" || !strings.Contains(out, "a link names the origin") {
			t.Errorf("-origin %s: exit %d, links %q, want 1 and FAIL naming the origin\n%s", spelling, code, rows["links"], out)
		}
	}
}

// The links rule, link by link: a link names the origin in any spelling of
// its authority (case, the default port written out or left out), and one
// such link fails the page whatever else it names.
func TestVerifyLinksRule(t *testing.T) {
	base, _ := url.Parse("http://pub.example:8080")
	page := func(links ...string) []byte {
		var b strings.Builder
		b.WriteString("<html><head></head><body>")
		for _, l := range links {
			b.WriteString(`<a href="` + l + `">x</a>`)
		}
		return []byte(b.String() + "</body></html>")
	}
	for _, tt := range []struct {
		name, origin string
		links        []string
		ok           bool
	}{
		{"own links, origin not named", "origin.example", []string{"http://pub.example:8080/a", "//PUB.example:8080/b"}, true},
		{"origin on the default port, written out", "origin.example", []string{"http://pub.example:8080/a", "http://origin.example:80/x"}, false},
		{"origin in upper case over https", "origin.example", []string{"http://pub.example:8080/a", "https://ORIGIN.EXAMPLE/x"}, false},
		{"origin with its port", "origin.example:8000", []string{"http://pub.example:8080/a", "http://origin.example:8000/x"}, false},
		{"another port of the origin's host is another server", "origin.example:8000", []string{"http://pub.example:8080/a", "http://origin.example:9000/x"}, true},
		{"origin given as a URL", "https://origin.example", []string{"http://pub.example:8080/a", "https://origin.example:443/x"}, false},
		{"the origin is the host under test", "pub.example:8080", []string{"http://pub.example:8080/a"}, false},
		{"no own link", "", []string{"http://elsewhere.example/a"}, false},
		{"no -origin", "", []string{"http://pub.example:8080/a"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := &verifier{base: base, origin: tt.origin, origins: originAuthorities(tt.origin)}
			resp := &http.Response{StatusCode: http.StatusOK}
			got := v.links("/", verifyFetch{resp: resp, body: page(tt.links...)})
			if got.ok != tt.ok {
				t.Errorf("links %q with -origin %q: ok %v (%s), want %v", tt.links, tt.origin, got.ok, got.evidence, tt.ok)
			}
		})
	}
}

// TestVerifyLinksSeesOriginWithEmptyPort: a link to the origin written with
// an empty port ("http://origin.example:/x", the scheme's default port by
// RFC 3986 §6.2.3 and the WHATWG port state) names the origin. authority
// kept "origin.example:" as it was, which matched no spelling of -origin,
// so such a link passed the check.
func TestVerifyLinksSeesOriginWithEmptyPort(t *testing.T) {
	base, _ := url.Parse("http://pub.example:8080")
	body := []byte(`<html><body><a href="http://pub.example:8080/a">x</a><a href="http://origin.example:/x">y</a></body></html>`)
	v := &verifier{base: base, origin: "origin.example", origins: originAuthorities("origin.example")}
	got := v.links("/", verifyFetch{resp: &http.Response{StatusCode: http.StatusOK}, body: body})
	if got.ok {
		t.Errorf("a link to http://origin.example:/x passed: %s", got.evidence)
	}
	for in, want := range map[string]string{"Origin.example:": "origin.example:80", "[::1]:": "[::1]:80", "origin.example:8080": "origin.example:8080"} {
		if got := authority(in, "http"); got != want {
			t.Errorf("authority(%q, http) = %q, want %q", in, got, want)
		}
	}
}
