// Package tester is Trusted Server's tester-cookie routes: GET
// /_ts/set-tester sets ts-tester=true on the publisher's cookie domain and
// GET /_ts/clear-tester expires it (IABTechLab/trusted-server
// crates/trusted-server-core/src/tester_cookie.rs, routed by
// crates/trusted-server-adapter-fastly/src/app.rs:1148-1157;
// docs/behaviour.md, "Tester cookie").
package tester

import (
	"net/http"

	"github.com/ssatd/ssatd/internal/config"
)

// The routes, GET only, as upstream routes them.
const (
	SetPath   = "/_ts/set-tester"
	ClearPath = "/_ts/clear-tester"
)

// Cookie is the cookie's name (upstream's COOKIE_TS_TESTER, constants.rs).
const Cookie = "ts-tester"

// Routes are the set and clear handlers for cfg.
type Routes struct {
	enabled       bool
	set, clearing string
}

// New builds the routes; config.Validate has checked the domain.
func New(cfg config.TesterCookieConfig) Routes {
	d := cfg.CookieDomain
	return Routes{
		enabled: cfg.Enabled,
		// tester_cookie.rs:11-23, attribute for attribute.
		set:      Cookie + "=true; Domain=" + d + "; Path=/; Secure; SameSite=Lax",
		clearing: Cookie + "=; Domain=" + d + "; Path=/; Secure; SameSite=Lax; Max-Age=0",
	}
}

// Set serves /_ts/set-tester.
func (rt Routes) Set() http.Handler { return rt.answer(rt.set) }

// Clear serves /_ts/clear-tester.
func (rt Routes) Clear() http.Handler { return rt.answer(rt.clearing) }

// answer is upstream's: 204, no-store, the cookie; disabled, 404 with an
// empty body (tester_cookie.rs:25-80).
func (rt Routes) answer(cookie string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !rt.enabled {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Cache-Control", "no-store, private")
		w.Header().Set("Set-Cookie", cookie)
		w.WriteHeader(http.StatusNoContent)
	})
}
