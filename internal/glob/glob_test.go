package glob

import (
	"strings"
	"testing"
	"time"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern string
		path    string
		want    bool
	}{
		{"/", "/", true},
		{"/", "/a", false},
		{"/**", "/", true},
		{"/**", "/a", true},
		{"/**", "/a/b/c", true},
		{"/**", "", true},
		{"/news/**", "/news", true},
		{"/news/**", "/news/", true},
		{"/news/**", "/news/x/y", true},
		{"/news/**", "/newsroom", false},
		{"/news/**", "/sport/news", false},
		{"/*", "/", true},
		{"/*", "/foo", true},
		{"/*", "/a/b", false},
		{"/*.html", "/index.html", true},
		{"/*.html", "/dir/index.html", false},
		{"/**/*.html", "/index.html", true},
		{"/**/*.html", "/a/b/c/index.html", true},
		{"/**/*.html", "/a/b/c/index.htm", false},
		{"/a/**/b", "/a/b", true},
		{"/a/**/b", "/a/x/y/b", true},
		{"/a/**/b", "/a/x/y/c", false},
		{"/a/**/b/**/c", "/a/b/b/c/c", true},
		{"/a/**/**/b", "/a/b", true},
		{"/a/**/**/b", "/a/1/2/3/b", true},
		{"/a/?", "/a/x", true},
		{"/a/?", "/a/xy", false},
		{"/a/[0-9]", "/a/7", true},
		{"/a/[0-9]", "/a/x", false},
		{"/a/[^0-9]", "/a/x", true},
		{`/a/\*`, "/a/*", true},
		{`/a/\*`, "/a/b", false},
		{`/a/\**`, "/a/*xyz", true},
		{"/a/[**]", "/a/*", true},
		{"/a/", "/a/", true},
		{"/a/", "/a", false},
		{"/a", "/a/", false},
		{"/a//b", "/a//b", true},
		{"/a//b", "/a/b", false},
		{"/A", "/a", false},
		{"/a/b", "a/b", false},
		{"/*/edition", "/2024/edition", true},
		{"/*/edition", "/edition", false},
	}
	for _, tt := range tests {
		g, err := Compile(tt.pattern)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tt.pattern, err)
		}
		if got := g.Match(tt.path); got != tt.want {
			t.Errorf("Compile(%q).Match(%q) = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}

func TestCompileMalformed(t *testing.T) {
	tests := []struct {
		pattern string
		wantMsg string
	}{
		{"", "empty pattern"},
		{"news/**", `"news/**" must start with "/"`},
		{"*", `"*" must start with "/"`},
		{"/a**b", `"/a**b"`},
		{"/a/**b", `mixes "**"`},
		{"/***", `mixes "**"`},
		{"/a/[", `"/a/["`},
		{"/a/[]", "syntax error"},
		{`/a/b\`, "syntax error"},
		{"/[a-", "syntax error"},
	}
	for _, tt := range tests {
		g, err := Compile(tt.pattern)
		if err == nil {
			t.Errorf("Compile(%q) = %v, want error", tt.pattern, g)
			continue
		}
		if !strings.Contains(err.Error(), tt.wantMsg) {
			t.Errorf("Compile(%q) error %q does not mention %q", tt.pattern, err, tt.wantMsg)
		}
	}
}

func TestString(t *testing.T) {
	for _, p := range []string{"/", "/news/**", "/a/**/**/b", `/x/\*`} {
		g, err := Compile(p)
		if err != nil {
			t.Fatalf("Compile(%q): %v", p, err)
		}
		if g.String() != p {
			t.Errorf("String() = %q, want %q", g.String(), p)
		}
	}
}

func TestManyDoubleStarsStayFast(t *testing.T) {
	long := strings.Repeat("/seg", 200)
	tests := []struct {
		pattern string
		path    string
		want    bool
	}{
		{"/**/**/**/**/**/x", long, false},
		{"/**/**/**/**/**/x", long + "/x", true},
		{"/**/a/**/b/**/c/**/d/**/x", strings.Repeat("/a/b/c/d", 50), false},
		{"/**/seg/**/seg/**/seg/**/seg/**/seg/**/x", long, false},
	}
	for _, tt := range tests {
		g, err := Compile(tt.pattern)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tt.pattern, err)
		}
		start := time.Now()
		got := g.Match(tt.path)
		elapsed := time.Since(start)
		if got != tt.want {
			t.Errorf("Match(%q) on %d-segment path = %v, want %v", tt.pattern, strings.Count(tt.path, "/"), got, tt.want)
		}
		// Backtracking would take astronomically long here; a generous bound
		// keeps the test stable on slow CI machines while still catching it.
		if elapsed > 500*time.Millisecond {
			t.Errorf("Match(%q) took %v, want well under 500ms", tt.pattern, elapsed)
		}
	}
}
