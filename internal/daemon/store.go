package daemon

import (
	"fmt"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/store"
)

// OpenStore opens the store identity state lives in (internal/store):
// Redis at store.url, shared by every instance, else the embedded
// one in server.data_dir; nil, nil when neither is set. A Redis that is
// down does not fail it: its calls fail until Redis answers, and identity
// degrades meanwhile. The caller closes the store after the last request.
func OpenStore(cfg *config.Config) (store.Store, error) {
	switch {
	case cfg.Store.URL != "":
		s, err := store.OpenRedis(store.RedisOptions{URL: cfg.Store.URL, PoolSize: cfg.Store.PoolSize})
		if err != nil {
			return nil, fmt.Errorf("store.url: %w", err)
		}
		return s, nil
	case cfg.Server.DataDir != "":
		s, err := store.OpenBolt(cfg.Server.DataDir, nil)
		if err != nil {
			return nil, fmt.Errorf("server.data_dir: %w", err)
		}
		return s, nil
	}
	return nil, nil
}

// Degraded is a Ready error of an instance that serves its pages but
// lacks a part, such as its store: /readyz answers 200 and names it, so
// that a load balancer keeps every replica of a fleet whose shared store
// is down (pages are still served) while the body says what is wrong.
type Degraded struct{ Err error }

func (d Degraded) Error() string { return "degraded: " + d.Err.Error() }
func (d Degraded) Unwrap() error { return d.Err }
