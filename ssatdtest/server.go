package ssatdtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/daemon"
)

// Server is a running ssatd.
type Server struct {
	// URL is the client side, where pages are requested:
	// http://127.0.0.1:PORT (https with server.tls_cert_file and
	// server.tls_key_file), without a trailing slash.
	URL string
	// AdminURL serves /healthz, /readyz and /metrics.
	AdminURL string

	id     string // the value of its goroutines' goroutineLabel
	parts  *daemon.Parts
	done   chan error
	once   sync.Once
	client *http.Client
}

// shutdownTimeout bounds how long Close waits for responses in flight.
const shutdownTimeout = 5 * time.Second

// Start runs ssatd with the configuration config, TOML text as `ssatd serve
// -config` reads it (README.md, "Configuration"). server.listen and
// server.admin_listen are replaced by ports on 127.0.0.1 chosen by the
// system; SSATD_* environment variables are not read. A configuration with
// problems fails the test, naming every problem.
//
// The daemon logs warnings and errors through t.Log. It is stopped by
// t.Cleanup, which then fails the test if a goroutine of this daemon is
// still running: the daemon's contract is that nothing outlives its
// request. Only the daemon's own goroutines are looked at (those it started,
// and those they started, see goroutineLabel), so tests that run in
// parallel (t.Parallel), each with its daemon, do not see each other's, nor
// the test's own clients and servers.
func Start(t testing.TB, config string) *Server {
	t.Helper()
	s, err := newServer(config, zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel)))
	if err != nil {
		t.Fatalf("ssatdtest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("ssatdtest: %v", err)
		}
		if err := waitForGoroutines(s.id, leakWait); err != nil {
			t.Errorf("ssatdtest: goroutines outlived the daemon: %v", err)
		}
	})
	return s
}

// NewServer is Start without a test: for TestMain, which shares one daemon
// among a package's tests, and for examples. The caller calls Close; logs
// are discarded.
func NewServer(config string) (*Server, error) {
	return newServer(config, zap.NewNop())
}

// serverIDs numbers the servers of the process, for goroutineLabel.
var serverIDs atomic.Int64

// newServer builds and starts the daemon with its goroutines labelled: a
// goroutine inherits the labels of the goroutine that starts it, so every
// goroutine the daemon starts, for as long as it runs, carries the label.
func newServer(config string, log *zap.Logger) (s *Server, err error) {
	id := strconv.FormatInt(serverIDs.Add(1), 10)
	pprof.Do(context.Background(), pprof.Labels(goroutineLabel, id), func(context.Context) {
		s, err = startServer(id, config, log)
	})
	return s, err
}

func startServer(id, config string, log *zap.Logger) (*Server, error) {
	client, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	admin, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("listen: %w", err)
	}
	cfg, p, err := assemble(config, log, client.Addr().String(), admin.Addr().String())
	if err != nil {
		client.Close()
		admin.Close()
		return nil, err
	}
	scheme := "http://"
	if cfg.Server.TLS() {
		scheme = "https://"
	}
	s := &Server{URL: scheme + client.Addr().String(), AdminURL: "http://" + admin.Addr().String(),
		id: id, parts: p, done: make(chan error, 2), client: newClient(cfg.Server.TLSCertificate)}
	go s.serve(func() error { return daemon.ServeClient(cfg, p.Client, client) })
	go s.serve(func() error { return p.Admin.Serve(admin) })
	return s, nil
}

func (s *Server) serve(serve func() error) {
	if err := serve(); !errors.Is(err, http.ErrServerClosed) {
		s.done <- err
		return
	}
	s.done <- nil
}

// Close stops the daemon: it waits up to 5s for responses in flight, then
// cuts them off, and releases the daemon's connections to the origin and
// the bidders. The error says what did not stop cleanly.
func (s *Server) Close() error {
	var errs []error
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := s.parts.Client.Shutdown(ctx); err != nil {
			_ = s.parts.Client.Close()
			errs = append(errs, fmt.Errorf("responses still in flight after %v: %w", shutdownTimeout, err))
		}
		if s.parts.Admin.Shutdown(ctx) != nil {
			_ = s.parts.Admin.Close()
		}
		for range 2 {
			if err := <-s.done; err != nil {
				errs = append(errs, fmt.Errorf("serve: %w", err))
			}
		}
		s.parts.Guest.Close()
		s.client.CloseIdleConnections()
		// The kit's own examples and many tests use http.DefaultClient;
		// its connections to this daemon are of no use any more.
		http.DefaultClient.CloseIdleConnections()
	})
	return errors.Join(errs...)
}

// assemble loads the configuration through the daemon's own loader, with
// the bound addresses set as environment overrides are, so that the guest
// knows the port its clients use, and builds what `ssatd serve` runs.
func assemble(text string, log *zap.Logger, listen, adminListen string) (*config.Config, *daemon.Parts, error) {
	f, err := os.CreateTemp("", "ssatdtest-*.toml")
	if err != nil {
		return nil, nil, err
	}
	defer os.Remove(f.Name())
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, nil, err
	}
	cfg, err := config.Load(f.Name(), []string{
		config.EnvPrefix + "SERVER_LISTEN=" + listen,
		config.EnvPrefix + "SERVER_ADMIN_LISTEN=" + adminListen,
	})
	if err != nil {
		return nil, nil, err
	}
	p, err := daemon.Assemble(cfg, log, daemon.Options{})
	return cfg, p, err
}
