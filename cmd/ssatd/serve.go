package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sync/errgroup"

	"github.com/ssatd/ssatd/internal/auction"
	"github.com/ssatd/ssatd/internal/config"
	assemble "github.com/ssatd/ssatd/internal/daemon"
	"github.com/ssatd/ssatd/internal/metrics"
	"github.com/ssatd/ssatd/internal/server"
	"github.com/ssatd/ssatd/internal/store"
	"github.com/ssatd/ssatd/internal/telemetry"
)

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	var readyFile string
	cfg, path, environ, code := loadConfig("serve", args, stdout, stderr, environ, readyFileFlag(&readyFile))
	if cfg == nil {
		return code
	}
	log, err := newLogger(stderr, environ)
	if err != nil {
		// A bad setting, like any configuration problem: exit 1.
		fmt.Fprintf(stderr, "ssatd serve: %v\n", err)
		return 1
	}
	defer func() { _ = log.Sync() }()
	masked := redactLogs(log, cfg)
	for _, w := range cfg.Warnings() {
		masked.Warn(w)
	}
	for _, n := range cfg.Source.NotEmulated {
		masked.Info("accepted, not emulated", zap.String("key", n.Key), zap.String("missing", n.Miss))
	}
	ls, err := bindZeroPorts(cfg)
	if err != nil {
		masked.Error("start failed", zap.Error(err))
		return 1
	}
	d, err := newDaemon(cfg, log)
	log = masked
	if err != nil {
		ls.closeBound()
		log.Error("start failed", zap.Error(err))
		return 1
	}
	d.readyFile = readyFile
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	d.reloadOn(hup, path, environ)
	tr, err := startTracing(ctx, &cfg.Tracing, environ)
	if err != nil {
		ls.closeBound()
		log.Error("start failed", zap.String("key", "tracing"), zap.Error(err))
		return 1
	}
	d.useTracing(tr)
	defer d.stopTracing()
	if err := d.run(ctx, ls); err != nil {
		log.Error("stopped with error", zap.Error(err))
		return 1
	}
	log.Info("stopped")
	return 0
}

// newLogger builds the zap logger: JSON by default, console for people.
func newLogger(w io.Writer, environ []string) (*zap.Logger, error) {
	level := zapcore.InfoLevel
	if s := lookupEnv(environ, "SSATD_LOG_LEVEL"); s != "" {
		if err := level.Set(s); err != nil {
			return nil, fmt.Errorf("SSATD_LOG_LEVEL: %w", err)
		}
	}
	ec := zap.NewProductionEncoderConfig()
	ec.TimeKey = "ts"
	ec.EncodeTime = zapcore.ISO8601TimeEncoder
	var enc zapcore.Encoder
	switch f := lookupEnv(environ, "SSATD_LOG_FORMAT"); f {
	case "", "json":
		enc = zapcore.NewJSONEncoder(ec)
	case "console":
		ec.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(ec)
	default:
		return nil, fmt.Errorf("SSATD_LOG_FORMAT: must be json or console, got %q", f)
	}
	return zap.New(zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), level)), nil
}

// daemon is the client-facing server and the admin server of one process.
type daemon struct {
	// cfg is the configuration the listeners were made with; requests are
	// served with gen's (reload.go).
	cfg     *config.Config
	gen     atomic.Pointer[generation]
	log     *zap.Logger
	baseLog *zap.Logger // log before masking, which each generation does with its own secrets
	metrics *metrics.Set
	// auctionStats and reloads are registered on metrics once, shared by
	// every generation.
	auctionStats *auction.Stats
	reloads      *prometheus.CounterVec
	source       *reloadSource      // nil: no reloads
	onReload     func(reloadResult) // tests: called after each reload
	onGenRelease func()             // tests: called after a generation released its connections
	tracing      *tracing           // nil: off
	ready        atomic.Bool
	client       *http.Server
	admin        *http.Server
	// redirect answers server.http_redirect_listen; nil without it.
	redirect *http.Server
	// handlers counts the client handlers running, so that shutdown can
	// wait for the ones it cut off to write their access lines.
	handlers sync.WaitGroup
	// readyFile is -ready-file: written once the listeners accept,
	// removed when run returns (readyfile.go).
	readyFile string
	// store keeps edge-cookie identities for every generation, opened
	// once (store.go); nil without one. storeFailed counts its failures.
	store       store.Store
	storeFailed func()
}

// handlerCutWait bounds how long shutdown waits, after cutting the
// connections off, for their handlers to return: with the connection gone
// each one ends at its next write or at its origin fetch's cancellation.
const handlerCutWait = 5 * time.Second

// newDaemon builds the daemon from cfg; log is unmasked, since each
// configuration generation masks its own secrets.
func newDaemon(cfg *config.Config, log *zap.Logger) (*daemon, error) {
	d := &daemon{cfg: cfg, log: redactLogs(log, cfg), baseLog: log, metrics: metrics.New(),
		auctionStats: auction.NewStats(), reloads: newReloadCounter()}
	log = d.log
	if err := errors.Join(d.metrics.Register(d.auctionStats), d.metrics.Register(d.reloads), d.metrics.Register(d.notEmulatedGauge())); err != nil {
		return nil, err
	}
	if err := d.openStore(cfg); err != nil {
		return nil, err
	}
	gen, err := d.build(cfg)
	if err != nil {
		d.closeStore()
		return nil, err
	}
	d.gen.Store(gen)
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.handlers.Add(1)
		defer d.handlers.Done()
		d.ServeHTTP(w, r)
	})
	d.client = server.New(cfg, counted, telemetry.ErrorLog(log.Named("http")))
	d.admin = assemble.NewAdmin(d.metrics, d.readiness, log)
	if cfg.Server.HTTPRedirectListen != "" {
		d.redirect = &http.Server{
			ReadHeaderTimeout: cfg.Server.ReadHeaderTimeout.Duration,
			ReadTimeout:       cfg.Server.ReadTimeout.Duration,
			IdleTimeout:       cfg.Server.IdleTimeout.Duration,
			MaxHeaderBytes:    cfg.Server.MaxHeaderBytes,
			ErrorLog:          telemetry.ErrorLog(log.Named("redirect")),
		}
	}
	return d, nil
}

// readiness is /readyz: not while starting or draining, and, with
// server.ready_requires_origin, not while the origin is unreachable.
func (d *daemon) readiness(ctx context.Context) error {
	if !d.ready.Load() {
		return assemble.ErrNotReady
	}
	if err := d.originReady(ctx); err != nil {
		return err
	}
	return d.storeReady(ctx)
}

// listeners are the bound sockets; tests pass their own to learn the ports.
type listeners struct{ client, admin, redirect net.Listener }

// listen binds what ls does not hold yet.
func (d *daemon) listen(ls *listeners) error {
	for _, l := range []struct {
		key, addr string
		ln        *net.Listener
	}{
		{"server.listen", d.cfg.Server.Listen, &ls.client},
		{"server.admin_listen", d.cfg.Server.AdminListen, &ls.admin},
		{"server.http_redirect_listen", d.cfg.Server.HTTPRedirectListen, &ls.redirect},
	} {
		if *l.ln != nil || l.addr == "" {
			continue
		}
		var err error
		if *l.ln, err = net.Listen("tcp", l.addr); err != nil {
			ls.close()
			return fmt.Errorf("listen on %s %q: %w", l.key, l.addr, err)
		}
	}
	return nil
}

func (ls *listeners) close() {
	for _, l := range []net.Listener{ls.client, ls.admin, ls.redirect} {
		if l != nil {
			_ = l.Close()
		}
	}
}

// run serves until ctx is cancelled, then shuts down in three steps so
// that a load balancer stops sending before the listeners close:
//
//  1. /readyz fails at once, while the client listener keeps serving;
//  2. after server.drain_period the client listener closes, and in-flight
//     responses get up to server.shutdown_timeout to finish;
//  3. responses still running then are cut off, which is logged and is not
//     an error: the stop was asked for, and an exit status of 1 would make a
//     supervisor report a planned stop as a crash.
//
// The admin listener stays up until the client side is done, so liveness
// keeps passing while readiness fails.
func (d *daemon) run(ctx context.Context, ls *listeners) error {
	if ls == nil {
		ls = &listeners{}
	}
	if err := d.listen(ls); err != nil {
		return err
	}
	fields := []zap.Field{zap.String("version", version),
		zap.String("listen", ls.client.Addr().String()), zap.Bool("tls", d.cfg.Server.TLS()), zap.String("admin_listen", ls.admin.Addr().String()),
		zap.String("origin", d.cfg.Publisher.OriginForLog()), zap.String("domain", d.cfg.Publisher.Domain)}
	if ls.redirect != nil && d.redirect != nil {
		fields = append(fields, zap.String("http_redirect_listen", ls.redirect.Addr().String()))
	}
	// Both listeners are bound: connections queue until Serve accepts them,
	// so readiness holds from here, before the line that says so, and the
	// ready file may name them before Serve runs.
	if err := d.writeReadyFile(ls); err != nil {
		ls.close()
		return err
	}
	defer d.removeReadyFile()
	d.ready.Store(true)
	d.log.Info("ssatd started", fields...)
	g, gctx := errgroup.WithContext(ctx)
	serve := func(serve func() error) func() error {
		return func() error {
			if err := serve(); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		}
	}
	if d.cfg.Server.TLS() {
		g.Go(serve(func() error { return server.ServeTLSFunc(d.client, ls.client, d.certificate) }))
	} else {
		g.Go(serve(func() error { return server.Serve(d.client, ls.client) }))
	}
	g.Go(serve(func() error { return d.admin.Serve(ls.admin) }))
	if d.redirect != nil && ls.redirect != nil {
		port := server.RedirectPort(d.cfg.Server.TLSRedirectPort, ls.client.Addr())
		// The domain is the current generation's, so that a reload of
		// publisher.domain reaches the redirect as it reaches the guest.
		d.redirect.Handler = server.RedirectToHTTPS(port, func() string { return d.config().Publisher.Domain })
		g.Go(serve(func() error { return d.redirect.Serve(ls.redirect) }))
	}
	if d.source != nil {
		g.Go(func() error { d.watchReloads(gctx); return nil })
	}
	g.Go(func() error {
		<-gctx.Done()
		d.shutdown()
		return nil
	})
	err := g.Wait()
	// The last generation's connections go with the daemon, as a
	// replaced one's do.
	d.gen.Load().retire()
	d.closeStore()
	return err
}

// shutdown runs steps 1 to 3 of run's shutdown. Durations are logged as
// strings ("15s") so that the unit is never left to the reader.
func (d *daemon) shutdown() {
	drain := d.config().Server.DrainPeriod.Duration
	timeout := d.config().Server.ShutdownTimeout.Duration
	d.ready.Store(false)
	d.log.Info("shutting down", zap.Stringer("drain_period", drain), zap.Stringer("shutdown_timeout", timeout))
	time.Sleep(drain)

	d.log.Info("closing the client listener", zap.Int64("in_flight", d.inFlight()))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := d.client.Shutdown(ctx); err != nil {
		// Counted before Close, which ends the handlers' connections.
		n := d.inFlight()
		_ = d.client.Close()
		d.log.Warn("responses still in flight after shutdown_timeout were cut off",
			zap.Int64("in_flight", n), zap.Stringer("shutdown_timeout", timeout))
		d.waitHandlers()
	}
	// Admin requests are short; give them a moment, not another timeout.
	actx, acancel := context.WithTimeout(context.Background(), time.Second)
	defer acancel()
	for _, s := range []*http.Server{d.redirect, d.admin} {
		if s != nil && s.Shutdown(actx) != nil {
			_ = s.Close()
		}
	}
}

// waitHandlers waits, up to handlerCutWait, for the client handlers to
// return, so that their access lines come before "stopped".
func (d *daemon) waitHandlers() {
	done := make(chan struct{})
	go func() { d.handlers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(handlerCutWait):
		d.log.Warn("handlers still running after their connections were cut off", zap.Stringer("waited", handlerCutWait))
	}
}

// inFlight is how many requests the guest has received and not finished
// delivering, read from the metric that /metrics shows, so that a cut-off
// at shutdown can say how many responses it cut.
func (d *daemon) inFlight() int64 {
	return int64(d.metrics.Sum("ssatd_requests_in_flight", nil))
}
