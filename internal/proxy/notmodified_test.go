package proxy

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/config"
)

// A 304 carries the validator the 200 would (RFC 9110 §15.4.5). A page
// rewritten on a path without slots is served with W/"abc" where the origin
// says "abc"; revalidating with W/"abc" reached the origin, which matched it
// weakly and answered 304 with its strong "abc", passed on as it was.
func TestNotModifiedCarriesTheWeakETagOfTheRewrittenPage(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// http.ServeContent compares If-None-Match weakly and keeps the
		// ETag on its 304, as nginx and Apache do.
		w.Header().Set("ETag", `"abc"`)
		name := "page.html"
		body := "<html><head></head><body>b</body></html>"
		if r.URL.Path == "/logo.png" {
			name, body = "logo.png", "\x89PNG\r\n\x1a\n"
		}
		http.ServeContent(w, r, name, time.Time{}, strings.NewReader(body))
	}), func(c *config.Config) { c.CreativeOpportunities.Slots[0].PagePatterns = []string{"/news/**"} })
	page, _ := e.mustGet(t, "/about", navigate)
	if got := page.Header.Get("ETag"); page.StatusCode != http.StatusOK || got != `W/"abc"` {
		t.Fatalf("page: %d with ETag %q, want 200 with W/\"abc\"", page.StatusCode, got)
	}
	for _, tt := range []struct {
		name, path, ifNoneMatch, want string
	}{
		{"page revalidated with the tag ssatd gave", "/about", `W/"abc"`, `W/"abc"`},
		{"page revalidated among other tags", "/about", `"x,y", W/"abc"`, `W/"abc"`},
		{"image revalidated with the origin's tag", "/logo.png", `"abc"`, `"abc"`},
		{"both spellings listed", "/logo.png", `"abc", W/"abc"`, `"abc"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, _ := e.mustGet(t, tt.path, navigate, header("If-None-Match", tt.ifNoneMatch))
			if resp.StatusCode != http.StatusNotModified {
				t.Fatalf("status %d, want 304", resp.StatusCode)
			}
			if got := resp.Header.Get("ETag"); got != tt.want {
				t.Errorf("304 ETag %q, want %q", got, tt.want)
			}
		})
	}
}

func TestListsETag(t *testing.T) {
	for _, tt := range []struct {
		field, tag string
		want       bool
	}{
		{`W/"a"`, `W/"a"`, true},
		{`W/"a"`, `"a"`, false},
		{`"a"`, `W/"a"`, false},
		{`"b", W/"a"`, `W/"a"`, true},
		{`"x, W/", "a"`, `W/"a"`, false},
		{`"a,b"`, `"a,b"`, true},
		{`*`, `"a"`, false},
		{`"unterminated`, `"unterminated"`, false},
	} {
		if got := listsETag([]string{tt.field}, tt.tag); got != tt.want {
			t.Errorf("listsETag(%q, %q) = %v, want %v", tt.field, tt.tag, got, tt.want)
		}
	}
}
