package main

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
	assemble "github.com/ssatd/ssatd/internal/daemon"
)

// generation is one configuration and the guest and client handler built
// from it. A request is served from start to end by the generation that
// was current when it arrived, so a reload never changes a page half-way.
type generation struct {
	cfg     *config.Config
	handler http.Handler
	// release closes the guest's idle connections: its origin transport's,
	// its bid endpoints' and its /first-party/proxy's (proxy.Guest.Close). A transport stays usable
	// after it, so a late call costs only a new connection. Then it calls
	// daemon.onGenRelease (tests).
	release func()
	// running counts the requests this generation serves; once it is
	// retired, the last one to end releases its connections, which would
	// otherwise stay open (with two goroutines each) until the transports'
	// IdleConnTimeout, for every reload.
	running atomic.Int64
	retired atomic.Bool
}

// build makes a generation from a validated configuration. Every
// generation records into the daemon's one metrics set and one set of
// auction endpoint counters, so a reload does not reset a counter.
func (d *daemon) build(cfg *config.Config) (*generation, error) {
	g, h, err := assemble.Handler(cfg, redactLogs(d.baseLog, cfg),
		assemble.Options{Metrics: d.metrics, AuctionStats: d.auctionStats, Store: d.store, StoreFailed: d.storeFailed})
	if err != nil {
		return nil, err
	}
	release := func() {
		g.Close()
		if d.onGenRelease != nil {
			d.onGenRelease()
		}
	}
	return &generation{cfg: cfg, handler: h, release: release}, nil
}

// serve runs one request on gen.
func (gen *generation) serve(w http.ResponseWriter, r *http.Request) {
	gen.running.Add(1)
	defer gen.leave()
	gen.handler.ServeHTTP(w, r)
}

// leave ends a request; the last one of a retired generation releases its
// connections.
func (gen *generation) leave() {
	if gen.running.Add(-1) == 0 && gen.retired.Load() {
		gen.release()
	}
}

// retire marks gen replaced, and releases its connections at once when no
// request runs on it. A request that took gen just before the swap and
// starts on it after this releases them again when it ends: the atomics
// are sequentially consistent, so of leave and retire at least one sees
// the other's write.
func (gen *generation) retire() {
	gen.retired.Store(true)
	if gen.running.Load() == 0 {
		gen.release()
	}
}

// config is the configuration new requests are served with.
func (d *daemon) config() *config.Config { return d.gen.Load().cfg }

// ServeHTTP hands the request to the current generation.
func (d *daemon) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.gen.Load().serve(w, r)
}

// reloadResult is the closed set of ssatd_config_reloads_total's result
// label.
type reloadResult string

const (
	// reloadOK: the file was valid and is now served.
	reloadOK reloadResult = "ok"
	// reloadInvalid: the file had problems; the running configuration
	// keeps serving.
	reloadInvalid reloadResult = "invalid"
	// reloadRestartRequired: the file was valid and is served, except keys
	// held at their running values until a restart (restartKeys).
	reloadRestartRequired reloadResult = "restart_required"
)

func newReloadCounter() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "ssatd", Name: "config_reloads_total",
		Help: "Configuration reloads asked for with SIGHUP, by result: ok (the new file serves), invalid (refused; the running configuration keeps serving), restart_required (the new file serves, but keys that need new listeners keep their running values until a restart).",
	}, []string{"result"})
	for _, r := range []reloadResult{reloadOK, reloadInvalid, reloadRestartRequired} {
		c.WithLabelValues(string(r))
	}
	return c
}

// reloadSource is where a reload reads the configuration from: the file
// and environment serve started with.
type reloadSource struct {
	path    string
	environ []string
	signals <-chan os.Signal
}

// reloadOn makes run reload the configuration from path and environ each
// time signals delivers (SIGHUP in serve; a plain channel in tests).
func (d *daemon) reloadOn(signals <-chan os.Signal, path string, environ []string) {
	d.source = &reloadSource{path: path, environ: environ, signals: signals}
}

// watchReloads reloads once per signal until ctx ends. Reloads run one at
// a time, so two close signals cannot race to swap.
func (d *daemon) watchReloads(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.source.signals:
			r := d.reload()
			if d.onReload != nil {
				d.onReload(r)
			}
		}
	}
}

// reload reads and validates the whole configuration, as config check
// does, and swaps it in for new requests. A file with problems is refused
// with config check's report and changes nothing.
func (d *daemon) reload() reloadResult {
	cfg, err := config.Load(d.source.path, d.source.environ)
	if err == nil {
		var gen *generation
		held := holdRestartKeys(d.cfg, cfg)
		if gen, err = d.build(cfg); err == nil {
			return d.swap(gen, held)
		}
	}
	var report strings.Builder
	printProblems(&report, d.source.path, err)
	d.log.Error("configuration reload refused; the running configuration keeps serving",
		zap.String("report", report.String()))
	d.reloads.WithLabelValues(string(reloadInvalid)).Inc()
	return reloadInvalid
}

func (d *daemon) swap(gen *generation, held []string) reloadResult {
	log := redactLogs(d.baseLog, gen.cfg)
	d.gen.Swap(gen).retire()
	for _, w := range gen.cfg.Warnings() {
		log.Warn(w)
	}
	r := reloadOK
	if len(held) > 0 {
		r = reloadRestartRequired
		log.Warn("configuration reloaded; these keys keep their running values until a restart",
			zap.Strings("restart_required", held))
	} else {
		log.Info("configuration reloaded")
	}
	d.reloads.WithLabelValues(string(r)).Inc()
	return r
}

// restartKeys are the [server] keys a reload cannot apply (holdRestartKeys
// adds [tracing]): the listeners' addresses, the port the redirect
// listener's handler names, whether server.listen speaks TLS, and the settings of the client
// http.Server, which cannot change while it serves. The certificate files
// themselves do reload (daemon.certificate).
var restartKeys = []struct {
	key  string
	hold func(running, next *config.ServerConfig) bool
}{
	{"server.listen", holdField(func(s *config.ServerConfig) *string { return &s.Listen })},
	{"server.admin_listen", holdField(func(s *config.ServerConfig) *string { return &s.AdminListen })},
	{"server.http_redirect_listen", holdField(func(s *config.ServerConfig) *string { return &s.HTTPRedirectListen })},
	{"server.tls_redirect_port", holdField(func(s *config.ServerConfig) *int { return &s.TLSRedirectPort })},
	{"server.read_header_timeout", holdField(func(s *config.ServerConfig) *config.Duration { return &s.ReadHeaderTimeout })},
	{"server.read_timeout", holdField(func(s *config.ServerConfig) *config.Duration { return &s.ReadTimeout })},
	{"server.idle_timeout", holdField(func(s *config.ServerConfig) *config.Duration { return &s.IdleTimeout })},
	{"server.max_header_bytes", holdField(func(s *config.ServerConfig) *int { return &s.MaxHeaderBytes })},
	{"server.tls_cert_file", holdTLS},
	// The identity store is opened once for the process (store.go).
	{"server.data_dir", holdField(func(s *config.ServerConfig) *string { return &s.DataDir })},
}

// holdField returns a hold for one comparable field: when next differs
// from running, next takes the running value and the key is reported.
func holdField[T comparable](f func(*config.ServerConfig) *T) func(running, next *config.ServerConfig) bool {
	return func(running, next *config.ServerConfig) bool {
		if *f(running) == *f(next) {
			return false
		}
		*f(next) = *f(running)
		return true
	}
}

// holdTLS keeps server.listen's protocol: turning TLS on or off needs a
// new listener, a new certificate for a TLS listener does not.
func holdTLS(running, next *config.ServerConfig) bool {
	if running.TLS() == next.TLS() {
		return false
	}
	next.TLSCertFile, next.TLSKeyFile, next.TLSCertificate = running.TLSCertFile, running.TLSKeyFile, running.TLSCertificate
	return true
}

// holdRestartKeys sets next's restart keys to their running values and
// names those that differed.
func holdRestartKeys(running, next *config.Config) []string {
	var held []string
	for _, k := range restartKeys {
		if k.hold(&running.Server, &next.Server) {
			held = append(held, k.key)
		}
	}
	// The tracer provider is process-wide (tracing.go), as is the store.
	if running.Tracing != next.Tracing {
		next.Tracing = running.Tracing
		held = append(held, "tracing")
	}
	if running.Store != next.Store {
		next.Store = running.Store
		held = append(held, "store")
	}
	return held
}

// certificate is the TLS certificate of the current generation, asked at
// each handshake, so that a reload with renewed files serves them to new
// connections.
func (d *daemon) certificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return d.config().Server.TLSCertificate, nil
}
