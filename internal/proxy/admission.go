package proxy

import (
	"context"
	"fmt"
	"net/http"
	"sync"
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
//
// A freed place goes to the newest waiter (last in, first out). Under
// sustained overload the queue never empties, so in first-in-first-out
// order every admitted request would have waited nearly the whole queue
// timeout before its work even began, and the oldest waiters, whose
// clients are the likeliest to have given up, would be served first. Last
// in, the admitted wait briefly and the oldest are refused at their
// deadline; without overload there is no queue and the order is moot.
type pageGate struct {
	size    int
	timeout time.Duration // the longest wait for a place, all gates together
	what    string        // "pages" or "requests", for the refusal's message
	clock   gateClock
	waiting func() // test hook: a request has joined the waiters, its timer set; nil in production

	mu      sync.Mutex
	taken   int           // places in use; waiters exist only while taken == size
	waiters []*gateWaiter // oldest first
}

// gateWaiter is one request waiting for a place.
type gateWaiter struct {
	granted chan struct{} // closed when a released place is handed to it
	handed  bool          // under the gate's mu: granted is closed
}

// gateClock is the gates' time: the real one, or a test's.
type gateClock struct {
	now   func() time.Time
	timer func(time.Duration) (<-chan time.Time, func() bool)
}

var realClock = gateClock{now: time.Now, timer: func(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}}

func newPageGate(n int, timeout time.Duration) *pageGate {
	return &pageGate{size: n, timeout: timeout, what: "pages", clock: realClock}
}

func newRequestGate(n int, timeout time.Duration) *pageGate {
	return &pageGate{size: n, timeout: timeout, what: "requests", clock: realClock}
}

// deadline is when a request that has already waited `waited` for places
// must stop waiting: one queue timeout covers every gate it passes.
func (g *pageGate) deadline(waited time.Duration) time.Time {
	return g.clock.now().Add(g.timeout - waited)
}

// pageSlot is one admitted page's place in the pipeline.
type pageSlot struct {
	gate     *pageGate
	released atomic.Bool
	share    *pageSlot // the client's own place behind it (clientshare.go), or nil
	done     func()    // a client's place: forgets the client's gate when unused
}

// release gives the slot back. It may be called from every path that ends
// a page (normal end, abort, panic); only the first call frees the slot.
func (s *pageSlot) release() {
	if s != nil && s.released.CompareAndSwap(false, true) {
		s.gate.free()
		s.share.release()
		if s.done != nil {
			s.done()
		}
	}
}

// free hands a place to the newest waiter, or returns it to the gate.
func (g *pageGate) free() {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := len(g.waiters)
	if n == 0 {
		g.taken--
		return
	}
	w := g.waiters[n-1]
	g.waiters[n-1] = nil
	g.waiters = g.waiters[:n-1]
	w.handed = true
	close(w.granted)
}

// admit takes a place, waiting until deadline. It fails with an
// overloaded *guestError when the wait runs out, and with the context's
// error when the request ends first (the client left).
func (g *pageGate) admit(ctx context.Context, deadline time.Time) (*pageSlot, error) {
	g.mu.Lock()
	if g.taken < g.size {
		g.taken++
		g.mu.Unlock()
		return &pageSlot{gate: g}, nil
	}
	wait := deadline.Sub(g.clock.now())
	if wait <= 0 {
		g.mu.Unlock()
		return nil, errOverloaded(g)
	}
	w := &gateWaiter{granted: make(chan struct{})}
	g.waiters = append(g.waiters, w)
	g.mu.Unlock()
	expired, stop := g.clock.timer(wait)
	defer stop()
	if g.waiting != nil {
		g.waiting()
	}
	var err error
	select {
	case <-w.granted:
		return &pageSlot{gate: g}, nil
	case <-expired:
		err = errOverloaded(g)
	case <-ctx.Done():
		err = fmt.Errorf("waiting for a %s slot: %w", g.what, context.Cause(ctx))
	}
	if !g.leave(w) {
		// A place was handed over as the wait ended: pass it on.
		g.free()
	}
	return nil, err
}

// leave takes w off the waiters; false if a place was handed to it first.
func (g *pageGate) leave(w *gateWaiter) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if w.handed {
		return false
	}
	for i, o := range g.waiters {
		if o == w {
			g.waiters = append(g.waiters[:i], g.waiters[i+1:]...)
			break
		}
	}
	return true
}

// errOverloaded is the answer to a page that found no slot: 503 with
// Retry-After, which RFC 9110 §15.6.4 gives for a temporary overload.
func errOverloaded(g *pageGate) *guestError {
	return &guestError{status: http.StatusServiceUnavailable, reason: reasonOverloaded,
		msg:        "too many " + g.what + " in progress, retry shortly",
		cause:      fmt.Errorf("all %d %s slots stayed busy within the %s queue timeout", g.size, g.what, g.timeout),
		retryAfter: retryAfterSeconds}
}

// admitEarly is the admission of a request before its origin fetch
// (docs/behaviour.md, "Admission order"): every request takes a place
// among the requests in progress, and an eligible navigation, whose
// response is a page to rewrite, takes its page place too, before the
// auction starts and before the origin is asked. Both waits together last
// at most server.page_queue_timeout: a refusal is answered 503 with
// Retry-After within it and costs the origin nothing. The request's place
// is released by the returned func; the page's, kept in x.pageSlot, by
// the pipeline or, for a response that turns out not to be a page, by
// modifyResponse and end. x.queued is the time spent waiting.
func (g *Guest) admitEarly(x *exchange, r *http.Request) (release func(), err error) {
	start := g.requests.clock.now()
	deadline := start.Add(g.requests.timeout)
	defer func() { x.queued = g.requests.clock.now().Sub(start) }()
	x.client = g.clientKey(r, x)
	req, err := admitShared(x.ctx, g.clientRequests, g.requests, x.client, deadline)
	if err != nil {
		return func() {}, err
	}
	if x.eligible && r.Method == http.MethodGet {
		if x.pageSlot, err = g.admitPage(x, deadline); err != nil {
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
	p.g.log.Error("page pipeline panicked", pathField(p.req.URL),
		zap.Any("panic", v), zap.Stack("stack"))
	p.body.Abandon()
	if ge := (&guestError{status: http.StatusInternalServerError, reason: reasonPipelinePanic, msg: "internal error", cause: err}); p.first.failed(ge) {
		// Nothing was sent: startPipeline answers 500 before the headers.
		p.pw.CloseWithError(ge)
		return
	}
	p.g.recordFailure(p.x, outcomeAborted, reasonPipelinePanic, err)
	p.pw.CloseWithError(err)
}
