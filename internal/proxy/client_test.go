package proxy

// Tests of what the guest believes about the client-facing side of a
// request (client.go): the host links point at, and the Forwarded and
// X-Forwarded-* headers it takes only from trusted proxies.

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
)

// Spec §4.1: request_host is the client's Host only when it is allowed.
func TestRequestHostPolicy(t *testing.T) {
	tests := []struct {
		name, host, xfh, xfp string
		trusted              bool
		want                 string
	}{
		{"domain", testDomain, "", "", false, "http://" + testDomain + "/a"},
		{"forged host", "evil.example", "", "", false, "http://" + testDomain + "/a"},
		{"allowed host", "m.pub.example", "", "", false, "http://m.pub.example/a"},
		{"allowed host with port", "m.pub.example:8443", "", "", false, "http://m.pub.example:8443/a"},
		{"untrusted forwarded", testDomain, "m.pub.example", "https", false, "http://" + testDomain + "/a"},
		{"trusted forwarded", testDomain, "m.pub.example", "https", true, "https://m.pub.example/a"},
		{"trusted forwarded foreign host", testDomain, "evil.example", "https", true, "https://" + testDomain + "/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *env
			e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, `<a href="https://%s/a">`, e.host)
			}), func(c *config.Config) {
				c.Publisher.AllowedHosts = []string{"m.pub.example"}
				if tt.trusted {
					c.Server.TrustedProxies = []string{"127.0.0.0/8", "::1/128"}
				}
			})
			opts := []reqOpt{func(r *http.Request) { r.Host = tt.host }}
			if tt.xfh != "" {
				opts = append(opts, header("X-Forwarded-Host", tt.xfh), header("X-Forwarded-Proto", tt.xfp))
			}
			_, body := e.mustGet(t, "/", opts...)
			if want := `<a href="` + tt.want + `">`; string(body) != want {
				t.Fatalf("got %s, want %s", body, want)
			}
		})
	}
}

// RFC 7239 Forwarded from a trusted proxy sets host and scheme; from anyone
// else it is ignored.
func TestForwardedHeader(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		var e *env
		e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<a href="http://%s/a">`, e.host)
		}), func(c *config.Config) {
			c.Publisher.AllowedHosts = []string{"m.pub.example"}
			if trusted {
				c.Server.TrustedProxies = []string{"127.0.0.1", "::1"}
			}
		})
		_, body := e.mustGet(t, "/", header("Forwarded", `for=192.0.2.1;host="m.pub.example";proto=https, for=10.0.0.1`))
		want := `<a href="http://` + testDomain + `/a">`
		if trusted {
			want = `<a href="https://m.pub.example/a">`
		}
		if string(body) != want {
			t.Errorf("trusted=%v: %s, want %s", trusted, body, want)
		}
	}
}
