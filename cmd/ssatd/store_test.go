package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/identity"
	"github.com/ssatd/ssatd/internal/testutil"
)

const partnerToken = "partner-token-of-at-least-32-bytes-x"

// identityConfig serves origin with the edge cookie on, its store given
// by storeTOML (a [server] data_dir line or a [store] table).
func identityConfig(origin, serverExtra, tail string) string {
	return fmt.Sprintf(`
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
drain_period = "0s"
%s

[publisher]
domain = "localhost"
origin_url = %q

[consent]
policy = "upstream"
jurisdiction = "non-regulated"

[ec]
passphrase = "an-edge-cookie-passphrase-of-32-chars-or-more"

[[ec.partners]]
name = "One"
source_domain = "one.example"
api_token = %q
%s`, serverExtra, origin, partnerToken, tail)
}

// mintEdgeCookie navigates to a page as a browser and returns its ts-ec.
func mintEdgeCookie(t *testing.T, c *http.Client, addr string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/page", nil)
	req.Host = "localhost"
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("User-Agent", "Mozilla/5.0")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	for _, ck := range resp.Cookies() {
		if ck.Name == identity.CookieName && identity.Valid(ck.Value) {
			return ck.Value
		}
	}
	t.Fatalf("no ts-ec from %s (status %d): %v", addr, resp.StatusCode, resp.Header["Set-Cookie"])
	return ""
}

// partnerCall makes an identify (body "") or batch-sync call as the partner.
func partnerCall(t *testing.T, c *http.Client, addr, ec, body string) (int, string) {
	t.Helper()
	method, path := http.MethodGet, identity.IdentifyPath
	if body != "" {
		method, path = http.MethodPost, identity.BatchSyncPath
	}
	req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
	req.Host = "localhost"
	req.Header.Set("Authorization", "Bearer "+partnerToken)
	if ec != "" {
		req.AddCookie(&http.Cookie{Name: identity.CookieName, Value: ec})
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func syncBody(ec string) string {
	return fmt.Sprintf(`{"mappings":[{"ec_id":%q,"partner_uid":"uid-42","timestamp":1}]}`, ec)
}

// TestEdgeCookieSurvivesARestartWithTheEmbeddedStore: an id minted and
// synced before a restart is identified, with its uid, after it.
func TestEdgeCookieSurvivesARestartWithTheEmbeddedStore(t *testing.T) {
	origin := newTestOrigin(t)
	doc := identityConfig(origin.srv.URL, fmt.Sprintf("data_dir = %q", t.TempDir()), "")
	c := newTestClient(t)
	first := startServeCommand(t, doc)
	ec := mintEdgeCookie(t, c, first.clientAddr)
	if code, body := partnerCall(t, c, first.clientAddr, "", syncBody(ec)); code != http.StatusOK {
		t.Fatalf("batch-sync: %d %s", code, body)
	}
	first.cancel()
	if code := first.exitCode(t); code != 0 {
		t.Fatalf("first instance exited %d", code)
	}
	c.Transport.(*http.Transport).CloseIdleConnections()
	second := startServeCommand(t, doc)
	code, body := partnerCall(t, c, second.clientAddr, ec, "")
	if code != http.StatusOK || !strings.Contains(body, `"uid":"uid-42"`) || !strings.Contains(body, `"degraded":false`) {
		t.Errorf("identify after a restart: %d %s", code, body)
	}
}

// TestTwoInstancesShareIdentitiesThroughRedis: a cookie minted by one
// instance and synced through it is identified by the other.
func TestTwoInstancesShareIdentitiesThroughRedis(t *testing.T) {
	origin := newTestOrigin(t)
	doc := identityConfig(origin.srv.URL, "", fmt.Sprintf("\n[store]\nurl = %q\n", testutil.RedisURL(t)))
	c := newTestClient(t)
	a, b := startServeCommand(t, doc), startServeCommand(t, doc)
	ec := mintEdgeCookie(t, c, a.clientAddr)
	if code, body := partnerCall(t, c, a.clientAddr, "", syncBody(ec)); code != http.StatusOK {
		t.Fatalf("batch-sync through the first: %d %s", code, body)
	}
	code, body := partnerCall(t, c, b.clientAddr, ec, "")
	if code != http.StatusOK || !strings.Contains(body, `"uid":"uid-42"`) {
		t.Errorf("identify through the second: %d %s", code, body)
	}
}

// TestStoreOutageServesPagesAndSaysSo: with the store down, pages are
// served (without a cookie), /readyz stays 200 and names the outage, and
// /metrics says the store is down and counts the failure.
func TestStoreOutageServesPagesAndSaysSo(t *testing.T) {
	origin := newTestOrigin(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "redis://" + l.Addr().String() + "/0"
	l.Close() // nothing listens there
	sc := startServeCommand(t, identityConfig(origin.srv.URL, "", fmt.Sprintf("\n[store]\nurl = %q\n", down)))
	c := newTestClient(t)
	req, _ := http.NewRequest(http.MethodGet, "http://"+sc.clientAddr+"/page", nil)
	req.Host = "localhost"
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("User-Agent", "Mozilla/5.0")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(resp.Header["Set-Cookie"]) != 0 {
		t.Errorf("page with the store down: %d, Set-Cookie %v", resp.StatusCode, resp.Header["Set-Cookie"])
	}
	status, _, body := get(t, c, "http://"+sc.adminAddr+"/readyz", "")
	if status != http.StatusOK || !strings.HasPrefix(body, "ready, degraded: store unavailable:") {
		t.Errorf("/readyz = %d %q", status, body)
	}
	_, _, metrics := get(t, c, "http://"+sc.adminAddr+"/metrics", "")
	for _, want := range []string{"\nssatd_store_up 0\n", "\nssatd_store_failures_total 1\n"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", strings.TrimSpace(want))
		}
	}
}

// TestAdminECLookupServedOnlyBehindAHandler: with a [[handlers]] entry
// covering /_ts/admin, the lookup asks for its credentials (401 without)
// and answers the stored entry with them, also when the path is encoded
// past the handler's pattern; without one it is closed (404 from ssatd,
// never the origin).
func TestAdminECLookupServedOnlyBehindAHandler(t *testing.T) {
	origin := newTestOrigin(t)
	handler := "\n[[handlers]]\npath = \"^/_ts/admin\"\nusername = \"ops\"\npassword = \"lookup-SECRET\"\n"
	c := newTestClient(t)
	for _, tc := range []struct {
		name, tail, prefix, user string
		status                   int
		want                     string
	}{
		{"covered, no credentials", handler, identity.AdminECPath, "", http.StatusUnauthorized, "Unauthorized"},
		{"covered, encoded path, no credentials", handler, "/_ts/%61dmin/ec", "", http.StatusUnauthorized, "Unauthorized"},
		{"covered, with credentials", handler, identity.AdminECPath, "ops", http.StatusOK, `"tombstone":false`},
		{"no handler", "", identity.AdminECPath, "", http.StatusNotFound, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := startServeCommand(t, identityConfig(origin.srv.URL, fmt.Sprintf("data_dir = %q", t.TempDir()), tc.tail))
			ec := mintEdgeCookie(t, c, sc.clientAddr)
			code, body := do(t, c, http.MethodGet, "http://"+sc.clientAddr+tc.prefix+"/"+ec, tc.user, "lookup-SECRET")
			if code != tc.status || !strings.Contains(body, tc.want) || strings.Contains(body, "<body>") {
				t.Errorf("GET %s/{id}: %d %q, want %d with %q", tc.prefix, code, body, tc.status, tc.want)
			}
		})
	}
}
