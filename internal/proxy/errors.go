package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/family"
	"github.com/ssatd/ssatd/internal/metrics"
	"github.com/ssatd/ssatd/internal/rewrite"
	"github.com/ssatd/ssatd/internal/telemetry"
)

// Outcomes of a request, for the access log.
const (
	outcomeOK      = "ok"
	outcomeError   = "error"   // an error status was sent before any body
	outcomeAborted = "aborted" // the response was cut off after its headers
)

var (
	errOriginIdle  = errors.New("origin sent no body bytes within origin_idle_timeout")
	errRequestDone = errors.New("request finished")
)

// guestError is a failure known before the response headers were sent.
type guestError struct {
	status int
	reason reason
	msg    string // the plain-text body the client sees
	cause  error
	log    []zap.Field
	// retryAfter, in seconds, is sent as Retry-After when positive.
	retryAfter int
}

func (e *guestError) Error() string {
	if e.cause != nil {
		return e.reason.String() + ": " + e.cause.Error()
	}
	return e.reason.String()
}

func (e *guestError) Unwrap() error { return e.cause }

// errCopyAborted stands for a response copy that ReverseProxy aborted while
// the origin body read fine: writing to the client is what failed.
var errCopyAborted = errors.New("copying the response to the client failed")

// failure is why a request failed: the reason logged and counted and, while
// the headers have not gone out, the status and plain-text body the client
// gets (status 0: there is no one to answer).
type failure struct {
	reason     reason
	status     int
	msg        string
	retryAfter int // seconds; 0 sends no Retry-After
}

// failureOf decides why a request failed. It is the one place for every
// stage: a transport or ModifyResponse error before the headers, a body
// failure in the pipeline, and a copy that ReverseProxy aborted. The order
// is the decision (docs/behaviour.md, "Errors"):
//
//  1. Cancellation of the request wins over every error it caused further
//     down: a cancelled origin read surfaces as a decode or transport error,
//     but the cause is the cancellation. context.Cause tells which came
//     first: the idle timer (the origin's fault), or anything else, which is
//     the client leaving or the handler ending a request whose copy to the
//     client had stopped.
//  2. A failure already named where it was detected (a *guestError).
//  3. The error itself, read for the stage it happened in: before the
//     origin's response headers arrived (x.status is still 0) it is the
//     origin request's; after, the body's.
func failureOf(x *exchange, err error) failure {
	f := failure{status: http.StatusBadGateway, msg: "502 Bad Gateway: the origin request failed"}
	var ge *guestError
	if errors.As(err, &ge) {
		f = failure{reason: ge.reason, status: ge.status, retryAfter: ge.retryAfter,
			msg: strconv.Itoa(ge.status) + " " + http.StatusText(ge.status) + ": " + ge.msg}
		if ge.status == http.StatusInternalServerError {
			f.msg = "500 Internal Server Error"
		}
	}
	var limit *guestError
	switch cause := causeOf(x); {
	case errors.Is(cause, errOriginIdle):
		f.reason = reasonOriginIdle
		return f
	case errors.As(cause, &limit):
		// A platform limit ended the request (computelimits.go).
		return failure{reason: limit.reason, status: limit.status,
			msg: strconv.Itoa(limit.status) + " " + http.StatusText(limit.status) + ": " + limit.msg}
	case cause != nil:
		return failure{reason: reasonClientGone}
	case f.reason != reasonNone:
		return f
	case errors.Is(err, errCopyAborted), errors.Is(err, rewrite.ErrWrite), errors.Is(err, io.ErrClosedPipe):
		return failure{reason: reasonClientGone}
	case x == nil || x.status == 0:
		return originRequestFailure(x, err)
	}
	f.reason = bodyFailureReason(err)
	return f
}

// originRequestFailure reads a transport error: no response has arrived.
// The phase decides, not the kind of error: a failure while getting a
// connection (DNS, TCP connect, TLS handshake, each bounded by
// origin_connect_timeout) means the origin is unreachable, even when it is
// a timeout, so the reason names the setting that fired. A timeout once
// the request is on a connection is origin_header_timeout's
// (docs/behaviour.md, "Limits", "Errors").
func originRequestFailure(x *exchange, err error) failure {
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.As(err, &oe) && oe.Op == "dial", x != nil && x.connecting.Load():
		return failure{reason: reasonUnreachable, status: http.StatusBadGateway, msg: "502 Bad Gateway: the origin could not be reached"}
	case errors.As(err, &ne) && ne.Timeout():
		// The transport's ResponseHeaderTimeout error reports Timeout().
		return failure{reason: reasonHeaderTimeout, status: http.StatusGatewayTimeout, msg: "504 Gateway Timeout: the origin did not answer in time"}
	}
	return failure{reason: reasonUnreachable, status: http.StatusBadGateway, msg: "502 Bad Gateway: the origin request failed"}
}

// connectTrace follows the origin request's connection phase: connecting
// is true from the transport asking for a connection (GetConn, once per
// attempt) until it has one (GotConn), for HTTP/1 and HTTP/2 alike.
func (x *exchange) connectTrace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GetConn: func(string) { x.connecting.Store(true) },
		GotConn: func(httptrace.GotConnInfo) { x.connecting.Store(false) },
	}
}

// bodyFailureReason reads an error from reading, decoding or rewriting the
// origin body.
func bodyFailureReason(err error) reason {
	var lim *errRawLimit
	var de *compress.DecodeError
	switch {
	case errors.As(err, &lim):
		return reasonTooLarge
	case errors.As(err, &de):
		switch de.Kind {
		case compress.KindLimit:
			return reasonDecodedTooLarge
		case compress.KindTruncated:
			return reasonTruncated
		case compress.KindCorrupt:
			return reasonCorrupt
		}
	}
	return reasonOriginFailed
}

// errorHandler answers transport and ModifyResponse failures, which happen
// before any header was sent: a short plain-text body (docs/behaviour.md, "Limits", "Errors").
func (g *Guest) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	g.answerError(w, r, exchangeOf(r), err)
}

// answerError is errorHandler for x: also the answer to a request refused
// before its origin request (admitEarly).
func (g *Guest) answerError(w http.ResponseWriter, r *http.Request, x *exchange, err error) {
	f := failureOf(x, err)
	x.route = routeError
	x.status = f.status
	o := outcomeError
	if f.reason == reasonClientShare {
		// A client over its share is refused for what it asked, as the
		// refusals of refusals.go are: logged, not counted as a failure.
		o = outcomeOK
	}
	g.recordFailure(x, o, f.reason, err)
	if f.status == 0 {
		// The client went away before the origin answered: there is no one
		// to send a response to.
		return
	}
	fields := []zap.Field{zap.Stringer("reason", f.reason), pathField(r.URL), telemetry.Error(err)}
	var ge *guestError
	if errors.As(err, &ge) {
		fields = append(fields, ge.log...)
	}
	if f.reason != reasonOverloaded && f.reason != reasonClientShare {
		// Refusals come by the thousand under overload; their access
		// lines and the failures metric are enough.
		g.log.Warn("origin request failed", fields...)
	}
	if f.reason == reasonRuntimeLimit {
		x.runtime.answering()
	}
	h := w.Header()
	for k := range h {
		delete(h, k)
	}
	// An eligible request's answer is private like its page would have
	// been ("Eligible pages"); any other says nothing worth storing.
	policy := family.NoStore
	if x.eligible {
		policy = family.Policy(g.cacheControl)
	}
	family.Answer{Status: f.status, Reason: f.reason, Msg: f.msg, Policy: policy, RetryAfter: f.retryAfter}.Write(w)
}

// recordFailure records why a request did not end well: the reason its
// access line shows and, for a failure, its count in ssatd_failures_total,
// whose reason label therefore only ever is a reason's name. It is the only
// place either is written; the first call for a request stands. o is how
// the request ended: outcomeError (an error status before any body),
// outcomeAborted (cut off after its headers), or outcomeOK for a refusal
// that is not a failure (the 405 and 411 of ServeHTTP), which is logged and
// not counted.
func (g *Guest) recordFailure(x *exchange, o string, r reason, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	g.recordFailureLocked(x, o, r, err)
}

// recordFailureLocked is recordFailure with x.mu held.
func (g *Guest) recordFailureLocked(x *exchange, o string, r reason, err error) {
	if x.reason != reasonNone || x.outcome != "" {
		return
	}
	x.outcome, x.reason, x.err = o, r, err
	// Every request whose outcome is not ok is counted once, on every
	// route: the error ratio (deploy/grafana/ssatd.json, alerts.yml) takes
	// the requests that were not ok and subtracts the client_gone
	// failures, so an abort missing here would count as an error.
	switch o {
	case outcomeError:
		g.metrics.Failure(r.String(), metrics.StageRefused)
	case outcomeAborted:
		g.metrics.Failure(r.String(), metrics.StageAborted)
	}
}

func causeOf(x *exchange) error {
	if x == nil || x.ctx == nil {
		return nil
	}
	return context.Cause(x.ctx)
}
