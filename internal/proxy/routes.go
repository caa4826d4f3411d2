package proxy

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/firstparty"
	"github.com/ssatd/ssatd/internal/identity"
	"github.com/ssatd/ssatd/internal/rewrite"
	"github.com/ssatd/ssatd/internal/tester"
	"github.com/ssatd/ssatd/internal/tsjs"
)

// newRoutes is the client side's route table: which route family serves
// which method and path, in one place. Whatever it does not name, other
// methods on the paths it names included, falls through to the page path
// (servePage), which proxies the origin, as upstream's router sends every
// method it does not route to its publisher fallback
// (IABTechLab/trusted-server crates/trusted-server-adapter-fastly/src/
// app.rs:1081-1185, NAMED_ROUTES, and app.rs:1264-1285, where each named
// route's other methods and "/{*rest}" get fallback_handler), except the
// admin namespaces, answered 404 (fallback, identity.go).
//
// A family is a package whose handlers get the guest through family.Seam
// (internal/family); it is built here from the configuration and the seam.
// Its line names how it is let in, the route label of its access lines and
// metrics, the path, the handler and the methods (none: every method). It
// is let in opened (a record, no admission: a static answer) or admitted
// (first a place among the requests in progress, since it runs work for
// the client). A prefix family is one line too, with Mount: for instance
//
//	m.With(g.admitted("integration")).Mount("/integrations/{id}", integrations.Handler())
//
// Requests reach the table after the refusals of refusals.go, so a bad
// request-target never gets here; the table routes on the decoded path
// (routed), and the request goes on to the origin exactly as it came.
func (g *Guest) newRoutes(cfg *config.Config, bundle tsjs.Bundle) http.Handler {
	seam := guestSeam{g}
	ts := tsjs.New(cfg, seam, bundle)

	m := chi.NewRouter()
	// First, so that a family mounted below inherits the fall-through for
	// what it does not serve itself.
	m.NotFound(g.fallback)
	m.MethodNotAllowed(g.fallback)

	// tsjs (internal/tsjs). Upstream routes only POST on /auction and
	// sends its other methods to the origin; ssatd answers them 405 with
	// Allow: POST (docs/behaviour.md, "Fidelity"), so /auction takes every
	// method.
	serve(m, g.opened(routeBundle), rewrite.StaticPrefix+"*", ts.Bundle(), http.MethodGet, http.MethodHead)
	serve(m, g.admitted(routeAuction), tsjs.AuctionPath, ts.Auction())
	serve(m, g.admitted(routePageBids), tsjs.PageBidsPath, ts.PageBids(), http.MethodGet, http.MethodOptions)
	serve(m, g.admitted(routePageBids), tsjs.PageBidsLegacyPath, ts.PageBids(), http.MethodGet, http.MethodOptions)

	// Request signing (internal/signing): the discovery document, verify
	// and the admin key routes, with a key directory.
	g.signingRoutes(m)

	// The tester cookie (internal/tester): GET only, 404 when
	// tester_cookie is off, as upstream routes them whatever the switch.
	tr := tester.New(cfg.TesterCookie)
	serve(m, g.opened(routeTester), tester.SetPath, tr.Set(), http.MethodGet)
	serve(m, g.opened(routeTester), tester.ClearPath, tr.Clear(), http.MethodGet)

	// First-party routes (internal/firstparty), with publisher.proxy_secret:
	// upstream's methods only, the others falling through to the origin
	// (crates/trusted-server-adapter-fastly/src/app.rs:34-39). The proxy
	// fetches a third party for the client, so it is admitted.
	if g.firstParty != nil {
		for _, rt := range g.firstParty.Routes() {
			in := g.opened(routeFirstParty)
			if rt.Path == firstparty.PathProxy {
				in = g.admitted(routeFirstParty)
			}
			serve(m, in, rt.Path, rt.Handler, rt.Method)
		}
	}

	// identity (internal/identity): the partner routes, served with
	// ec.passphrase (ec/identify.rs, ec/batch_sync.rs). A batch-sync
	// writes up to 1000 entries, so it takes a place among the requests
	// in progress; identify reads one.
	if g.identity != nil {
		serve(m, g.opened(routeIdentify), identity.IdentifyPath, g.identity.Identify(), http.MethodGet, http.MethodOptions)
		serve(m, g.admitted(routeBatchSync), identity.BatchSyncPath, g.identity.BatchSync(), http.MethodPost)
		// The admin lookups (ec/admin.rs): basic auth closed them (404)
		// unless a handler covers them; adminOnly asks again on the
		// decoded path.
		lookup := g.adminOnly(g.identity.AdminEC())
		serve(m, g.opened(routeAdminEC), identity.AdminECPath, lookup, http.MethodGet)
		serve(m, g.opened(routeAdminEC), identity.AdminECPath+"/{id}", lookup, http.MethodGet)
	}
	return m
}

// serve routes methods on pattern to h, let in by in; no methods is every
// method, those chi does not know included (otherMethod).
func serve(m chi.Router, in func(http.Handler) http.Handler, pattern string, h http.Handler, methods ...string) {
	if len(methods) == 0 {
		m.With(in).Handle(pattern, h)
		return
	}
	for _, method := range methods {
		m.With(in).Method(method, pattern, h)
	}
}

// otherMethod is what the route table sees for a method chi does not know
// (a WebDAV verb, an extension method): chi would send such a request to
// its method-not-allowed handler whatever its path, so a route naming
// every method (Handle) would miss it. Registered, it is one more method
// that Handle routes and Method does not.
const otherMethod = "SSATD-OTHER-METHOD"

// chiMethods are the methods chi knows without registration.
var chiMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodConnect: true,
	http.MethodOptions: true, http.MethodTrace: true,
}

func init() { chi.RegisterMethod(otherMethod) }

// routed is r as the route table takes it: with its exchange, and routed
// on the decoded path (r.URL.Path), the path the guest has always matched,
// rather than chi's default of the raw one: "/auct%69on" is /auction. The
// request itself, its target included, is not changed.
func routed(r *http.Request, x *exchange) *http.Request {
	rc := chi.NewRouteContext()
	rc.RoutePath, rc.RouteMethod = r.URL.Path, r.Method
	if rc.RoutePath == "" {
		rc.RoutePath = "/"
	}
	if !chiMethods[r.Method] {
		rc.RouteMethod = otherMethod
	}
	ctx := context.WithValue(r.Context(), exchangeKey{}, x)
	return r.WithContext(context.WithValue(ctx, chi.RouteCtxKey, rc))
}

// opened opens the record of a request a family answers without
// admission, and closes it when the family's handler returns: the status
// and body bytes it wrote, unencoded (the edge may compress them), then
// the access line and metrics (finish).
func (g *Guest) opened(rt route) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			x := exchangeOf(r)
			x.route = rt
			h.ServeHTTP(x.front, r)
			g.closeRecord(r, x)
		})
	}
}

// admitted is opened behind admission: the request takes its place among
// the requests in progress like any other (docs/behaviour.md, "Admission
// order"), and is refused 503 with Retry-After when they are full.
func (g *Guest) admitted(rt route) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			x := exchangeOf(r)
			x.route = rt
			x.client = g.clientKey(r, x)
			if place, err := admitShared(r.Context(), g.clientRequests, g.requests, x.client, g.requests.deadline(0)); err != nil {
				x.ctx = r.Context()
				g.answerError(x.front, r, x, err)
			} else {
				h.ServeHTTP(x.front, r)
				place.release()
			}
			g.closeRecord(r, x)
		})
	}
}

// closeRecord takes what a family's handler wrote from the front writer
// and finishes the request.
func (g *Guest) closeRecord(r *http.Request, x *exchange) {
	x.status, x.outCoding, x.outBytes = x.front.status, string(compress.Identity), x.front.written
	g.finish(r, x)
}
