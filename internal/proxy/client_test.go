package proxy

// Tests of what the guest believes about the client-facing side of a
// request (client.go): the host links point at, and the Forwarded and
// X-Forwarded-* headers it takes only from trusted proxies.

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
)

// "URL rewriting" in docs/behaviour.md: request_host is the client's Host only when it is allowed.
func TestRequestHostPolicy(t *testing.T) {
	tests := []struct {
		name, host, xfh, xfp string
		trusted              bool
		want                 string
	}{
		{"domain", testDomain, "", "", false, "http://" + testDomain + "/a"},
		{"forged host", "evil.example", "", "", false, "http://" + testDomain + "/a"},
		{"allowed host", "m.pub.example", "", "", false, "http://m.pub.example/a"},
		{"allowed host with a port no entry names", "m.pub.example:8443", "", "", false, "http://" + testDomain + "/a"},
		{"allowed host with a port an entry names", "m.pub.example:9443", "", "", false, "http://m.pub.example:9443/a"},
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
				c.Publisher.AllowedHosts = []string{"m.pub.example", "static.pub.example:9443"}
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

// A host that is not a plain host name with a numeric port falls back to the
// domain, from Host or from a trusted proxy's X-Forwarded-Host, and a port is
// kept only where the configuration names it: "www.pub.example:@evil.example"
// once passed, and a browser resolves the link it produced to evil.example.
// The origin sees the same checked host as X-Forwarded-Host.
func TestForgedHostPortFallsBackToDomain(t *testing.T) {
	const domain = testDomain + ":8080"
	tests := []struct {
		name, host, xfh string
		want            string // the host of the rewritten link and of X-Forwarded-Host
	}{
		{"userinfo after the colon", testDomain + ":@evil.example", "", domain},
		{"entity-encoded userinfo", testDomain + ":&commat;evil.example", "", domain},
		{"userinfo with a port", testDomain + ":80@evil.example", "", domain},
		{"non-numeric port", testDomain + ":x", "", domain},
		{"port out of range", testDomain + ":65536", "", domain},
		{"empty port", testDomain + ":", "", domain},
		{"port no entry names", "m.pub.example:8443", "", domain},
		{"the domain's own port", "m.pub.example:8080", "", "m.pub.example:8080"},
		{"a port an allowed entry names", "m.pub.example:9443", "", "m.pub.example:9443"},
		{"the port of server.listen", "m.pub.example:7070", "", "m.pub.example:7070"},
		{"allowed name without port", "m.pub.example", "", "m.pub.example"},
		{"forged X-Forwarded-Host", testDomain, testDomain + ":&commat;evil.example", domain},
		{"forged X-Forwarded-Host first element", testDomain, testDomain + ":@evil.example, m.pub.example", domain},
		{"valid X-Forwarded-Host", testDomain, "m.pub.example, evil.example", "m.pub.example"},
		{"foreign host is not sent to the origin", "evil.example", "", domain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *env
			seen := make(chan string, 1)
			e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen <- r.Header.Get("X-Forwarded-Host")
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, `<a href="https://%s/a">`, e.host)
			}), func(c *config.Config) {
				c.Publisher.Domain = domain
				c.Server.Listen = ":7070"
				c.Publisher.AllowedHosts = []string{"m.pub.example", "static.pub.example:9443"}
				c.Server.TrustedProxies = []string{"127.0.0.0/8", "::1/128"}
			})
			opts := []reqOpt{func(r *http.Request) { r.Host = tt.host }}
			if tt.xfh != "" {
				opts = append(opts, header("X-Forwarded-Host", tt.xfh))
			}
			_, body := e.mustGet(t, "/", opts...)
			if want := `<a href="http://` + tt.want + `/a">`; string(body) != want {
				t.Errorf("link: got %s, want %s", body, want)
			}
			if got := <-seen; got != tt.want {
				t.Errorf("origin saw X-Forwarded-Host %q, want %q", got, tt.want)
			}
		})
	}
}

func TestValidHost(t *testing.T) {
	for s, want := range map[string]bool{
		"www.pub.example": true, "www.pub.example:8080": true, "127.0.0.1:1": true, "[::1]:443": true, "[::1]": true,
		"": false, "a:@b": false, "a:80@b": false, "a:0": false, "a:65536": false, "a b": false, "a/b": false,
		"a..b": false, "-a.b": false, "a.b.": false, "[::1]x": false, "[fe80::1%25eth0]": false, "a:+80": false,
	} {
		if got := validHost(s); got != want {
			t.Errorf("validHost(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestForwardedParams reads Forwarded (RFC 7239 §4) as both of its readers
// do: every element's for= for the client address, the first element's
// host= and proto= for the links; names in any case, values quoted or not,
// X-Forwarded-* only without Forwarded.
func TestForwardedParams(t *testing.T) {
	tests := []struct {
		name        string
		h           http.Header
		hops        []string
		host, proto string
	}{
		{"quoted values, mixed case", http.Header{"Forwarded": {`For="[2001:db8::1]:80";Host="m.pub.example";PROTO=HTTPS, for=10.0.0.1`}},
			[]string{"[2001:db8::1]:80", "10.0.0.1"}, "m.pub.example", "https"},
		{"several headers", http.Header{"Forwarded": {"for=192.0.2.1", "for=10.0.0.1;proto=http"}},
			[]string{"192.0.2.1", "10.0.0.1"}, "", ""},
		{"host only in a later element", http.Header{"Forwarded": {"for=192.0.2.1, host=evil.example"}},
			[]string{"192.0.2.1"}, "", ""},
		{"X-Forwarded-*", http.Header{"X-Forwarded-For": {"203.0.113.1, 10.0.0.1"}, "X-Forwarded-Host": {"m.pub.example, x"}, "X-Forwarded-Proto": {"HTTPS"}},
			[]string{"203.0.113.1", "10.0.0.1"}, "m.pub.example", "https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := forwardedFor(tt.h); !slices.Equal(got, tt.hops) {
				t.Errorf("forwardedFor = %q, want %q", got, tt.hops)
			}
			if host, proto := forwardedHostProto(tt.h); host != tt.host || proto != tt.proto {
				t.Errorf("forwardedHostProto = %q, %q, want %q, %q", host, proto, tt.host, tt.proto)
			}
		})
	}
}
