package server

import (
	"log"
	"net/http"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/edge"
)

// ClientHandler composes the client-facing data path around the guest:
// client → HTTP/2 preface refusal → reset on abort → per-write deadline →
// edge (with the builtin platform) → guest.
// With "external" a CDN in front compresses hinted responses, and with
// "unavailable" nothing is hinted, so neither has an edge here (docs/behaviour.md, "Platforms").
func ClientHandler(cfg *config.Config, guest http.Handler) (http.Handler, error) {
	h := guest
	if cfg.Platform.DeliveryCompression == config.DeliveryCompressionBuiltin {
		e, err := edge.FromConfig(guest, cfg.Delivery)
		if err != nil {
			return nil, err
		}
		h = e
	}
	return RefuseH2Preface(ResetOnAbort(WriteDeadline(h, cfg.Server.WriteTimeout.Duration))), nil
}

// New is the client-facing http.Server with the [server] timeouts and
// limits, so that slow or stalled clients cannot hold connections forever.
func New(cfg *config.Config, h http.Handler, errorLog *log.Logger) *http.Server {
	sc := cfg.Server
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: sc.ReadHeaderTimeout.Duration,
		ReadTimeout:       sc.ReadTimeout.Duration,
		IdleTimeout:       sc.IdleTimeout.Duration,
		MaxHeaderBytes:    sc.MaxHeaderBytes,
		ErrorLog:          errorLog,
	}
}
