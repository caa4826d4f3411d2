package proxy

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
)

// TestForwardedQuotedStringsAreOneValue: a quoted-string in a trusted
// proxy's Forwarded (RFC 7239 §4, RFC 7230 §3.2.6) may hold ',' and ';',
// and is one value. The guest's three readers split the header at every
// ',' and ';' instead: a quoted extension value ended the first element
// early (its host= and proto= were lost, the links pointed at the
// domain over http), put a for= hop inside a value into the chain (the
// bidders got 203.0.113.66 as the client's address), and reached the
// origin cut in the middle of a quote.
func TestForwardedQuotedStringsAreOneValue(t *testing.T) {
	trusted := func(c *config.Config) {
		c.Publisher.AllowedHosts = []string{"m.pub.example"}
		c.Server.TrustedProxies = []string{"127.0.0.1", "::1"}
	}
	t.Run("host and proto after a quoted comma", func(t *testing.T) {
		var e *env
		e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<a href="http://%s/a">`, e.host)
		}), trusted)
		_, body := e.mustGet(t, "/", header("Forwarded", `for=192.0.2.1;note="a, b";host=m.pub.example;proto=https`))
		if want := `<a href="https://m.pub.example/a">`; string(body) != want {
			t.Errorf("link %s, want %s", body, want)
		}
	})
	t.Run("a for= inside a quoted value is no hop", func(t *testing.T) {
		verifyNoLeaks(t)
		ep := newBidEndpoint(t, bidOn("seat", "1"))
		e := newEnv(t, htmlPage, withOpenRTB(2000, ep), trusted)
		e.mustGet(t, "/", navigate, header("Forwarded", `for=198.51.100.9;note="x, for=203.0.113.66"`))
		reqs := ep.received()
		if len(reqs) != 1 {
			t.Fatalf("%d bid requests, want 1", len(reqs))
		}
		if got := reqs[0].Device.IP; got != "198.51.100.9" {
			t.Errorf("device.ip %q, want 198.51.100.9", got)
		}
	})
	t.Run("the origin gets the quoted value whole", func(t *testing.T) {
		seen := make(chan http.Header, 1)
		e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen <- r.Header.Clone()
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<p>page</p>")
		}), trusted)
		e.mustGet(t, "/", header("Forwarded", `for=192.0.2.1;host=evil.example;note="a;host=b, c";proto=https`))
		h := <-seen
		if got, want := strings.Join(h.Values("Forwarded"), ", "), `for=192.0.2.1;note="a;host=b, c";proto=https`; got != want {
			t.Errorf("origin saw Forwarded %q, want %q", got, want)
		}
	})
}
