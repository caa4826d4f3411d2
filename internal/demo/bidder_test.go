package demo

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/openrtb"
)

func postBid(t *testing.T, url, body string) (*http.Response, openrtb.BidResponse) {
	t.Helper()
	resp, err := http.Post(url+AuctionPath, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var br openrtb.BidResponse
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&br); err != nil {
			t.Fatal(err)
		}
	}
	return resp, br
}

func TestBidderAnswers(t *testing.T) {
	b, err := NewBidder(BidderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b)
	defer srv.Close()
	resp, br := postBid(t, srv.URL, `{"id":"r","imp":[{"id":"home-mpu","banner":{"format":[{"w":300,"h":250},{"w":300,"h":600}]}},{"id":"video-only"}]}`)
	if resp.StatusCode != http.StatusOK || br.ID != "r" || br.Cur != "USD" || len(br.SeatBid) != len(BidderSeats) {
		t.Fatalf("status %d, response %+v", resp.StatusCode, br)
	}
	want := map[string]string{"demo-alpha": "3.158", "demo-beta": "3.890", "demo-gamma": "3.817"}
	for _, sb := range br.SeatBid {
		if len(sb.Bid) != 1 {
			t.Fatalf("seat %s: %d bids (the imp without a banner gets none)", sb.Seat, len(sb.Bid))
		}
		bid := sb.Bid[0]
		if bid.ImpID != "home-mpu" || bid.ID != sb.Seat+"-home-mpu-r" || bid.W != 300 || bid.H != 250 || bid.Price.String() != want[sb.Seat] ||
			!strings.Contains(bid.AdM, "auction-r via OpenRTB") || !strings.Contains(bid.AdM, "width:300px;height:250px") {
			t.Errorf("seat %s: bid %+v", sb.Seat, bid)
		}
	}
	if resp, _ := postBid(t, srv.URL, `{"id":"r","imp":[]}`); resp.StatusCode != http.StatusNoContent {
		t.Errorf("no imps: status %d, want 204", resp.StatusCode)
	}
	if resp, _ := postBid(t, srv.URL, `{"id":`); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("invalid request: status %d", resp.StatusCode)
	}
	if r, err := http.Get(srv.URL + AuctionPath); err != nil || r.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %v %v", r, err)
	} else {
		r.Body.Close()
	}
	if b.Requests() != 2 {
		t.Errorf("%d requests counted, want 2 (neither the invalid body nor the GET is a bid request)", b.Requests())
	}
}

func TestBidderFailureRateAndDelay(t *testing.T) {
	b, err := NewBidder(BidderOptions{FailureRate: 0.25, Delay: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b)
	defer srv.Close()
	var statuses []int
	start := time.Now()
	for range 8 {
		resp, _ := postBid(t, srv.URL, `{"id":"r","imp":[{"id":"a","banner":{"format":[{"w":1,"h":1}]}}]}`)
		statuses = append(statuses, resp.StatusCode)
	}
	want := []int{200, 200, 200, 500, 200, 200, 200, 500}
	for i := range want {
		if statuses[i] != want[i] {
			t.Fatalf("statuses %v, want %v", statuses, want)
		}
	}
	if took := time.Since(start); took < 6*50*time.Millisecond {
		t.Errorf("6 delayed answers took %v", took)
	}
	for _, o := range []BidderOptions{{FailureRate: -0.1}, {FailureRate: 1.1}, {Delay: -time.Second}} {
		if _, err := NewBidder(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	// The delay gives way to a request that is gone.
	slow, _ := NewBidder(BidderOptions{Delay: time.Minute})
	req := httptest.NewRequest(http.MethodPost, AuctionPath, strings.NewReader(`{"id":"r","imp":[]}`))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	go func() { slow.ServeHTTP(httptest.NewRecorder(), req.WithContext(ctx)); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the delay ignored the request's end")
	}
}
