// Package auction runs the bid request that an SSAT page waits for at
// </body> (docs/behaviour.md, "SSAT injection"). The auction starts when the request arrives, runs
// concurrently with the origin fetch, and is bounded by a deadline.
package auction

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"time"

	"github.com/ssatd/ssatd/internal/openrtb"
	"github.com/ssatd/ssatd/internal/ssat"
)

// Request describes what is being auctioned, and the little of the client
// request an auction may pass on (never its cookies or other headers).
type Request struct {
	Path  string
	Slots []ssat.Slot

	PageURL   string       // the public URL of the page
	Domain    string       // the public host name, without port
	Secure    bool         // the client uses https
	UserAgent string       // the client's User-Agent
	IP        netip.Addr   // the client address, through trusted proxies only
	Language  string       // ISO-639-1 code from Accept-Language
	Consent   string       // the TCF v2 consent string, if the client sent one
	Geo       *openrtb.Geo // device.geo, from [geo]; nil when unknown
}

// Provider returns the winning bid per slot id. It must honour ctx.
type Provider interface {
	Bids(ctx context.Context, req Request) (map[string]ssat.Bid, error)
}

// None is the provider that never bids: pages get an empty bids object.
type None struct{}

func (None) Bids(context.Context, Request) (map[string]ssat.Bid, error) {
	return map[string]ssat.Bid{}, nil
}

// Static returns configured bids for the slots that were matched.
type Static struct {
	BySlot map[string]ssat.Bid
}

func (s Static) Bids(_ context.Context, req Request) (map[string]ssat.Bid, error) {
	out := make(map[string]ssat.Bid, len(req.Slots))
	for _, sl := range req.Slots {
		if b, ok := s.BySlot[sl.ID]; ok {
			out[sl.ID] = b
		}
	}
	return out, nil
}

// partialProvider is a provider that gathers bids from several sources: it
// offers the best bids so far as sources answer, so that at the deadline
// the page keeps what has arrived rather than nothing.
type partialProvider interface {
	BidsPartial(ctx context.Context, req Request, offer func(map[string]ssat.Bid)) (map[string]ssat.Bid, error)
}

// winCounter is a provider that counts the bids that reached a page.
type winCounter interface {
	Won(map[string]ssat.Bid)
}

// Call is one running auction.
type Call struct {
	p        Provider
	done     chan struct{}
	bids     map[string]ssat.Bid
	err      error
	late     bool // the provider returned because the deadline had passed
	deadline time.Time
	cancel   context.CancelFunc

	mu      sync.Mutex
	partial map[string]ssat.Bid // the best offered so far
}

func (c *Call) offer(bids map[string]ssat.Bid) {
	c.mu.Lock()
	c.partial = bids
	c.mu.Unlock()
}

// Start runs p in the background; the result is available until deadline.
func Start(ctx context.Context, p Provider, req Request, timeout time.Duration) *Call {
	deadline := time.Now().Add(timeout)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	c := &Call{p: p, done: make(chan struct{}), deadline: deadline, cancel: cancel}
	switch p.(type) {
	case None, Static:
		// In-memory providers answer at once: run them here, so that a
		// busy scheduler cannot starve a goroutine past the deadline and
		// lose bids that were never in doubt (seen under load).
		c.bids, c.err = p.Bids(ctx, req)
		close(c.done)
		return c
	}
	go func() {
		defer close(c.done)
		if pp, ok := p.(partialProvider); ok {
			c.bids, c.err = pp.BidsPartial(ctx, req, c.offer)
		} else {
			c.bids, c.err = p.Bids(ctx, req)
		}
		// A provider that gives up at the deadline returns at the same
		// moment as the page's own timer fires; which of the two Wait sees
		// first is down to the scheduler, so the outcome is decided here.
		c.late = errors.Is(ctx.Err(), context.DeadlineExceeded)
	}()
	return c
}

// Outcome says how Wait ended, for the access log.
type Outcome string

// The outcomes of an auction, as the access line and the metrics name them.
const (
	Completed Outcome = "completed" // the provider answered in time
	TimedOut  Outcome = "timeout"   // the deadline came first, with no bids
	Failed    Outcome = "error"     // the provider failed: the page gets no bids
	Cancelled Outcome = "cancelled" // the page ended before the auction
	// Partial: the deadline came first, and the page got the bids of the
	// sources that had answered.
	Partial Outcome = "partial"
)

// Wait returns the bids, or an empty set when the auction failed or did not
// finish by its deadline (a provider that offers partial results keeps
// them): the page is never held longer than the timeout.
func (c *Call) Wait(ctx context.Context) (map[string]ssat.Bid, Outcome) {
	bids, out := c.wait(ctx)
	if w, ok := c.p.(winCounter); ok && len(bids) > 0 {
		w.Won(bids)
	}
	return bids, out
}

func (c *Call) wait(ctx context.Context) (map[string]ssat.Bid, Outcome) {
	// A finished auction is used even when the page reaches </body> after
	// the deadline: select would otherwise pick at random between the two
	// ready cases.
	select {
	case <-c.done:
		return c.result()
	default:
	}
	t := time.NewTimer(time.Until(c.deadline))
	defer t.Stop()
	select {
	case <-c.done:
		return c.result()
	case <-t.C:
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.partial) > 0 {
			return c.partial, Partial
		}
		return map[string]ssat.Bid{}, TimedOut
	case <-ctx.Done():
		return map[string]ssat.Bid{}, Cancelled
	}
}

// Stop releases the auction's resources; the provider's context is cancelled.
func (c *Call) Stop() { c.cancel() }

func (c *Call) result() (map[string]ssat.Bid, Outcome) {
	switch {
	case c.late && len(c.bids) > 0:
		return c.bids, Partial
	case c.late:
		return map[string]ssat.Bid{}, TimedOut
	case c.err != nil:
		return map[string]ssat.Bid{}, Failed
	}
	return c.bids, Completed
}
