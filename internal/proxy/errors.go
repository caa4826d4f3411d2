package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/rewrite"
)

// Outcomes of a request, for the access log.
const (
	outcomeOK      = "ok"
	outcomeError   = "error"   // an error status was sent before any body
	outcomeAborted = "aborted" // the response was cut off after its headers
)

// Reasons name what went wrong, in logs and metrics.
const (
	reasonTooLarge        = "origin_body_too_large"
	reasonDecodedTooLarge = "decoded_body_too_large"
	reasonTruncated       = "origin_body_truncated"
	reasonCorrupt         = "origin_body_corrupt"
	reasonOriginFailed    = "origin_body_failed"
	reasonOriginIdle      = "origin_idle_timeout"
	reasonHeaderTimeout   = "origin_header_timeout"
	reasonUnreachable     = "origin_unreachable"
	reasonClientGone      = "client_gone"
)

var (
	errOriginIdle  = errors.New("origin sent no body bytes within origin_idle_timeout")
	errRequestDone = errors.New("request finished")
)

// guestError is a failure known before the response headers were sent.
type guestError struct {
	status int
	reason string
	msg    string // the plain-text body the client sees
	cause  error
	log    []zap.Field
}

func (e *guestError) Error() string {
	if e.cause != nil {
		return e.reason + ": " + e.cause.Error()
	}
	return e.reason
}

func (e *guestError) Unwrap() error { return e.cause }

// reasonFor names the cause of a body failure.
func reasonFor(err error, x *exchange) string {
	var lim *errRawLimit
	var de *compress.DecodeError
	switch {
	case errors.As(err, &lim):
		return reasonTooLarge
	case errors.Is(err, rewrite.ErrWrite), errors.Is(err, io.ErrClosedPipe):
		return reasonClientGone
	case x != nil && x.ctx != nil && errors.Is(causeOf(x), errOriginIdle):
		return reasonOriginIdle
	case errors.As(err, &de):
		switch de.Kind {
		case compress.KindLimit:
			return reasonDecodedTooLarge
		case compress.KindTruncated:
			return reasonTruncated
		case compress.KindCorrupt:
			return reasonCorrupt
		}
		return reasonOriginFailed
	}
	return reasonOriginFailed
}

// errorHandler answers transport and ModifyResponse failures, which happen
// before any header was sent: a short plain-text body (§7, §8).
func (g *Guest) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	x := exchangeOf(r)
	ge := g.classifyError(r, err, x)
	x.route = routeError
	x.status = ge.status
	x.outcome = outcomeError
	x.fail(ge.reason, err)
	g.metrics.inc(ge.reason)
	if ge.status == 0 {
		// The client went away before the origin answered: there is no one
		// to send a response to.
		return
	}
	fields := append([]zap.Field{zap.String("reason", ge.reason), zap.String("path", r.URL.Path), zap.Error(err)}, ge.log...)
	g.log.Warn("origin request failed", fields...)
	h := w.Header()
	for k := range h {
		delete(h, k)
	}
	if x.eligible {
		applyPrivacy(h)
	} else {
		h.Set("Cache-Control", "no-store")
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(ge.status)
	_, _ = w.Write([]byte(ge.msg + "\n"))
}

func (g *Guest) classifyError(r *http.Request, err error, x *exchange) *guestError {
	var ge *guestError
	if errors.As(err, &ge) {
		if ge.status == http.StatusInternalServerError {
			ge.msg = "500 Internal Server Error"
		} else {
			ge.msg = "502 Bad Gateway: " + ge.msg
		}
		return ge
	}
	if r.Context().Err() != nil && !errors.Is(causeOf(x), errOriginIdle) {
		return &guestError{status: 0, reason: reasonClientGone}
	}
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.As(err, &oe) && oe.Op == "dial":
		// Failing to connect, even by timing out, means unreachable (§8).
		return &guestError{status: http.StatusBadGateway, reason: reasonUnreachable, msg: "502 Bad Gateway: the origin could not be reached"}
	case errors.As(err, &ne) && ne.Timeout(), strings.Contains(err.Error(), "timeout awaiting response headers"):
		return &guestError{status: http.StatusGatewayTimeout, reason: reasonHeaderTimeout, msg: "504 Gateway Timeout: the origin did not answer in time"}
	}
	return &guestError{status: http.StatusBadGateway, reason: reasonUnreachable, msg: "502 Bad Gateway: the origin request failed"}
}

func causeOf(x *exchange) error {
	if x == nil || x.ctx == nil {
		return nil
	}
	return context.Cause(x.ctx)
}
