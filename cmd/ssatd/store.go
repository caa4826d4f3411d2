package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
	assemble "github.com/ssatd/ssatd/internal/daemon"
	"github.com/ssatd/ssatd/internal/store"
)

// storePingTimeout bounds /readyz's and /metrics' check of the store.
const storePingTimeout = time.Second

// openStore opens the store once for the process (assemble.OpenStore): a
// reload keeps it, since the embedded one holds its file locked, and
// registers its metrics, with a store or without: ssatd_store_up, the
// store answering now (0 without one), and ssatd_store_failures_total,
// the calls that failed and left identity degraded (docs/reliability.md).
func (d *daemon) openStore(cfg *config.Config) error {
	st, err := assemble.OpenStore(cfg)
	if err != nil {
		return err
	}
	failures := prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "ssatd", Name: "store_failures_total",
		Help: "Calls to the identity store (server.data_dir or store.url) that failed; pages were served and edge-cookie identity degraded.",
	})
	up := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: "ssatd", Name: "store_up",
		Help: "1 when the identity store answers a ping, else 0.",
	}, func() float64 {
		if d.store == nil || d.pingStore(context.Background()) != nil {
			return 0
		}
		return 1
	})
	if err := errors.Join(d.metrics.Register(failures), d.metrics.Register(up)); err != nil {
		if st != nil {
			_ = st.Close()
		}
		return err
	}
	if st != nil {
		d.store = st
	}
	d.storeFailed = failures.Inc
	return nil
}

// pingStore checks that the store answers.
func (d *daemon) pingStore(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, storePingTimeout)
	defer cancel()
	if err := d.store.Ping(ctx); err != nil {
		return fmt.Errorf("store unavailable: %w", err)
	}
	return nil
}

// storeReady is /readyz's store check: a store that does not answer
// leaves the instance ready, since pages are still served, and /readyz
// says so (assemble.Degraded).
func (d *daemon) storeReady(ctx context.Context) error {
	if d.store == nil {
		return nil
	}
	if err := d.pingStore(ctx); err != nil {
		return assemble.Degraded{Err: err}
	}
	return nil
}

// closeStore closes the store after the last request.
func (d *daemon) closeStore() {
	if d.store == nil {
		return
	}
	if err := d.store.Close(); err != nil && !errors.Is(err, store.ErrUnavailable) {
		d.log.Warn("closing the store", zap.Error(err))
	}
}
