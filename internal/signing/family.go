// Package signing is Trusted Server's request signing: the Ed25519 key
// that signs every bid request (ext.trusted_server), the discovery
// document that publishes its public keys, and the routes that verify a
// signature and rotate and deactivate keys (IABTechLab/trusted-server
// crates/trusted-server-core/src/request_signing/; docs/behaviour.md,
// "Request signing").
//
// The daemon builds one Family from [request_signing] (New), routes each
// of Routes() to Handler(), and gives the auction Signer() as
// auction.OpenRTBOptions.TrustedServer, so that every bid request carries
// ext.trusted_server.
package signing

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/openrtb"
)

// The routes, as upstream's Fastly adapter registers them
// (crates/trusted-server-adapter-fastly/src/app.rs:1083-1136).
const (
	PathDiscovery  = "/.well-known/trusted-server.json"
	PathVerify     = "/verify-signature"
	PathRotate     = "/_ts/admin/keys/rotate"
	PathDeactivate = "/_ts/admin/keys/deactivate"
	// The legacy aliases of the admin routes, answered 404 so that a
	// request with admin credentials never reaches the origin
	// (app.rs:988-1003, 1071-1076, 1127-1136).
	PathLegacyRotate     = "/admin/keys/rotate"
	PathLegacyDeactivate = "/admin/keys/deactivate"
)

// Route is one route of the family. A method not listed for a path is not
// the family's: upstream sends it to the publisher's origin
// (app.rs:1260-1278).
type Route struct {
	Method, Path string
	// Admin routes must sit behind the operator's authentication
	// (upstream refuses to start unless a [[handlers]] entry covers them,
	// settings.rs:2957-3005).
	Admin bool
}

// Routes lists every route Handler serves.
func Routes() []Route {
	rs := []Route{
		{http.MethodGet, PathDiscovery, false},
		{http.MethodPost, PathVerify, false},
		{http.MethodPost, PathRotate, true},
		{http.MethodPost, PathDeactivate, true},
	}
	// app.rs:1071-1076: LEGACY_ADMIN_DENY_METHODS.
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		rs = append(rs, Route{m, PathLegacyRotate, false}, Route{m, PathLegacyDeactivate, false})
	}
	return rs
}

// Deps are what the family takes from the daemon.
type Deps struct {
	Logger *zap.Logger
	// AdminAuth, when set, decides an admin route's request, having
	// answered it when it returns false (as upstream's basic auth answers
	// 401). Nil leaves the admin routes closed: they answer 404, since
	// serving key rotation to anyone is never a default.
	AdminAuth func(http.ResponseWriter, *http.Request) bool
	Now       func() time.Time // nil: time.Now
	Rand      io.Reader        // key generation; nil: crypto/rand
}

// Family is the request-signing route family and the signer of bid
// requests.
type Family struct {
	enabled bool
	keys    *keyStore // nil without a key directory
	log     *zap.Logger
	auth    func(http.ResponseWriter, *http.Request) bool
	now     func() time.Time
	mux     *http.ServeMux
}

// ErrNoKey: signing is enabled and the key directory holds no current key.
var ErrNoKey = errors.New("no current signing key")

// New loads the key directory and checks that, when signing is enabled,
// it has a key to sign with: upstream finds out on the first bid request
// (signing.rs:138-157), ssatd at start.
func New(cfg config.RequestSigningConfig, deps Deps) (*Family, error) {
	f := &Family{enabled: cfg.Enabled, log: deps.Logger, auth: deps.AdminAuth, now: deps.Now}
	if f.log == nil {
		f.log = zap.NewNop()
	}
	if f.now == nil {
		f.now = time.Now
	}
	random := deps.Rand
	if random == nil {
		random = rand.Reader
	}
	if cfg.KeyDir != "" {
		ks, err := openKeyStore(cfg.KeyDir, random, f.now, f.log)
		if err != nil {
			return nil, fmt.Errorf("request_signing.key_dir: %w", err)
		}
		f.keys = ks
	}
	if cfg.Enabled {
		if f.keys == nil {
			return nil, fmt.Errorf("request_signing.key_dir: %w: signing is enabled without a key directory", ErrNoKey)
		}
		if _, key := f.keys.signer(); key == nil {
			return nil, fmt.Errorf("request_signing.key_dir: %w in %s (create one with: ssatd keys init -dir %s)", ErrNoKey, cfg.KeyDir, cfg.KeyDir)
		}
	}
	f.mux = http.NewServeMux()
	f.mux.HandleFunc("GET "+PathDiscovery, f.discovery)
	f.mux.HandleFunc("POST "+PathVerify, f.verify)
	f.mux.Handle("POST "+PathRotate, f.admin(f.rotate))
	f.mux.Handle("POST "+PathDeactivate, f.admin(f.deactivate))
	f.mux.HandleFunc(PathLegacyRotate, notFound)
	f.mux.HandleFunc(PathLegacyDeactivate, notFound)
	return f, nil
}

// Enabled reports whether bid requests are signed.
func (f *Family) Enabled() bool { return f.enabled }

// Handler serves Routes(); any other request is answered 404.
func (f *Family) Handler() http.Handler { return f.mux }

// Signer is the auction's hook (auction.OpenRTBOptions.TrustedServer):
// ext.trusted_server for a bid request, signed when signing is enabled.
func (f *Family) Signer() func(id, host string) *openrtb.TrustedServerExt { return f.Ext }

func (f *Family) admin(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.auth == nil {
			notFound(w, r)
			return
		}
		if f.auth(w, r) {
			h(w, r)
		}
	})
}

// notFound is upstream's local 404 for the legacy aliases (app.rs:995-1003).
func notFound(w http.ResponseWriter, _ *http.Request) {
	textError(w, http.StatusNotFound, "Not found")
}

// textError answers as upstream's http_error: text/plain, the message and
// a newline (app.rs:974-986).
func textError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}
