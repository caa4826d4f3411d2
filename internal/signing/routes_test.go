package signing

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/config"
)

// allowAdmin stands in for the operator's authentication.
func allowAdmin(http.ResponseWriter, *http.Request) bool { return true }

type routeFixture struct {
	f   *Family
	srv *httptest.Server
}

func newRouteFixture(t *testing.T, cfg config.RequestSigningConfig, deps Deps) *routeFixture {
	t.Helper()
	if deps.Now == nil {
		deps.Now = func() time.Time { return time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC) }
	}
	f, err := New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f.Handler())
	t.Cleanup(srv.Close)
	return &routeFixture{f, srv}
}

func (rf *routeFixture) do(t *testing.T, method, path, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, rf.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rf.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// initDir is a key directory with its first key, ts-2026-12-03.
func initDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, _, err := Init(dir, func() time.Time { return time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC) }); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDiscoveryDocumentShape catches a discovery document other than
// upstream's: {"version":"1.0","jwks":{"keys":[JWK...]}}, pretty-printed,
// application/json, with one JWK per active kid (endpoints.rs:49-74,
// discovery.rs:9-28); and a store without keys answered other than 500.
func TestDiscoveryDocumentShape(t *testing.T) {
	rf := newRouteFixture(t, config.RequestSigningConfig{KeyDir: initDir(t)}, Deps{AdminAuth: allowAdmin})
	if st, _, body := rf.do(t, "POST", PathRotate, `{"kid":"kid-b"}`); st != 200 {
		t.Fatalf("rotate: %d %s", st, body)
	}
	st, ct, body := rf.do(t, "GET", PathDiscovery, "")
	if st != 200 || ct != "application/json" {
		t.Fatalf("%d %q %s", st, ct, body)
	}
	if !strings.HasPrefix(body, "{\n  \"version\": \"1.0\",\n  \"jwks\": {\n    \"keys\": [\n      {\n        \"kty\": \"OKP\",") {
		t.Errorf("not serde_json's pretty form:\n%s", body)
	}
	var doc struct {
		Version string `json:"version"`
		JWKS    struct {
			Keys []map[string]string `json:"keys"`
		} `json:"jwks"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.JWKS.Keys) != 2 || doc.JWKS.Keys[0]["kid"] != "ts-2026-12-03" || doc.JWKS.Keys[1]["kid"] != "kid-b" {
		t.Fatalf("keys %v", doc.JWKS.Keys)
	}
	for _, k := range doc.JWKS.Keys {
		if k["kty"] != "OKP" || k["crv"] != "Ed25519" || k["alg"] != "EdDSA" || len(k) != 5 || strings.ContainsAny(k["x"], "+/=") {
			t.Errorf("JWK %v", k)
		}
	}

	empty := newRouteFixture(t, config.RequestSigningConfig{}, Deps{})
	if st, ct, body := empty.do(t, "GET", PathDiscovery, ""); st != 500 || ct != "text/plain; charset=utf-8" || body != "An internal error occurred\n" {
		t.Errorf("no keys: %d %q %q", st, ct, body)
	}
}

// TestVerifySignatureAnswers catches /verify-signature answering other
// than upstream's 200 JSON (endpoints.rs:104-161, tests at 584-720): a
// valid signature, a wrong one, an unknown kid whose cause is not told,
// and the body cap (413). A body that is not the route's JSON is 400
// here, where upstream answers 500 (Fidelity).
func TestVerifySignatureAnswers(t *testing.T) {
	rf := newRouteFixture(t, config.RequestSigningConfig{Enabled: true, KeyDir: initDir(t)}, Deps{})
	kid, key := rf.f.keys.signer()
	payload := string(Payload(kid, "pub.example", "https", "a-1", 1))
	good := encodeSignature(ed25519.Sign(key, []byte(payload)))
	bad := encodeSignature(ed25519.Sign(key, []byte("other")))
	req := func(p, s, k string) string {
		b, _ := json.Marshal(map[string]string{"payload": p, "signature": s, "kid": k})
		return string(b)
	}
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"valid", req(payload, good, kid), 200, `{"verified":true,"kid":"` + kid + `","message":"Signature verified successfully"}`},
		{"wrong", req(payload, bad, kid), 200, `{"verified":false,"kid":"` + kid + `","message":"Signature verification failed","error":"Invalid signature"}`},
		{"unknown kid", req(payload, good, "missing-kid"), 200, `{"verified":false,"kid":"missing-kid","message":"Verification error","error":"internal verification error"}`},
		{"path kid", req(payload, good, "../secret/"+kid), 200, `{"verified":false,"kid":"../secret/` + kid + `","message":"Verification error","error":"internal verification error"}`},
		{"malformed signature", req(payload, "not-valid-base64!!!", kid), 200, `{"verified":false,"kid":"` + kid + `","message":"Verification error","error":"internal verification error"}`},
		{"not JSON", "invalid json", 400, "Bad request: invalid JSON request body\n"},
		{"missing field", `{"payload":"x","kid":"k"}`, 400, "Bad request: invalid JSON request body\n"},
		{"over 4096 bytes", strings.Repeat("x", 4097), 413, "An internal error occurred\n"},
	} {
		st, _, body := rf.do(t, "POST", PathVerify, tc.body)
		if st != tc.status || body != tc.want {
			t.Errorf("%s: %d %s\nwant %d %s", tc.name, st, body, tc.status, tc.want)
		}
	}
}

// TestAdminRoutesClosedWithoutAuth catches admin routes served to anyone
// when the daemon gives the family no authentication, and the legacy
// /admin/keys/* aliases reaching anything but upstream's local 404
// (app.rs:988-1003).
func TestAdminRoutesClosedWithoutAuth(t *testing.T) {
	rf := newRouteFixture(t, config.RequestSigningConfig{KeyDir: initDir(t)}, Deps{})
	for _, path := range []string{PathRotate, PathDeactivate, PathLegacyRotate, PathLegacyDeactivate} {
		if st, _, body := rf.do(t, "POST", path, `{"kid":"kid-x"}`); st != 404 || body != "Not found\n" {
			t.Errorf("%s: %d %q", path, st, body)
		}
	}
	if got := rf.f.keys.activeKids(); len(got) != 1 {
		t.Errorf("active kids changed to %v", got)
	}
	denied := newRouteFixture(t, config.RequestSigningConfig{KeyDir: initDir(t)}, Deps{AdminAuth: func(w http.ResponseWriter, _ *http.Request) bool {
		w.Header().Set("WWW-Authenticate", `Basic realm="Trusted Server"`)
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return false
	}})
	if st, _, _ := denied.do(t, "POST", PathRotate, ""); st != 401 || len(denied.f.keys.activeKids()) != 1 {
		t.Errorf("refused auth: %d, active %v", st, denied.f.keys.activeKids())
	}
}

// TestKeyAdminRules catches rotation and deactivation answering other than
// upstream (endpoints.rs:296-498; rotation.rs:63-326): the date kid and its
// uniquified form, a kid in use or malformed refused, the current and the
// last active key never deactivated, delete removing the key, and the
// JSON of each answer. Refusals are 400 here where upstream answers 500
// (Fidelity).
func TestKeyAdminRules(t *testing.T) {
	rf := newRouteFixture(t, config.RequestSigningConfig{Enabled: true, KeyDir: initDir(t)}, Deps{AdminAuth: allowAdmin})
	type answer struct {
		Success             bool            `json:"success"`
		Message             string          `json:"message"`
		NewKid              string          `json:"new_kid"`
		PreviousKid         *string         `json:"previous_kid"`
		ActiveKids          []string        `json:"active_kids"`
		JWK                 json.RawMessage `json:"jwk"`
		DeactivatedKid      string          `json:"deactivated_kid"`
		Deleted             bool            `json:"deleted"`
		RemainingActiveKids []string        `json:"remaining_active_kids"`
		Error               *string         `json:"error"`
	}
	steps := []struct {
		name, path, body string
		status           int
		check            func(a answer) bool
	}{
		{"rotate, date kid taken", PathRotate, "", 200, func(a answer) bool {
			return a.Success && a.Message == "Key rotated successfully" && strings.HasPrefix(a.NewKid, "ts-2026-12-03-") &&
				len(a.NewKid) == len("ts-2026-12-03-")+32 && *a.PreviousKid == "ts-2026-12-03" && len(a.ActiveKids) == 2
		}},
		{"rotate to kid-c", PathRotate, `{"kid":"kid-c"}`, 200, func(a answer) bool {
			return a.NewKid == "kid-c" && len(a.ActiveKids) == 3 && a.ActiveKids[2] == "kid-c" &&
				strings.Contains(string(a.JWK), `"kid":"kid-c"`) && a.Error == nil
		}},
		{"kid in use", PathRotate, `{"kid":"kid-c"}`, 400, func(a answer) bool {
			return !a.Success && a.Message == "Key rotation failed" && *a.Error == "Configuration error: kid 'kid-c' already exists; choose a unique kid" &&
				a.NewKid == "" && a.PreviousKid == nil && len(a.ActiveKids) == 0 && string(a.JWK) == "{}"
		}},
		{"kid with a comma", PathRotate, `{"kid":"bad,kid"}`, 400, func(a answer) bool {
			return strings.Contains(*a.Error, "kid must contain only")
		}},
		{"kid not starting lowercase", PathRotate, `{"kid":"1kid"}`, 400, func(a answer) bool {
			return *a.Error == "Bad request: kid must start with a lowercase ASCII letter"
		}},
		{"deactivate current", PathDeactivate, `{"kid":"kid-c"}`, 400, func(a answer) bool {
			return !a.Success && a.Message == "Key deactivation failed" && a.DeactivatedKid == "kid-c" &&
				*a.Error == "Configuration error: cannot deactivate 'kid-c' because it is the current signing key; rotate first"
		}},
		{"delete current", PathDeactivate, `{"kid":"kid-c","delete":true}`, 400, func(a answer) bool {
			return a.Message == "Key deletion failed" && strings.Contains(*a.Error, "cannot delete 'kid-c'")
		}},
		{"deactivate the first", PathDeactivate, `{"kid":"ts-2026-12-03"}`, 200, func(a answer) bool {
			return a.Success && a.Message == "Key deactivated successfully" && !a.Deleted && len(a.RemainingActiveKids) == 2
		}},
		{"legacy digit kid passes the looser check", PathDeactivate, `{"kid":"1legacy"}`, 200, func(a answer) bool {
			return a.Success && len(a.RemainingActiveKids) == 2
		}},
		{"dot kid", PathDeactivate, `{"kid":"..","delete":true}`, 400, func(a answer) bool { return !a.Success }},
		{"not JSON", PathDeactivate, `nope`, 400, nil},
		{"over 4096 bytes", PathRotate, strings.Repeat(" ", 4097), 413, nil},
	}
	for _, s := range steps {
		st, _, body := rf.do(t, "POST", s.path, s.body)
		var a answer
		if st != s.status || (s.check != nil && (json.Unmarshal([]byte(body), &a) != nil || !s.check(a))) {
			t.Fatalf("%s: %d %s", s.name, st, body)
		}
	}
	// The second key: delete it, then the last active one is refused.
	second := rf.f.keys.activeKids()[0]
	if st, _, body := rf.do(t, "POST", PathDeactivate, `{"kid":"`+second+`","delete":true}`); st != 200 || !strings.Contains(body, `"deleted":true`) {
		t.Fatalf("delete %s: %d %s", second, st, body)
	}
	if _, err := rf.f.keys.jwkOf(second); err == nil {
		t.Errorf("deleted key %s still has a JWK", second)
	}
	st, _, body := rf.do(t, "POST", PathDeactivate, `{"kid":"kid-c"}`)
	if st != 400 || !strings.Contains(body, "because it is the current signing key") {
		t.Errorf("current and last: %d %s", st, body)
	}
	// Upstream's check for the last key, reached with a current key that
	// is no longer active (a store edited by hand).
	rf.f.keys.mu.Lock()
	rf.f.keys.current = "gone"
	rf.f.keys.mu.Unlock()
	st, _, body = rf.do(t, "POST", PathDeactivate, `{"kid":"kid-c"}`)
	if st != 400 || !strings.Contains(body, `"error":"Configuration error: cannot deactivate the last active key"`) {
		t.Errorf("last active key: %d %s", st, body)
	}
}

// TestRotationReachesAnotherInstance catches an instance sharing the key
// directory that keeps signing with, and publishing, what it loaded at
// start after another instance rotated; and a rotation on one instance
// that drops a kid the other added.
func TestRotationReachesAnotherInstance(t *testing.T) {
	dir := initDir(t)
	var mu sync.Mutex
	now := time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	a := newRouteFixture(t, config.RequestSigningConfig{Enabled: true, KeyDir: dir}, Deps{AdminAuth: allowAdmin, Now: clock})
	b := newRouteFixture(t, config.RequestSigningConfig{Enabled: true, KeyDir: dir}, Deps{AdminAuth: allowAdmin, Now: clock})
	if st, _, body := a.do(t, "POST", PathRotate, `{"kid":"kid-a"}`); st != 200 {
		t.Fatalf("rotate on a: %d %s", st, body)
	}
	if got := b.f.Ext("r", "h").Kid; got != "ts-2026-12-03" {
		t.Errorf("b signs with %q within the reload interval; want the key it loaded", got)
	}
	advance(reloadInterval)
	if got := b.f.Ext("r", "h").Kid; got != "kid-a" {
		t.Errorf("b signs with %q after the interval, want kid-a", got)
	}
	if _, _, body := b.do(t, "GET", PathDiscovery, ""); !strings.Contains(body, `"kid": "kid-a"`) {
		t.Errorf("b does not publish kid-a:\n%s", body)
	}
	// b rotates at once from what the directory holds, without waiting.
	if st, _, body := b.do(t, "POST", PathRotate, `{"kid":"kid-b"}`); st != 200 || !strings.Contains(body, `"active_kids":["ts-2026-12-03","kid-a","kid-b"]`) {
		t.Fatalf("rotate on b: %d %s", st, body)
	}
	if st, _, body := a.do(t, "POST", PathRotate, `{"kid":"kid-c"}`); st != 200 || !strings.Contains(body, `"previous_kid":"kid-b","active_kids":["ts-2026-12-03","kid-a","kid-b","kid-c"]`) {
		t.Fatalf("rotate on a: %d %s", st, body)
	}
}

// TestRotationFailureRollsBack catches a rotation whose JWK could not be
// written leaving its private key behind, or answering other than
// upstream: 500, success false, and the failed step's text
// (rotation.rs:88-103, endpoints.rs:350-369).
func TestRotationFailureRollsBack(t *testing.T) {
	dir := initDir(t)
	rf := newRouteFixture(t, config.RequestSigningConfig{Enabled: true, KeyDir: dir}, Deps{AdminAuth: allowAdmin})
	// jwk/ becomes a file: no JWK can be written.
	if err := os.Rename(filepath.Join(dir, jwkDir), filepath.Join(dir, "jwk.moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, jwkDir), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	st, _, body := rf.do(t, "POST", PathRotate, `{"kid":"kid-x"}`)
	want := `{"success":false,"message":"Key rotation failed","new_kid":"","previous_kid":null,"active_kids":[],"jwk":{},"error":"Configuration error: failed to store public JWK 'kid-x'"}`
	if st != 500 || body != want {
		t.Errorf("%d %s\nwant 500 %s", st, body, want)
	}
	if _, err := os.Stat(filepath.Join(dir, secretDir, "kid-x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("private key of the failed rotation left behind: %v", err)
	}
	if kid := rf.f.Ext("r", "h").Kid; kid != "ts-2026-12-03" {
		t.Errorf("signs with %q after the failed rotation", kid)
	}
}

// TestHandlerServesExactlyRoutes catches Routes() and Handler() drifting
// apart: the lead's route table is built from Routes(), so a route the
// handler serves and Routes() omits would reach the origin, and one
// Routes() lists and the handler lacks would answer 404 or 405.
func TestHandlerServesExactlyRoutes(t *testing.T) {
	rf := newRouteFixture(t, config.RequestSigningConfig{KeyDir: initDir(t)}, Deps{AdminAuth: func(w http.ResponseWriter, _ *http.Request) bool {
		w.WriteHeader(http.StatusTeapot) // reached the admin gate
		return false
	}})
	listed := map[string]bool{}
	for _, r := range Routes() {
		listed[r.Method+" "+r.Path] = true
		st, _, _ := rf.do(t, r.Method, r.Path, "{}")
		switch {
		case r.Admin && st != http.StatusTeapot:
			t.Errorf("%s %s: %d, not behind the admin gate", r.Method, r.Path, st)
		case strings.HasPrefix(r.Path, "/admin/") && st != 404:
			t.Errorf("%s %s: %d, want the legacy 404", r.Method, r.Path, st)
		case !r.Admin && !strings.HasPrefix(r.Path, "/admin/") && (st == 404 || st == 405):
			t.Errorf("%s %s: %d, not served", r.Method, r.Path, st)
		}
	}
	for _, path := range []string{PathDiscovery, PathVerify, PathRotate, PathDeactivate} {
		for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
			if listed[m+" "+path] {
				continue
			}
			if st, _, _ := rf.do(t, m, path, ""); st != 405 {
				t.Errorf("%s %s, not in Routes(), answered %d", m, path, st)
			}
		}
	}
}

// TestEmptiedKeyDirectoryKeepsSigning catches an instance that stops
// signing, or stops publishing its keys, when its key directory is
// emptied or left half-written under it (a volume remounted, a copy in
// progress): the keys loaded before stay until a good state appears.
func TestEmptiedKeyDirectoryKeepsSigning(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(dir string) error
	}{
		{"emptied", func(dir string) error {
			os.Remove(filepath.Join(dir, currentKidFile))
			return os.WriteFile(filepath.Join(dir, activeKidsFile), nil, 0o600)
		}},
		{"a kid without its JWK", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, activeKidsFile), []byte("ts-2026-12-03,kid-missing"), 0o600)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := initDir(t)
			c := newClockAt(time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC))
			rf := newRouteFixture(t, config.RequestSigningConfig{Enabled: true, KeyDir: dir}, Deps{Now: c.now})
			if err := tc.spoil(dir); err != nil {
				t.Fatal(err)
			}
			c.advance(reloadInterval)
			if ext := rf.f.Ext("r", "h"); ext.Kid != "ts-2026-12-03" || ext.Signature == "" {
				t.Errorf("after the directory broke: %+v", ext)
			}
			if st, _, body := rf.do(t, "GET", PathDiscovery, ""); st != 200 || !strings.Contains(body, "ts-2026-12-03") {
				t.Errorf("discovery %d %s", st, body)
			}
		})
	}
}

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClockAt(t time.Time) *testClock { return &testClock{t: t} }

func (c *testClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *testClock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
