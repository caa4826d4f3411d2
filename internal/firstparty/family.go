package firstparty

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Paths served by the family (core/../adapter-fastly/src/app.rs:34-39).
const (
	PathProxy   = "/first-party/proxy"
	PathClick   = "/first-party/click"
	PathSign    = "/first-party/sign"
	PathRebuild = "/first-party/proxy-rebuild"
)

// Upstream's limits, and ssatd's own where upstream has none.
const (
	// signMaxBody and rebuildMaxBody bound POST bodies (core/proxy.rs:45-46).
	signMaxBody    = 65536
	rebuildMaxBody = 65536
	// DefaultMaxRewriteBytes is upstream's MAX_REWRITABLE_BODY_SIZE
	// (core/creative.rs:49): an HTML or CSS answer larger than this is not
	// rewritten but refused.
	DefaultMaxRewriteBytes = 10 << 20
	// DefaultMaxBodyBytes bounds any other proxied answer. Upstream streams
	// those unbounded; ssatd does not let a signed URL pull an unbounded
	// body through the daemon.
	DefaultMaxBodyBytes = 32 << 20
	// DefaultFirstByteTimeout is the dynamic backend's first-byte timeout
	// upstream (adapter-fastly/src/backend.rs:81).
	DefaultFirstByteTimeout = 15 * time.Second
	// DefaultFetchTimeout bounds a whole fetch, redirects and body included.
	DefaultFetchTimeout = 30 * time.Second
	// DefaultPerClient bounds concurrent fetches of one client.
	DefaultPerClient = 16
	// signLifetime is how long a /first-party/sign URL lives (core/proxy.rs:1751-1758).
	signLifetime = 30 * time.Second
)

// Config is the family's settings, mapped from Trusted Server's
// publisher.proxy_secret, [proxy], [rewrite] and [auction] by internal/config.
type Config struct {
	// ProxySecret is publisher.proxy_secret; required.
	ProxySecret string
	// AllowedDomains is [proxy] allowed_domains: exact hosts or "*.domain"
	// (core/proxy.rs:1287-1313). Empty means any public host.
	AllowedDomains []string
	// CertificateCheck is [proxy] certificate_check (upstream default true).
	CertificateCheck bool
	// ExcludeDomains is [rewrite] exclude_domains: URLs on these hosts are
	// left as they are by the rewriter and refused by /first-party/sign.
	ExcludeDomains []string
	// SanitizeCreatives is auction.sanitize_creatives.
	SanitizeCreatives bool

	// MaxRewriteBytes, MaxBodyBytes, FirstByteTimeout, FetchTimeout and
	// PerClient default to the Default* constants when zero.
	MaxRewriteBytes  int64
	MaxBodyBytes     int64
	FirstByteTimeout time.Duration
	FetchTimeout     time.Duration
	PerClient        int

	// AllowAddrs lets the address guard through to these prefixes although
	// they are loopback, private or link-local. No setting maps to it: it is
	// for tests whose stand-in third parties listen on 127.0.0.1. A host
	// listed exactly in AllowedDomains is let through without it.
	AllowAddrs []netip.Prefix
}

// Deps is what the family needs from the daemon.
type Deps struct {
	// Log is where refused and failed fetches are logged; nil logs nothing.
	Log *zap.Logger
	// Now is the clock for tsexp; nil is time.Now.
	Now func() time.Time
	// ClientKey names the client a request's concurrent fetches count
	// against; nil keys by the remote address's host.
	ClientKey func(*http.Request) string
	// ECID returns the request's Edge Cookie id to append as ts-ec to
	// proxied and clicked URLs (core/proxy.rs:1246-1285); nil appends none.
	ECID func(*http.Request) string
	// BundleTag is prepended to a proxied HTML document's <body> (the tsjs
	// creative runtime, core/creative.rs:701-712); empty injects nothing.
	BundleTag string
	// RootCAs verifies third parties' certificates; nil is the system pool.
	RootCAs *x509.CertPool
	// Scheme is the scheme the client used, which a protocol-relative URL
	// given to /first-party/sign inherits: upstream falls back from the
	// request URI's to the TLS and forwarded metadata
	// (core/proxy.rs:1684-1698), as the daemon's view of the client does
	// behind a trusted proxy; nil takes the request's own (its TLS).
	Scheme func(*http.Request) string
	// OnFetch, if set, is called before each outgoing request (each hop of
	// a redirect chain), so that the daemon can count it as a backend
	// request under compute.limits = "fastly".
	OnFetch func(*http.Request)
}

// Family serves the four /first-party/* routes.
type Family struct {
	cfg    Config
	deps   Deps
	signer *Signer
	client *http.Client
	slots  *clientSlots
}

// New validates cfg once and builds the family.
func New(cfg Config, deps Deps) (*Family, error) {
	signer, err := NewSigner(cfg.ProxySecret)
	if err != nil {
		return nil, err
	}
	for _, d := range cfg.AllowedDomains {
		if err := CheckDomainPattern(d); err != nil {
			return nil, fmt.Errorf("firstparty: proxy.allowed_domains: %w", err)
		}
	}
	for _, d := range cfg.ExcludeDomains {
		if err := CheckDomainPattern(d); err != nil {
			return nil, fmt.Errorf("firstparty: rewrite.exclude_domains: %w", err)
		}
	}
	if cfg.MaxRewriteBytes < 0 || cfg.MaxBodyBytes < 0 || cfg.FirstByteTimeout < 0 ||
		cfg.FetchTimeout < 0 || cfg.PerClient < 0 {
		return nil, errors.New("firstparty: limits must not be negative")
	}
	setDefault(&cfg.MaxRewriteBytes, DefaultMaxRewriteBytes)
	setDefault(&cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	setDefault(&cfg.FirstByteTimeout, DefaultFirstByteTimeout)
	setDefault(&cfg.FetchTimeout, DefaultFetchTimeout)
	setDefault(&cfg.PerClient, DefaultPerClient)
	if deps.Log == nil {
		deps.Log = zap.NewNop()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.ClientKey == nil {
		deps.ClientKey = remoteHost
	}
	if deps.Scheme == nil {
		deps.Scheme = requestScheme
	}
	f := &Family{cfg: cfg, deps: deps, signer: signer, slots: newClientSlots(cfg.PerClient)}
	f.client = f.newClient()
	return f, nil
}

func setDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// CheckDomainPattern reports whether d is a host or "*.domain", as
// [proxy] allowed_domains and [rewrite] exclude_domains entries must be.
func CheckDomainPattern(d string) error {
	h := strings.TrimPrefix(d, "*.")
	if h == "" || strings.ContainsAny(h, "/:*?#@ ") && !isIPv6Literal(h) {
		return fmt.Errorf("%q is not a host or *.domain", d)
	}
	return nil
}

func isIPv6Literal(h string) bool {
	a, err := netip.ParseAddr(strings.Trim(h, "[]"))
	return err == nil && a.Is6()
}

// Handler serves PathProxy, PathClick, PathSign and PathRebuild, and 404
// for anything else.
func (f *Family) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(PathProxy, methods(f.serveProxy, http.MethodGet))
	mux.HandleFunc(PathClick, methods(f.serveClick, http.MethodGet))
	mux.HandleFunc(PathSign, methods(f.serveSign, http.MethodGet, http.MethodPost))
	mux.HandleFunc(PathRebuild, methods(f.serveRebuild, http.MethodGet, http.MethodPost))
	return mux
}

// Close releases idle connections to third parties.
func (f *Family) Close() { f.client.CloseIdleConnections() }

// methods answers 405 with Allow for any other method: upstream routes only
// these (adapter-fastly/src/app.rs:34-39) and falls through to the publisher
// origin otherwise, which a route family cannot do.
func methods(h http.HandlerFunc, allowed ...string) http.HandlerFunc {
	allow := strings.Join(allowed, ", ")
	return func(w http.ResponseWriter, r *http.Request) {
		for _, m := range allowed {
			if r.Method == m {
				h(w, r)
				return
			}
		}
		w.Header().Set("Allow", allow)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}
