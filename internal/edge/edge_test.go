package edge

import (
	"bufio"
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

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/ssat"
)

func TestNegotiate(t *testing.T) {
	tests := []struct {
		hint, ae string
		want     choice
	}{
		{"on", "br, gzip", choiceBrotli},
		{"on", "gzip;q=0, br", choiceBrotli},
		{"on", "br;q=0", choiceNone},
		{"on", "br;q=0, gzip", choiceGzip},
		{"on", "*", choiceBrotli},
		{"on", "*;q=0", choiceNone},
		{"on", "identity", choiceNone},
		{"on", "", choiceNone},
		{"on", "BR, GZIP", choiceBrotli},
		{"on", "Gzip", choiceGzip},
		{"on", "junk, ;;, q=1", choiceNone},
		{"on", "gzip;q=1, br;q=0.5", choiceBrotli},
		{"on", "br;q=0.5, gzip", choiceBrotli},
		{"on", "br;q=0.001, gzip", choiceBrotli},
		{"on", "gzip, *;q=0.1", choiceBrotli},
		{"on", "br;q=0, *", choiceGzip},
		{"on", "gzip;q=0.5, br;q=0.5", choiceBrotli},
		{"on", "deflate", choiceNone},
		{"ON", "br", choiceBrotli},
		{"gzip", "br, gzip", choiceGzip},
		{"gzip", "br", choiceNone},
		{"br", "gzip, br;q=0.1", choiceBrotli},
		{"br", "gzip", choiceNone},
		{"off", "br, gzip", choiceNone},
		{"", "br, gzip", choiceNone},
	}
	for _, tt := range tests {
		ae := compress.ParseAcceptEncoding([]string{tt.ae})
		if got := negotiate(tt.hint, ae, false); got != tt.want {
			t.Errorf("negotiate(%q, %q) = %v, want %v", tt.hint, tt.ae, got, tt.want)
		}
	}
}

const body = "<html><head></head><body>" + "hello edge " + "</body></html>"

func newEdge(t *testing.T, o Options, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	if o.GzipLevel == 0 {
		o.GzipLevel = 1
	}
	if o.BrotliQuality == 0 {
		o.BrotliQuality = 1
	}
	e, err := New(h, o)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(e)
	t.Cleanup(s.Close)
	return s
}

var raw = &http.Client{Transport: &http.Transport{DisableCompression: true}}

func fetch(t *testing.T, url, method, ae string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	if ae != "" {
		req.Header.Set("Accept-Encoding", ae)
	}
	resp, err := raw.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("body: %v", err)
	}
	return resp, b
}

func decodeAs(t *testing.T, coding string, b []byte) string {
	t.Helper()
	c := compress.Identity
	if coding != "" {
		c = compress.Coding(coding)
	}
	r, err := compress.NewReader(c, bytes.NewReader(b), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decode %s: %v", coding, err)
	}
	return string(out)
}

func TestHintedResponsesCompressed(t *testing.T) {
	tests := []struct {
		name, hint, ae, want string
	}{
		{"on br", "on", "gzip, br", "br"},
		{"on gzip only", "on", "gzip", "gzip"},
		{"on identity only", "on", "identity", ""},
		{"on no header", "on", "", ""},
		{"forced gzip", "gzip", "gzip, br", "gzip"},
		{"forced br", "br", "gzip, br", "br"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newEdge(t, Options{}, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Header().Set(ssat.HintHeader, tt.hint)
				w.Header().Set("Vary", "Cookie")
				w.Header().Set("Content-Length", fmt.Sprint(len(body)))
				io.WriteString(w, body)
			})
			resp, b := fetch(t, s.URL, "GET", tt.ae)
			if got := resp.Header.Get("Content-Encoding"); got != tt.want {
				t.Fatalf("Content-Encoding = %q, want %q", got, tt.want)
			}
			if resp.Header.Get(ssat.HintHeader) != "" {
				t.Fatal("hint reached the client")
			}
			if got := decodeAs(t, tt.want, b); got != body {
				t.Fatalf("decoded body %q", got)
			}
			if v := resp.Header.Values("Vary"); len(v) != 1 || v[0] != "Cookie" {
				t.Fatalf("Vary = %q: the edge changed the guest's Vary", v)
			}
			// The handler declared the identity length: it stays on an
			// uncompressed body and is never on a compressed one.
			cl := resp.Header.Get("Content-Length")
			if tt.want == "" && cl != fmt.Sprint(len(body)) || tt.want != "" && cl != "" {
				t.Fatalf("Content-Length %q for a %s body", cl, tt.want)
			}
		})
	}
}

// Each skip rule of "Edge" in docs/behaviour.md, and the hint is removed in every case.
func TestSkipRules(t *testing.T) {
	tests := []struct {
		name   string
		method string
		status int
		hdr    map[string]string
		hint   bool
	}{
		{"no hint", "GET", 200, nil, false},
		{"HEAD", "HEAD", 200, nil, true},
		{"204", "GET", 204, nil, true},
		{"304", "GET", 304, nil, true},
		{"already encoded", "GET", 200, map[string]string{"Content-Encoding": "gzip"}, true},
		{"declared empty", "GET", 200, map[string]string{"Content-Length": "0"}, true},
		{"range response bypasses encoding", "GET", 206, map[string]string{"Content-Range": "bytes 0-35/100"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload := body
			if tt.status == 204 || tt.status == 304 || tt.hdr["Content-Length"] == "0" {
				payload = ""
			}
			s := newEdge(t, Options{}, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Header().Set("Vary", "Cookie")
				if tt.hint {
					w.Header().Set(ssat.HintHeader, "on")
				}
				for k, v := range tt.hdr {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, payload)
			})
			for _, ae := range []string{"gzip, br", "br", "gzip"} {
				resp, b := fetch(t, s.URL, tt.method, ae)
				if resp.Header.Get(ssat.HintHeader) != "" {
					t.Fatal("hint reached the client")
				}
				if got, want := resp.Header.Get("Content-Encoding"), tt.hdr["Content-Encoding"]; got != want {
					t.Fatalf("ae %q: Content-Encoding %q, want %q", ae, got, want)
				}
				if tt.method == "GET" && string(b) != payload {
					t.Fatalf("ae %q: body changed: %q", ae, b)
				}
				if !tt.hint && strings.Join(resp.Header.Values("Vary"), ",") != "Cookie" {
					t.Fatalf("ae %q: unhinted response's Vary changed: %q", ae, resp.Header.Values("Vary"))
				}
			}
		})
	}
}

// Streaming: compressed bytes reach the client at each flush, before the
// handler has finished.
func TestFlushStreamsCompressed(t *testing.T) {
	for _, ae := range []string{"br", "gzip"} {
		t.Run(ae, func(t *testing.T) {
			release := make(chan struct{})
			s := newEdge(t, Options{}, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set(ssat.HintHeader, "on")
				io.WriteString(w, "<p>first</p>")
				http.NewResponseController(w).Flush()
				<-release
				io.WriteString(w, "<p>second</p>")
			})
			req, _ := http.NewRequest("GET", s.URL, nil)
			req.Header.Set("Accept-Encoding", ae)
			resp, err := raw.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			dec, err := compress.NewReader(compress.Coding(ae), resp.Body, 1<<20)
			if err != nil {
				close(release)
				t.Fatal(err)
			}
			got, err := bufio.NewReader(dec).ReadString('>')
			close(release)
			if err != nil || got != "<p>" {
				t.Fatalf("first bytes: %q %v", got, err)
			}
		})
	}
}

// A handler that aborts mid-body must not produce a complete stream.
func TestAbortLeavesStreamUnfinished(t *testing.T) {
	for _, ae := range []string{"br", "gzip"} {
		t.Run(ae, func(t *testing.T) {
			s := newEdge(t, Options{}, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set(ssat.HintHeader, "on")
				io.WriteString(w, strings.Repeat("<p>part</p>", 1000))
				http.NewResponseController(w).Flush()
				panic(http.ErrAbortHandler)
			})
			req, _ := http.NewRequest("GET", s.URL, nil)
			req.Header.Set("Accept-Encoding", ae)
			resp, err := raw.Do(req)
			if err != nil {
				return // aborted before headers: also a failure the client sees
			}
			defer resp.Body.Close()
			if _, err := io.ReadAll(resp.Body); err == nil {
				t.Fatal("aborted response read cleanly to the end")
			}
		})
	}
}

func TestMinSize(t *testing.T) {
	for _, ae := range []string{"br", "gzip"} {
		for _, size := range []int{99, 100, 5000} {
			s := newEdge(t, Options{MinSize: 100}, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set(ssat.HintHeader, "on")
				io.WriteString(w, strings.Repeat("a", size))
			})
			resp, b := fetch(t, s.URL, "GET", ae)
			want := ae
			if size < 100 {
				want = ""
			}
			if got := resp.Header.Get("Content-Encoding"); got != want {
				t.Errorf("%s size %d: Content-Encoding %q, want %q", ae, size, got, want)
			}
			if got := decodeAs(t, want, b); len(got) != size {
				t.Errorf("%s size %d: decoded %d bytes", ae, size, len(got))
			}
		}
	}
}

func TestZstdOnlyWhenEnabled(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		s := newEdge(t, Options{Zstd: enabled}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(ssat.HintHeader, "on")
			io.WriteString(w, body)
		})
		resp, _ := fetch(t, s.URL, "GET", "zstd, gzip")
		got := resp.Header.Get("Content-Encoding")
		if enabled && got != "zstd" || !enabled && got != "gzip" {
			t.Errorf("zstd enabled=%v: Content-Encoding %q", enabled, got)
		}
	}
}

func TestNewValidates(t *testing.T) {
	for _, o := range []Options{{GzipLevel: 0, BrotliQuality: 1}, {GzipLevel: 10, BrotliQuality: 1}, {GzipLevel: 1, BrotliQuality: 12}, {GzipLevel: 1, BrotliQuality: 1, MinSize: -1}, {GzipLevel: 1, BrotliQuality: 1, BrotliWindow: 25}} {
		if _, err := New(http.NotFoundHandler(), o); err == nil {
			t.Errorf("New(%+v) accepted invalid options", o)
		}
	}
}

// A 1xx sent after the guest set the hint (103 Early Hints) goes out
// without it, and the final response is still compressed: the hint is
// removed from everything the edge lets through.
func TestHintNotInInformationalResponse(t *testing.T) {
	s := newEdge(t, Options{}, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(ssat.HintHeader, "on")
		w.Header().Set("Link", "</s.css>; rel=preload; as=style")
		w.WriteHeader(http.StatusEarlyHints)
		io.WriteString(w, body)
	})
	var early []textproto.MIMEHeader
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			early = append(early, h)
			return nil
		},
	})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	req.Header.Set("Accept-Encoding", "br")
	resp, err := raw.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(early) != 1 || early[0].Get("Link") == "" {
		t.Fatalf("103 not received: %v", early)
	}
	if v := early[0].Get(ssat.HintHeader); v != "" {
		t.Fatalf("the 103 carried %s: %q", ssat.HintHeader, v)
	}
	if resp.Header.Get("Content-Encoding") != "br" || decodeAs(t, "br", b) != body {
		t.Fatalf("final response: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
}
