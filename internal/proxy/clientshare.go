package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// clientShares bound the places of a gate (admission.go) that one client
// may hold (clientShare), so that one client cannot starve the rest: a
// client that holds its share waits, like any request at a full gate, for one of its
// own places to free, and is refused 429 when none does within the queue
// timeout, while every other client still finds the rest of the gate. A
// single HTTP/2 connection could otherwise take every place with streams
// whose responses it never reads (RFC 9113 §10.5 names flow control as a
// way to hold server state), and a client would do the same with many
// connections, so the share is counted per client address, not per
// connection.
//
// A client is its address as the guest sees it (clientIP: behind a
// trusted proxy, the address the proxy forwarded), an IPv6 client its /64,
// the smallest network a host is usually given. Clients behind one NAT
// share one share.
type clientShares struct {
	size    int // places per client
	timeout time.Duration
	what    string // "requests" or "pages", for the refusal
	clock   gateClock

	mu      sync.Mutex
	clients map[netip.Prefix]*clientGate
}

// clientGate is one client's gate and the requests that hold or wait for
// its places, so that it is dropped when the last of them ends.
type clientGate struct {
	gate *pageGate
	refs int
}

// clientShare is how many of a gate's n places one client may hold: all
// but a quarter, rounded down, which stays for the other clients (32 of
// the 128 requests and 4 of the 16 pages of 2 cores). Not a half: clients
// behind one NAT, or behind a proxy left out of server.trusted_proxies,
// are one client, and lose only the quarter. A gate of fewer than 4 places
// has no quarter to keep and is not shared.
func clientShare(n int) int { return n - n/4 }

// newClientShares is nil for a gate too small to share.
func newClientShares(n int, timeout time.Duration, what string) *clientShares {
	if clientShare(n) >= n {
		return nil
	}
	return &clientShares{size: clientShare(n), timeout: timeout, what: what, clock: realClock,
		clients: map[netip.Prefix]*clientGate{}}
}

// clientKey is the client a request counts against.
func (g *Guest) clientKey(r *http.Request, x *exchange) netip.Prefix {
	a := x.view.ip
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, err := a.Prefix(bits)
	if err != nil {
		return netip.Prefix{} // no address: every such request is one client
	}
	return p
}

// admit takes one of the client's places, waiting until deadline; the
// place is released with the slot it is attached to (pageSlot.share).
func (c *clientShares) admit(ctx context.Context, client netip.Prefix, deadline time.Time) (*pageSlot, error) {
	c.mu.Lock()
	cg := c.clients[client]
	if cg == nil {
		cg = &clientGate{gate: &pageGate{size: c.size, timeout: c.timeout, what: c.what, clock: c.clock}}
		c.clients[client] = cg
	}
	cg.refs++
	c.mu.Unlock()
	s, err := cg.gate.admit(ctx, deadline)
	if err != nil {
		c.drop(client, cg)
		var ge *guestError
		if errors.As(err, &ge) && ge.reason == reasonOverloaded {
			return nil, errClientShare(c)
		}
		return nil, err
	}
	s.done = func() { c.drop(client, cg) }
	return s, nil
}

// drop ends one request's hold on cg, and forgets cg with the last.
func (c *clientShares) drop(client netip.Prefix, cg *clientGate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cg.refs--; cg.refs == 0 {
		delete(c.clients, client)
	}
}

// errClientShare is the answer to a client that kept its whole share busy
// for the queue timeout: 429 Too Many Requests with Retry-After (RFC 6585
// §4), a refusal of what the client asked, not the daemon's overload.
func errClientShare(c *clientShares) *guestError {
	return &guestError{status: http.StatusTooManyRequests, reason: reasonClientShare,
		msg:        "too many " + c.what + " in progress from this client, retry shortly",
		cause:      fmt.Errorf("the client's %d %s places stayed busy within the %s queue timeout", c.size, c.what, c.timeout),
		retryAfter: retryAfterSeconds}
}

// admitShared takes a place of gate behind one of the client's own places
// of shares: the client's place first, so that a client over its share
// waits in its own queue and never among the others' waiters. Both waits
// end at deadline.
func admitShared(ctx context.Context, shares *clientShares, gate *pageGate, client netip.Prefix, deadline time.Time) (*pageSlot, error) {
	if shares == nil {
		return gate.admit(ctx, deadline)
	}
	own, err := shares.admit(ctx, client, deadline)
	if err != nil {
		return nil, err
	}
	s, err := gate.admit(ctx, deadline)
	if err != nil {
		own.release()
		return nil, err
	}
	s.share = own
	return s, nil
}
