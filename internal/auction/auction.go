// Package auction runs the bid request that an SSAT page waits for at
// </body> (spec §4.3). The auction starts when the request arrives, runs
// concurrently with the origin fetch, and is bounded by a deadline.
package auction

import (
	"context"
	"time"

	"github.com/ssatd/ssatd/internal/ssat"
)

// Request describes what is being auctioned.
type Request struct {
	Path  string
	Slots []ssat.Slot
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

// Call is one running auction.
type Call struct {
	done     chan struct{}
	bids     map[string]ssat.Bid
	err      error
	deadline time.Time
	cancel   context.CancelFunc
}

// Start runs p in the background; the result is available until deadline.
func Start(ctx context.Context, p Provider, req Request, timeout time.Duration) *Call {
	deadline := time.Now().Add(timeout)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	c := &Call{done: make(chan struct{}), deadline: deadline, cancel: cancel}
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
		c.bids, c.err = p.Bids(ctx, req)
	}()
	return c
}

// Outcome says how Wait ended, for the access log.
type Outcome string

const (
	Completed Outcome = "completed"
	TimedOut  Outcome = "timeout"
	Failed    Outcome = "error"
	Cancelled Outcome = "cancelled"
)

// Wait returns the bids, or an empty set when the auction failed or did not
// finish by its deadline: the page is never held longer than the timeout.
func (c *Call) Wait(ctx context.Context) (map[string]ssat.Bid, Outcome) {
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
		return map[string]ssat.Bid{}, TimedOut
	case <-ctx.Done():
		return map[string]ssat.Bid{}, Cancelled
	}
}

// Stop releases the auction's resources; the provider's context is cancelled.
func (c *Call) Stop() { c.cancel() }

func (c *Call) result() (map[string]ssat.Bid, Outcome) {
	if c.err != nil {
		return map[string]ssat.Bid{}, Failed
	}
	return c.bids, Completed
}
