package auction

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/ssat"
)

type slowProvider struct {
	delay time.Duration
	err   error
}

func (p slowProvider) Bids(ctx context.Context, req Request) (map[string]ssat.Bid, error) {
	select {
	case <-time.After(p.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if p.err != nil {
		return nil, p.err
	}
	return map[string]ssat.Bid{"top": {HbPb: "1.00"}}, nil
}

func TestWait(t *testing.T) {
	verifyNoLeaks(t)
	tests := []struct {
		name    string
		p       Provider
		timeout time.Duration
		want    Outcome
		bids    int
	}{
		{"completes in time", slowProvider{delay: 10 * time.Millisecond}, time.Second, Completed, 1},
		{"times out", slowProvider{delay: time.Second}, 50 * time.Millisecond, TimedOut, 0},
		{"fails", slowProvider{err: errors.New("no")}, time.Second, Failed, 0},
		{"static matches slots", Static{BySlot: map[string]ssat.Bid{"top": {}, "other": {}}}, time.Second, Completed, 1},
		{"none", None{}, time.Second, Completed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verifyNoLeaks(t)
			c := Start(context.Background(), tt.p, Request{Slots: []ssat.Slot{{ID: "top"}}}, tt.timeout)
			defer c.Stop()
			start := time.Now()
			bids, out := c.Wait(context.Background())
			if out != tt.want || len(bids) != tt.bids {
				t.Fatalf("got %v with %d bids, want %v with %d", out, len(bids), tt.want, tt.bids)
			}
			if bids == nil {
				t.Fatal("nil bids: the page would get null instead of {}")
			}
			if d := time.Since(start); d > tt.timeout+500*time.Millisecond {
				t.Fatalf("waited %v past a %v timeout", d, tt.timeout)
			}
		})
	}
}

// Regression: a page reaching </body> after the deadline lost bids that
// had arrived in time, at random, because select chose between two ready
// cases.
func TestFinishedAuctionUsedAfterDeadline(t *testing.T) {
	verifyNoLeaks(t)
	for i := 0; i < 200; i++ {
		// A deadline already past: Wait finds both the finished auction
		// and its expired timer ready.
		c := Start(context.Background(), Static{BySlot: map[string]ssat.Bid{"top": {}}}, Request{Slots: []ssat.Slot{{ID: "top"}}}, -time.Millisecond)
		<-c.done
		if bids, out := c.Wait(context.Background()); out != Completed || len(bids) != 1 {
			t.Fatalf("run %d: outcome %v and %d bids for an auction that had finished with one", i, out, len(bids))
		}
		c.Stop()
	}
}

func TestWaitCancelled(t *testing.T) {
	verifyNoLeaks(t)
	c := Start(context.Background(), slowProvider{delay: time.Second}, Request{}, time.Second)
	defer c.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, out := c.Wait(ctx); out != Cancelled {
		t.Fatalf("outcome %v", out)
	}
}

// Regression: under load the static provider's goroutine was sometimes not
// scheduled before the deadline and pages lost their canned bids.
func TestStaticProviderAnswersAtOnce(t *testing.T) {
	verifyNoLeaks(t)
	// A deadline already past when Start returns, as for a provider
	// goroutine scheduled too late.
	c := Start(context.Background(), Static{BySlot: map[string]ssat.Bid{"top": {}}}, Request{Slots: []ssat.Slot{{ID: "top"}}}, -time.Millisecond)
	defer c.Stop()
	if bids, out := c.Wait(context.Background()); out != Completed || len(bids) != 1 {
		t.Fatalf("outcome %v, %d bids", out, len(bids))
	}
}

// untilDeadline answers only when its context ends, with one bid: an
// OpenRTB provider whose slow endpoint is cut off at the auction deadline.
type untilDeadline struct{}

func (untilDeadline) Bids(ctx context.Context, _ Request) (map[string]ssat.Bid, error) {
	<-ctx.Done()
	return map[string]ssat.Bid{"top": {HbPb: "1.00"}}, nil
}

// TestProviderCutOffAtDeadlineIsPartial catches a provider that returns
// because the deadline passed being reported as completed when the page
// reaches </body> a moment later (seen as a flaky access line under load).
func TestProviderCutOffAtDeadlineIsPartial(t *testing.T) {
	verifyNoLeaks(t)
	c := Start(context.Background(), untilDeadline{}, Request{Slots: []ssat.Slot{{ID: "top"}}}, 20*time.Millisecond)
	defer c.Stop()
	<-c.done // the page arrives after the provider has returned
	bids, out := c.Wait(context.Background())
	if out != Partial || bids["top"].HbPb != "1.00" {
		t.Errorf("outcome %q with %v, want partial with the bid", out, bids)
	}
}
