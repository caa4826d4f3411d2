package proxy

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
)

var allCodings = []compress.Coding{compress.Identity, compress.Gzip, compress.Deflate, compress.Brotli}

// Mirror mode (docs/behaviour.md, "Mirror mode"): the output coding is the origin's, and every coding
// decodes to the same rewritten page as identity.
func TestMirrorEveryCodingSameRewrittenPage(t *testing.T) {
	var want []byte
	for _, c := range allCodings {
		t.Run(string(c), func(t *testing.T) {
			var e *env
			e = newEnv(t, serveCoded(func() []byte { return []byte(e.page()) }, c))
			resp, body := e.mustGet(t, "/", navigate, header("Accept-Encoding", "gzip, deflate, br"))
			got := resp.Header.Get("Content-Encoding")
			if c == compress.Identity && got != "" || c != compress.Identity && got != string(c) {
				t.Fatalf("Content-Encoding = %q, want the origin's %q", got, c)
			}
			plain := decode(t, c, body)
			plain = bytes.ReplaceAll(plain, []byte(e.host), []byte("ORIGIN"))
			if want == nil {
				want = plain
				if !bytes.Contains(plain, []byte(`<head><script>(window.tsjs`)) ||
					!bytes.Contains(plain, []byte(`href="http://`+testDomain+`/s.css"`)) ||
					!bytes.Contains(plain, []byte(`href="//`+testDomain+`/a"`)) ||
					!bytes.Contains(plain, []byte(`srcset="`+testDomain+`/i.png 2x"`)) ||
					!bytes.Contains(plain, []byte(`scheduleInitialAdInit`)) {
					t.Fatalf("identity output not rewritten as expected:\n%s", plain)
				}
				return
			}
			if !bytes.Equal(plain, want) {
				t.Fatalf("decoded %s output differs from identity output:\n%s\nwant\n%s", c, plain, want)
			}
		})
	}
}

// "Origin request" in docs/behaviour.md: the origin sees the subset of {gzip, deflate, br} the client
// accepts, in fixed order, or identity.
func TestOriginAcceptEncoding(t *testing.T) {
	tests := []struct{ client, origin string }{
		{"gzip, deflate, br, zstd", "gzip, deflate, br"},
		{"br, gzip;q=0, zstd", "br"},
		{"zstd", "identity"},
		{"gzip, br, identity;q=0", "gzip, br"},
		{"", "identity"},
		{"*", "gzip, deflate, br"},
		{"junk;;q=x, ,", "identity"},
	}
	for _, tt := range tests {
		t.Run(tt.client, func(t *testing.T) {
			var seen string
			e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen = strings.Join(r.Header.Values("Accept-Encoding"), ",")
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, "<html><head></head></html>")
			}))
			opts := []reqOpt{navigate}
			if tt.client != "" {
				opts = append(opts, header("Accept-Encoding", tt.client))
			}
			e.mustGet(t, "/", opts...)
			if seen != tt.origin {
				t.Fatalf("origin saw Accept-Encoding %q, want %q", seen, tt.origin)
			}
		})
	}
}

// "Origin request" in docs/behaviour.md: eligible requests lose their conditional headers; others keep them.
func TestConditionalHeadersStrippedOnlyWhenEligible(t *testing.T) {
	cond := map[string]string{"If-None-Match": `"x"`, "If-Modified-Since": "Mon, 02 Jan 2006 15:04:05 GMT", "Range": "bytes=0-10", "If-Range": `"x"`}
	for _, eligible := range []bool{true, false} {
		t.Run(fmt.Sprint("eligible=", eligible), func(t *testing.T) {
			seen := http.Header{}
			e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen = r.Header.Clone()
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, "<html><head></head></html>")
			}))
			opts := []reqOpt{header("Accept", "text/html")}
			if !eligible {
				opts = []reqOpt{header("Accept", "*/*")}
			}
			for k, v := range cond {
				opts = append(opts, header(k, v))
			}
			e.mustGet(t, "/", opts...)
			for k := range cond {
				if got := seen.Get(k) != ""; got == eligible {
					t.Errorf("%s forwarded=%v for eligible=%v", k, got, eligible)
				}
			}
		})
	}
}

// "Eligible pages" and "Rewritten responses" in docs/behaviour.md.
func TestHeaderPolicy(t *testing.T) {
	digests := []string{"Content-MD5", "Digest", "Content-Digest", "Repr-Digest"}
	origin := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html")
		h.Set("Cache-Control", "public, max-age=600")
		for _, k := range []string{"Surrogate-Control", "Fastly-Surrogate-Control", "CDN-Cache-Control", "Cloudflare-CDN-Cache-Control"} {
			h.Set(k, "max-age=600")
		}
		h.Set("Expires", "Thu, 01 Dec 2030 16:00:00 GMT")
		h.Set("Age", "10")
		h.Set("ETag", `"v1"`)
		h.Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		h.Set("Accept-Ranges", "bytes")
		for _, k := range digests {
			h.Set(k, "sha-256=:AAAA:")
		}
		h.Add("Set-Cookie", "a=1")
		h.Add("Set-Cookie", "b=2")
		h.Set("X-Custom", "kept")
		page := "<html><head></head><body></body></html>"
		h.Set("Content-Length", fmt.Sprint(len(page)))
		fmt.Fprint(w, page)
	})
	e := newEnv(t, origin, func(c *config.Config) { c.CreativeOpportunities.Slots[0].PagePatterns = []string{"/news/**"} })
	resp, _ := e.mustGet(t, "/news/a", navigate)
	h := resp.Header
	if got := h.Get("Cache-Control"); got != "private, max-age=0" {
		t.Errorf("eligible Cache-Control = %q", got)
	}
	for _, k := range append(append(sharedCacheHeaders, "Content-Length", "Accept-Ranges"), digests...) {
		if h.Get(k) != "" {
			t.Errorf("eligible response kept %s: %q", k, h.Get(k))
		}
	}
	if len(h.Values("Set-Cookie")) != 2 || h.Get("X-Custom") != "kept" {
		t.Errorf("end-to-end headers lost: %v", h)
	}
	if resp.ContentLength != -1 {
		t.Errorf("rewritten response has a length: %d", resp.ContentLength)
	}

	// A page without slots is not personalised for anyone.
	resp, _ = e.mustGet(t, "/", header("Accept", "*/*"))
	h = resp.Header
	// (Surrogate-Control is kept by the guest too, but the builtin edge in
	// front removes it before delivery, as Fastly does: internal/edge.)
	if h.Get("Cache-Control") != "public, max-age=600" || h.Get("CDN-Cache-Control") == "" {
		t.Errorf("non-eligible cache headers changed: %v", h)
	}
	if h.Get("ETag") != `W/"v1"` {
		t.Errorf("non-eligible rewritten ETag = %q, want the weak form", h.Get("ETag"))
	}
	for _, k := range append([]string{"Content-Length", "Accept-Ranges"}, digests...) {
		if h.Get(k) != "" {
			t.Errorf("non-eligible rewritten response kept body-describing header %s: %q", k, h.Get(k))
		}
	}
}

// "Classification" and "Pass-through responses" in docs/behaviour.md: non-HTML and unsupported codings pass untouched.
func TestPassThroughUntouched(t *testing.T) {
	tests := []struct {
		name, ctype, ce string
	}{
		{"binary gzip", "application/octet-stream", "gzip"}, // text types are rewritten (textresp_test.go)
		{"image", "image/png", ""},
		{"no content type", "", ""},
		{"html zstd", "text/html", "zstd"},
		{"html stacked", "text/html", "gzip, br"},
		{"html x-gzip", "text/html", "x-gzip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *env
			body := func() []byte { return []byte("<html><head><a href=\"//" + e.host + "/x\">\x00\xff</head></html>") }
			e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.ctype != "" {
					w.Header().Set("Content-Type", tt.ctype)
				} else {
					w.Header()["Content-Type"] = nil // no sniffing
				}
				if tt.ce != "" {
					w.Header().Set("Content-Encoding", tt.ce)
				}
				w.Header().Set("Content-Length", fmt.Sprint(len(body())))
				w.Write(body())
			}))
			resp, got := e.mustGet(t, "/x", navigate, header("Accept-Encoding", "gzip, br"))
			if !bytes.Equal(got, body()) {
				t.Errorf("body changed:\n%q\nwant\n%q", got, body())
			}
			if resp.Header.Get("Content-Encoding") != tt.ce || resp.ContentLength != int64(len(body())) {
				t.Errorf("headers changed: %v (length %d)", resp.Header, resp.ContentLength)
			}
			wantRoute := "pass-through"
			if tt.ctype == "text/html" {
				wantRoute = "unsupported-encoding"
			}
			if got := e.accessLine(t, 1)["route"]; got != wantRoute {
				t.Errorf("route = %v, want %s", got, wantRoute)
			}
		})
	}
}

func TestHeadRequestHeadersOnly(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf") // HTML would get GET's headers
		w.Header().Set("Content-Length", "1234")
	}))
	req, _ := http.NewRequest(http.MethodHead, e.front.URL+"/", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != 1234 {
		t.Fatalf("HEAD: status %d length %d", resp.StatusCode, resp.ContentLength)
	}
	if got := e.accessLine(t, 1)["route"]; got != "headers-only" {
		t.Fatalf("route = %v", got)
	}
}

// "Origin request" and "Errors" in docs/behaviour.md: a 304 to an eligible (unconditional) request is the
// origin's fault; a 304 to a conditional non-eligible request passes.
func TestOrigin304(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.WriteHeader(http.StatusNotModified)
	}))
	resp, body := e.mustGet(t, "/", navigate, header("If-None-Match", `"v1"`))
	if resp.StatusCode != http.StatusBadGateway || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("eligible 304: status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp.Header.Get("Cache-Control") != privateCacheControl || resp.Header.Get("ETag") != "" {
		t.Errorf("eligible error response lacks privacy headers: %v", resp.Header)
	}
	if !strings.Contains(string(body), "304") {
		t.Errorf("body does not say what happened: %q", body)
	}
	if got := e.accessLine(t, 1)["reason"]; got != "origin_304_to_eligible" {
		t.Errorf("reason = %v", got)
	}
	resp, _ = e.mustGet(t, "/", header("Accept", "*/*"), header("If-None-Match", `"v1"`))
	if resp.StatusCode != http.StatusNotModified || resp.Header.Get("ETag") != `"v1"` {
		t.Fatalf("non-eligible 304: status %d, etag %q", resp.StatusCode, resp.Header.Get("ETag"))
	}
}

// Any status with an HTML body is rewritten (docs/behaviour.md, "Classification" last row).
func TestErrorPagesRewritten(t *testing.T) {
	var e *env
	e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `<html><head></head><a href="https://%s/home">home</a></html>`, e.host)
	}))
	resp, body := e.mustGet(t, "/missing", header("Accept", "*/*"))
	if resp.StatusCode != 404 || !strings.Contains(string(body), `href="http://`+testDomain+`/home"`) {
		t.Fatalf("404 page: %d %s", resp.StatusCode, body)
	}
}

func TestEligibilityGates(t *testing.T) {
	tests := []struct {
		name   string
		method string
		hdr    map[string]string
		path   string
		mut    func(*config.Config)
		want   string
	}{
		{"navigation", "GET", map[string]string{"Sec-Fetch-Dest": "document"}, "/", nil, ""},
		{"accept html", "GET", map[string]string{"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}, "/", nil, ""},
		{"accept star only", "GET", map[string]string{"Accept": "*/*"}, "/", nil, ineligibleNotDoc},
		{"accept html q0", "GET", map[string]string{"Accept": "text/html;q=0"}, "/", nil, ineligibleNotDoc},
		{"dest image wins over accept", "GET", map[string]string{"Sec-Fetch-Dest": "image", "Accept": "text/html"}, "/", nil, ineligibleNotDoc},
		{"post", "POST", map[string]string{"Sec-Fetch-Dest": "document"}, "/", nil, ineligibleMethod},
		{"sec-purpose prefetch", "GET", map[string]string{"Sec-Fetch-Dest": "document", "Sec-Purpose": "prefetch;prerender"}, "/", nil, ineligiblePrefetch},
		{"purpose prefetch", "GET", map[string]string{"Sec-Fetch-Dest": "document", "Purpose": "prefetch"}, "/", nil, ineligiblePrefetch},
		{"googlebot", "GET", map[string]string{"Sec-Fetch-Dest": "document", "User-Agent": "Mozilla/5.0 (compatible; Googlebot/2.1)"}, "/", nil, ineligibleBot},
		{"semrush lower case", "GET", map[string]string{"Sec-Fetch-Dest": "document", "User-Agent": "semrushbot"}, "/", nil, ineligibleBot},
		{"no slot for path", "GET", map[string]string{"Sec-Fetch-Dest": "document"}, "/other/x", func(c *config.Config) {
			c.CreativeOpportunities.Slots[0].PagePatterns = []string{"/news/**"}
		}, ineligibleNoSlot},
		{"auction disabled", "GET", map[string]string{"Sec-Fetch-Dest": "document"}, "/", func(c *config.Config) { c.Auction.Enabled = false }, ineligibleNoAuction},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var muts []func(*config.Config)
			if tt.mut != nil {
				muts = append(muts, tt.mut)
			}
			e := newEnv(t, serveCoded(func() []byte { return []byte("<html><head></head><body></body></html>") }), muts...)
			req, _ := http.NewRequest(tt.method, e.front.URL+tt.path, nil)
			for k, v := range tt.hdr {
				req.Header.Set(k, v)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			line := e.accessLine(t, 1)
			eligible := line["eligible"].(bool)
			if eligible != (tt.want == "") {
				t.Fatalf("eligible = %v, want %v (line %v)", eligible, tt.want == "", line)
			}
			if tt.want != "" && line["ineligible"] != tt.want {
				t.Fatalf("ineligible = %v, want %s", line["ineligible"], tt.want)
			}
			// Private wherever the URL has a variant with ads, eligible or
			// not (docs/behaviour.md, "Eligible pages").
			adPath := tt.want != ineligibleNoSlot && tt.want != ineligibleNoAuction
			if cc := resp.Header.Get("Cache-Control"); (cc == privateCacheControl) != adPath {
				t.Fatalf("Cache-Control %q for eligible=%v, slot path with auction=%v", cc, eligible, adPath)
			}
		})
	}
}

// "Origin request" in docs/behaviour.md: only the configured origin is contacted, with its Host.
func TestOriginRequestTarget(t *testing.T) {
	var gotHost, gotURI string
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHost, gotURI = r.Host, r.RequestURI
	}))
	e.mustGet(t, "/p/a?q=1&r=%2F", func(r *http.Request) { r.Host = "evil.example" })
	if gotHost != e.host || gotURI != "/p/a?q=1&r=%2F" {
		t.Fatalf("origin saw Host %q URI %q", gotHost, gotURI)
	}
	e2 := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { gotHost = r.Host }),
		func(c *config.Config) { c.Publisher.OriginHostHeaderOverride = "origin.pub.example" })
	e2.mustGet(t, "/")
	if gotHost != "origin.pub.example" {
		t.Fatalf("override: origin saw Host %q", gotHost)
	}
}
