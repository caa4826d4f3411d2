// Package openrtb holds the parts of the OpenRTB 2.6 bid request and bid
// response that ssatd sends and reads. Only the fields ssatd uses are
// declared; unknown response fields are ignored when decoding.
//
// Field names and meanings follow the IAB Tech Lab "OpenRTB API
// Specification Version 2.6" (sections 3.2.x for the request objects, 4.2.x
// for the response objects).
package openrtb

import "encoding/json"

// Version is sent in the x-openrtb-version request header (OpenRTB 2.6 §2.4).
const Version = "2.6"

// BidRequest is the top-level request object (§3.2.1).
type BidRequest struct {
	ID     string         `json:"id"`
	Imp    []Imp          `json:"imp"`
	Site   *Site          `json:"site,omitempty"`
	Device *Device        `json:"device,omitempty"`
	User   *User          `json:"user,omitempty"`
	Regs   *Regs          `json:"regs,omitempty"`
	Test   int8           `json:"test,omitempty"` // 1 = test mode, no billing
	TMax   int64          `json:"tmax,omitempty"` // milliseconds left for the whole auction
	Cur    []string       `json:"cur,omitempty"`  // accepted currencies, ISO-4217
	Ext    *BidRequestExt `json:"ext,omitempty"`
}

// BidRequestExt is the request's ext: Prebid Server's debug switches, and
// Trusted Server's request signature.
type BidRequestExt struct {
	Prebid        *BidRequestExtPrebid `json:"prebid,omitempty"`
	TrustedServer *TrustedServerExt    `json:"trusted_server,omitempty"`
}

// TrustedServerExt is ext.trusted_server, its fields in upstream's order
// (IABTechLab/trusted-server crates/trusted-server-core/src/openrtb.rs:
// 132-148): the signing protocol's version, the base64url Ed25519
// signature, the key's kid, the publisher's host and scheme, and the
// signature's time in Unix milliseconds (internal/signing).
type TrustedServerExt struct {
	Version       string `json:"version,omitempty"`
	Signature     string `json:"signature,omitempty"`
	Kid           string `json:"kid,omitempty"`
	RequestHost   string `json:"request_host,omitempty"`
	RequestScheme string `json:"request_scheme,omitempty"`
	TS            uint64 `json:"ts,omitempty"`
}

// BidRequestExtPrebid is ext.prebid: debug asks Prebid Server for its
// debug output, returnallbidstatus for every bidder's status.
type BidRequestExtPrebid struct {
	Debug              bool `json:"debug,omitempty"`
	ReturnAllBidStatus bool `json:"returnallbidstatus,omitempty"`
}

// Imp is one impression: here, one matched ad slot (§3.2.4).
type Imp struct {
	ID     string  `json:"id"`
	Banner *Banner `json:"banner,omitempty"`
	TagID  string  `json:"tagid,omitempty"`
	Secure *int8   `json:"secure,omitempty"` // 1 = the creative must be served over HTTPS
	// BidFloor is the minimum CPM, in BidFloorCur; absent means none,
	// while 0 is a floor of zero.
	BidFloor    *float64 `json:"bidfloor,omitempty"`
	BidFloorCur string   `json:"bidfloorcur,omitempty"`
	Ext         *ImpExt  `json:"ext,omitempty"`
}

// Banner lists the accepted sizes (§3.2.6).
type Banner struct {
	Format []Format `json:"format,omitempty"`
}

// Format is one accepted size (§3.2.10).
type Format struct {
	W int `json:"w"`
	H int `json:"h"`
}

// ImpExt carries Prebid Server's per-impression extension: the bidders to
// call and their parameters (imp.ext.prebid.bidder.<name>).
type ImpExt struct {
	Prebid *ImpExtPrebid `json:"prebid,omitempty"`
}

// ImpExtPrebid is imp.ext.prebid.
type ImpExtPrebid struct {
	Bidder map[string]json.RawMessage `json:"bidder,omitempty"`
}

// Site describes the page (§3.2.13).
type Site struct {
	Domain    string     `json:"domain,omitempty"`
	Page      string     `json:"page,omitempty"`
	Publisher *Publisher `json:"publisher,omitempty"`
}

// Publisher is site.publisher (§3.2.15); Prebid Server reads its account
// from publisher.id.
type Publisher struct {
	ID string `json:"id,omitempty"`
}

// Device is the client's browser (§3.2.18).
type Device struct {
	UA       string `json:"ua,omitempty"`
	IP       string `json:"ip,omitempty"`
	IPv6     string `json:"ipv6,omitempty"`
	Language string `json:"language,omitempty"` // ISO-639-1 alpha-2
	Geo      *Geo   `json:"geo,omitempty"`
}

// Geo is device.geo (§3.2.19), filled as Trusted Server fills it from
// Fastly's geolocation (crates/trusted-server-core/src/integrations/
// prebid.rs): country as Fastly's two-letter code, type 2 (IP address).
type Geo struct {
	Lat     *float64 `json:"lat,omitempty"`
	Lon     *float64 `json:"lon,omitempty"`
	Type    int      `json:"type,omitempty"`
	Country string   `json:"country,omitempty"`
	Region  string   `json:"region,omitempty"`
	City    string   `json:"city,omitempty"`
}

// User carries the TCF consent string (§3.2.20; a first-class field since
// 2.6).
type User struct {
	// ID is the reader's edge cookie (ts-ec) where consent allows it, as
	// Trusted Server sends it (integrations/prebid.rs:1832-1847).
	ID      string   `json:"id,omitempty"`
	Consent string   `json:"consent,omitempty"`
	Ext     *UserExt `json:"ext,omitempty"`
}

// UserExt carries the partners' extended identifiers (user.ext.eids, as
// Prebid Server reads them).
type UserExt struct {
	EIDs []EID `json:"eids,omitempty"`
}

// EID is one source's identifiers (OpenRTB 2.6 §3.2.27).
type EID struct {
	Source string `json:"source"`
	UIDs   []UID  `json:"uids"`
}

// UID is one identifier and its agent type (§3.2.28).
type UID struct {
	ID    string `json:"id"`
	Atype int    `json:"atype,omitempty"`
}

// Regs carries whether GDPR applies and the US Privacy and GPP strings
// (§3.2.3; first-class fields since 2.6).
type Regs struct {
	GDPR      *int8  `json:"gdpr,omitempty"`
	USPrivacy string `json:"us_privacy,omitempty"`
	GPP       string `json:"gpp,omitempty"`
	GPPSID    []int  `json:"gpp_sid,omitempty"`
}

// BidResponse is the top-level response object (§4.2.1).
type BidResponse struct {
	ID      string    `json:"id"`
	SeatBid []SeatBid `json:"seatbid,omitempty"`
	Cur     string    `json:"cur,omitempty"` // the bids' currency; USD when absent
}

// SeatBid is the bids of one seat (§4.2.2). For Prebid Server the seat is
// the bidder's name. Seat is always written, empty or not: POST /auction's
// answer (internal/tsjs) is read by tsjs, which names a seat it does not
// find "unknown" (crates/trusted-server-js/lib/src/core/auction.ts,
// parseAuctionResponse), and upstream always writes it.
type SeatBid struct {
	Bid  []Bid  `json:"bid"`
	Seat string `json:"seat"`
}

// Bid is one bid (§4.2.3). Price is kept as the decimal text that was sent,
// so that it can be bucketed without binary floating-point rounding.
type Bid struct {
	ID    string      `json:"id"`
	ImpID string      `json:"impid"`
	Price json.Number `json:"price"`
	AdM   string      `json:"adm,omitempty"`
	AdID  string      `json:"adid,omitempty"`
	CrID  string      `json:"crid,omitempty"`
	W     int         `json:"w,omitempty"`
	H     int         `json:"h,omitempty"`
}
