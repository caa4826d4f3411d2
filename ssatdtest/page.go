package ssatdtest

import "github.com/ssatd/ssatd/internal/pageparse"

// Page is what ssatd put into a page, read back from its HTML: Slots (the
// ad slots declared in <head>, in page order; nil without a slots script),
// Bids (the winning bids by slot id, from the script before </body>; nil
// without a bids script, empty when the auction brought none), Bundle (the
// src of the client bundle tag, "" without one) and Links (every href, src
// and action value in page order, the bundle tag's excepted).
type Page = pageparse.Page

// Slot is one declared ad slot, as the client bundle receives it: ID,
// DivID, GAMUnitPath, Formats ([width, height] pairs) and Targeting.
type Slot = pageparse.Slot

// Bid is a slot's winning bid, as the client bundle receives it: Bidder
// (hb_bidder, the seat), PriceBucket (hb_pb, floored to the configured
// granularity), AdID (hb_adid), W, H and Adm (the creative).
type Bid = pageparse.Bid

// ParsePage reads a decoded page body. It fails when an injected script is
// there but cannot be read, or appears twice.
func ParsePage(body []byte) (*Page, error) {
	return pageparse.Parse(body)
}
