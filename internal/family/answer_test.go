package family

import (
	"net/http/httptest"
	"testing"
)

// TestAnswerWrite: every plain-text answer carries the same type, nosniff
// and its policy's Cache-Control, drops a Content-Length that was for
// another body, keeps the headers already set, and says Retry-After only
// when asked.
func TestAnswerWrite(t *testing.T) {
	for _, tc := range []struct {
		name  string
		a     Answer
		cache string // "" wants no Cache-Control
		retry string
	}{
		{"no-store", Answer{Status: 400, Msg: "400 Bad Request: x", Policy: NoStore}, "no-store", ""},
		{"private", Answer{Status: 403, Msg: "Forbidden", Policy: NoStorePrivate}, "no-store, private", ""},
		{"unstated", Answer{Status: 411, Msg: "411 Length Required", Policy: Unstated}, "", ""},
		{"configured", Answer{Status: 502, Msg: "502 Bad Gateway", Policy: Policy("private, max-age=0")}, "private, max-age=0", ""},
		{"retry", Answer{Status: 503, Msg: "busy", Policy: NoStore, RetryAfter: 1}, "no-store", "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			w.Header().Set("Content-Length", "999")
			w.Header().Set("Allow", "POST")
			tc.a.Write(w)
			h := w.Result().Header
			if w.Code != tc.a.Status || w.Body.String() != tc.a.Msg+"\n" {
				t.Errorf("got %d %q, want %d %q", w.Code, w.Body.String(), tc.a.Status, tc.a.Msg+"\n")
			}
			if _, ok := h["Cache-Control"]; ok != (tc.cache != "") || h.Get("Cache-Control") != tc.cache {
				t.Errorf("Cache-Control %q, want %q", h.Values("Cache-Control"), tc.cache)
			}
			if h.Get("Content-Type") != "text/plain; charset=utf-8" || h.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("type %q, nosniff %q", h.Get("Content-Type"), h.Get("X-Content-Type-Options"))
			}
			if h.Get("Content-Length") != "" || h.Get("Allow") != "POST" || h.Get("Retry-After") != tc.retry {
				t.Errorf("Content-Length %q, Allow %q, Retry-After %q (want %q)",
					h.Get("Content-Length"), h.Get("Allow"), h.Get("Retry-After"), tc.retry)
			}
		})
	}
}

// TestReasonNames: every reason has a distinct name and None has none, so
// that a name read from a log line or a metric label names one reason.
func TestReasonNames(t *testing.T) {
	seen := map[string]Reason{}
	for r := None + 1; r < ReasonCount; r++ {
		name := r.String()
		if prev, dup := seen[name]; dup || name == "" {
			t.Errorf("reason %d has name %q (also reason %d)", r, name, prev)
		}
		seen[name] = r
	}
	if None.String() != "" || ReasonCount.String() != "" {
		t.Errorf("None %q, ReasonCount %q: want no names", None.String(), ReasonCount.String())
	}
}
