package proxy

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/identity"
	"github.com/ssatd/ssatd/internal/openrtb"
	"github.com/ssatd/ssatd/internal/server"
	"github.com/ssatd/ssatd/internal/store"
)

// newIdentityEnv is newEnv with the edge cookie on and an embedded store.
func newIdentityEnv(t *testing.T, origin http.Handler, jurisdiction string, mutate ...func(*config.Config)) *env {
	t.Helper()
	verifyNoLeaks(t)
	e := &env{origin: httptest.NewServer(origin)}
	t.Cleanup(e.origin.Close)
	u, _ := url.Parse(e.origin.URL)
	e.host = u.Host
	cfg := testConfig(t, e.origin.URL, func(c *config.Config) {
		c.EC.Passphrase = strings.Repeat("p", 32)
		c.EC.Partners = []config.ECPartner{{Name: "One", SourceDomain: "one.example", APIToken: strings.Repeat("t", 32)}}
		c.Consent.Policy = "upstream"
		c.Consent.Jurisdiction = jurisdiction
		for _, m := range mutate {
			m(c)
		}
	})
	st, err := store.OpenBolt(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	g, err := New(cfg, Options{Logger: zap.NewNop(), Bundle: []byte("bundle"), FlushLatency: 10 * time.Millisecond, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	e.guest = g
	t.Cleanup(g.Close)
	front, err := server.ClientHandler(cfg, g)
	if err != nil {
		t.Fatal(err)
	}
	e.front = httptest.NewServer(front)
	t.Cleanup(e.front.Close)
	return e
}

// TestPagePathSetsTheEdgeCookieWithConsent: the page path's one call into
// internal/identity sets ts-ec on a consenting navigation, and without
// consent sets none and drops the origin's x-ts-* identity headers.
func TestPagePathSetsTheEdgeCookieWithConsent(t *testing.T) {
	origin := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Ts-Ec", "origin-says")
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><head></head><body>hi</body></html>"))
	})
	for _, tc := range []struct {
		jurisdiction string
		cookie       bool
	}{{"non-regulated", true}, {"GDPR", false}, {"unknown", false}} {
		e := newIdentityEnv(t, origin, tc.jurisdiction)
		resp, _ := e.mustGet(t, "/", navigate, header("User-Agent", "Mozilla/5.0"))
		var got *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == identity.CookieName {
				got = c
			}
		}
		switch {
		case tc.cookie && (got == nil || !identity.Valid(got.Value) || got.Domain != "."+testDomain):
			t.Errorf("%s: no valid ts-ec: %v", tc.jurisdiction, resp.Header["Set-Cookie"])
		case !tc.cookie && got != nil:
			t.Errorf("%s: ts-ec set without consent", tc.jurisdiction)
		case !tc.cookie && resp.Header.Get("X-Ts-Ec") != "":
			t.Errorf("%s: x-ts-ec kept without consent", tc.jurisdiction)
		case tc.cookie && resp.Header.Get("X-Ts-Ec") != "origin-says":
			t.Errorf("%s: x-ts-ec dropped with consent", tc.jurisdiction)
		}
	}
}

// TestRouteTableServesThePartnerRoutes: identify and batch-sync answer
// their methods; others reach the origin.
func TestRouteTableServesThePartnerRoutes(t *testing.T) {
	reached := make(chan string, 4)
	origin := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached <- r.Method + " " + r.URL.Path })
	e := newIdentityEnv(t, origin, "non-regulated")
	for _, tc := range []struct {
		method, path string
		status       int
		toOrigin     bool
	}{
		{http.MethodGet, identity.IdentifyPath, http.StatusUnauthorized, false},
		{http.MethodOptions, identity.IdentifyPath, http.StatusOK, false},
		{http.MethodPost, identity.BatchSyncPath, http.StatusUnauthorized, false},
		{http.MethodPost, identity.IdentifyPath, http.StatusOK, true},
		{http.MethodGet, identity.BatchSyncPath, http.StatusOK, true},
	} {
		req, _ := http.NewRequest(tc.method, e.front.URL+tc.path, nil)
		req.Host = testDomain
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
		}
		select {
		case got := <-reached:
			if !tc.toOrigin {
				t.Errorf("%s %s reached the origin (%s)", tc.method, tc.path, got)
			}
		default:
			if tc.toOrigin {
				t.Errorf("%s %s did not reach the origin", tc.method, tc.path)
			}
		}
	}
}

// TestBidRequestCarriesTheEdgeCookieAndPartnerIDs: a returning reader's
// ts-ec is user.id, and the uid a bidstream partner synced is in
// user.ext.eids (integrations/prebid.rs:1832-1847, ec/eids.rs).
func TestBidRequestCarriesTheEdgeCookieAndPartnerIDs(t *testing.T) {
	bidder := newBidEndpoint(t, bidOn("seat", "1.00"))
	token := strings.Repeat("t", 32)
	e := newIdentityEnv(t, htmlPage, "non-regulated", withOpenRTB(2000, bidder), func(c *config.Config) {
		c.EC.Partners[0].BidstreamEnabled = true
	})
	resp, _ := e.mustGet(t, "/", navigate, header("User-Agent", "Mozilla/5.0"))
	var ec *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == identity.CookieName {
			ec = c
		}
	}
	if ec == nil {
		t.Fatal("no ts-ec")
	}
	// The id is minted before the page's auction, as upstream mints it
	// before the ad stack: the first page's bid request carries the id
	// its cookie sets.
	if first := bidder.received(); len(first) != 1 || first[0].User == nil || first[0].User.ID != ec.Value {
		t.Fatalf("first page's bid requests %+v: want one, with user.id %s", first, ec.Value)
	}
	req, _ := http.NewRequest(http.MethodPost, e.front.URL+identity.BatchSyncPath,
		strings.NewReader(`{"mappings":[{"ec_id":"`+ec.Value+`","partner_uid":"uid-1","timestamp":1}]}`))
	req.Host = testDomain
	req.Header.Set("Authorization", "Bearer "+token)
	sync, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sync.Body.Close()
	if sync.StatusCode != http.StatusOK {
		t.Fatalf("batch-sync %d", sync.StatusCode)
	}
	e.mustGet(t, "/", navigate, header("User-Agent", "Mozilla/5.0"), header("Cookie", identity.CookieName+"="+ec.Value))
	got := bidder.received()
	if len(got) != 2 || got[1].User == nil {
		t.Fatalf("bid requests %+v", got)
	}
	u := got[1].User
	want := []openrtb.EID{{Source: "one.example", UIDs: []openrtb.UID{{ID: "uid-1", Atype: 3}}}}
	if u.ID != ec.Value || u.Ext == nil || !reflect.DeepEqual(u.Ext.EIDs, want) {
		t.Errorf("user %+v ext %+v, want id %s and eids %+v", u, u.Ext, ec.Value, want)
	}
}
