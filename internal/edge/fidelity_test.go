package edge

// Black-box checks, over real HTTP, of each behaviour the edge takes from
// Fastly's page on the hint (docs/behaviour.md, "Fidelity"):
// https://docs.fastly.com/documentation/reference/http/http-headers/X-Compress-Hint/

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/ssat"
)

// hinted serves page with the hint and the extra headers given.
func hinted(hint, page string, hdr ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(ssat.HintHeader, hint)
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		io.WriteString(w, page)
	}
}

// "on" selects br whenever the client accepts br at all, whatever the
// q-values, else gzip; a client that accepts neither gets identity.
func TestFastlyHintOnPrefersBrotliWhenAccepted(t *testing.T) {
	s := newEdge(t, Options{}, hinted("on", body))
	for ae, want := range map[string]string{
		"br;q=0.5, gzip":      "br",
		"gzip;q=1, br;q=0.01": "br",
		"gzip, deflate, br":   "br",
		"gzip, *;q=0.1":       "br",
		"gzip":                "gzip",
		"br;q=0, gzip":        "gzip",
		"deflate":             "",
		"identity":            "",
		"":                    "",
	} {
		resp, b := fetch(t, s.URL, "GET", ae)
		if got := resp.Header.Get("Content-Encoding"); got != want {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", ae, got, want)
			continue
		}
		if decodeAs(t, want, b) != body {
			t.Errorf("Accept-Encoding %q: body does not decode to the page", ae)
		}
	}
}

// "gzip" and "br" force that coding when the client accepts it; no other
// value compresses.
func TestFastlyHintValues(t *testing.T) {
	tests := []struct{ hint, ae, want string }{
		{"gzip", "br, gzip", "gzip"},
		{"gzip", "br", ""},
		{"br", "gzip, br;q=0.1", "br"},
		{"br", "gzip", ""},
		{"off", "br, gzip", ""},
		{"yes", "br, gzip", ""},
	}
	for _, tt := range tests {
		s := newEdge(t, Options{}, hinted(tt.hint, body))
		resp, _ := fetch(t, s.URL, "GET", tt.ae)
		if got := resp.Header.Get("Content-Encoding"); got != tt.want {
			t.Errorf("hint %q, Accept-Encoding %q: Content-Encoding %q, want %q", tt.hint, tt.ae, got, tt.want)
		}
		if resp.Header.Get(ssat.HintHeader) != "" {
			t.Errorf("hint %q reached the client", tt.hint)
		}
	}
}

// Streaming compression: a compressed response never carries
// Content-Length, even a small complete body whose guest declared one,
// over HTTP/1.1 (chunked) and HTTP/2. Before, net/http gave a small
// compressed body the length of its one buffer.
func TestCompressedResponseHasNoContentLength(t *testing.T) {
	page := strings.Repeat("<p>a small page</p>", 55) // 1,045 bytes
	h := hinted("on", page, "Content-Length", fmt.Sprint(len(page)))
	for _, proto := range []string{"HTTP/1.1", "HTTP/2.0"} {
		e, err := New(h, Options{GzipLevel: 1, BrotliQuality: 1})
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewUnstartedServer(e)
		var c *http.Client
		if proto == "HTTP/2.0" {
			s.EnableHTTP2 = true
			s.StartTLS()
			c = s.Client()
			c.Transport.(*http.Transport).DisableCompression = true
		} else {
			s.Start()
			c = raw
		}
		for _, ae := range []string{"br", "gzip"} {
			req, _ := http.NewRequest(http.MethodGet, s.URL, nil)
			req.Header.Set("Accept-Encoding", ae)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.Proto != proto || resp.Header.Get("Content-Encoding") != ae {
				t.Fatalf("%s %s: got %s, Content-Encoding %q", proto, ae, resp.Proto, resp.Header.Get("Content-Encoding"))
			}
			if cl := resp.Header.Get("Content-Length"); cl != "" || resp.ContentLength != -1 {
				t.Errorf("%s %s: a compressed response carries Content-Length %q (%d)", proto, ae, cl, resp.ContentLength)
			}
			if decodeAs(t, ae, b) != page {
				t.Errorf("%s %s: body does not decode to the page", proto, ae)
			}
		}
		s.Close()
	}
}

// The hint is removed whether or not the edge compresses, and the guest's
// ETag passes unchanged: the page names Content-Encoding as the one header
// Fastly adds.
func TestHintRemovedAndETagPreserved(t *testing.T) {
	for _, etag := range []string{`"v1"`, `W/"v1"`} {
		s := newEdge(t, Options{}, hinted("on", body, "ETag", etag))
		for _, ae := range []string{"br", "gzip", "identity"} {
			resp, _ := fetch(t, s.URL, "GET", ae)
			if resp.Header.Get(ssat.HintHeader) != "" {
				t.Errorf("ae %s: the hint reached the client", ae)
			}
			if got := resp.Header.Get("ETag"); got != etag {
				t.Errorf("ae %s: ETag %q, want %q", ae, got, etag)
			}
		}
	}
}

// Fastly documents no Vary for the hint and Viceroy does not implement the
// hint, so the edge adds none: a hinted response keeps exactly the guest's
// Vary, or none, compressed or not. Before, the edge added Accept-Encoding.
func TestEdgeAddsNoVary(t *testing.T) {
	for _, vary := range []string{"", "Cookie"} {
		var hdr []string
		if vary != "" {
			hdr = []string{"Vary", vary}
		}
		s := newEdge(t, Options{}, hinted("on", body, hdr...))
		for _, ae := range []string{"br", "gzip", "identity"} {
			resp, _ := fetch(t, s.URL, "GET", ae)
			if got := strings.Join(resp.Header.Values("Vary"), ", "); got != vary {
				t.Errorf("guest Vary %q, ae %s: client got Vary %q", vary, ae, got)
			}
		}
	}
}

// Fastly documents no content-type filter for the hint: any hinted body is
// compressed, whatever its type, or with none.
func TestHintCompressesAnyContentType(t *testing.T) {
	for _, ct := range []string{"text/html", "image/png", "application/octet-stream", "application/zip", ""} {
		s := newEdge(t, Options{}, hinted("on", body, "Content-Type", ct))
		resp, b := fetch(t, s.URL, "GET", "br")
		if resp.Header.Get("Content-Encoding") != "br" || decodeAs(t, "br", b) != body {
			t.Errorf("Content-Type %q: Content-Encoding %q", ct, resp.Header.Get("Content-Encoding"))
		}
	}
}

// "The compression level applied is level 1": the [delivery] defaults give
// exactly what gzip level 1 and brotli quality 1 produce, checked against
// the libraries themselves.
func TestDefaultLevelIsFastlysLevel1(t *testing.T) {
	page := strings.Repeat("<p>compressible text, over and over</p>", 300)
	var gz, br bytes.Buffer
	gw, _ := gzip.NewWriterLevel(&gz, 1)
	gw.Write([]byte(page))
	gw.Close()
	bw := brotli.NewWriterOptions(&br, brotli.WriterOptions{Quality: 1, LGWin: 22})
	bw.Write([]byte(page))
	bw.Close()
	e, err := FromConfig(hinted("on", page), config.Defaults().Delivery)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(e)
	defer s.Close()
	for ae, want := range map[string][]byte{"gzip": gz.Bytes(), "br": br.Bytes()} {
		_, b := fetch(t, s.URL, "GET", ae)
		if !bytes.Equal(b, want) {
			t.Errorf("%s: %d bytes on the wire, level 1 gives %d", ae, len(b), len(want))
		}
	}
}

// Surrogate-Control is for the CDN: Fastly strips it before delivery (see
// surrogateOnly). It reached the browser through the builtin edge on every
// response, hinted or not.
func TestSurrogateControlNeverReachesTheClient(t *testing.T) {
	const sc = "max-age=86400"
	for _, tt := range []struct {
		name string
		opts Options
		h    http.HandlerFunc
		ae   string
	}{
		{"hinted, compressed", Options{}, hinted("on", body, "Surrogate-Control", sc), "br"},
		{"hinted, client accepts no coding", Options{}, hinted("on", body, "Surrogate-Control", sc), ""},
		{"hinted, under min_size", Options{MinSize: 1 << 20}, hinted("on", body, "Surrogate-Control", sc), "gzip"},
		{"not hinted", Options{}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Surrogate-Control", sc)
			io.WriteString(w, body)
		}, "gzip"},
		{"no body written", Options{}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Surrogate-Control", sc)
		}, "gzip"},
		{"after a 103", Options{}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Surrogate-Control", sc)
			w.Header().Set("Link", "</a.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusNotFound)
		}, "gzip"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newEdge(t, tt.opts, tt.h)
			var early []http.Header
			trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
				early = append(early, http.Header(h))
				return nil
			}}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", s.URL, nil)
			if tt.ae != "" {
				req.Header.Set("Accept-Encoding", tt.ae)
			}
			resp, err := raw.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			for _, h := range append(early, resp.Header) {
				if v := h.Values("Surrogate-Control"); len(v) > 0 {
					t.Errorf("Surrogate-Control %q reached the client", v)
				}
			}
			if tt.name == "after a 103" && len(early) != 1 {
				t.Errorf("%d informational responses, want the 103", len(early))
			}
		})
	}
}
