package auction

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// BenchmarkOpenRTBAuction is one whole auction over loopback: two endpoints,
// two slots, request encoding, answers parsed, winners bucketed.
func BenchmarkOpenRTBAuction(b *testing.B) {
	h := answer(bid("a-top", "top", "1.50", "alpha"), bid("a-side", "side", "0.80", "alpha"))
	e1, e2 := newEndpoint(b, h), newEndpoint(b, h)
	p := NewOpenRTB(OpenRTBOptions{Endpoints: []Endpoint{{Name: "a", URL: e1.URL}, {Name: "b", URL: e2.URL}}})
	defer p.Close()
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		bids, _ := p.Bids(ctx, testRequest)
		cancel()
		if len(bids) != 2 {
			b.Fatalf("bids %v", bids)
		}
	}
}

// BenchmarkBidRequestEncode is the request side alone: building and
// encoding one bid request.
func BenchmarkBidRequestEncode(b *testing.B) {
	p := NewOpenRTB(OpenRTBOptions{Endpoints: []Endpoint{{Name: "a", URL: "http://127.0.0.1:1"}}, Transport: http.DefaultTransport})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(p.bidRequest(ctx, p.o.Endpoints[0], testRequest)); err != nil {
			b.Fatal(err)
		}
	}
}
