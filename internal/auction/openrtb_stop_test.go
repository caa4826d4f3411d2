package auction

import (
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"
)

// TestDeadlineKeepsPartialBids: one endpoint answers, the other is slower
// than the auction deadline. Wait returns at the deadline with the answered
// bids, and the late request is cancelled.
func TestDeadlineKeepsPartialBids(t *testing.T) {
	verifyNoLeaks(t)
	fast := newEndpoint(t, answer(bid("f", "top", "1.00", "fast")))
	released := make(chan struct{})
	slow := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(released)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
			answer(bid("s", "top", "5.00", "slow"))(w, r)
		}
	})
	f := newFixture(t, OpenRTBOptions{}, fast, slow)
	const deadline = 300 * time.Millisecond
	bids, out, took := f.run(t, deadline)
	if out != Partial || len(bids) != 1 || bids["top"].HbBidder != "fast" {
		t.Fatalf("outcome %v, bids %+v; want the fast endpoint's bid, partial", out, bids)
	}
	// Not before the deadline, and far from the slow endpoint's 10s; the
	// slack is for a loaded CI machine.
	if took < deadline-10*time.Millisecond || took > deadline+1500*time.Millisecond {
		t.Errorf("Wait returned after %v, want about the %v deadline", took, deadline)
	}
	select {
	case <-released:
	case <-time.After(2 * time.Second):
		t.Fatal("the late endpoint's request was not cancelled")
	}
	s := f.p.Stats().Snapshot()
	if got := s.Endpoints["ep2"].Outcomes; !reflect.DeepEqual(got, map[OutcomeKey]int64{{EndpointTimeout, ReasonNoAnswer}: 1}) {
		t.Errorf("slow endpoint outcomes %v", got)
	}
	if got := s.Endpoints["ep1"].Won; !reflect.DeepEqual(got, map[string]int64{"fast": 1}) || len(s.Endpoints["ep2"].Won) != 0 {
		t.Errorf("won %v, slow endpoint %v", got, s.Endpoints["ep2"].Won)
	}
}

// A page whose client left cancels the calls: counted as cancelled, not as
// the endpoint's fault. Caught under load: the provider returned before the
// page's Wait, which then reported the auction as completed.
func TestStopCancelsCalls(t *testing.T) {
	verifyNoLeaks(t)
	called := make(chan struct{}, 1)
	slow := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		signal(called)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	f := newFixture(t, OpenRTBOptions{}, slow)
	ctx, cancel := context.WithCancel(context.Background())
	c := Start(ctx, f.p, testRequest, 5*time.Second)
	waitCalled(t, c, called)
	cancel()
	if _, out := c.Wait(ctx); out != Cancelled {
		t.Errorf("outcome %v", out)
	}
	c.Stop()
	if got := f.p.Stats().Snapshot().Endpoints["ep1"].Outcomes; !reflect.DeepEqual(got, map[OutcomeKey]int64{{EndpointCancelled, ""}: 1}) {
		t.Errorf("outcomes %v", got)
	}
}

// signal notes that a handler ran, without ever blocking it: a blocked
// handler would hold the endpoint's Close, and the test, forever.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// waitCalled waits until an endpoint has received c's request; a provider
// that returns first (its request failed on the way) fails the test
// instead of leaving it waiting.
func waitCalled(t *testing.T, c *Call, called chan struct{}) {
	t.Helper()
	select {
	case <-called:
	case <-c.done:
		t.Fatalf("the provider returned before the endpoint received its request: %+v", c.final)
	}
}

// TestCancelledAuctionFinishedBeforeWaitIsCancelled: the page's request
// ends, the provider returns at once, and only then does the page ask for
// the bids. The auction was cancelled, not completed.
func TestCancelledAuctionFinishedBeforeWaitIsCancelled(t *testing.T) {
	verifyNoLeaks(t)
	called := make(chan struct{}, 1)
	slow := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		signal(called)
		<-r.Context().Done()
	})
	f := newFixture(t, OpenRTBOptions{}, slow)
	ctx, cancel := context.WithCancel(context.Background())
	c := Start(ctx, f.p, testRequest, 5*time.Second)
	defer c.Stop()
	waitCalled(t, c, called)
	cancel()
	<-c.done // the provider has returned before the page waits
	if bids, out := c.Wait(ctx); out != Cancelled || len(bids) != 0 {
		t.Errorf("outcome %v with %d bids, want cancelled with none", out, len(bids))
	}
}

// TestStopWaitsForEndpointCalls: when Stop returns, every endpoint call has
// ended and recorded its metric and log line, so that the page's access
// line, written after Stop, is the last word on the page. It failed when
// Stop only cancelled: the cancelled call was counted a moment later.
func TestStopWaitsForEndpointCalls(t *testing.T) {
	verifyNoLeaks(t)
	called1, called2 := make(chan struct{}, 1), make(chan struct{}, 1)
	hang := func(called chan struct{}) func(w http.ResponseWriter, r *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			signal(called)
			<-r.Context().Done()
		}
	}
	f := newFixture(t, OpenRTBOptions{}, newEndpoint(t, hang(called1)), newEndpoint(t, hang(called2)))
	c := Start(context.Background(), f.p, testRequest, 10*time.Second)
	waitCalled(t, c, called1)
	waitCalled(t, c, called2)
	c.Stop()
	s := f.p.Stats().Snapshot()
	for _, name := range []string{"ep1", "ep2"} {
		if got := s.Endpoints[name].Outcomes; !reflect.DeepEqual(got, map[OutcomeKey]int64{{EndpointCancelled, ""}: 1}) {
			t.Errorf("%s outcomes %v when Stop returned, want one cancelled call", name, got)
		}
	}
	select {
	case <-c.done:
	default:
		t.Error("Stop returned before the provider")
	}
	c.Stop() // a second Stop returns at once
}
