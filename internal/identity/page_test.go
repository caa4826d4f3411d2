package identity

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func edgeCookie(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == CookieName {
			return c
		}
	}
	return nil
}

// TestEdgeCookieSetOnlyOnAConsentingNavigation: the cases of upstream's
// generate_if_needed and ec_finalize_response, against both stores.
func TestEdgeCookieSetOnlyOnAConsentingNavigation(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			st := s.open(t)
			srv, f, _ := site(t, st)

			// A consenting browser's navigation: a new id, recorded for a year.
			resp := navigate(t, srv, "allow")
			c := edgeCookie(resp)
			if c == nil || !Valid(c.Value) || c.MaxAge != maxAgeSeconds || c.Domain != "."+testDomain {
				t.Fatalf("no edge cookie on a consenting navigation: %v", resp.Header["Set-Cookie"])
			}
			if resp.Header.Get("X-Ts-Ec") != "from-origin" {
				t.Errorf("identity header removed with consent")
			}
			e, _, ok, err := f.graph.get(context.Background(), c.Value)
			if err != nil || !ok || !e.Consent.OK || e.V != 1 || e.PubProperties.OriginDomain != testDomain {
				t.Fatalf("entry %+v ok %v err %v", e, ok, err)
			}
			// The returning reader keeps it: no Set-Cookie.
			if again := navigate(t, srv, "allow", c); len(again.Header["Set-Cookie"]) != 0 {
				t.Errorf("returning reader got %v", again.Header["Set-Cookie"])
			}
			// No consent (fail closed): nothing set, identity headers gone,
			// the cookie not withdrawn.
			none := navigate(t, srv, "", c)
			if len(none.Header["Set-Cookie"]) != 0 || none.Header.Get("X-Ts-Ec") != "" || none.Header.Get("X-Ts-One.example") != "" {
				t.Errorf("without consent: Set-Cookie %v, x-ts-ec %q, x-ts-one.example %q",
					none.Header["Set-Cookie"], none.Header.Get("X-Ts-Ec"), none.Header.Get("X-Ts-One.example"))
			}
			if fresh := navigate(t, srv, ""); edgeCookie(fresh) != nil {
				t.Errorf("cookie set without consent")
			}
			// An explicit withdrawal expires it and tombstones the entry.
			w := navigate(t, srv, "withdraw", c)
			if got := w.Header.Get("Set-Cookie"); got != ExpireCookie(testDomain) {
				t.Errorf("withdrawal Set-Cookie %q, want %q", got, ExpireCookie(testDomain))
			}
			if e, _, ok, err := f.graph.get(context.Background(), c.Value); err != nil || !ok || e.Consent.OK {
				t.Errorf("after withdrawal: entry %+v ok %v err %v, want a tombstone", e, ok, err)
			}
			// A withdrawal without a cookie, or with one whose value no id
			// could have, sets nothing.
			if w := navigate(t, srv, "withdraw"); len(w.Header["Set-Cookie"]) != 0 {
				t.Errorf("withdrawal without a cookie: %v", w.Header["Set-Cookie"])
			}
			if w := navigate(t, srv, "withdraw", &http.Cookie{Name: CookieName, Value: "a+b"}); len(w.Header["Set-Cookie"]) != 0 {
				t.Errorf("withdrawal with a cookie of other characters: %v", w.Header["Set-Cookie"])
			}
		})
	}
}

// TestEdgeCookieNotMintedOffNavigation: subresources, bots and requests
// without a user agent get no id, even with consent.
func TestEdgeCookieNotMintedOffNavigation(t *testing.T) {
	srv, _, _ := site(t, stores[0].open(t))
	for name, set := range map[string]func(*http.Request){
		"subresource":      func(r *http.Request) { r.Header.Set("Sec-Fetch-Dest", "image") },
		"bot":              func(r *http.Request) { r.Header.Set("User-Agent", "Googlebot") },
		"no user agent":    func(r *http.Request) { r.Header.Set("User-Agent", "") },
		"accept */* alone": func(r *http.Request) { r.Header.Del("Sec-Fetch-Dest"); r.Header.Set("Accept", "*/*") },
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
		req.Header.Set("User-Agent", "Mozilla/5.0")
		req.Header.Set("Sec-Fetch-Dest", "document")
		req.Header.Set("X-Test-Consent", "allow")
		set(req)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if edgeCookie(resp) != nil {
			t.Errorf("%s: edge cookie set", name)
		}
	}
	// Accept naming text/html is a navigation when Sec-Fetch-Dest is absent.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	req.Header.Set("User-Agent", "Mozilla/5.0")
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9")
	req.Header.Set("X-Test-Consent", "allow")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if edgeCookie(resp) == nil {
		t.Errorf("Accept: text/html navigation got no edge cookie")
	}
}

// TestStoreOutageServesPagesWithoutACookie: with the store down the page
// is served, no cookie is minted (a cookie without its entry would be an
// id partners can never sync), and the failure is counted; identify says
// degraded.
func TestStoreOutageServesPagesWithoutACookie(t *testing.T) {
	st := stores[0].open(t)
	srv, _, failed := site(t, st)
	st.Close() // the store is down from here
	resp := navigate(t, srv, "allow")
	if resp.StatusCode != http.StatusOK || edgeCookie(resp) != nil {
		t.Errorf("store down: status %d, Set-Cookie %v", resp.StatusCode, resp.Header["Set-Cookie"])
	}
	if failed.Load() != 1 {
		t.Errorf("failures counted %d, want 1", failed.Load())
	}
	id := strings.Repeat("a", 64) + ".abcXYZ"
	code, body := identify(t, srv, "", partnerToken, "allow", &http.Cookie{Name: CookieName, Value: id})
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil || code != http.StatusOK || got["degraded"] != true || got["ec"] != id {
		t.Errorf("identify with the store down: %d %s", code, body)
	}
}
