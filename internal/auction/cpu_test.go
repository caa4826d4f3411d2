package auction

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/cputime"
)

// manyBids is a valid answer of n bids on the slot "top", about 77 bytes
// each.
func manyBids(n int) []byte {
	b := []byte(`{"id":"many","cur":"USD","seatbid":[{"seat":"many","bid":[`)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":"b%d","impid":"top","price":%d.%02d,"adm":"<i>%d</i>","w":728,"h":90}`, i, 1+i%7, i%100, i)
	}
	return append(b, "]}]}"...)
}

// TestCallCPUCountsComputingNotWaiting: an auction's CPU account holds
// what its goroutines compute, not what they wait for. An endpoint that
// holds its answer until the 300 ms deadline adds the encoding of one bid
// request, well under a millisecond (a few under -race), far from the
// 300 ms a wall clock would count; one answering 13,000 bids adds their
// decoding and ranking, about 60 ms natively.
func TestCallCPUCountsComputingNotWaiting(t *testing.T) {
	if cputime.Clock == "unavailable" {
		t.Skip("no thread CPU clock on this platform")
	}
	verifyNoLeaks(t)
	answer := manyBids(13000)
	if len(answer) >= DefaultMaxBody {
		t.Fatalf("the answer is %d bytes, over DefaultMaxBody", len(answer))
	}
	held := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	many := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) { w.Write(answer) })
	tests := []struct {
		name     string
		ep       *endpoint
		deadline time.Duration
		min, max time.Duration
		outcome  Outcome
	}{
		{"waiting for an answer", held, 300 * time.Millisecond, 0, 30 * time.Millisecond, TimedOut},
		{"decoding a huge answer", many, time.Minute, 10 * time.Millisecond, time.Hour, Completed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, OpenRTBOptions{}, tt.ep)
			c := Start(context.Background(), f.p, testRequest, tt.deadline)
			bids, out := c.Wait(context.Background())
			c.Stop()
			cpu, ok := c.CPU()
			if !ok || cpu < tt.min || cpu > tt.max || out != tt.outcome {
				t.Fatalf("outcome %s with %d bids, CPU %v (ok %v); want %s and CPU in [%v, %v]", out, len(bids), cpu, ok, tt.outcome, tt.min, tt.max)
			}
		})
	}
}
