package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sync/errgroup"

	"github.com/ssatd/ssatd/internal/bundle"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/proxy"
	"github.com/ssatd/ssatd/internal/server"
)

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer, environ []string) int {
	cfg, _, code := loadConfig("serve", args, stderr, environ)
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
	for _, w := range cfg.Warnings() {
		log.Warn(w)
	}
	d, err := newDaemon(cfg, log)
	if err != nil {
		log.Error("start failed", zap.Error(err))
		return 1
	}
	if err := d.run(ctx, nil); err != nil {
		log.Error("stopped with error", zap.Error(err))
		return 1
	}
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
	cfg    *config.Config
	log    *zap.Logger
	guest  *proxy.Guest
	ready  atomic.Bool
	client *http.Server
	admin  *http.Server
}

func newDaemon(cfg *config.Config, log *zap.Logger) (*daemon, error) {
	g, err := proxy.New(cfg, proxy.Options{Logger: log, Bundle: bundle.JS()})
	if err != nil {
		return nil, err
	}
	d := &daemon{cfg: cfg, log: log, guest: g}
	handler, err := server.ClientHandler(cfg, g)
	if err != nil {
		return nil, err
	}
	d.client = server.New(cfg, handler, zap.NewStdLog(log.Named("http")))
	d.admin = &http.Server{
		Handler:           d.adminRoutes(),
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          zap.NewStdLog(log.Named("admin")),
	}
	return d, nil
}

func (d *daemon) adminRoutes() http.Handler {
	r := chi.NewRouter()
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	r.Get("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !d.ready.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "not ready\n")
			return
		}
		_, _ = io.WriteString(w, "ready\n")
	})
	r.Method(http.MethodGet, "/metrics", d.guest.Metrics().Handler())
	return r
}

// listeners are the bound sockets; tests pass their own to learn the ports.
type listeners struct{ client, admin net.Listener }

// run serves until ctx is cancelled, then shuts down gracefully: /readyz
// fails at once, listeners close, and in-flight responses get up to
// shutdown_timeout to finish.
func (d *daemon) run(ctx context.Context, ls *listeners) error {
	if ls == nil {
		ls = &listeners{}
	}
	var err error
	if ls.client == nil {
		if ls.client, err = net.Listen("tcp", d.cfg.Server.Listen); err != nil {
			return fmt.Errorf("listen on server.listen %q: %w", d.cfg.Server.Listen, err)
		}
	}
	if ls.admin == nil {
		if ls.admin, err = net.Listen("tcp", d.cfg.Server.AdminListen); err != nil {
			ls.client.Close()
			return fmt.Errorf("listen on server.admin_listen %q: %w", d.cfg.Server.AdminListen, err)
		}
	}
	d.log.Info("ssatd started", zap.String("version", version),
		zap.String("listen", ls.client.Addr().String()), zap.String("admin_listen", ls.admin.Addr().String()),
		zap.String("origin", d.cfg.Publisher.Origin.String()), zap.String("domain", d.cfg.Publisher.Domain))
	g, gctx := errgroup.WithContext(ctx)
	serve := func(s *http.Server, l net.Listener) func() error {
		return func() error {
			if err := s.Serve(l); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		}
	}
	g.Go(serve(d.client, ls.client))
	g.Go(serve(d.admin, ls.admin))
	d.ready.Store(true)
	g.Go(func() error {
		<-gctx.Done()
		d.ready.Store(false)
		d.log.Info("shutting down", zap.Duration("shutdown_timeout", d.cfg.Server.ShutdownTimeout.Duration))
		timeout := d.cfg.Server.ShutdownTimeout.Duration
		if timeout <= 0 {
			// shutdown_timeout = 0: do not wait for in-flight responses.
			_ = d.admin.Close()
			return d.client.Close()
		}
		sctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		err := d.client.Shutdown(sctx)
		_ = d.admin.Shutdown(sctx)
		if err != nil {
			// Responses still running past the timeout are cut off, so
			// that an embedding caller does not inherit them.
			_ = d.client.Close()
			_ = d.admin.Close()
			return fmt.Errorf("graceful shutdown after server.shutdown_timeout (%s): %w", timeout, err)
		}
		return nil
	})
	return g.Wait()
}
