package main

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/ssatd/ssatd/internal/firstparty"
)

// TestReloadReleasesOldFirstPartyConnections: each generation's
// /first-party/proxy dials the ad server on its own transport; after 6
// reloads with a proxied fetch between each, the replaced generations'
// idle connections are closed with them, and the ad server holds the
// current generation's one connection.
func TestReloadReleasesOldFirstPartyConnections(t *testing.T) {
	const secret = "reload-first-party-secret"
	ad := newConnServer(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("image")) })
	origin := newSlowPageOrigin(t)
	conf := func() string {
		return fmt.Sprintf(`
[publisher]
domain = "localhost"
cookie_domain = ".localhost"
origin_url = %q
proxy_secret = %q

[proxy]
allowed_domains = ["127.0.0.1"]

[ssatd.server]
drain_period = "0s"
shutdown_timeout = "10s"
`, origin.srv.URL, secret)
	}
	rd := startReloadingDaemon(t, conf())
	signer, err := firstparty.NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	target := ad.srv.URL + "/x.png"
	u := "http://" + rd.clientAddr + firstparty.PathProxy + "?tsurl=" + url.QueryEscape(target) + "&tstoken=" + signer.Token(target)
	c := newTestClient(t)
	fetch := func(what string) {
		t.Helper()
		if status, _, body := get(t, c, u, "localhost"); status != http.StatusOK || body != "image" {
			t.Fatalf("%s: %d %q", what, status, body)
		}
	}
	fetch("first generation")
	for i := 1; i <= 6; i++ {
		if r := rd.reload(t, conf()); r != reloadOK {
			t.Fatalf("reload %d: %q\n%s", i, r, rd.logs.String())
		}
		fetch(fmt.Sprintf("generation %d", i))
	}
	if ad.accepted() < 7 {
		t.Fatalf("the ad server accepted %d connections: want one per generation (7)", ad.accepted())
	}
	ad.waitOpen(t, "ad server", 1)
}
