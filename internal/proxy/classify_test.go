package proxy

import (
	"net/http"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
)

// The "Classification" (docs/behaviour.md) table, first match wins.
func TestClassify(t *testing.T) {
	tests := []struct {
		name, method string
		status       int
		ctype        string
		ce           []string
		want         route
		coding       compress.Coding
	}{
		{"HEAD of html", "HEAD", 200, "text/html", nil, routeHeadersOnly, ""},
		{"103 early hints", "GET", 103, "text/html", nil, routeHeadersOnly, ""},
		{"204", "GET", 204, "text/html", nil, routeHeadersOnly, ""},
		{"205", "GET", 205, "text/html", nil, routeHeadersOnly, ""},
		{"304", "GET", 304, "text/html", []string{"gzip"}, routeHeadersOnly, ""},
		{"json", "GET", 200, "application/json", nil, routePassThrough, ""},
		{"xhtml is not text/html", "GET", 200, "application/xhtml+xml", nil, routePassThrough, ""},
		{"no content type", "GET", 200, "", nil, routePassThrough, ""},
		{"zstd html", "GET", 200, "text/html", []string{"zstd"}, routeUnsupported, ""},
		{"stacked codings", "GET", 200, "text/html", []string{"gzip, br"}, routeUnsupported, ""},
		{"two coding lines", "GET", 200, "text/html", []string{"gzip", "br"}, routeUnsupported, ""},
		{"x-gzip", "GET", 200, "text/html", []string{"x-gzip"}, routeUnsupported, ""},
		{"identity html", "GET", 200, "text/html; charset=utf-8", nil, routePipeline, compress.Identity},
		{"explicit identity", "GET", 200, "text/html", []string{"identity"}, routePipeline, compress.Identity},
		{"upper-case type and coding", "GET", 200, "TEXT/HTML", []string{" GZIP "}, routePipeline, compress.Gzip},
		{"404 page", "GET", 404, "text/html", []string{"br"}, routePipeline, compress.Brotli},
		{"500 page", "POST", 500, "text/html", []string{"deflate"}, routePipeline, compress.Deflate},
		{"bad parameter still html", "GET", 200, "text/html; charset", nil, routePipeline, compress.Identity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.ctype != "" {
				h.Set("Content-Type", tt.ctype)
			}
			for _, v := range tt.ce {
				h.Add("Content-Encoding", v)
			}
			got, c := classify(tt.method, &http.Response{StatusCode: tt.status, Header: h})
			if got != tt.want || c != tt.coding {
				t.Fatalf("classify = %s %q, want %s %q", got, c, tt.want, tt.coding)
			}
		})
	}
}

// contentCoding is the one reading of Content-Encoding: the coding the
// pipeline decodes and the origin_coding the access line shows.
func TestContentCoding(t *testing.T) {
	for _, tt := range []struct {
		ce     []string
		coding compress.Coding
		name   string
		ok     bool
	}{
		{nil, compress.Identity, "identity", true},
		{[]string{" GZIP "}, compress.Gzip, "gzip", true},
		{[]string{"br"}, compress.Brotli, "br", true},
		{[]string{"zstd"}, "", "zstd", false},
		{[]string{"gzip, br"}, "", "gzip, br", false},
		{[]string{"gzip", "br"}, "", "gzip, br", false},
	} {
		h := http.Header{}
		for _, v := range tt.ce {
			h.Add("Content-Encoding", v)
		}
		c, name, ok := contentCoding(h)
		if c != tt.coding || name != tt.name || ok != tt.ok {
			t.Errorf("contentCoding(%q) = %q %q %v, want %q %q %v", tt.ce, c, name, ok, tt.coding, tt.name, tt.ok)
		}
	}
}
