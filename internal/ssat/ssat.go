// Package ssat holds the data that the SSAT request path passes between its
// stages: the ad slots a page declares, the bids an auction returns, and the
// header by which the guest asks the edge to compress. It has no behaviour
// of its own, so that the auction, the rewriter, the guest and the edge can
// all depend on it without depending on one another. Delivery is the one
// record the edge passes back to the guest.
package ssat

import "encoding/json"

// HintHeader is the response header by which the guest asks the edge to
// compress a response (docs/behaviour.md, "Compression"). The edge removes it
// from every response.
const HintHeader = "X-Compress-Hint"

// Slot is one matched ad slot as the client bundle receives it. The fields
// are declared in key order so the JSON keys come out sorted.
type Slot struct {
	DivID       string         `json:"div_id"`
	Formats     [][]int        `json:"formats"`
	GAMUnitPath string         `json:"gam_unit_path"`
	ID          string         `json:"id"`
	Targeting   map[string]any `json:"targeting"`

	// Bidders holds the slot's bidder parameters, by bidder name, for
	// imp.ext.prebid.bidder of an OpenRTB request. They are for the
	// auction only and never written into the page.
	Bidders map[string]json.RawMessage `json:"-"`
	// FloorPrice is the slot's minimum CPM in USD for imp.bidfloor; nil
	// sends none. Auction only, like Bidders.
	FloorPrice *float64 `json:"-"`
}

// Bid is a slot's winning bid, keys sorted like Slot's.
type Bid struct {
	Adm      string `json:"adm"`
	H        int    `json:"h"`
	HbAdid   string `json:"hb_adid"`
	HbBidder string `json:"hb_bidder"`
	HbPb     string `json:"hb_pb"`
	W        int    `json:"w"`

	// Price is the winning CPM as the bidder sent it, for the creative's
	// ${AUCTION_PRICE} (Trusted Server expands it from the bid's own
	// price, crates/trusted-server-core/src/publisher.rs:5199-5204). The
	// page gets the price bucket (HbPb) only.
	Price float64 `json:"-"`
}
