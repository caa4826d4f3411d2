package rewrite

import "testing"

func TestURLOutsideThePage(t *testing.T) {
	const origin, req = "origin.example:8080", "www.pub.example"
	for _, tt := range []struct{ in, want string }{
		{"http://origin.example:8080/a?b#c", "https://www.pub.example/a?b#c"},
		{"//origin.example:8080/a", "//www.pub.example/a"},
		{"0; url=http://origin.example:8080/next", "0; url=https://www.pub.example/next"},
		{`<http://origin.example:8080/s.css>; rel=preload; as=style, <//origin.example:8080/f.woff2>; rel=preload`,
			`<https://www.pub.example/s.css>; rel=preload; as=style, <//www.pub.example/f.woff2>; rel=preload`},
		{"/relative", "/relative"},
		{"http://origin.example:8080.evil.com/", "http://origin.example:8080.evil.com/"},
		{"http://other.example/", "http://other.example/"},
	} {
		if got, _ := URL(tt.in, origin, req, "https"); got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
