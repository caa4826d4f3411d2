package ssatdtest

import "github.com/ssatd/ssatd/internal/pageparse"

// Page is what ssatd put into a page, read back from its HTML.
type Page struct {
	// Slots are the ad slots declared in <head> (window.tsjs.adSlots), in
	// page order; nil when the page has no slots script (a request that
	// was not eligible).
	Slots []Slot
	// Bids are the winning bids by slot id, from the script before
	// </body>; nil when the page has no bids script, empty when the
	// auction brought none.
	Bids map[string]Bid
	// Bundle is the src of the client bundle tag
	// (<script id="trustedserver-js">), "" when there is none.
	Bundle string
	// Links are the values of every href, src and action attribute, in
	// page order, the bundle tag's excepted: the URLs ssatd rewrites to
	// name the client-facing host.
	Links []string
}

// Slot is one declared ad slot, as the client bundle receives it.
type Slot struct {
	ID          string
	DivID       string
	GAMUnitPath string
	Formats     [][]int // [width, height] pairs
	Targeting   map[string]any
}

// Bid is a slot's winning bid, as the client bundle receives it.
type Bid struct {
	Bidder      string // hb_bidder: the seat
	PriceBucket string // hb_pb: the price, floored to the configured granularity
	AdID        string // hb_adid: the bid's id
	W, H        int
	Adm         string // the creative
}

// ParsePage reads a decoded page body. It fails when an injected script is
// there but cannot be read, or appears twice.
func ParsePage(body []byte) (*Page, error) {
	p, err := pageparse.Parse(body)
	if err != nil {
		return nil, err
	}
	out := &Page{Bundle: p.Bundle, Links: p.Links}
	if p.Slots != nil {
		out.Slots = make([]Slot, len(p.Slots))
		for i, s := range p.Slots {
			out.Slots[i] = Slot{ID: s.ID, DivID: s.DivID, GAMUnitPath: s.GAMUnitPath, Formats: s.Formats, Targeting: s.Targeting}
		}
	}
	if p.Bids != nil {
		out.Bids = make(map[string]Bid, len(p.Bids))
		for k, b := range p.Bids {
			out.Bids[k] = Bid{Bidder: b.Bidder, PriceBucket: b.PriceBucket, AdID: b.AdID, W: b.W, H: b.H, Adm: b.Adm}
		}
	}
	return out, nil
}
