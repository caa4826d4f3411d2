package proxy

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/ssatd/ssatd/internal/basicauth"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/signing"
)

// identityOptions are the guest's [[handlers]] and its request signing
// (docs/behaviour.md, "Basic authentication", "Request signing").
type identityOptions struct {
	auth *basicauth.Gate
	// signing is built whatever request_signing says: with signing off it
	// still gives every bid request ext.trusted_server's request_host and
	// request_scheme, as upstream writes them (integrations/prebid.rs:
	// 1942-1970). Its routes are served only with a key directory.
	signing      *signing.Family
	signingRoute bool
}

// newIdentity builds the handlers' gate and the signing family; it runs
// on start and on every reload, as the guest is built anew.
func (g *Guest) newIdentity(cfg *config.Config) error {
	auth, err := basicauth.New(cfg.Handlers)
	if err != nil {
		return err
	}
	fam, err := signing.New(cfg.RequestSigning, signing.Deps{Logger: g.log.Named("signing"), AdminAuth: g.adminAuth})
	if err != nil {
		return err
	}
	g.identityOptions = identityOptions{auth: auth, signing: fam, signingRoute: cfg.RequestSigning.KeyDir != ""}
	return nil
}

// challenge asks the [[handlers]] credentials before routing, so that they
// cover the origin's pages and every route family alike (upstream's
// AuthMiddleware runs ahead of its router: crates/trusted-server-adapter-
// fastly/src/app.rs:1252-1256). It reports whether it answered r.
func (g *Guest) challenge(w http.ResponseWriter, r *http.Request, x *exchange) bool {
	v := g.auth.Check(r)
	if v == basicauth.Pass {
		return false
	}
	x.route, x.status = routeRejected, v.Status()
	g.recordFailure(x, outcomeOK, reasonUnauthorized, nil)
	basicauth.Write(w, v)
	g.finish(r, x)
	return true
}

// adminAuth is the signing family's admin check (signing.Deps.AdminAuth):
// the handlers again, on the decoded path the route table matched, so that
// a raw path that escaped every handler ("/_ts/%61dmin/keys/rotate") and
// was decoded onto an admin route is still asked for credentials.
func (g *Guest) adminAuth(w http.ResponseWriter, r *http.Request) bool {
	v := g.auth.CheckPath(r, r.URL.Path)
	if v == basicauth.Pass {
		return true
	}
	basicauth.Write(w, v)
	return false
}

// adminOnly serves h to a request adminAuth lets in.
func (g *Guest) adminOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.adminAuth(w, r) {
			h.ServeHTTP(w, r)
		}
	})
}

// signingRoutes routes the signing family's methods and paths
// (signing.Routes) when a key directory is set; the others fall through
// to the origin, as upstream's.
func (g *Guest) signingRoutes(m chi.Router) {
	if !g.signingRoute {
		return
	}
	h := g.signing.Handler()
	for _, rt := range signing.Routes() {
		in := g.opened(routeSigning)
		if rt.Method == http.MethodPost {
			// Verifying a signature and rotating keys are work done for
			// the client: admitted like the other callbacks.
			in = g.admitted(routeSigning)
		}
		serve(m, in, rt.Path, h, rt.Method)
	}
}

// fallback is where the route table sends what no line serves: the
// origin, except the admin namespaces, whose requests may carry admin
// credentials and bodies the origin must never see; those are answered
// 404 as upstream's deny_admin_diagnostic_fallback answers them
// (crates/trusted-server-core/src/ec/admin.rs:169-195, run first in the
// Fastly adapter's dispatch_fallback, app.rs:745-752).
func (g *Guest) fallback(w http.ResponseWriter, r *http.Request) {
	if basicauth.Reserved(r.URL.EscapedPath()) {
		g.opened(routeRejected)(http.HandlerFunc(adminNotFound)).ServeHTTP(w, r)
		return
	}
	g.servePage(w, r)
}

// adminNotFound is upstream's json_error(404, ...) (ec/admin.rs:659-672).
func adminNotFound(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"error":"admin diagnostic route not found"}`))
}
