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

	PageURL   string     // the public URL of the page
	Domain    string     // the public host name, without port
	Secure    bool       // the client uses https
	UserAgent string     // the client's User-Agent
	IP        netip.Addr // the client address, through trusted proxies only
	Language  string     // ISO-639-1 code from Accept-Language
	Consent   string     // the TCF v2 consent string, if the client sent one
	// Regs, when RegsSet, is the consent policy's regs (nil: none sent);
	// otherwise regs.gdpr is OpenRTBOptions.GDPRApplies.
	Regs    *openrtb.Regs
	RegsSet bool
	Geo     *openrtb.Geo // device.geo, from [geo]; nil when unknown
	// UserID and EIDs are user.id and user.ext.eids: the reader's edge
	// cookie and its partners' ids, where consent allows
	// (internal/identity).
	UserID string
	EIDs   []openrtb.EID
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

// Tally counts how the sources of one auction ended: the endpoints of an
// OpenRTB provider, or the one source that any other provider is. Every
// source asked ends in exactly one of the four counts, or is still pending.
type Tally struct {
	Sources   int // sources asked
	Answered  int // a usable answer: bids, or a valid no-bid
	Failed    int // an error status, an unusable answer, no connection
	TimedOut  int // no answer by the deadline or the source's own timeout
	Cancelled int // the page ended first
}

func (t Tally) pending() int { return t.Sources - t.Answered - t.Failed - t.TimedOut - t.Cancelled }

// Progress is what an auction has gathered: the best bids so far and how
// its sources have ended.
type Progress struct {
	Bids map[string]ssat.Bid
	Tally
	from map[string]int // slot id → the index of the source whose bid it is
}

// partialProvider is a provider that gathers bids from several sources: it
// offers its progress each time a source ends, so that at the deadline the
// page keeps what has arrived rather than nothing, and the outcome says
// which sources answered.
type partialProvider interface {
	// sources is the number of sources BidsPartial will ask for req.
	sources(req Request) int
	BidsPartial(ctx context.Context, req Request, offer func(Progress)) Progress
}

// winCounter is a provider that counts the bids that reached a page.
type winCounter interface {
	won(Progress)
}

// Call is one running auction.
type Call struct {
	p        Provider
	done     chan struct{} // closed when the provider has returned
	final    Progress      // the provider's result, written before done is closed
	deadline time.Time
	cancel   context.CancelFunc

	mu      sync.Mutex
	offered Progress // the latest progress offered

	cpu cpuAccount // the CPU of the provider's sections (cpu.go)
}

func (c *Call) offer(p Progress) {
	c.mu.Lock()
	c.offered = p
	c.mu.Unlock()
}

// Start runs p in the background; the result is available until deadline.
// Every Call must be stopped.
func Start(ctx context.Context, p Provider, req Request, timeout time.Duration) *Call {
	deadline := time.Now().Add(timeout)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	ctx, span := startAuctionSpan(ctx)
	c := &Call{p: p, done: make(chan struct{}), deadline: deadline, cancel: cancel}
	ctx = withCPU(ctx, &c.cpu)
	switch p.(type) {
	case None, Static:
		// In-memory providers answer at once: run them here, so that a
		// busy scheduler cannot starve a goroutine past the deadline and
		// lose bids that were never in doubt (seen under load). They
		// never fail, and answer even past a deadline of zero.
		bids, _ := p.Bids(ctx, req)
		c.final = Progress{Bids: bids, Tally: Tally{Sources: 1, Answered: 1}}
		endAuctionSpan(span, c.final)
		close(c.done)
		return c
	}
	pp, partial := p.(partialProvider)
	c.offered.Sources = 1
	if partial {
		c.offered.Sources = pp.sources(req)
	}
	go func() {
		defer close(c.done)
		defer func() { endAuctionSpan(span, c.final) }()
		if partial {
			c.final = pp.BidsPartial(ctx, req, c.offer)
			return
		}
		bids, err := p.Bids(ctx, req)
		c.final = single(ctx, bids, err)
	}()
	return c
}

// single is the progress of a provider that is one source: it answered,
// failed, or was cut off by the deadline or the page's end. A provider that
// returns bids because the deadline passed was cut off: its bids are kept
// and the outcome is partial.
func single(ctx context.Context, bids map[string]ssat.Bid, err error) Progress {
	p := Progress{Bids: bids, Tally: Tally{Sources: 1}}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		// Whichever of the provider and the page's timer notices the
		// deadline first, the outcome is the same.
		p.TimedOut = 1
	case errors.Is(err, context.Canceled) || (err != nil && ctx.Err() != nil):
		p.Cancelled = 1
	case err != nil:
		p.Bids, p.Failed = nil, 1
	default:
		p.Answered = 1
	}
	return p
}

// Outcome says how Wait ended, for the access log.
type Outcome string

// The outcomes of an auction, as the access line and the metrics name them
// (docs/behaviour.md, "SSAT injection"). OutcomeOf decides between them.
const (
	Completed Outcome = "completed" // every source answered in time
	// Partial: some sources gave no usable answer (they failed, or the
	// deadline came first) and the page got the bids of those that did.
	Partial   Outcome = "partial"
	TimedOut  Outcome = "timeout"   // no source answered by the deadline, and none failed
	Failed    Outcome = "failed"    // no source gave a usable answer, and at least one failed
	Cancelled Outcome = "cancelled" // the page ended before the auction
)

// OutcomeOf is the one place where an auction's outcome is decided from how
// its sources ended; sources still pending count as timed out.
func OutcomeOf(p Progress) Outcome {
	t := p.Tally
	t.TimedOut += max(t.pending(), 0)
	switch {
	case t.Answered == t.Sources:
		return Completed
	case t.Cancelled > 0:
		return Cancelled
	case t.Answered > 0 || len(p.Bids) > 0:
		return Partial
	case t.Failed > 0:
		return Failed
	}
	return TimedOut
}

// Wait returns the bids, or an empty set when the auction failed or did not
// finish by its deadline (a provider that offers partial results keeps
// them): the page is never held longer than the timeout.
func (c *Call) Wait(ctx context.Context) (map[string]ssat.Bid, Outcome) {
	p := c.wait(ctx)
	out := OutcomeOf(p)
	if p.Bids == nil || out == Cancelled {
		return map[string]ssat.Bid{}, out
	}
	if w, ok := c.p.(winCounter); ok && len(p.Bids) > 0 {
		w.won(p)
	}
	return p.Bids, out
}

func (c *Call) wait(ctx context.Context) Progress {
	// A finished auction is used even when the page reaches </body> after
	// the deadline: select would otherwise pick at random between the two
	// ready cases.
	select {
	case <-c.done:
		return c.final
	default:
	}
	t := time.NewTimer(time.Until(c.deadline))
	defer t.Stop()
	select {
	case <-c.done:
		return c.final
	case <-t.C:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.offered
	case <-ctx.Done():
		return Progress{Tally: Tally{Sources: 1, Cancelled: 1}}
	}
}

// Stop cancels the provider's context and waits for the provider to return,
// so that nothing of the auction (its endpoint calls, their log lines and
// metrics) outlives the page: the guest stops the auction before it writes
// the access line. Stop may be called more than once.
func (c *Call) Stop() {
	c.cancel()
	<-c.done
}
