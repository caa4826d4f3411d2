// Package daemon assembles what one ssatd process serves: the guest, the
// client-facing server around it and the admin server. `ssatd serve`, the
// demo and the public test kit (ssatdtest) all build it here, so that what
// a test starts is what production runs.
package daemon

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/auction"
	"github.com/ssatd/ssatd/internal/bundle"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/metrics"
	"github.com/ssatd/ssatd/internal/proxy"
	"github.com/ssatd/ssatd/internal/server"
	"github.com/ssatd/ssatd/internal/store"
	"github.com/ssatd/ssatd/internal/telemetry"
)

// ErrNotReady is the Ready error of a daemon that is starting or
// draining: /readyz says only "not ready".
var ErrNotReady = errors.New("not ready")

// Options are what the caller adds to the assembled parts.
type Options struct {
	// Ready is /readyz: nil when ready, else why not. nil means always
	// ready.
	Ready func(context.Context) error
	// Wrap, if set, wraps the client-side handler (serve counts the
	// handlers running, for its shutdown).
	Wrap func(http.Handler) http.Handler
	// Metrics, if set, is the set the guest records into; serve shares one
	// across the configurations a reload swaps in, so no counter resets.
	Metrics *metrics.Set
	// AuctionStats, if set, receives the OpenRTB endpoints' counters
	// (registered on Metrics by the caller, once).
	AuctionStats *auction.Stats
	// Store keeps edge-cookie identities (OpenStore); nil: none. The
	// caller closes it; StoreFailed, if set, counts its failed calls.
	Store       store.Store
	StoreFailed func()
}

// Parts are the assembled servers. Nothing listens yet: the caller binds
// the sockets and serves Client with ServeClient, Admin with its Serve.
type Parts struct {
	Guest  *proxy.Guest
	Client *http.Server // the client-facing server: edge and guest
	Admin  *http.Server // /healthz, /readyz, /metrics
}

// Assemble builds the parts from a validated configuration.
func Assemble(cfg *config.Config, log *zap.Logger, o Options) (*Parts, error) {
	g, handler, err := Handler(cfg, log, o)
	if err != nil {
		return nil, err
	}
	if o.Wrap != nil {
		handler = o.Wrap(handler)
	}
	return &Parts{
		Guest:  g,
		Client: server.New(cfg, handler, telemetry.ErrorLog(log.Named("http"))),
		Admin:  NewAdmin(g.Metrics(), o.Ready, log),
	}, nil
}

// Handler builds the guest and the client-side handler around it (edge,
// client protections) from a validated configuration: what serves one
// configuration's requests. o's Metrics and AuctionStats are used; the
// rest of o is Assemble's.
func Handler(cfg *config.Config, log *zap.Logger, o Options) (*proxy.Guest, http.Handler, error) {
	g, err := proxy.New(cfg, proxy.Options{Logger: log, Bundle: bundle.JS(),
		Metrics: o.Metrics, AuctionStats: o.AuctionStats, Store: o.Store, StoreFailed: o.StoreFailed})
	if err != nil {
		return nil, nil, err
	}
	h, err := server.ClientHandler(cfg, g)
	if err != nil {
		return nil, nil, err
	}
	return g, h, nil
}

// NewAdmin is the admin server: /healthz, /readyz (ready: nil when ready,
// else why not; nil means always ready) and m's /metrics.
func NewAdmin(m *metrics.Set, ready func(context.Context) error, log *zap.Logger) *http.Server {
	return newAdminServer(adminRoutes(m, ready), log, adminLimits)
}

// limits are an http.Server's bounds on what one connection may hold.
type limits struct {
	readHeader, read, write, idle time.Duration
	maxHeaderBytes                int
}

// adminLimits give the admin listener the client listener's protections
// (docs/behaviour.md, "Limits"), scaled to its use: short GETs without a
// body from probes and a metrics scraper, so a connection that sends
// nothing, sends slowly or stops reading is closed instead of being held
// for ever. Idle keep-alive connections last longer than the usual 15 s to
// 60 s scrape interval, so that a scraper keeps its connection between
// scrapes; a whole response (the write bound) has room for /readyz's
// origin check (publisher.origin_connect_timeout, 5 s by default) and for
// /metrics to a remote scraper.
var adminLimits = limits{
	readHeader:     5 * time.Second,
	read:           10 * time.Second,
	write:          30 * time.Second,
	idle:           90 * time.Second,
	maxHeaderBytes: 16 << 10,
}

func newAdminServer(h http.Handler, log *zap.Logger, l limits) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.readHeader,
		ReadTimeout:       l.read,
		WriteTimeout:      l.write,
		IdleTimeout:       l.idle,
		MaxHeaderBytes:    l.maxHeaderBytes,
		ErrorLog:          telemetry.ErrorLog(log.Named("admin")),
	}
}

// ServeClient serves the client side on l, over TLS when server.tls_cert_file
// is set, behind internal/server's connection guards.
func ServeClient(cfg *config.Config, s *http.Server, l net.Listener) error {
	if cert := cfg.Server.TLSCertificate; cert != nil {
		return server.ServeTLS(s, l, cert)
	}
	return server.Serve(s, l)
}

func adminRoutes(m *metrics.Set, ready func(context.Context) error) http.Handler {
	r := chi.NewRouter()
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	r.Get("/readyz", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if ready != nil {
			err := ready(req.Context())
			var degraded Degraded
			if errors.As(err, &degraded) {
				_, _ = io.WriteString(w, "ready, "+degraded.Error()+"\n")
				return
			}
			if err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				if errors.Is(err, ErrNotReady) {
					_, _ = io.WriteString(w, "not ready\n")
				} else {
					_, _ = io.WriteString(w, "not ready: "+err.Error()+"\n")
				}
				return
			}
		}
		_, _ = io.WriteString(w, "ready\n")
	})
	r.Method(http.MethodGet, "/metrics", m.Handler())
	return r
}
