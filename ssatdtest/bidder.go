package ssatdtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// AuctionPath is where a Bidder answers, as Prebid Server does.
const AuctionPath = "/openrtb2/auction"

// Offer is one bid a Bidder makes: seat Seat bids Price on the impression
// of slot Slot (ssatd's impression id is the slot id).
type Offer struct {
	Slot  string
	Seat  string
	Price string // decimal CPM as sent, e.g. "2.50"
	// W and H are the creative's size; 0 takes the impression's first
	// format, as a bidder filling the slot would.
	W, H int
	// Creative is the bid's adm; empty gives a small <div> naming seat,
	// slot and price.
	Creative string
}

// Answer is how a Bidder answers a bid request. The zero Answer is the
// OpenRTB no-bid: 204 No Content.
type Answer struct {
	// Offers are the bids; offers for slots the request does not carry
	// are left out, as a bidder only bids on impressions it was offered.
	Offers []Offer
	// Delay is waited before answering (or until ssatd gives up): a slow
	// exchange, to exercise the auction timeouts.
	Delay time.Duration
	// Status, when neither 0 nor 200, is sent instead of bids, with a
	// plain-text body: an exchange that fails.
	Status int
}

// Bidder is a fake Prebid Server on loopback. It answers every OpenRTB bid
// request POSTed to AuctionPath with its current Answer and records the
// request.
type Bidder struct {
	// URL is the bid endpoint, for [[auction.openrtb]] url.
	URL string

	srv      *httptest.Server
	mu       sync.Mutex
	answer   Answer
	requests []BidRequest
}

// NewBidder starts a Bidder answering a; t.Cleanup stops it.
func NewBidder(t testing.TB, a Answer) *Bidder {
	t.Helper()
	b := NewBidderServer(a)
	t.Cleanup(b.Close)
	return b
}

// NewBidderServer is NewBidder without a test, for TestMain and examples;
// the caller calls Close.
func NewBidderServer(a Answer) *Bidder {
	b := &Bidder{answer: a}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	b.URL = b.srv.URL + AuctionPath
	return b
}

// Close stops the Bidder once the requests it is answering are done.
func (b *Bidder) Close() { b.srv.Close() }

// SetAnswer changes the answer to the requests that arrive from now on.
func (b *Bidder) SetAnswer(a Answer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.answer = a
}

// Requests returns the bid requests received so far, oldest first. Each is
// recorded as decoded, before the Answer's delay.
func (b *Bidder) Requests() []BidRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]BidRequest(nil), b.requests...)
}

func (b *Bidder) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != AuctionPath || r.Method != http.MethodPost {
		http.Error(w, "POST an OpenRTB bid request to "+AuctionPath, http.StatusNotFound)
		return
	}
	var br BidRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&br); err != nil {
		http.Error(w, "invalid bid request: "+err.Error(), http.StatusBadRequest)
		return
	}
	br.Header = r.Header.Clone()
	b.mu.Lock()
	b.requests = append(b.requests, br)
	a := b.answer
	b.mu.Unlock()
	if a.Delay > 0 {
		t := time.NewTimer(a.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
	if a.Status != 0 && a.Status != http.StatusOK {
		http.Error(w, "ssatdtest bidder: scripted failure", a.Status)
		return
	}
	resp := respond(&br, a.Offers)
	if len(resp.SeatBid) == 0 {
		w.WriteHeader(http.StatusNoContent) // OpenRTB 2.6 §4.3: no bids
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// The bid response objects of OpenRTB 2.6 §4.2 that a Bidder sends.
type bidResponse struct {
	ID      string    `json:"id"`
	SeatBid []seatBid `json:"seatbid,omitempty"`
	Cur     string    `json:"cur"`
}

type seatBid struct {
	Seat string `json:"seat"`
	Bid  []bid  `json:"bid"`
}

type bid struct {
	ID    string      `json:"id"`
	ImpID string      `json:"impid"`
	Price json.Number `json:"price"`
	AdM   string      `json:"adm"`
	CrID  string      `json:"crid"`
	W     int         `json:"w,omitempty"`
	H     int         `json:"h,omitempty"`
}

func respond(br *BidRequest, offers []Offer) bidResponse {
	imps := make(map[string]Imp, len(br.Imp))
	for _, imp := range br.Imp {
		imps[imp.ID] = imp
	}
	resp := bidResponse{ID: br.ID, Cur: "USD"}
	seats := map[string]int{}
	for _, o := range offers {
		imp, ok := imps[o.Slot]
		if !ok {
			continue
		}
		w, h := o.W, o.H
		if (w == 0 || h == 0) && imp.Banner != nil && len(imp.Banner.Format) > 0 {
			w, h = imp.Banner.Format[0].W, imp.Banner.Format[0].H
		}
		adm := o.Creative
		if adm == "" {
			adm = fmt.Sprintf(`<div class="ssatdtest-creative">%s %s %s</div>`, o.Seat, o.Slot, o.Price)
		}
		i, ok := seats[o.Seat]
		if !ok {
			i = len(resp.SeatBid)
			seats[o.Seat] = i
			resp.SeatBid = append(resp.SeatBid, seatBid{Seat: o.Seat})
		}
		resp.SeatBid[i].Bid = append(resp.SeatBid[i].Bid, bid{
			ID: o.Seat + "-" + o.Slot, ImpID: o.Slot, Price: json.Number(o.Price),
			AdM: adm, CrID: o.Seat + "-creative", W: w, H: h,
		})
	}
	return resp
}
