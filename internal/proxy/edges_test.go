package proxy

// Tests of edge cases: what an odd origin, a hostile client or a proxy in
// front could get wrong, each named after what it catches.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/ssat"
)

// A ranged request for an HTML page that is rewritten must not get the
// origin's 206 rewritten under the origin's Content-Range: the guest
// fetches the whole page without Range and If-Range and answers 200 (RFC
// 9110 §14.2). Parts of other content still pass through as 206.
func TestRangeOnRewriteRouteAnswersWholePage(t *testing.T) {
	var mu sync.Mutex
	var ranges []string
	page := "<html><head><title>t</title></head><body>" + strings.Repeat("p", 500) + "</body></html>"
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ranges = append(ranges, r.Header.Get("Range")+"|"+r.Header.Get("If-Range"))
		mu.Unlock()
		ct := "text/html; charset=utf-8"
		if r.URL.Path == "/video" {
			ct = "video/mp4"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(page))
	}))
	for _, tt := range []struct {
		name string
		opts []reqOpt
	}{
		{"non-eligible", []reqOpt{header("Range", "bytes=0-39")}},
		{"non-eligible with If-Range", []reqOpt{header("Range", "bytes=0-39"), header("If-Range", `"v1"`)}},
		{"eligible", []reqOpt{navigate, header("Range", "bytes=0-39")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			ranges = nil
			mu.Unlock()
			resp, body := e.mustGet(t, "/", tt.opts...)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Range") != "" {
				t.Fatalf("status %d Content-Range %q, want 200 without Content-Range", resp.StatusCode, resp.Header.Get("Content-Range"))
			}
			if !bytes.Contains(body, []byte(`id="trustedserver-js"`)) || !bytes.HasSuffix(body, []byte("</body></html>")) ||
				!bytes.Contains(body, []byte(strings.Repeat("p", 500))) {
				t.Fatalf("not the whole rewritten page: %s", body)
			}
			mu.Lock()
			defer mu.Unlock()
			if last := ranges[len(ranges)-1]; last != "|" {
				t.Fatalf("the page the guest rewrote was asked for with Range|If-Range %q", last)
			}
		})
	}
	resp, body := e.mustGet(t, "/video", header("Range", "bytes=0-39"))
	if resp.StatusCode != http.StatusPartialContent || len(body) != 40 || resp.Header.Get("Content-Range") != fmt.Sprintf("bytes 0-39/%d", len(page)) {
		t.Fatalf("a part of other content: status %d, %d bytes, Content-Range %q", resp.StatusCode, len(body), resp.Header.Get("Content-Range"))
	}
}

// An origin that answers 206 to a request without Range cannot be
// rewritten: 502, with the privacy headers for an eligible request.
func TestUnaskedPartialContentIs502(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Range", "bytes 0-9/100")
		w.WriteHeader(http.StatusPartialContent)
		w.Write([]byte("<html><he"))
	}))
	resp, _ := e.mustGet(t, "/", navigate)
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get("Cache-Control") != privateCacheControl {
		t.Fatalf("status %d Cache-Control %q", resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
	if got := e.accessLine(t, 1)["reason"]; got != "origin_partial_content" {
		t.Fatalf("reason %v", got)
	}
}

// A small page whose body fails inside the first buffer has sent nothing
// yet: the client gets a 502 with a plain-text error, as for a failure
// before the headers, not an empty reply.
func TestFailureBeforeFirstByteIs502(t *testing.T) {
	page := []byte("<html><head><title>small</title></head><body><p>hello</p></body></html>")
	for _, tt := range []struct {
		name   string
		coding compress.Coding
		body   func([]byte) []byte
		reason string
	}{
		{"truncated gzip", compress.Gzip, func(b []byte) []byte { return b[:len(b)/2] }, reasonTruncated.String()},
		{"truncated br", compress.Brotli, func(b []byte) []byte { return b[:len(b)/2] }, reasonTruncated.String()},
		{"corrupt deflate", compress.Deflate, func(b []byte) []byte {
			b = append([]byte{}, b...)
			for i := len(b) / 2; i < len(b); i++ {
				b[i] ^= 0x5a
			}
			return b
		}, reasonCorrupt.String()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.body(encode(t, tt.coding, page))
			e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Header().Set("Content-Encoding", string(tt.coding))
				w.Header().Set("Cache-Control", "public, max-age=600")
				w.Write(body)
			}))
			e.guest.flushLatency = time.Second // no timer flush can come first on a loaded machine
			resp, got, err := e.get(t, "/", navigate, header("Accept-Encoding", string(tt.coding)))
			if err != nil {
				t.Fatalf("no response: %v", err)
			}
			if resp.StatusCode != http.StatusBadGateway || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
				!strings.HasPrefix(string(got), "502 Bad Gateway") {
				t.Fatalf("status %d, Content-Type %q, body %q; want a plain-text 502", resp.StatusCode, resp.Header.Get("Content-Type"), got)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != privateCacheControl {
				t.Fatalf("Cache-Control %q on the eligible error", cc)
			}
			line := e.accessLine(t, 1)
			if line["reason"] != tt.reason || line["outcome"] != outcomeError {
				t.Fatalf("reason %v outcome %v, want %s %s", line["reason"], line["outcome"], tt.reason, outcomeError)
			}
			if n := e.guest.Metrics().Failures(tt.reason); n != 1 {
				t.Fatalf("metric %s = %d, want 1", tt.reason, n)
			}
		})
	}
}

// On a path that matches a slot, a browser navigation gets the page with
// ads and a bot or a script gets it without: both are variants of one URL
// chosen by headers a shared cache does not key on, so neither may be
// stored. The ad-free one kept the origin's public policy and
// Surrogate-Control, and a CDN in front served it to every browser.
func TestAdFreeVariantIsNotPubliclyCacheable(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Cache-Control", "public, max-age=600")
		w.Header().Set("Surrogate-Control", "max-age=600")
		w.Header().Set("ETag", `"v1"`)
		w.Write([]byte("<html><head></head><body></body></html>"))
	}), func(c *config.Config) { c.CreativeOpportunities.Slots[0].PagePatterns = []string{"/news/**"} })
	for _, tt := range []struct {
		name, path string
		opts       []reqOpt
		private    bool
	}{
		{"browser on a slot path", "/news/a", []reqOpt{navigate}, true},
		{"bot on a slot path", "/news/a", []reqOpt{navigate, header("User-Agent", "Googlebot/2.1")}, true},
		{"Accept */* on a slot path", "/news/a", []reqOpt{header("Accept", "*/*")}, true},
		{"prefetch on a slot path", "/news/a", []reqOpt{navigate, header("Sec-Purpose", "prefetch")}, true},
		{"bot on a path without slots", "/about", []reqOpt{navigate, header("User-Agent", "Googlebot/2.1")}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, _ := e.mustGet(t, tt.path, tt.opts...)
			h := resp.Header
			if tt.private {
				if h.Get("Cache-Control") != privateCacheControl || h.Get("Surrogate-Control") != "" || h.Get("ETag") != "" {
					t.Fatalf("a variant of an ad page is cacheable: Cache-Control %q, Surrogate-Control %q, ETag %q",
						h.Get("Cache-Control"), h.Get("Surrogate-Control"), h.Get("ETag"))
				}
				return
			}
			if h.Get("Cache-Control") != "public, max-age=600" || h.Get("ETag") != `W/"v1"` {
				t.Fatalf("a page without ads lost its cache policy: %v", h)
			}
		})
	}
}

// Origin URLs in response headers are rewritten like the links in the
// body: redirects, Content-Location, Refresh, Link (on 103 Early Hints
// too) and cookies scoped to the origin host. nginx's absolute redirects
// sent users straight to the origin.
func TestOriginURLsInHeadersRewritten(t *testing.T) {
	var e *env
	e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, _ := splitHost(e.host)
		h := w.Header()
		h.Set("Link", "<http://"+e.host+"/early.css>; rel=preload; as=style")
		w.WriteHeader(http.StatusEarlyHints)
		h.Set("Link", "<//"+e.host+"/s.css>; rel=preload; as=style, </rel.css>; rel=preload")
		h.Set("Location", "http://"+e.host+"/next?a=1")
		h.Set("Content-Location", "http://"+e.host+"/page.html")
		h.Set("Refresh", "5; url=http://"+e.host+"/later")
		h.Add("Set-Cookie", "a=1; Path=/; Domain=."+strings.ToUpper(name)+"; HttpOnly")
		h.Add("Set-Cookie", "b=2; Domain=other.example")
		switch r.URL.Path {
		case "/redirect":
			w.WriteHeader(http.StatusFound)
		case "/page":
			h.Set("Content-Type", "text/html")
			w.Write([]byte("<html><head></head><body></body></html>"))
		}
	}))
	for _, path := range []string{"/redirect", "/page"} {
		t.Run(path, func(t *testing.T) {
			var early []string
			trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
				early = append(early, h.Values("Link")...)
				return nil
			}}
			req, _ := http.NewRequest(http.MethodGet, e.front.URL+path, nil)
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
			req.Host = testDomain
			navigate(req)
			// The transport itself: a client would follow the redirect.
			resp, err := client.Transport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			h := resp.Header
			pub := "http://" + testDomain
			want := map[string]string{
				"Location":         pub + "/next?a=1",
				"Content-Location": pub + "/page.html",
				"Refresh":          "5; url=" + pub + "/later",
				"Link":             "<//" + testDomain + "/s.css>; rel=preload; as=style, </rel.css>; rel=preload",
			}
			for k, v := range want {
				if h.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, h.Get(k), v)
				}
			}
			cookies := h.Values("Set-Cookie")
			if len(cookies) != 2 || cookies[0] != "a=1; Path=/; Domain="+testDomain+"; HttpOnly" || cookies[1] != "b=2; Domain=other.example" {
				t.Errorf("Set-Cookie = %q", cookies)
			}
			if len(early) != 1 || early[0] != "<"+pub+"/early.css>; rel=preload; as=style" {
				t.Errorf("103 Link = %q", early)
			}
		})
	}
}

// HEAD of a page that GET would rewrite carries GET's headers (RFC 9110
// §9.3.2): it had the origin's Content-Length, strong ETag and public
// policy while GET answered chunked, W/ or private.
func TestHeadCarriesGetHeaders(t *testing.T) {
	page := []byte("<html><head></head><body>" + strings.Repeat("x", 3000) + "</body></html>")
	origin := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html")
		h.Set("Cache-Control", "public, max-age=600")
		h.Set("Surrogate-Control", "max-age=600")
		h.Set("ETag", `"v1"`)
		h.Set("Accept-Ranges", "bytes")
		body := page
		if compress.ParseAcceptEncoding(r.Header.Values("Accept-Encoding")).Accepts("gzip") {
			body = encode(t, compress.Gzip, page)
			h.Set("Content-Encoding", "gzip")
		}
		h.Set("Content-Length", fmt.Sprint(len(body)))
		if r.Method != http.MethodHead {
			w.Write(body)
		}
	})
	compared := []string{"Cache-Control", "Surrogate-Control", "ETag", "Accept-Ranges", "Content-Encoding", ssat.HintHeader, "Vary"}
	for _, tt := range []struct {
		name string
		mut  func(*config.Config)
		path string
		opts []reqOpt
	}{
		{"eligible page", nil, "/news/a", []reqOpt{navigate}},
		{"ad-free variant", nil, "/news/a", []reqOpt{header("Accept", "*/*")}},
		{"page without slots", nil, "/about", []reqOpt{navigate}},
		{"offload", func(c *config.Config) {
			c.Platform.DeliveryCompression = config.DeliveryCompressionExternal
			c.Publisher.SSATCompressionOffloadEnabled = true
		}, "/news/a", []reqOpt{navigate}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			muts := []func(*config.Config){func(c *config.Config) { c.CreativeOpportunities.Slots[0].PagePatterns = []string{"/news/**"} }}
			if tt.mut != nil {
				muts = append(muts, tt.mut)
			}
			e := newEnv(t, origin, muts...)
			opts := append(tt.opts, header("Accept-Encoding", "gzip"))
			get, _ := e.mustGet(t, tt.path, opts...)
			head, _ := e.mustGet(t, tt.path, append(opts, func(r *http.Request) { r.Method = http.MethodHead })...)
			if head.StatusCode != get.StatusCode {
				t.Fatalf("HEAD status %d, GET %d", head.StatusCode, get.StatusCode)
			}
			if get.ContentLength != -1 || head.Header.Get("Content-Length") != "" {
				t.Errorf("GET length %d, HEAD Content-Length %q: HEAD must not promise a length GET does not send",
					get.ContentLength, head.Header.Get("Content-Length"))
			}
			for _, k := range compared {
				if g, h := strings.Join(get.Header.Values(k), ", "), strings.Join(head.Header.Values(k), ", "); g != h {
					t.Errorf("%s: GET %q, HEAD %q", k, g, h)
				}
			}
		})
	}
}

// A digest trailer of the origin's body is false for the rewritten body:
// it is dropped on the rewrite route, announced or not, while other
// trailers pass, and a pass-through body keeps it.
func TestRepresentationTrailersDroppedOnRewrite(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Trailer", "Content-Digest, Server-Timing")
		ct := "text/html"
		if r.URL.Path == "/data" {
			ct = "application/octet-stream"
		}
		h.Set("Content-Type", ct)
		w.Write([]byte("<html><head></head><body>b</body></html>"))
		h.Set("Content-Digest", "sha-256=:AAAA:")
		h.Set("Server-Timing", "db;dur=1")
		h.Set(http.TrailerPrefix+"Repr-Digest", "sha-256=:BBBB:")
	}))
	for _, tt := range []struct {
		path    string
		digests bool
	}{{"/page", false}, {"/data", true}} {
		resp, _ := e.mustGet(t, tt.path, navigate)
		tr := resp.Trailer
		if got := tr.Get("Content-Digest") != "" && tr.Get("Repr-Digest") != ""; got != tt.digests {
			t.Errorf("%s: trailers %v, want digests kept=%v", tt.path, tr, tt.digests)
		}
		if !tt.digests && (tr.Get("Content-Digest") != "" || tr.Get("Repr-Digest") != "") {
			t.Errorf("%s: a digest trailer of the origin body on the rewritten body: %v", tt.path, tr)
		}
		if tr.Get("Server-Timing") != "db;dur=1" {
			t.Errorf("%s: other trailer lost: %v", tt.path, tr)
		}
	}
}

// The bids script never lands in raw text or RCDATA: a page that ends
// inside an unterminated <textarea> showed it as the textarea's text. It
// is left out, and the log says why.
func TestBidsScriptNotInjectedIntoUnterminatedTextarea(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><head></head><body><form><textarea name=t>draft"))
	}))
	_, body := e.mustGet(t, "/", navigate)
	if want := "<textarea name=t>draft"; !bytes.HasSuffix(body, []byte(want)) || bytes.Contains(body, []byte("window.tsjs=window.tsjs||{};var b=")) {
		t.Fatalf("page %q: want it to end with %q and carry no bids script", body, want)
	}
	e.accessLine(t, 1)
	if n := e.logs.FilterMessageSnippet("bids script not injected: the page ends inside <textarea>").Len(); n != 1 {
		t.Fatalf("%d log lines say the bids script was left out, want 1", n)
	}
	if n := e.guest.Metrics().Sum("ssatd_bids_not_injected_total", map[string]string{"reason": "raw_text"}); n != 1 {
		t.Fatalf("ssatd_bids_not_injected_total{reason=raw_text} = %v, want 1", n)
	}
}

// Regression (issue 30): past the rewriter's foreign stack (<svg> and 255
// nested <g>) the bids script went into the string of the page's own
// script in a <foreignObject>. It goes before the tag the rewriter cannot
// follow, the rest of the page is copied as is, and the log and metrics
// say so; in MathML, where a script there would not run, it is left out.
func TestDeepSVGBidsNotInsidePageScriptThroughProxy(t *testing.T) {
	const pageScript = `<foreignObject><script>var s = "</body>";</script></foreignObject>`
	for _, tt := range []struct {
		name, deep string
		bids       bool
	}{
		{"svg", "<svg>" + strings.Repeat("<g>", 255), true},
		{"math", "<math>" + strings.Repeat("<mrow>", 255) + "<mi>", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var link string
			e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Write([]byte("<html><head></head><body>" + tt.deep + pageScript + link + "</body></html>"))
			}))
			link = `<a href="http://` + e.host + `/x">x</a>`
			_, body := e.mustGet(t, "/", navigate)
			const bidsMark = "window.tsjs=window.tsjs||{};var b="
			i := bytes.Index(body, []byte(bidsMark))
			if tt.bids != (i >= 0) || bytes.Count(body, []byte(bidsMark)) > 1 {
				t.Fatalf("bids script at %d, want one: %v\n%.300s", i, tt.bids, body)
			}
			if want := []byte("</script>" + pageScript + link + "</body></html>"); tt.bids && !bytes.HasSuffix(body, want) {
				t.Fatalf("the page after the bids is not the origin's, as it came:\n%.400s", body[i:])
			}
			if !bytes.HasSuffix(body, []byte(pageScript+link+"</body></html>")) {
				t.Fatalf("the page from the cap on was changed:\n%.300s", body[max(0, len(body)-300):])
			}
			e.accessLine(t, 1)
			if n := e.logs.FilterMessageSnippet("page copied as is from a tag the rewriter cannot follow").Len(); n != 1 {
				t.Errorf("%d log lines say the page was copied past the cap, want 1", n)
			}
			if n := e.guest.Metrics().Sum("ssatd_pages_past_rewrite_cap_total", map[string]string{"cap": "foreign_depth"}); n != 1 {
				t.Errorf("ssatd_pages_past_rewrite_cap_total{cap=foreign_depth} = %v, want 1", n)
			}
			left := e.guest.Metrics().Sum("ssatd_bids_not_injected_total", map[string]string{"reason": "foreign_depth"})
			logged := e.logs.FilterMessageSnippet("bids script not injected: the last place the rewriter could follow is inside <math>").Len()
			if want := map[bool]int{true: 0, false: 1}[tt.bids]; left != float64(want) || logged != want {
				t.Errorf("bids left out: metric %v, %d log lines; want %d", left, logged, want)
			}
		})
	}
}
