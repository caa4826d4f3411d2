package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// publisherFile is a publisher's trusted-server.toml as upstream's
// example shapes it: its own origin and Prebid Server, which the demo
// replaces on request with -demo-origin and -demo-bidder.
const publisherFile = `[publisher]
domain = "www.gazette.test"
cookie_domain = ".gazette.test"
origin_url = "https://origin.gazette.test"
proxy_secret = "demo-proxy-secret-0123456789abcdef"

[auction]
enabled = true
providers = ["prebid"]
timeout_ms = 1500

[integrations.prebid]
enabled = true
server_url = "https://pbs.gazette.test"
bidders = ["appnexus"]

[creative_opportunities]
gam_network_id = "21700000"

[[creative_opportunities.slot]]
id = "only-top"
div_id = "ad-top-leaderboard"
page_patterns = ["/"]
formats = [{ width = 728, height = 90 }]

[ssatd.consent]
jurisdiction = "non-regulated"
`

// TestDemoRunsATrustedServerFile: ssatd demo -config runs both proxies
// with a publisher's Trusted Server file (its slots, its auction), the
// demo changing only the listeners, the host, and, as asked, the origin
// and the Prebid Server.
func TestDemoRunsATrustedServerFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trusted-server.toml")
	if err := os.WriteFile(path, []byte(publisherFile), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startTestDemoWith(t, demoOptions{file: &demoFile{path: path, demoOrigin: true, demoBidder: true}})
	for _, c := range []struct {
		name string
		url  string
	}{{"mirror", d.mirrorURL}, {"offload", d.offloadURL}} {
		resp, body := navigate(t, c.url+"/", "gzip, br")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", c.name, resp.StatusCode)
		}
		// The file's one slot is on the page, with the demo bidder's bid;
		// the demo's own slots (home-mpu, …) are not.
		if !bytes.Contains(body, []byte(`\"id\":\"only-top\"`)) || bytes.Contains(body, []byte(`\"id\":\"home-mpu\"`)) {
			t.Errorf("%s: the page's slots are not the file's", c.name)
		}
		if !bytes.Contains(body, []byte(`\"hb_bidder\":\"demo-`)) {
			t.Errorf("%s: no bid from the demo bidder standing in for Prebid Server", c.name)
		}
	}
	if got := d.mirrorConfig.Source.Format; got != "trusted-server" {
		t.Errorf("format read %q", got)
	}
	if d.mirrorConfig.Publisher.SSATCompressionOffloadEnabled || !d.offloadConfig.Publisher.SSATCompressionOffloadEnabled {
		t.Error("the pair is not mirror and offload")
	}
}

// TestDemoFileProblemsNameTheKey: a bad file stops the demo before it
// serves, with the problem naming the upstream key.
func TestDemoFileProblemsNameTheKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trusted-server.toml")
	bad := strings.Replace(publisherFile, `[ssatd.consent]`, "[consent.conflict_resolution]\nmode = \"oldest\"\n\n[ssatd.consent]", 1)
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := cmdDemo(t.Context(), []string{"-config", path, "-origin-port", "0", "-bidder-port", "0", "-mirror-port", "0", "-offload-port", "0",
		"-mirror-admin-port", "0", "-offload-admin-port", "0"}, &bytes.Buffer{}, &stderr, nil)
	if code != 1 || !strings.Contains(stderr.String(), "consent.conflict_resolution.mode") {
		t.Fatalf("exit %d, stderr %q; want 1 naming consent.conflict_resolution.mode", code, stderr.String())
	}
}
