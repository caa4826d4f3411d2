package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/ssat"
)

func offload(platform string) func(*config.Config) {
	return func(c *config.Config) {
		c.Publisher.SSATCompressionOffloadEnabled = true
		c.Platform.DeliveryCompression = platform
	}
}

// stubbornOrigin ignores Accept-Encoding and always answers in coding c,
// recording what it was asked for.
func stubbornOrigin(c compress.Coding, page func() []byte, asked *string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		*asked = strings.Join(r.Header.Values("Accept-Encoding"), ",")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("ETag", `"o1"`)
		w.Header().Set("Vary", "Cookie")
		b := page()
		if c != compress.Identity {
			w.Header().Set("Content-Encoding", string(c))
			b, _ = compress.Encode(c, b, originOpts)
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.Write(b)
	}
}

// "Offload mode" (docs/behaviour.md) end to end: the origin is asked for identity; whatever it sends, the
// guest emits identity with the hint, the edge compresses for the client,
// and the page decodes to exactly what mirror mode serves.
func TestOffloadEndToEnd(t *testing.T) {
	for _, originCoding := range allCodings {
		for _, client := range []struct{ ae, want string }{{"br, gzip", "br"}, {"gzip", "gzip"}, {"identity", ""}} {
			t.Run(fmt.Sprintf("origin=%s/client=%s", originCoding, client.ae), func(t *testing.T) {
				var asked, mirrorAsked string
				var off, mir *env
				off = newEnv(t, stubbornOrigin(originCoding, func() []byte { return []byte(strings.ReplaceAll(testPage, "ORIGIN", off.host)) }, &asked), offload("builtin"))
				mir = newEnv(t, stubbornOrigin(originCoding, func() []byte { return []byte(strings.ReplaceAll(testPage, "ORIGIN", mir.host)) }, &mirrorAsked))

				resp, body := off.mustGet(t, "/", navigate, header("Accept-Encoding", client.ae))
				if asked != "identity" {
					t.Errorf("origin was asked for %q, want identity", asked)
				}
				h := resp.Header
				if got := h.Get("Content-Encoding"); got != client.want {
					t.Fatalf("Content-Encoding %q, want %q", got, client.want)
				}
				if h.Get(ssat.HintHeader) != "" {
					t.Error("the hint reached the client")
				}
				if h.Get("Cache-Control") != privateCacheControl || h.Get("ETag") != "" {
					t.Errorf("privacy headers weakened: %v", h)
				}
				if compress.VaryCount(h, "Accept-Encoding") != 1 || compress.VaryCount(h, "Cookie") != 1 {
					t.Errorf("Vary = %q", h.Values("Vary"))
				}
				got := decode(t, compress.Coding(orIdentity(client.want)), body)

				mresp, mbody := mir.mustGet(t, "/", navigate, header("Accept-Encoding", "gzip, deflate, br"))
				mplain := decode(t, compress.Coding(orIdentity(mresp.Header.Get("Content-Encoding"))), mbody)
				norm := func(b []byte, host string) string { return strings.ReplaceAll(string(b), host, "ORIGIN") }
				if norm(got, off.host) != norm(mplain, mir.host) {
					t.Fatalf("offload page differs from mirror page:\n%s\n%s", got, mplain)
				}
				// The access line reports what reached the client (the
				// edge's coding and bytes) and the guest's own output apart.
				line := off.accessLine(t, 1)
				if line["mode"] != "offload" || line["output_coding"] != orIdentity(client.want) ||
					line["output_bytes"] != int64(len(body)) {
					t.Errorf("access line: mode %v output %v %v bytes, client got %s %d bytes",
						line["mode"], line["output_coding"], line["output_bytes"], orIdentity(client.want), len(body))
				}
				if line["guest_output_coding"] != "identity" || line["guest_output_bytes"] != int64(len(got)) {
					t.Errorf("access line: guest output %v %v bytes, want identity %d bytes",
						line["guest_output_coding"], line["guest_output_bytes"], len(got))
				}
			})
		}
	}
}

func orIdentity(s string) string {
	if s == "" {
		return "identity"
	}
	return s
}

// "Platforms" in docs/behaviour.md: "external" emits identity with the hint for the CDN in front;
// "unavailable" keeps mirror behaviour with no hint; both list Accept-Encoding in Vary, which
// the origin here leaves out, because the eligible page's coding follows it ("Mirror mode").
func TestOffloadPlatforms(t *testing.T) {
	tests := []struct {
		platform, wantAsked, wantCE, wantHint string
		wantVaryAE                            int
	}{
		{"external", "identity", "", "on", 1},
		{"unavailable", "gzip, deflate, br", "gzip", "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.platform, func(t *testing.T) {
			var asked string
			var e *env
			e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				asked = r.Header.Get("Accept-Encoding")
				serveCoded(func() []byte { return []byte(e.page()) }, compress.Gzip)(w, r)
			}), offload(tt.platform))
			resp, _ := e.mustGet(t, "/", navigate, header("Accept-Encoding", "gzip, deflate, br"))
			if asked != tt.wantAsked || resp.Header.Get("Content-Encoding") != tt.wantCE ||
				resp.Header.Get(ssat.HintHeader) != tt.wantHint || compress.VaryCount(resp.Header, "Accept-Encoding") != tt.wantVaryAE {
				t.Fatalf("asked %q, got CE %q hint %q Vary %q", asked, resp.Header.Get("Content-Encoding"),
					resp.Header.Get(ssat.HintHeader), resp.Header.Values("Vary"))
			}
		})
	}
}

// Offload applies to eligible HTML only: other pages keep mirror mode.
func TestOffloadLeavesOthersInMirror(t *testing.T) {
	var asked string
	var e *env
	e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.Header.Get("Accept-Encoding")
		if r.URL.Path == "/data.bin" {
			// Outside publisher.rewrite_content_types, so not on the
			// pipeline (a text response is: TestTextResponseOffload).
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(encode(t, compress.Gzip, []byte(`{"a":1}`)))
			return
		}
		serveCoded(func() []byte { return []byte(e.page()) }, compress.Gzip)(w, r)
	}), offload("builtin"))
	resp, _ := e.mustGet(t, "/", header("Accept", "*/*"), header("Accept-Encoding", "br, gzip"))
	if asked != "gzip, br" || resp.Header.Get("Content-Encoding") != "gzip" || compress.VaryCount(resp.Header, "Accept-Encoding") != 0 {
		t.Fatalf("non-eligible page: asked %q, CE %q, Vary %q", asked, resp.Header.Get("Content-Encoding"), resp.Header.Values("Vary"))
	}
	resp, body := e.mustGet(t, "/data.bin", navigate, header("Accept-Encoding", "br, gzip"))
	if resp.Header.Get("Content-Encoding") != "gzip" || string(decode(t, compress.Gzip, body)) != `{"a":1}` {
		t.Fatalf("non-HTML changed: %v", resp.Header)
	}
	if m := e.accessLine(t, 2)["mode"]; m != "mirror" {
		t.Fatalf("non-HTML logged as mode %v", m)
	}
}

// "negotiate" keeps the mirror negotiation with the origin and decodes.
func TestOffloadNegotiate(t *testing.T) {
	var asked string
	var e *env
	e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.Header.Get("Accept-Encoding")
		serveCoded(func() []byte { return []byte(e.page()) }, compress.Gzip)(w, r)
	}), offload("builtin"), func(c *config.Config) { c.Publisher.OffloadOriginAcceptEncoding = "negotiate" })
	resp, body := e.mustGet(t, "/", navigate, header("Accept-Encoding", "br, gzip"))
	if asked != "gzip, br" || resp.Header.Get("Content-Encoding") != "br" {
		t.Fatalf("asked %q, CE %q", asked, resp.Header.Get("Content-Encoding"))
	}
	if !bytes.Contains(decode(t, compress.Brotli, body), []byte("trustedserver-js")) {
		t.Fatal("page not rewritten")
	}
}

// "Limits" in docs/behaviour.md in offload: the limit counts identity bytes, so a page that fits as
// gzip can be too large as identity; the log says so plainly.
func TestOffloadRawLimitCountsIdentity(t *testing.T) {
	page := []byte("<html><head></head><body>" + strings.Repeat("<p>same text again</p>", 5000) + "</body></html>")
	var asked string
	mk := func(mut ...func(*config.Config)) *env {
		return newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			asked = r.Header.Get("Accept-Encoding")
			w.Header().Set("Content-Type", "text/html")
			var b []byte = page
			if strings.Contains(asked, "gzip") {
				w.Header().Set("Content-Encoding", "gzip")
				b = encode(t, compress.Gzip, page)
			}
			w.Header().Set("Content-Length", fmt.Sprint(len(b)))
			w.Write(b)
		}), append(mut, func(c *config.Config) { c.Publisher.MaxOriginResponseBytes = 64 << 10 })...)
	}
	mirror := mk()
	if resp, _ := mirror.mustGet(t, "/", navigate, header("Accept-Encoding", "gzip")); resp.StatusCode != 200 {
		t.Fatalf("mirror: status %d; the gzip page should fit", resp.StatusCode)
	}
	off := mk(offload("builtin"))
	resp, body := off.mustGet(t, "/", navigate, header("Accept-Encoding", "gzip"))
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get("Cache-Control") != privateCacheControl {
		t.Fatalf("offload: status %d", resp.StatusCode)
	}
	if !strings.Contains(string(body), "limit") {
		t.Errorf("body %q", body)
	}
	warn := off.logs.FilterMessage("origin request failed").All()
	if len(warn) != 1 {
		t.Fatalf("want one failure log line, got %d", len(warn))
	}
	f := warn[0].ContextMap()
	if f["reason"] != reasonTooLarge.String() || f["mode"] != "offload" || f["origin_coding"] != "identity" || f["limit_bytes"] != int64(64<<10) {
		t.Fatalf("failure log lacks the cause: %v", f)
	}
}

// Streaming holds end to end: the edge's first br bytes reach the browser
// while the origin is still sending.
func TestOffloadStreamsThroughEdge(t *testing.T) {
	release := make(chan struct{})
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><head><title>x</title></head><body><p>first part</p>")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "<p>second part</p></body></html>")
	}), offload("builtin"))
	req, _ := http.NewRequest("GET", e.front.URL+"/", nil)
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("Accept-Encoding", "br")
	resp, err := client.Do(req)
	if err != nil {
		close(release)
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec, err := compress.NewReader(compress.Brotli, resp.Body, 1<<20)
	if err != nil {
		close(release)
		t.Fatal(err)
	}
	br := bufio.NewReader(dec)
	var got string
	for !strings.Contains(got, "first part") {
		s, err := br.ReadString('>')
		if err != nil {
			close(release)
			t.Fatalf("before the origin finished: %v (got %q)", err, got)
		}
		got += s
	}
	close(release)
	rest, err := io.ReadAll(br)
	if err != nil || !strings.Contains(string(rest), "second part") {
		t.Fatalf("rest: %v %q", err, rest)
	}
}
