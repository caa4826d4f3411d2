package server

import (
	"log"
	"net"
	"net/http"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/edge"
)

// ClientHandler composes the client-facing data path around the guest:
// client → faulty framing refusal → HTTP/2 preface refusal → reset on
// abort → per-write deadline → edge (with the builtin platform) → guest.
// The framing refusal needs the connection guard that Serve puts on the
// listener.
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
	return refuseFaultyFraming(RefuseH2Preface(ResetOnAbort(WriteDeadline(h, cfg.Server.WriteTimeout.Duration)))), nil
}

// New is the client-facing http.Server with the [server] timeouts and
// limits, so that slow or stalled clients cannot hold connections forever.
// Serve it with Serve, which guards its connections.
func New(cfg *config.Config, h http.Handler, errorLog *log.Logger) *http.Server {
	sc := cfg.Server
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: sc.ReadHeaderTimeout.Duration,
		ReadTimeout:       sc.ReadTimeout.Duration,
		IdleTimeout:       sc.IdleTimeout.Duration,
		MaxHeaderBytes:    sc.MaxHeaderBytes,
		ErrorLog:          errorLog,
		ConnContext:       connContext,
		// One connection's streams hold well under the daemon's places,
		// and a connection whose socket takes no byte for write_timeout
		// is closed (h2hold.go).
		HTTP2: &http.HTTP2Config{MaxConcurrentStreams: streamsPerConnection(sc.RequestBound()),
			WriteByteTimeout: sc.WriteTimeout.Duration},
		// RefuseH2Preface answers OPTIONS *, so that every request reaches
		// the handler (see framingConn.nextRequest).
		DisableGeneralOptionsHandler: true,
	}
}

// Serve serves s on l with every connection's request framing guarded
// (see refuseFaultyFraming). s.Serve(l) alone leaves HTTP/1.0 requests'
// Transfer-Encoding unseen.
func Serve(s *http.Server, l net.Listener) error {
	return s.Serve(guard(l, s))
}
