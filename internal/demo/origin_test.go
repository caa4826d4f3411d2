package demo

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
)

// originServer runs the demo origin on a loopback port, generated for the
// host it really listens on.
func originServer(t *testing.T) (*Origin, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	host := srv.Listener.Addr().String()
	o, err := NewOrigin(OriginOptions{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = o
	srv.Start()
	t.Cleanup(srv.Close)
	return o, srv.URL
}

// rawClient never decodes bodies, so the test sees the bytes on the wire.
func rawClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableCompression: true, Proxy: nil}}
}

func fetch(t *testing.T, method, url string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := rawClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func decode(t *testing.T, coding string, b []byte) []byte {
	t.Helper()
	var r io.Reader
	var err error
	switch coding {
	case "":
		return b
	case "gzip":
		r, err = gzip.NewReader(bytes.NewReader(b))
	case "deflate":
		r, err = zlib.NewReader(bytes.NewReader(b))
	case "br":
		r = brotli.NewReader(bytes.NewReader(b))
	default:
		t.Fatalf("unexpected coding %q", coding)
	}
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decode %s: %v", coding, err)
	}
	return out
}

func TestNegotiate(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		prefer []string
		want   string
	}{
		{"no header", nil, nil, "identity"},
		{"empty header", []string{""}, nil, "identity"},
		{"browser", []string{"gzip, deflate, br, zstd"}, nil, "gzip"},
		{"browser, br preferred", []string{"gzip, deflate, br, zstd"}, []string{"br", "gzip", "deflate", "identity"}, "br"},
		{"q-values win over preference", []string{"gzip;q=0.5, br;q=0.9"}, nil, "br"},
		{"only br", []string{"br"}, nil, "br"},
		{"only deflate", []string{"deflate"}, nil, "deflate"},
		{"x-gzip alias", []string{"x-gzip"}, nil, "gzip"},
		{"case and spaces", []string{" GZIP ; Q=1 "}, nil, "gzip"},
		{"gzip refused", []string{"gzip;q=0, deflate"}, nil, "deflate"},
		{"star", []string{"*"}, nil, "gzip"},
		{"star excludes listed zero", []string{"*, gzip;q=0"}, nil, "br"},
		{"unsupported only", []string{"zstd"}, nil, "identity"},
		{"identity excluded, nothing else: identity anyway", []string{"identity;q=0"}, nil, "identity"},
		{"star zero and gzip", []string{"*;q=0, gzip"}, nil, "gzip"},
		{"malformed q ignored", []string{"gzip;q=abc, br"}, nil, "br"},
		{"several header lines", []string{"zstd", "deflate"}, nil, "deflate"},
		{"identity explicit", []string{"identity"}, nil, "identity"},
		{"identity preferred by q", []string{"gzip;q=0.5, identity"}, nil, "identity"},
		{"low q still beats unlisted identity", []string{"br;q=0.1"}, nil, "br"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefer := tt.prefer
			if prefer == nil {
				prefer = DefaultPreference
			}
			if got := Negotiate(tt.values, prefer); got != tt.want {
				t.Errorf("Negotiate(%q) = %q, want %q", tt.values, got, tt.want)
			}
		})
	}
}

func TestOriginContentNegotiation(t *testing.T) {
	o, base := originServer(t)
	paths := append([]string{HomePath, AboutPath, "/static/site.css", "/static/site.js", "/img/logo.svg"}, ArticlePaths()...)
	for _, path := range paths {
		identity, ok := o.Body(path)
		if !ok {
			t.Fatalf("no resource at %s", path)
		}
		for _, tc := range []struct{ ae, want string }{
			{"", ""}, {"identity", ""}, {"gzip", "gzip"}, {"deflate", "deflate"}, {"br", "br"},
			{"gzip, deflate, br, zstd", "gzip"}, {"br;q=1, gzip;q=0.8", "br"},
		} {
			h := map[string]string{}
			if tc.ae != "" {
				h["Accept-Encoding"] = tc.ae
			}
			resp, body := fetch(t, http.MethodGet, base+path, h)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s (%q): status %d", path, tc.ae, resp.StatusCode)
			}
			if got := resp.Header.Get("Content-Encoding"); got != tc.want {
				t.Errorf("%s (%q): Content-Encoding %q, want %q", path, tc.ae, got, tc.want)
			}
			if got := resp.Header.Get("Vary"); got != "Accept-Encoding" {
				t.Errorf("%s: Vary %q", path, got)
			}
			if got := resp.Header.Get("Content-Length"); got != strconv.Itoa(len(body)) {
				t.Errorf("%s (%q): Content-Length %s for %d body bytes", path, tc.ae, got, len(body))
			}
			if tc.want != "" && len(body) >= len(identity) {
				t.Errorf("%s: %s body of %d bytes is not smaller than identity (%d)", path, tc.want, len(body), len(identity))
			}
			if got := decode(t, tc.want, body); !bytes.Equal(got, identity) {
				t.Errorf("%s (%q): decoded body differs from identity (%d vs %d bytes)", path, tc.ae, len(got), len(identity))
			}
		}
	}
}

func TestOriginHeadersAndValidators(t *testing.T) {
	_, base := originServer(t)
	resp, body := fetch(t, http.MethodGet, base+"/", map[string]string{"Accept-Encoding": "br"})
	etag := resp.Header.Get("ETag")
	if !strings.HasSuffix(etag, `-br"`) {
		t.Errorf("ETag %q should name the coding", etag)
	}
	for k, want := range map[string]string{
		"Content-Type": "text/html; charset=utf-8", "Cache-Control": "public, max-age=60", "Surrogate-Control": "max-age=300",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if resp.Header.Get("Set-Cookie") == "" || resp.Header.Get("Last-Modified") == "" {
		t.Errorf("page lacks Set-Cookie or Last-Modified: %v", resp.Header)
	}

	resp, b := fetch(t, http.MethodGet, base+"/", map[string]string{"Accept-Encoding": "br", "If-None-Match": etag})
	if resp.StatusCode != http.StatusNotModified || len(b) != 0 {
		t.Errorf("If-None-Match with the same coding: status %d, %d body bytes; want 304, none", resp.StatusCode, len(b))
	}
	resp, _ = fetch(t, http.MethodGet, base+"/", map[string]string{"Accept-Encoding": "gzip", "If-None-Match": etag})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("If-None-Match of the br variant answered %d to a gzip request, want 200", resp.StatusCode)
	}

	resp, b = fetch(t, http.MethodHead, base+"/", map[string]string{"Accept-Encoding": "br"})
	if resp.StatusCode != http.StatusOK || len(b) != 0 || resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Errorf("HEAD: status %d, %d body bytes, Content-Length %s (GET body %d)", resp.StatusCode, len(b), resp.Header.Get("Content-Length"), len(body))
	}

	resp, _ = fetch(t, http.MethodPost, base+"/", nil)
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: status %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}

	resp, b = fetch(t, http.MethodGet, base+"/no/such/page", nil)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") || !bytes.Contains(b, []byte("<head>")) {
		t.Errorf("404: status %d, type %q, body %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}

	resp, b = fetch(t, http.MethodGet, base+"/healthz", nil)
	if resp.StatusCode != http.StatusOK || string(b) != "ok\n" {
		t.Errorf("/healthz: %d %q", resp.StatusCode, b)
	}
}

func TestOriginFavicon(t *testing.T) {
	_, base := originServer(t)
	resp, b := fetch(t, http.MethodGet, base+"/favicon.ico", map[string]string{"Accept-Encoding": "gzip, br"})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/x-icon" || resp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("favicon: status %d, headers %v", resp.StatusCode, resp.Header)
	}
	if len(b) < 22 || binary.LittleEndian.Uint16(b[2:]) != 1 || binary.LittleEndian.Uint16(b[4:]) != 1 {
		t.Fatalf("favicon is not an ICO with one image: % x", b[:min(len(b), 22)])
	}
	size, offset := binary.LittleEndian.Uint32(b[14:]), binary.LittleEndian.Uint32(b[18:])
	if int(offset+size) != len(b) {
		t.Fatalf("ICO entry says %d bytes at %d, file has %d", size, offset, len(b))
	}
	img, err := png.Decode(bytes.NewReader(b[offset:]))
	if err != nil {
		t.Fatalf("ICO image: %v", err)
	}
	if r := img.Bounds(); r.Dx() != 16 || r.Dy() != 16 {
		t.Errorf("favicon is %v, want 16x16", r)
	}
}

// TestPages checks what the demo promises about its pages: sizes, the
// parts ssatd works on, slot divs for every slot that matches, and links
// and images that name the origin host and lead to something it serves.
func TestPages(t *testing.T) {
	const host = "origin.test:8000"
	o, err := generate(OriginOptions{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ProxyConfig(ProxyOptions{Listen: "127.0.0.1:0", AdminListen: "127.0.0.1:0", OriginURL: "http://" + host, Domain: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	ref := regexp.MustCompile(`(?:href|src|action)="(?:http:)?//` + regexp.QuoteMeta(host) + `(/[^"?#]*)`)
	for _, p := range o.Pages() {
		body, _ := o.Body(p.Path)
		n := len(body)
		switch {
		case p.Path == HomePath && (n < 900<<10 || n > 1400<<10):
			t.Errorf("home page is %d bytes, want about 1 MB", n)
		case strings.HasPrefix(p.Path, "/articles/") && (n < 200<<10 || n > 600<<10):
			t.Errorf("%s is %d bytes, want a few hundred KB", p.Path, n)
		}
		for _, part := range []string{"<head>", "</body>", "<script>", `//` + host + "/img/", `href="http://` + host + "/"} {
			if !bytes.Contains(body, []byte(part)) {
				t.Errorf("%s lacks %q", p.Path, part)
			}
		}
		matched := 0
		for _, s := range cfg.CreativeOpportunities.Slots {
			if !s.Matches(p.Path) {
				continue
			}
			matched++
			if c := bytes.Count(body, []byte(`id="`+s.DivID+`"`)); c != 1 {
				t.Errorf("%s: slot %s matches but the page has %d elements with id %q", p.Path, s.ID, c, s.DivID)
			}
		}
		if want := p.Path != AboutPath; (matched > 0) != want {
			t.Errorf("%s: %d slots match", p.Path, matched)
		}
		links := ref.FindAllSubmatch(body, -1)
		if len(links) < 5 {
			t.Errorf("%s: only %d URLs name the origin host", p.Path, len(links))
		}
		for _, m := range links {
			if path := string(m[1]); path != "/search" {
				if _, ok := o.Body(path); !ok {
					t.Errorf("%s links to %s, which the origin does not serve", p.Path, path)
				}
			}
		}
	}
}

func TestGenerationIsDeterministic(t *testing.T) {
	a, err := generate(OriginOptions{Host: "a.test"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := generate(OriginOptions{Host: "a.test"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := generate(OriginOptions{Host: "c.test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range a.Pages() {
		x, _ := a.Body(p.Path)
		y, _ := b.Body(p.Path)
		z, _ := c.Body(p.Path)
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs", p.Path)
		}
		if !bytes.Equal(bytes.ReplaceAll(x, []byte("a.test"), []byte("c.test")), z) {
			t.Errorf("%s differs between hosts other than by the host name", p.Path)
		}
	}
}

func TestNewOriginRejectsBadOptions(t *testing.T) {
	for _, o := range []OriginOptions{{Host: ""}, {Host: "http://x"}, {Host: "x y"}, {Host: "x", Prefer: []string{"zstd"}}} {
		if _, err := NewOrigin(o); err == nil {
			t.Errorf("NewOrigin(%+v) succeeded", o)
		}
	}
}
