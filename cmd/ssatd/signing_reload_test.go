package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/signing"
)

// signingAuctionConfig is an OpenRTB auction to pbs, with extra appended
// (request signing, handlers).
func signingAuctionConfig(originURL, pbs, extra string) string {
	return fmt.Sprintf(`
[server]
drain_period = "0s"

[publisher]
domain = "localhost"
origin_url = %q

[auction]
enabled = true
provider = "openrtb"
timeout_ms = 5000

[[auction.openrtb]]
name = "pbs"
url = %q

[[creative_opportunities.slot]]
id = "top"
page_patterns = ["/**"]
%s`, originURL, pbs, extra)
}

// TestReloadWiresRequestSigning catches the signing family built only at
// start, or only with signing on: without signing every bid request still
// carries ext.trusted_server's request_host and request_scheme, as
// upstream writes them; a reload that sets the key directory serves the
// discovery document and signs the next bid request, and one that removes
// it sends the path to the origin again.
func TestReloadWiresRequestSigning(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	kid, _, err := signing.Init(dir, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><html><head></head><body><div id="top"></div>origin `+r.URL.Path+`</body></html>`)
	}))
	defer origin.Close()
	exts := make(chan map[string]any, 8)
	pbs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Ext struct {
				TS map[string]any `json:"trusted_server"`
			} `json:"ext"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.WriteHeader(http.StatusNoContent)
		exts <- req.Ext.TS
	}))
	defer pbs.Close()
	off := signingAuctionConfig(origin.URL, pbs.URL, "")
	on := signingAuctionConfig(origin.URL, pbs.URL, fmt.Sprintf(`
[request_signing]
enabled = true
key_dir = %q

[[handlers]]
path = "^/_ts/admin"
username = "ops"
password = "a-long-admin-password"
`, dir))
	rd := startReloadingDaemon(t, off)
	base := "http://" + rd.clientAddr
	c := newTestClient(t)
	bidExt := func() map[string]any {
		t.Helper()
		if code, body := do(t, c, http.MethodGet, base+"/page", "", ""); code != http.StatusOK || !strings.Contains(body, "origin /page") {
			t.Fatalf("page: %d %q", code, body)
		}
		select {
		case e := <-exts:
			return e
		case <-time.After(10 * time.Second):
			t.Fatal("no bid request")
			return nil
		}
	}
	// Not a navigation: the origin's answer to it starts no auction.
	discovery := func() (int, string) {
		t.Helper()
		resp, err := c.Get(base + signing.PathDiscovery)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	// request_host is the publisher's domain as site.domain has it.
	if e := bidExt(); len(e) != 2 || e["request_host"] != "localhost" || e["request_scheme"] != "https" {
		t.Errorf("signing off: ext.trusted_server %v, want request_host and request_scheme only", e)
	}
	if _, body := discovery(); !strings.Contains(body, "origin "+signing.PathDiscovery) {
		t.Errorf("without a key directory the discovery path is not the origin's: %q", body)
	}
	if r := rd.reload(t, on); r != reloadOK {
		t.Fatalf("reload with signing: %s\n%s", r, rd.logs.String())
	}
	if code, body := discovery(); code != http.StatusOK || !strings.Contains(body, `"kid": "`+kid+`"`) {
		t.Errorf("after the reload: discovery %d %q", code, body)
	}
	if e := bidExt(); e["kid"] != kid || e["signature"] == nil || e["request_host"] != "localhost" {
		t.Errorf("after the reload: ext.trusted_server %v, want signed with %s", e, kid)
	}
	if r := rd.reload(t, off); r != reloadOK {
		t.Fatalf("reload without signing: %s", r)
	}
	if _, body := discovery(); !strings.Contains(body, "origin "+signing.PathDiscovery) {
		t.Errorf("after the second reload the discovery path is not the origin's: %q", body)
	}
}
