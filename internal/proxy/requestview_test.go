package proxy

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
)

// The origin request under each compute.request_view. "ssatd" tells the
// origin who the client is (X-Forwarded-*); "fastly" sends what Trusted
// Server's guest sends on Compute: no forwarding header of ssatd's, the
// client's spoofable ones stripped, its X-Forwarded-For as it came.
func TestOriginRequestView(t *testing.T) {
	client := []reqOpt{navigate,
		header("X-Forwarded-For", "203.0.113.7"), header("X-Forwarded-Host", "evil.example"),
		header("X-Forwarded-Proto", "https"), header("Forwarded", "for=203.0.113.7;host=evil.example"),
		header("Fastly-SSL", "1"), header("X-Ts-Tls-Protocol", "TLSv1.3"), header("X-Custom", "kept")}
	tests := []struct {
		name string
		cfg  func(*config.Config)
		want map[string]string // "" = absent
	}{
		{"ssatd", func(*config.Config) {}, map[string]string{
			"X-Forwarded-For": "127.0.0.1", "X-Forwarded-Host": testDomain, "X-Forwarded-Proto": "http",
			"Forwarded": "", "Fastly-SSL": "1", "X-Custom": "kept",
		}},
		{"fastly, the default under limits = fastly", fastlyLimits, map[string]string{
			"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Host": "", "X-Forwarded-Proto": "",
			"Forwarded": "", "Fastly-SSL": "", "X-Ts-Tls-Protocol": "", "X-Custom": "kept",
		}},
		{"fastly without limits", func(c *config.Config) { c.Compute.RequestView = config.RequestViewFastly }, map[string]string{
			"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Host": "", "X-Forwarded-Proto": "", "Fastly-SSL": "",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *env
			var hits atomic.Int32
			seen := make(chan http.Header, 1)
			e = newEnv(t, countingOrigin(&e, &hits, seen), tt.cfg)
			e.mustGet(t, "/", client...)
			h := <-seen
			for k, want := range tt.want {
				if got := strings.Join(h.Values(k), ", "); got != want {
					t.Errorf("origin saw %s %q, want %q", k, got, want)
				}
			}
			if !strings.HasPrefix(h.Get("CDN-Loop"), "ssatd-") {
				t.Errorf("origin saw CDN-Loop %q, want ssatd's token in either view", h.Get("CDN-Loop"))
			}
		})
	}
}

// Without a client X-Forwarded-For, the fastly view sends none: Fastly
// adds none on Compute.
func TestFastlyViewAddsNoXForwardedFor(t *testing.T) {
	var e *env
	var hits atomic.Int32
	seen := make(chan http.Header, 1)
	e = newEnv(t, countingOrigin(&e, &hits, seen), fastlyLimits)
	e.mustGet(t, "/", navigate)
	if h := <-seen; len(h.Values("X-Forwarded-For")) != 0 {
		t.Errorf("origin saw X-Forwarded-For %q, want none", h.Values("X-Forwarded-For"))
	}
}
