package proxy

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// retryAfterSeconds is the Retry-After of an overloaded answer: the header
// counts whole seconds (RFC 9110 §10.2.3), and a slot frees as soon as any
// page in progress ends, so the shortest delay it can say is the one.
const retryAfterSeconds = 1

// pageGate bounds the pages in the rewrite pipeline, which is where a
// request holds decoder, rewriter and encoder state. Without a bound,
// memory grows with every concurrent page and overload ends in client
// timeouts; with it, a page waits a short while for a slot and is then
// refused with 503, which a client or a load balancer can retry elsewhere.
// Pass-through responses hold no such state and never wait here.
//
// The same gate, with a larger bound, holds every request the guest
// handles (server.max_requests_in_progress), so that overload is answered
// within the queue timeout whatever the requests are, before any of them
// costs an origin request. The order of the decisions is in ServeHTTP and
// in docs/behaviour.md ("Limits", "Admission order").
type pageGate struct {
	slots   chan struct{} // one element per page (request) in progress
	timeout time.Duration // the longest wait for a slot
	what    string        // "pages" or "requests", for the refusal's message
	waiting func()        // test hook: a page starts waiting for a slot; nil in production
}

func newPageGate(n int, timeout time.Duration) *pageGate {
	return &pageGate{slots: make(chan struct{}, n), timeout: timeout, what: "pages"}
}

func newRequestGate(n int, timeout time.Duration) *pageGate {
	return &pageGate{slots: make(chan struct{}, n), timeout: timeout, what: "requests"}
}

// pageSlot is one admitted page's place in the pipeline.
type pageSlot struct {
	gate     *pageGate
	released atomic.Bool
}

// release gives the slot back. It may be called from every path that ends
// a page (normal end, abort, panic); only the first call frees the slot.
func (s *pageSlot) release() {
	if s != nil && s.released.CompareAndSwap(false, true) {
		<-s.gate.slots
	}
}

// admit takes a slot, waiting up to the gate's timeout. It fails with an
// overloaded *guestError when the wait runs out, and with the context's
// error when the request ends first (the client left).
func (g *pageGate) admit(ctx context.Context) (*pageSlot, error) {
	select {
	case g.slots <- struct{}{}:
		return &pageSlot{gate: g}, nil
	default:
	}
	if g.timeout <= 0 {
		return nil, errOverloaded(g)
	}
	if g.waiting != nil {
		g.waiting()
	}
	t := time.NewTimer(g.timeout)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return &pageSlot{gate: g}, nil
	case <-t.C:
		return nil, errOverloaded(g)
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a %s slot: %w", g.what, context.Cause(ctx))
	}
}

// errOverloaded is the answer to a page that found no slot: 503 with
// Retry-After, which RFC 9110 §15.6.4 gives for a temporary overload.
func errOverloaded(g *pageGate) *guestError {
	return &guestError{status: http.StatusServiceUnavailable, reason: reasonOverloaded,
		msg:        "too many " + g.what + " in progress, retry shortly",
		cause:      fmt.Errorf("all %d %s slots stayed busy for %s", cap(g.slots), g.what, g.timeout),
		retryAfter: retryAfterSeconds}
}

// admitEarly is the admission of a request before its origin fetch
// (docs/behaviour.md, "Admission order"): every request takes a place
// among the requests in progress, and an eligible navigation, whose
// response is a page to rewrite, takes its page place too, before the
// auction starts and before the origin is asked. A refusal is answered
// 503 with Retry-After within server.page_queue_timeout and costs the
// origin nothing. The request's place is released by the returned func;
// the page's, kept in x.pageSlot, by the pipeline or, for a response that
// turns out not to be a page, by modifyResponse and end.
func (g *Guest) admitEarly(x *exchange, r *http.Request) (release func(), err error) {
	req, err := g.requests.admit(x.ctx)
	if err != nil {
		return func() {}, err
	}
	if x.eligible && r.Method == http.MethodGet {
		if x.pageSlot, err = g.admitPage(x.ctx); err != nil {
			req.release()
			return func() {}, err
		}
	}
	return req.release, nil
}

// recoverPanic, deferred in the pipeline goroutine, ends a page whose
// pipeline panicked as an aborted response, as net/http does for a handler
// that panics, rather than taking the daemon and every other page with it.
// The slot is then released like on any other end.
func (p *pipeline) recoverPanic() {
	v := recover()
	if v == nil {
		return
	}
	err := fmt.Errorf("page pipeline panicked: %v", v)
	p.g.log.Error("page pipeline panicked", zap.String("path", p.req.URL.Path),
		zap.Any("panic", v), zap.Stack("stack"))
	p.front.Abandon()
	if ge := (&guestError{status: http.StatusInternalServerError, reason: reasonPipelinePanic, msg: "internal error", cause: err}); p.first.failed(ge) {
		// Nothing was sent: startPipeline answers 500 before the headers.
		p.pw.CloseWithError(ge)
		return
	}
	p.g.recordFailure(p.x, outcomeAborted, reasonPipelinePanic, err)
	p.pw.CloseWithError(err)
}
