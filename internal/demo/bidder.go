package demo

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"math"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/ssatd/ssatd/internal/openrtb"
)

// AuctionPath is where the demo bidder answers, as Prebid Server does.
const AuctionPath = "/openrtb2/auction"

// BidderSeats are the demo bidder's seats; each bids on every impression.
var BidderSeats = []string{"demo-alpha", "demo-beta", "demo-gamma"}

// BidderOptions configure the demo bidder.
type BidderOptions struct {
	// Delay is added before every answer (a slow exchange).
	Delay time.Duration
	// FailureRate is the share of requests, from 0 to 1, answered with a
	// 500, spread evenly: 0.25 fails every fourth request.
	FailureRate float64
	// Script, when set, replaces the demo bids with scripted ones
	// (LoadScript); Delay and FailureRate still apply.
	Script *Script
}

// Bidder is a mock Prebid Server: it answers OpenRTB 2.6 bid requests at
// AuctionPath with bids derived from the impressions, so the demo's pages
// show the same winners at the same prices every time; only the bid ids
// and the creatives' captions name the auction.
type Bidder struct {
	o        BidderOptions
	mu       sync.Mutex
	requests int64
	recorded []json.RawMessage // the last MaxRecorded bid requests (record.go)
}

// NewBidder returns the demo bidder.
func NewBidder(o BidderOptions) (*Bidder, error) {
	if o.FailureRate < 0 || o.FailureRate > 1 || math.IsNaN(o.FailureRate) {
		return nil, fmt.Errorf("demo bidder: failure rate must be between 0 and 1, got %v", o.FailureRate)
	}
	if o.Delay < 0 {
		return nil, fmt.Errorf("demo bidder: delay must not be negative, got %v", o.Delay)
	}
	return &Bidder{o: o}, nil
}

// Requests is the number of bid requests received.
func (b *Bidder) Requests() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.requests
}

// fail counts the request and says whether it is one of the failures.
func (b *Bidder) fail() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.requests++
	n := float64(b.requests)
	return math.Floor(n*b.o.FailureRate) > math.Floor((n-1)*b.o.FailureRate)
}

func (b *Bidder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/healthz":
		_, _ = io.WriteString(w, "ok\n")
		return
	case r.URL.Path == RequestsPath:
		b.serveRequests(w, r)
		return
	case r.URL.Path == BadgePath || r.URL.Path == LandingPath:
		serveCreativeAsset(w, r)
		return
	case r.URL.Path != AuctionPath:
		http.NotFound(w, r)
		return
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST an OpenRTB bid request", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "reading the bid request: "+err.Error(), http.StatusBadRequest)
		return
	}
	var br openrtb.BidRequest
	if err := json.Unmarshal(body, &br); err != nil {
		http.Error(w, "invalid bid request: "+err.Error(), http.StatusBadRequest)
		return
	}
	b.record(body)
	if b.fail() {
		http.Error(w, "demo bidder: configured failure", http.StatusInternalServerError)
		return
	}
	delay, resp := b.o.Delay, (*openrtb.BidResponse)(nil)
	if s := b.o.Script; s != nil {
		delay += s.delay()
		resp = s.answer(&br)
	} else {
		resp = bidResponse(&br, "http://"+r.Host)
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
	if s := b.o.Script; s != nil && s.failure() != 0 {
		http.Error(w, "demo bidder: scripted failure", s.failure())
		return
	}
	if len(resp.SeatBid) == 0 {
		w.WriteHeader(http.StatusNoContent) // OpenRTB 2.6 §4.3: no bids
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// BidResponseFor is the demo bidder's answer: every seat bids on every
// banner impression, in its first size, at a price derived from the seat
// and the impression id, with a bid id naming the auction.
func BidResponseFor(br *openrtb.BidRequest) *openrtb.BidResponse { return bidResponse(br, "") }

// bidResponse is BidResponseFor with creatives that load an image and
// link a landing page from base, the bidder's own http://host:port, as an
// ad server's creatives do; without base they are self-contained.
func bidResponse(br *openrtb.BidRequest, base string) *openrtb.BidResponse {
	resp := &openrtb.BidResponse{ID: br.ID, Cur: "USD"}
	// Bid ids name the auction (the start of the request id), so a page
	// that asks again (a refresh, an SPA navigation) shows bids it did not
	// have; prices stay the same.
	auction := ""
	if id := br.ID; id != "" {
		auction = "-" + id[:min(len(id), 6)]
	}
	for _, seat := range BidderSeats {
		sb := openrtb.SeatBid{Seat: seat}
		for _, imp := range br.Imp {
			if imp.Banner == nil || len(imp.Banner.Format) == 0 {
				continue
			}
			f := imp.Banner.Format[0]
			price := DemoPrice(seat, imp.ID)
			sb.Bid = append(sb.Bid, openrtb.Bid{
				ID: seat + "-" + imp.ID + auction, ImpID: imp.ID, Price: json.Number(price), W: f.W, H: f.H,
				AdM: creative(seat, imp.ID, f, price, auction, base), CrID: seat + "-creative",
			})
		}
		if len(sb.Bid) > 0 {
			resp.SeatBid = append(resp.SeatBid, sb)
		}
	}
	return resp
}

// DemoPrice is a seat's price for an impression: from 0.500 to 4.499, with
// three decimals so that the price buckets visibly floor it.
func DemoPrice(seat, impID string) string {
	h := fnv.New32a()
	_, _ = io.WriteString(h, seat+"/"+impID)
	m := 500 + h.Sum32()%4000 // thousandths
	return fmt.Sprintf("%d.%03d", m/1000, m%1000)
}

// creative is a visible banner naming where it came from. With base (the
// bidder's http://host:port) it shows the bidder's badge image and links
// its landing page, so that a proxy that makes creatives first party
// (docs/behaviour.md, "First-party routes") has an image and a click to
// rewrite.
func creative(seat, impID string, f openrtb.Format, price, auction, base string) string {
	h := fnv.New32a()
	_, _ = io.WriteString(h, seat)
	hue := h.Sum32() % 360
	badge, open, end := "", "", ""
	if base != "" {
		q := "?seat=" + url.QueryEscape(seat)
		badge = `<img src="` + html.EscapeString(base+BadgePath+q) + `" width="28" height="28" alt="" style="margin-right:8px">`
		open = `<a href="` + html.EscapeString(base+LandingPath+q) + `" target="_blank" style="color:inherit;text-decoration:none">`
		end = `</a>`
	}
	return fmt.Sprintf(`%s<div style="box-sizing:border-box;width:%dpx;height:%dpx;background:hsl(%d,70%%,45%%);color:#fff;`+
		`font:bold 14px/1.3 sans-serif;display:flex;align-items:center;justify-content:center;text-align:center">`+
		`%s%s · %s · %dx%d · $%s CPM · auction%s via OpenRTB</div>%s`,
		open, f.W, f.H, hue, badge, html.EscapeString(seat), html.EscapeString(impID), f.W, f.H, price, html.EscapeString(auction), end)
}

// The demo bidder's creative assets: a badge image and a landing page.
const (
	BadgePath   = "/creative/badge.svg"
	LandingPath = "/landing"
)

const badgeSVG = `<svg xmlns="http://www.w3.org/2000/svg" width="28" height="28" viewBox="0 0 28 28">` +
	`<rect width="28" height="28" rx="6" fill="#fff"/><text x="14" y="19" font-family="sans-serif" font-size="12" ` +
	`font-weight="bold" text-anchor="middle" fill="#333">AD</text></svg>`

// serveCreativeAsset answers the badge and the landing page. Cookies are
// the proxy's test: it must send none of the publisher's.
func serveCreativeAsset(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == BadgePath {
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_, _ = io.WriteString(w, badgeSVG)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = fmt.Fprintf(w, "<!doctype html><title>Demo advertiser</title><h1>The demo advertiser's landing page</h1><p>Seat %s: the click went through the publisher's /first-party/click.</p>\n",
		html.EscapeString(r.URL.Query().Get("seat")))
}
