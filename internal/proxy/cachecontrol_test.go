package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
)

// Both publisher.ssat_cache_control policies reach every personalised
// response, the page and an error answered instead of it, and both drop
// the origin's validators and shared-cache headers.
func TestSSATCacheControlPolicies(t *testing.T) {
	cacheable := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for k, v := range map[string]string{
				"Cache-Control": "public, max-age=600", "ETag": `"v1"`, "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT",
				"Expires": "Tue, 01 Dec 2026 11:00:00 GMT", "Age": "30", "Surrogate-Control": "max-age=3600",
				"CDN-Cache-Control": "max-age=60", "Fastly-Surrogate-Control": "max-age=60", "Cloudflare-CDN-Cache-Control": "max-age=60",
			} {
				w.Header().Set(k, v)
			}
			h.ServeHTTP(w, r)
		})
	}
	for _, policy := range []string{"", config.SSATCachePrivate, config.SSATCacheNoStorePrivate} {
		want := policy
		if want == "" {
			want = "private, max-age=0" // the default
		}
		t.Run(want, func(t *testing.T) {
			e := newEnv(t, cacheable(htmlPage), func(c *config.Config) {
				if policy != "" {
					c.Publisher.SSATCacheControl = policy
				}
			})
			resp, body := e.mustGet(t, "/", navigate)
			if resp.StatusCode != 200 || len(body) == 0 {
				t.Fatalf("%d", resp.StatusCode)
			}
			checkPrivate(t, "page", resp.Header, want)
			// A 304 could only come back through a validator; none is left.
			resp, _ = e.mustGet(t, "/", navigate, header("If-None-Match", `"v1"`))
			if resp.StatusCode != 200 {
				t.Errorf("conditional GET: %d, want the whole page", resp.StatusCode)
			}
			checkPrivate(t, "conditional page", resp.Header, want)
		})
		t.Run(want+" error", func(t *testing.T) {
			e := newEnv(t, http.NotFoundHandler(), func(c *config.Config) {
				if policy != "" {
					c.Publisher.SSATCacheControl = policy
				}
			})
			e.origin.Close() // the origin is gone: a 502 is answered for the page
			resp, _ := e.mustGet(t, "/", navigate)
			if resp.StatusCode != http.StatusBadGateway {
				t.Fatalf("%d", resp.StatusCode)
			}
			checkPrivate(t, "502", resp.Header, want)
		})
	}
}

func checkPrivate(t *testing.T, what string, h http.Header, want string) {
	t.Helper()
	if cc := h.Values("Cache-Control"); len(cc) != 1 || cc[0] != want {
		t.Errorf("%s: Cache-Control %q, want %q", what, cc, want)
	}
	for _, k := range sharedCacheHeaders {
		if v := h.Get(k); v != "" {
			t.Errorf("%s: %s: %q left on a personalised response", what, k, v)
		}
	}
}

func TestSSATCacheControlConfigNamesTheKey(t *testing.T) {
	c := config.Defaults()
	c.Publisher.Domain, c.Publisher.OriginURL = testDomain, "http://127.0.0.1:1"
	c.Publisher.SSATCacheControl = "public"
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "publisher.ssat_cache_control") {
		t.Errorf("Validate: %v", err)
	}
}
