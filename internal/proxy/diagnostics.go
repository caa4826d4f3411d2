package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ssatd/ssatd/internal/auction"
	"github.com/ssatd/ssatd/internal/ssat"
)

// DiagDecisions is the diagnostics header that says what the guest decided
// for a request (docs/behaviour.md, "Diagnostics"): a JSON object. The
// header carries what is known when the headers go out; a rewritten page
// sends it again as a trailer, complete with the auction's outcome per
// endpoint and the bids, which are only known at </body>.
const DiagDecisions = "X-Ssatd-Diagnostics"

// diagnosis is DiagDecisions' value.
type diagnosis struct {
	Eligible   bool     `json:"eligible"`
	Ineligible string   `json:"ineligible,omitempty"` // why not, a reason of "Eligibility"
	Mode       string   `json:"mode"`
	Slots      []string `json:"slots"` // matched slot ids
	// Auction is "none" (no auction for this request), "pending" (in the
	// header of a page that waits for it), or how the page's wait ended:
	// the auction.Outcome (completed, partial, timeout, failed, cancelled).
	Auction   string         `json:"auction"`
	AuctionMS *float64       `json:"auction_ms,omitempty"`
	Endpoints []diagEndpoint `json:"endpoints,omitempty"`
	Bids      []diagBid      `json:"bids,omitempty"`
}

type diagEndpoint struct {
	Name    string  `json:"name"`
	Outcome string  `json:"outcome"`
	Reason  string  `json:"reason,omitempty"`
	Status  int     `json:"status,omitempty"`
	MS      float64 `json:"ms"`
}

type diagBid struct {
	Slot   string `json:"slot"`
	ID     string `json:"id"`     // hb_adid: the winning bid's id
	Bidder string `json:"bidder"` // hb_bidder: its seat
	Price  string `json:"hb_pb"`  // the price bucket the page gets
	W      int    `json:"w"`
	H      int    `json:"h"`
}

// diagRecorder collects, for one request, what the auction's endpoint
// calls and the page's wait came to. The endpoint calls report from their
// own goroutines.
type diagRecorder struct {
	mu        sync.Mutex
	endpoints []diagEndpoint
	bids      []diagBid
}

// auctionContext is the context the request's auction runs under: with
// diagnostics on, it reports each endpoint call to the exchange.
func (g *Guest) auctionContext(x *exchange) context.Context {
	if !g.diagnostics {
		return x.ctx
	}
	x.diag = &diagRecorder{}
	return auction.WithObserver(x.ctx, x.diag.endpoint)
}

func (d *diagRecorder) endpoint(r auction.EndpointResult) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.endpoints = append(d.endpoints, diagEndpoint{Name: r.Endpoint, Outcome: r.Outcome, Reason: r.Reason,
		Status: r.Status, MS: roundMillis(millis(r.Duration))})
}

// won records the bids the page got; nil-safe, so the pipeline calls it
// whether diagnostics are on or not.
func (d *diagRecorder) won(bids map[string]ssat.Bid) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.bids = d.bids[:0]
	for slot, b := range bids {
		d.bids = append(d.bids, diagBid{Slot: slot, ID: b.HbAdid, Bidder: b.HbBidder, Price: b.HbPb, W: b.W, H: b.H})
	}
	slices.SortFunc(d.bids, func(a, b diagBid) int { return cmpString(a.Slot, b.Slot) })
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func roundMillis(ms float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(ms, 'f', 3, 64), 64)
	return v
}

// decisions is what is known when the headers go out.
func decisions(x *exchange) diagnosis {
	d := diagnosis{Eligible: x.eligible, Ineligible: x.ineligible, Mode: string(x.mode), Slots: []string{}, Auction: "none"}
	if x.eligible {
		for _, s := range x.slots {
			d.Slots = append(d.Slots, s.ID)
		}
	}
	if x.auction != nil {
		d.Auction = "pending"
	}
	return d
}

// setDecisionsHeader sets DiagDecisions as known before the body.
func setDecisionsHeader(h http.Header, x *exchange) {
	h.Set(DiagDecisions, asciiJSON(decisions(x)))
}

// unsetSentDecisions runs once the headers are written: a trailer that
// ReverseProxy copies in later then replaces the header's value rather
// than being sent after it in the same field.
func unsetSentDecisions(h http.Header) {
	for _, v := range h.Values("Trailer") {
		for _, k := range strings.Split(v, ",") {
			if http.CanonicalHeaderKey(strings.TrimSpace(k)) == DiagDecisions {
				h.Del(DiagDecisions)
				return
			}
		}
	}
}

// decisionsTrailer is DiagDecisions once the page is complete. It is
// called with x.mu held. Endpoint calls still running when the page
// ended (past the auction's deadline) are not listed.
func decisionsTrailer(x *exchange) string {
	d := decisions(x)
	if x.auction != nil {
		d.Auction = string(x.auctionOut)
		if d.Auction == "" {
			d.Auction = "not_awaited" // the page ended without reaching its end script
		}
		ms := roundMillis(millis(x.auctionTook))
		d.AuctionMS = &ms
	}
	if x.diag != nil {
		x.diag.mu.Lock()
		d.Endpoints = slices.Clone(x.diag.endpoints)
		d.Bids = slices.Clone(x.diag.bids)
		x.diag.mu.Unlock()
		slices.SortFunc(d.Endpoints, func(a, b diagEndpoint) int { return cmpString(a.Name, b.Name) })
	}
	return asciiJSON(d)
}

// asciiJSON encodes v on one line with every character above U+007F
// escaped: a field value is ASCII (RFC 9110 §5.5 treats other octets as
// opaque), and bid ids come from outside.
func asciiJSON(v any) string {
	js, err := json.Marshal(v)
	if err != nil {
		return `{"error":"encode"}`
	}
	var b bytes.Buffer
	for len(js) > 0 {
		r, n := utf8.DecodeRune(js)
		if r < utf8.RuneSelf {
			b.WriteByte(js[0])
		} else {
			for _, u := range utf16Units(r) {
				b.WriteString(`\u`)
				b.WriteString(strconv.FormatUint(uint64(u)|0x10000, 16)[1:])
			}
		}
		js = js[n:]
	}
	return b.String()
}

func utf16Units(r rune) []uint16 {
	if r > 0xFFFF {
		r -= 0x10000
		return []uint16{uint16(0xD800 + r>>10), uint16(0xDC00 + r&0x3FF)}
	}
	return []uint16{uint16(r)}
}
