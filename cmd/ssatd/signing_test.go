package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/ssatd/ssatd/internal/signing"
)

// standInBidder is a Prebid Server stand-in that verifies every bid
// request's ext.trusted_server as a bidder would, knowing nothing of
// ssatd's signer: the keys come from the discovery document it fetches
// from ssatd over HTTP, the payload is built from upstream's description
// (request_signing/signing.rs:65-77), the check is crypto/ed25519's.
type standInBidder struct {
	mu        sync.Mutex
	discovery string // the daemon's /.well-known/trusted-server.json
	keys      map[string]ed25519.PublicKey
	verified  map[string]int // kid -> bid requests verified
	failures  []string
	seen      chan struct{} // one per bid request, once checked
}

func (b *standInBidder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID   string `json:"id"`
		Site struct {
			Domain string `json:"domain"`
		} `json:"site"`
		Ext struct {
			TS *struct {
				Version, Signature, Kid string
				RequestHost             string `json:"request_host"`
				RequestScheme           string `json:"request_scheme"`
				TS                      int64  `json:"ts"`
			} `json:"trusted_server"`
		} `json:"ext"`
	}
	err := json.NewDecoder(r.Body).Decode(&req)
	kid := ""
	if err == nil && req.Ext.TS == nil {
		err = errors.New("no ext.trusted_server")
	}
	if err == nil {
		ts := req.Ext.TS
		kid = ts.Kid
		err = b.verify(ts.Kid, ts.Signature, ts.RequestHost == req.Site.Domain && ts.RequestScheme == "https" && ts.Version == "1.1",
			struct {
				Version string `json:"version"`
				Kid     string `json:"kid"`
				Host    string `json:"host"`
				Scheme  string `json:"scheme"`
				ID      string `json:"id"`
				TS      int64  `json:"ts"`
			}{ts.Version, ts.Kid, ts.RequestHost, ts.RequestScheme, req.ID, ts.TS})
	}
	b.mu.Lock()
	if err != nil {
		b.failures = append(b.failures, err.Error())
	} else {
		b.verified[kid]++
	}
	b.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
	b.seen <- struct{}{}
}

// wait waits for the bidder to have checked one more bid request.
func (b *standInBidder) wait(t *testing.T) {
	t.Helper()
	select {
	case <-b.seen:
	case <-time.After(10 * time.Second):
		t.Fatal("the bidder got no bid request for a page")
	}
}

func (b *standInBidder) verify(kid, signature string, fieldsOK bool, payload any) error {
	if !fieldsOK {
		return fmt.Errorf("ext.trusted_server fields: %+v", payload)
	}
	pub, err := b.key(kid)
	if err != nil {
		return err
	}
	msg, _ := json.Marshal(payload)
	sig, err := base64.RawURLEncoding.DecodeString(signature)
	if err != nil || !ed25519.Verify(pub, msg, sig) {
		return fmt.Errorf("signature of %s does not verify (%v)", msg, err)
	}
	return nil
}

// key is kid's public key, the discovery document fetched again for a kid
// not known yet, as a bidder does after a rotation.
func (b *standInBidder) key(kid string) (ed25519.PublicKey, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if k, ok := b.keys[kid]; ok {
		return k, nil
	}
	resp, err := http.Get(b.discovery)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var doc struct {
		JWKS struct {
			Keys []struct{ Kty, Crv, X, Kid, Alg string } `json:"keys"`
		} `json:"jwks"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return nil, fmt.Errorf("discovery document: %w", err)
	}
	for _, k := range doc.JWKS.Keys {
		if x, err := base64.RawURLEncoding.DecodeString(k.X); err == nil && k.Kty == "OKP" && k.Crv == "Ed25519" && len(x) == ed25519.PublicKeySize {
			b.keys[k.Kid] = x
		}
	}
	if k, ok := b.keys[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("kid %q is not published", kid)
}

// TestDaemonSignsBidRequestsBiddersVerify catches a daemon whose bid
// requests a bidder cannot verify against the keys the daemon publishes,
// before and after an admin rotates the key, and admin routes or covered
// pages reachable without the [[handlers]] credentials: the signing family
// wired into the route table and the auction, and Basic authentication
// asked before routing.
func TestDaemonSignsBidRequestsBiddersVerify(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	first, _, err := signing.Init(dir, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><html><head></head><body><div id="top"></div>`+r.URL.Path+`</body></html>`)
	}))
	defer origin.Close()
	b := &standInBidder{keys: map[string]ed25519.PublicKey{}, verified: map[string]int{}, seen: make(chan struct{}, 16)}
	pbs := httptest.NewServer(b)
	defer pbs.Close()
	d := startDaemonWith(t, signingAuctionConfig(origin.URL, pbs.URL+"/openrtb2/auction", fmt.Sprintf(`
[request_signing]
enabled = true
key_dir = %q

[[handlers]]
path = "^/_ts/admin"
username = "ops"
password = "rotate-SECRET"

[[handlers]]
path = "^/private"
username = "reader"
password = "page-SECRET"
`, dir)), zaptest.NewLogger(t))
	base := "http://" + d.clientAddr
	b.mu.Lock()
	b.discovery = base + signing.PathDiscovery
	b.mu.Unlock()
	c := newTestClient(t)

	pages := func(n int) {
		t.Helper()
		for i := range n {
			if code, body := do(t, c, http.MethodGet, base+fmt.Sprintf("/page/%d", i), "", ""); code != http.StatusOK || !strings.Contains(body, "/page/") {
				t.Fatalf("page: %d %q", code, body)
			}
			b.wait(t)
		}
	}
	pages(3)

	for _, tc := range []struct{ name, path, user, pass string }{
		{"no credentials", signing.PathRotate, "", ""},
		{"wrong password", signing.PathRotate, "ops", "nope"},
		{"another handler's credentials", signing.PathRotate, "reader", "page-SECRET"},
		{"encoded path, no credentials", "/_ts/%61dmin/keys/rotate", "", ""},
		{"covered page, no credentials", "/private/a", "", ""},
	} {
		req, _ := http.NewRequest(http.MethodPost, base+tc.path, strings.NewReader(`{"kid":"kid-stolen"}`))
		if tc.user != "" {
			req.SetBasicAuth(tc.user, tc.pass)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != `Basic realm="Trusted Server"` || string(body) != "Unauthorized" {
			t.Errorf("%s: %d %q %q, want upstream's 401", tc.name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
	}
	if code, body := do(t, c, http.MethodGet, base+"/private/a", "reader", "page-SECRET"); code != http.StatusOK || !strings.Contains(body, "/private/a") {
		t.Errorf("covered page with its credentials: %d %q", code, body)
	}
	b.wait(t) // its bid request, signed with the first key too
	// With the admin credentials, what no route serves in the admin
	// namespaces is answered 404 and never reaches the origin, which
	// would see the credentials.
	for _, path := range []string{"/_ts/admin/keys/rotate", "/_ts/admin/other", "/admin/keys%252Frotate"} {
		if code, body := do(t, c, http.MethodGet, base+path, "ops", "rotate-SECRET"); code != http.StatusNotFound || strings.Contains(body, "<body>") {
			t.Errorf("GET %s with admin credentials: %d %q, want 404 from ssatd", path, code, body)
		}
	}
	code, body := do(t, c, http.MethodPost, base+signing.PathRotate, "ops", "rotate-SECRET")
	var rotated struct {
		NewKid      string `json:"new_kid"`
		PreviousKid string `json:"previous_kid"`
	}
	if err := json.Unmarshal([]byte(body), &rotated); code != http.StatusOK || err != nil || rotated.PreviousKid != first || rotated.NewKid == first {
		t.Fatalf("rotate: %d %q", code, body)
	}
	pages(2)

	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.failures {
		t.Error(f)
	}
	if b.verified[first] != 4 || b.verified[rotated.NewKid] != 2 || b.verified["kid-stolen"] != 0 {
		t.Errorf("verified %v; want 4 under %s, then 2 under %s", b.verified, first, rotated.NewKid)
	}
}

// do sends a request, with Basic credentials when user is set, and reads
// its answer.
func do(t *testing.T, c *http.Client, method, url, user, pass string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("Accept", "text/html")
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestConfigCheckMasksHandlerCredentials catches a [[handlers]] username
// or password printed by config check, whose output ends up in tickets.
func TestConfigCheckMasksHandlerCredentials(t *testing.T) {
	conf := "[publisher]\ndomain = \"www.example.com\"\norigin_url = \"https://origin.example.com\"\n\n" +
		"[[handlers]]\npath = \"^/_ts/admin\"\nusername = \"ops-SECRET\"\npassword = \"pw-SECRET\"\n"
	got := invoke(t, []string{"config", "check", "-config", writeConfig(t, conf)}, nil)
	if got.code != 0 {
		t.Fatalf("exit %d: %s", got.code, got.stderr)
	}
	if strings.Contains(got.stdout+got.stderr, "SECRET") || !strings.Contains(got.stdout, "username = 'xxxxx'") ||
		!strings.Contains(got.stdout, "password = 'xxxxx'") || !strings.Contains(got.stdout, "path = '^/_ts/admin'") {
		t.Errorf("config check output:\n%s\n%s", got.stdout, got.stderr)
	}
}

// TestTesterCookieRoutes catches /_ts/set-tester and /_ts/clear-tester
// not served as upstream's tester_cookie.rs: with [tester_cookie] on, 204
// with the cookie on the configured domain; off, 404 rather than the
// origin's answer, as upstream routes them whatever the switch.
func TestTesterCookieRoutes(t *testing.T) {
	origin := newTestOrigin(t)
	conf := func(tester string) string {
		return fmt.Sprintf("[server]\ndrain_period = \"0s\"\n\n[publisher]\ndomain = \"localhost\"\norigin_url = %q\n%s", origin.srv.URL, tester)
	}
	for _, tc := range []struct {
		name, conf, path string
		status           int
		cookie           string
	}{
		{"set", conf("\n[tester_cookie]\nenabled = true\ncookie_domain = \".news.test\"\n"), "/_ts/set-tester", http.StatusNoContent,
			"ts-tester=true; Domain=.news.test; Path=/; Secure; SameSite=Lax"},
		{"clear", conf("\n[tester_cookie]\nenabled = true\ncookie_domain = \".news.test\"\n"), "/_ts/clear-tester", http.StatusNoContent,
			"ts-tester=; Domain=.news.test; Path=/; Secure; SameSite=Lax; Max-Age=0"},
		{"off", conf(""), "/_ts/set-tester", http.StatusNotFound, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := startDaemonWith(t, tc.conf, zaptest.NewLogger(t))
			resp, err := newTestClient(t).Get("http://" + d.clientAddr + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status || resp.Header.Get("Set-Cookie") != tc.cookie || resp.Header.Get("X-Served-By") != "" {
				t.Errorf("%d %q %q", resp.StatusCode, resp.Header.Get("Set-Cookie"), resp.Header.Get("X-Served-By"))
			}
		})
	}
}
