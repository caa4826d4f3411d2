package basicauth

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
)

// upstreamHandlers are the handlers of upstream's test settings
// (crates/trusted-server-core/src/test_support.rs).
var upstreamHandlers = []config.HandlerConfig{
	{Path: "^/secure", Username: "user", Password: "pass"},
	{Path: "^/_ts/admin", Username: "admin", Password: "admin-pass"},
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// TestCheckMatchesUpstreamRule catches a departure from upstream's
// enforce_basic_auth: which paths ask credentials (the first handler whose
// unanchored expression matches the raw path), which credentials pass, and
// that an admin path no handler matches is closed, each case one of
// auth.rs's tests (auth.rs:106-420).
func TestCheckMatchesUpstreamRule(t *testing.T) {
	tests := []struct {
		name, target, authz string
		handlers            []config.HandlerConfig
		want                Verdict
	}{
		{name: "not protected", target: "/open", want: Pass},
		{name: "missing credentials", target: "/secure", want: Challenge},
		{name: "right credentials", target: "/secure", authz: basic("user", "pass"), want: Pass},
		{name: "both wrong", target: "/secure", authz: basic("nope", "nope"), want: Challenge},
		{name: "username wrong", target: "/secure", authz: basic("nope", "pass"), want: Challenge},
		{name: "password wrong", target: "/secure", authz: basic("user", "nope"), want: Challenge},
		{name: "not basic", target: "/secure", authz: "Bearer token", want: Challenge},
		{name: "scheme in any case", target: "/secure", authz: "bAsIc " + base64.StdEncoding.EncodeToString([]byte("user:pass")), want: Pass},
		{name: "no colon", target: "/secure", authz: "Basic " + base64.StdEncoding.EncodeToString([]byte("userpass")), want: Challenge},
		{name: "not base64", target: "/secure", authz: "Basic !!!", want: Challenge},
		{name: "password with a colon", target: "/secure", authz: basic("user", "pa:ss"), want: Challenge},
		{name: "another handler's credentials", target: "/secure", authz: basic("admin", "admin-pass"), want: Challenge},
		{name: "prefix match is unanchored at the end", target: "/secure-area/x", want: Challenge},
		{name: "admin, right credentials", target: "/_ts/admin/keys/rotate", authz: basic("admin", "admin-pass"), want: Pass},
		{name: "admin, wrong credentials", target: "/_ts/admin/keys/rotate", authz: basic("user", "pass"), want: Challenge},
		{name: "admin, missing credentials", target: "/_ts/admin/keys/deactivate", want: Challenge},
		{name: "encoded separator is still admin", target: "/_ts/admin%2Fec", want: Challenge},
		{name: "encoded separator, lower case", target: "/_ts/admin%2fec", want: Challenge},
		{name: "broad handler covers browser routes", target: "/_ts/page-bids?path=/a",
			handlers: []config.HandlerConfig{{Path: "^/_ts", Username: "u", Password: "p"}}, want: Challenge},
		{name: "admin path no handler matches is closed", target: "/_ts/admin/ec/abc",
			handlers: []config.HandlerConfig{{Path: "^/_ts/admin/(keys/rotate|keys/deactivate|ec|eids)$", Username: "u", Password: "p"}}, want: Closed},
		{name: "the bare admin path is admin", target: "/_ts/admin", handlers: []config.HandlerConfig{}, want: Closed},
		{name: "a similar prefix stays public", target: "/_ts/administrator",
			handlers: []config.HandlerConfig{{Path: "^/_ts/admin/keys/rotate$", Username: "u", Password: "p"}}, want: Pass},
		{name: "query is not the path", target: "/open?x=/secure", want: Pass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := tt.handlers
			if hs == nil {
				hs = upstreamHandlers
			}
			g, err := New(hs)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodGet, "http://news.test"+tt.target, nil)
			if tt.authz != "" {
				r.Header.Set("Authorization", tt.authz)
			}
			if got := g.Check(r); got != tt.want {
				t.Errorf("Check(%s) = %d, want %d", tt.target, got, tt.want)
			}
		})
	}
}

// TestWriteAnswersAsUpstream catches a 401 without upstream's challenge,
// type or body (auth.rs:96-103).
func TestWriteAnswersAsUpstream(t *testing.T) {
	for _, tt := range []struct {
		v               Verdict
		status          int
		challenge, body string
	}{
		{Challenge, http.StatusUnauthorized, `Basic realm="Trusted Server"`, "Unauthorized"},
		{Closed, http.StatusNotFound, "", "Not found\n"},
	} {
		rec := httptest.NewRecorder()
		Write(rec, tt.v)
		if rec.Code != tt.status || tt.v.Status() != tt.status || rec.Header().Get("WWW-Authenticate") != tt.challenge ||
			rec.Body.String() != tt.body || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("verdict %d: %d %q %q %q", tt.v, rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body.String(), rec.Header().Get("Content-Type"))
		}
	}
}

// TestReservedMatchesUpstream catches an admin path that could reach the
// origin with admin credentials, or a publisher path wrongly kept from
// it, against upstream's reserves_admin_namespace (ec/admin.rs:96-151).
func TestReservedMatchesUpstream(t *testing.T) {
	for path, want := range map[string]bool{
		"/_ts/admin":               true,
		"/_ts/admin/keys/rotate":   true,
		"/_ts/administrator":       true, // the bare prefix, as upstream
		"/_ts/admin%2Fec":          true,
		"/_ts/%61dmin/x":           true,
		"/admin/keys":              true,
		"/admin/keys/rotate":       true,
		"/admin%2Fkeys/rotate":     true,
		"/admin%252Fkeys/rotate":   true,
		"/admin%25252Fkeys/rotate": true,
		"/admin%2525252525Fkeys/x": false, // past four rounds
		"/admin/keystore":          false,
		"/_ts/page-bids":           false,
		"/news/_ts/admin":          false,
		"/%zz/_ts":                 false,
		"/_ts/%ff%fe":              false,
		"/":                        false,
	} {
		if got := Reserved(path); got != want {
			t.Errorf("Reserved(%q) = %v, want %v", path, got, want)
		}
	}
}
