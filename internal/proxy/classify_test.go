package proxy

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
)

// classifyCases exercise every row of the "Classification" table
// (docs/behaviour.md), first match wins, under the shipped
// publisher.rewrite_content_types unless a case names its own.
var classifyCases = []struct {
	name, method string
	status       int
	ctype        string
	ce           []string
	types        []string // nil: the shipped default
	want         why
	coding       compress.Coding
	text         textKind
}{
	{"206 of html", "GET", 206, "text/html", nil, nil, whyPartialPage, "", textHTML},
	{"206 of html to HEAD", "HEAD", 206, "text/html", nil, nil, whyPartialPage, "", textHTML},
	{"HEAD of html", "HEAD", 200, "text/html", []string{"br"}, nil, whyHeadOfPage, compress.Brotli, textHTML},
	{"HEAD of json", "HEAD", 200, "application/json", nil, nil, whyHeadOfPage, compress.Identity, textOther},
	{"HEAD of an image", "HEAD", 200, "image/png", nil, nil, whyNoBody, "", textHTML},
	{"HEAD of zstd html", "HEAD", 200, "text/html", []string{"zstd"}, nil, whyNoBody, "", textHTML},
	{"HEAD answered 304", "HEAD", 304, "text/html", nil, nil, whyNoBody, "", textHTML},
	{"103 early hints", "GET", 103, "text/html", nil, nil, whyNoBody, "", textHTML},
	{"204", "GET", 204, "text/html", nil, nil, whyNoBody, "", textHTML},
	{"205", "GET", 205, "text/html", nil, nil, whyNoBody, "", textHTML},
	{"304", "GET", 304, "text/html", []string{"gzip"}, nil, whyNoBody, "", textHTML},
	{"json, shipped types", "GET", 200, "application/json", nil, nil, whyRewrite, compress.Identity, textOther},
	{"json, no types", "GET", 200, "application/json", nil, []string{}, whyNotText, "", textHTML},
	{"javascript", "GET", 200, "text/javascript; charset=utf-8", []string{"gzip"}, nil, whyRewrite, compress.Gzip, textScript},
	{"flight", "GET", 200, "text/x-component", nil, nil, whyRewrite, compress.Identity, textFlight},
	{"an image", "GET", 200, "image/png", nil, nil, whyNotText, "", textHTML},
	{"xhtml is not text/html", "GET", 200, "application/xhtml+xml", nil, nil, whyNotText, "", textHTML},
	{"no content type", "GET", 200, "", nil, nil, whyNotText, "", textHTML},
	{"206 of a video", "GET", 206, "video/mp4", nil, nil, whyNotText, "", textHTML},
	{"206 of css", "GET", 206, "text/css", nil, nil, whyPartialText, "", textHTML},
	{"zstd html", "GET", 200, "text/html", []string{"zstd"}, nil, whyUnsupported, "", textHTML},
	{"zstd css", "GET", 200, "text/css", []string{"zstd"}, nil, whyUnsupported, "", textHTML},
	{"stacked codings", "GET", 200, "text/html", []string{"gzip, br"}, nil, whyUnsupported, "", textHTML},
	{"two coding lines", "GET", 200, "text/html", []string{"gzip", "br"}, nil, whyUnsupported, "", textHTML},
	{"x-gzip", "GET", 200, "text/html", []string{"x-gzip"}, nil, whyUnsupported, "", textHTML},
	{"identity html", "GET", 200, "text/html; charset=utf-8", nil, nil, whyRewrite, compress.Identity, textHTML},
	{"explicit identity", "GET", 200, "text/html", []string{"identity"}, nil, whyRewrite, compress.Identity, textHTML},
	{"upper-case type and coding", "GET", 200, "TEXT/HTML", []string{" GZIP "}, nil, whyRewrite, compress.Gzip, textHTML},
	{"404 page", "GET", 404, "text/html", []string{"br"}, nil, whyRewrite, compress.Brotli, textHTML},
	{"500 page", "POST", 500, "text/html", []string{"deflate"}, nil, whyRewrite, compress.Deflate, textHTML},
	{"bad parameter still html", "GET", 200, "text/html; charset", nil, nil, whyRewrite, compress.Identity, textHTML},
}

// TestClassify: classify puts each response on the row of the
// "Classification" table that the case stands for, with the coding and
// the rules the pipeline uses. The shipped default rewrites JSON.
func TestClassify(t *testing.T) {
	for _, tt := range classifyCases {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.ctype != "" {
				h.Set("Content-Type", tt.ctype)
			}
			for _, v := range tt.ce {
				h.Add("Content-Encoding", v)
			}
			types := textTypes(config.DefaultRewriteContentTypes())
			if tt.types != nil {
				types = tt.types
			}
			got := classify(tt.method, &http.Response{StatusCode: tt.status, Header: h}, types)
			want := classification{route: whyRoutes[tt.want], why: tt.want, coding: tt.coding, text: tt.text}
			if got != want {
				t.Fatalf("classify = %+v, want %+v", got, want)
			}
		})
	}
}

// TestClassificationTableIsTheCode reads docs/behaviour.md's
// "Classification" table: one row per why, in classify's order, each
// with its route, and every row exercised by TestClassify. The table said
// that 206 responses, HEAD and the text types were decided elsewhere, and
// the old TestClassify held JSON passed through while the shipped
// default rewrote it.
func TestClassificationTableIsTheCode(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "behaviour.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(doc), "\n## Classification\n")
	if !ok {
		t.Fatal(`docs/behaviour.md has no "## Classification" section`)
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	var routes []string
	for _, line := range strings.Split(sec, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "condition" {
			continue
		}
		routes = append(routes, strings.Trim(strings.TrimSpace(cells[2]), "`"))
	}
	if len(routes) != int(whyCount) {
		t.Fatalf("the Classification table has %d rows %q; classify has %d", len(routes), routes, whyCount)
	}
	covered := map[why]bool{}
	for _, tt := range classifyCases {
		covered[tt.want] = true
	}
	for w := why(0); w < whyCount; w++ {
		if routes[w] != string(whyRoutes[w]) {
			t.Errorf("row %d of the Classification table says route %q; classify's row %d is %q", w+1, routes[w], w, whyRoutes[w])
		}
		if !covered[w] {
			t.Errorf("no TestClassify case for row %d (%q)", w+1, routes[w])
		}
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
