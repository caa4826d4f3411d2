package tester

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
)

// TestTesterRoutesAnswerAsUpstream catches a tester route whose status,
// cache policy or cookie attributes are not upstream's
// (tester_cookie.rs:84-190), enabled or not.
func TestTesterRoutesAnswerAsUpstream(t *testing.T) {
	on := New(config.TesterCookieConfig{Enabled: true, CookieDomain: ".tester.example"})
	off := New(config.TesterCookieConfig{CookieDomain: ".tester.example"})
	tests := []struct {
		name          string
		h             http.Handler
		status        int
		cache, cookie string
	}{
		{"set", on.Set(), http.StatusNoContent, "no-store, private", "ts-tester=true; Domain=.tester.example; Path=/; Secure; SameSite=Lax"},
		{"clear", on.Clear(), http.StatusNoContent, "no-store, private", "ts-tester=; Domain=.tester.example; Path=/; Secure; SameSite=Lax; Max-Age=0"},
		{"set, disabled", off.Set(), http.StatusNotFound, "", ""},
		{"clear, disabled", off.Clear(), http.StatusNotFound, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tt.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, SetPath, nil))
			if rec.Code != tt.status || rec.Header().Get("Cache-Control") != tt.cache ||
				rec.Header().Get("Set-Cookie") != tt.cookie || rec.Body.Len() != 0 {
				t.Errorf("%d %q %q %q", rec.Code, rec.Header().Get("Cache-Control"), rec.Header().Get("Set-Cookie"), rec.Body.String())
			}
		})
	}
}
