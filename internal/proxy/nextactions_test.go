package proxy

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
)

// nextActionCheck is an origin standing in for a Next.js App Router app
// answering a Server Action (a POST with a Next-Action header). It applies
// Next.js's CSRF check: the host of the request's Origin must equal the
// app's own host, the first element of X-Forwarded-Host, else Host, or be
// listed in serverActions.allowedOrigins; otherwise the action is refused
// with a 500 "Invalid Server Actions request." (vercel/next.js,
// packages/next/src/server/app-render/action-handler.ts: handleAction,
// parseHostHeader; csrf-protection.ts: isCsrfOriginAllowed, whose
// wildcard entries this stand-in leaves out). A request without Origin
// passes with a warning there, and here. Each action's request headers,
// Host included, go to seen.
func nextActionCheck(allowedOrigins []string, seen chan<- http.Header) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Clone()
		h.Set("Host", r.Host)
		seen <- h
		if r.Method != http.MethodPost || r.Header.Get("Next-Action") == "" {
			http.Error(w, "not a Server Action", http.StatusBadRequest)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			host := strings.TrimSpace(strings.Split(r.Header.Get("X-Forwarded-Host"), ",")[0])
			if host == "" {
				host = r.Host
			}
			if err != nil || host == "" || u.Host != host {
				if err != nil || !slices.Contains(allowedOrigins, u.Host) {
					http.Error(w, "Invalid Server Actions request.", http.StatusInternalServerError)
					return
				}
			}
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "action ran")
	}
}

// TestNextServerActionsUnderEachRequestView shows what a Next.js origin
// does with a Server Action that a browser on the publisher's host sends
// through ssatd: under compute.request_view = "ssatd" the origin gets the
// publisher's host as X-Forwarded-Host and runs it; under "fastly" it
// gets neither X-Forwarded-Host nor the publisher's host in Host, as
// behind Trusted Server on Fastly, and refuses it, until the publisher's
// host is in the app's serverActions.allowedOrigins, or is the Host that
// publisher.origin_host_header_override sends (docs/behaviour.md, "React
// and Next.js sites").
func TestNextServerActionsUnderEachRequestView(t *testing.T) {
	fastlyView := func(c *config.Config) { c.Compute.RequestView = config.RequestViewFastly }
	tests := []struct {
		name    string
		view    func(*config.Config)
		allowed []string
		status  int
		body    string
		xfh     string // the X-Forwarded-Host the origin saw
		host    string // the Host it saw; "" is the origin's own
	}{
		{"ssatd view", func(*config.Config) {}, nil, http.StatusOK, "action ran", testDomain, ""},
		{"fastly view", fastlyView, nil, http.StatusInternalServerError, "Invalid Server Actions request.\n", "", ""},
		{"fastly limits, whose view is fastly", fastlyLimits, nil, http.StatusInternalServerError, "Invalid Server Actions request.\n", "", ""},
		{"fastly view, publisher host in allowedOrigins", fastlyView, []string{testDomain}, http.StatusOK, "action ran", "", ""},
		{"fastly view, publisher host as the origin's Host", func(c *config.Config) {
			fastlyView(c)
			c.Publisher.OriginHostHeaderOverride = testDomain
		}, nil, http.StatusOK, "action ran", "", testDomain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := make(chan http.Header, 1)
			e := newEnv(t, nextActionCheck(tt.allowed, seen), tt.view)
			resp, body := e.post(t, "/cart", "text/plain;charset=UTF-8", `["item-1"]`,
				header("Origin", "http://"+testDomain), header("Next-Action", "7f3a"),
				header("Accept", "text/x-component"), header("Sec-Fetch-Site", "same-origin"))
			h := <-seen
			if resp.StatusCode != tt.status || string(body) != tt.body {
				t.Errorf("status %d %q, want %d %q", resp.StatusCode, body, tt.status, tt.body)
			}
			if got := h.Get("X-Forwarded-Host"); got != tt.xfh {
				t.Errorf("origin saw X-Forwarded-Host %q, want %q", got, tt.xfh)
			}
			wantHost := tt.host
			if wantHost == "" {
				wantHost = e.host
			}
			if got := h.Get("Host"); got != wantHost {
				t.Errorf("origin saw Host %q, want %q", got, wantHost)
			}
		})
	}
}
