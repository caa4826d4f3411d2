package proxy

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
)

// Both publisher.ssat_cache_control policies reach every personalised
// response, the page and an error answered instead of it, and both drop
// the origin's validators and shared-cache headers.
func TestSSATCacheControlPolicies(t *testing.T) {
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
			// The origin answers these requests 304 (checked directly);
			// through ssatd, which drops the validators of a personalised
			// page (docs/behaviour.md, "Origin request"), the whole page.
			for _, v := range []reqOpt{header("If-None-Match", `"v1"`), header("If-Modified-Since", cacheableModified)} {
				if direct := originStatus(t, e.origin, v); direct != http.StatusNotModified {
					t.Fatalf("the origin answers a conditional GET %d, want 304: the check below could not fail", direct)
				}
				resp, body := e.mustGet(t, "/", navigate, v)
				if resp.StatusCode != http.StatusOK || len(body) == 0 {
					t.Errorf("conditional GET: %d with %d bytes, want the whole page", resp.StatusCode, len(body))
				}
				checkPrivate(t, "conditional page", resp.Header, want)
			}
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

// cacheableModified is the Last-Modified of cacheable's page.
const cacheableModified = "Tue, 01 Dec 2026 10:00:00 GMT"

// cacheable serves h's page as a cacheable one, with validators and
// shared-cache headers, and honours the validators: http.ServeContent
// answers a matching If-None-Match or If-Modified-Since with a 304
// (RFC 9110 §13.1.2, §13.1.3), as an origin server does.
func cacheable(h http.Handler) http.Handler {
	modified, err := http.ParseTime(cacheableModified)
	if err != nil {
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range map[string]string{
			"Cache-Control": "public, max-age=600", "ETag": `"v1"`,
			"Expires": "Tue, 01 Dec 2026 11:00:00 GMT", "Age": "30", "Surrogate-Control": "max-age=3600",
			"CDN-Cache-Control": "max-age=60", "Fastly-Surrogate-Control": "max-age=60", "Cloudflare-CDN-Cache-Control": "max-age=60",
		} {
			w.Header().Set(k, v)
		}
		page := httptest.NewRecorder()
		h.ServeHTTP(page, r)
		w.Header().Set("Content-Type", page.Header().Get("Content-Type"))
		http.ServeContent(w, r, "", modified, bytes.NewReader(page.Body.Bytes()))
	})
}

// originStatus is the status origin answers a GET of / with opt.
func originStatus(t *testing.T, origin *httptest.Server, opt reqOpt) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, origin.URL+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	opt(req)
	resp, err := origin.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
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
