package ssatdtest

import (
	"encoding/json"
	"net/http"
)

// BidRequest is an OpenRTB 2.6 bid request (§3.2.1) as a Bidder received
// it, with the objects ssatd fills in. It is decoded here, independently of
// the daemon's own encoder, so a test sees what went over the wire.
type BidRequest struct {
	ID     string   `json:"id"`
	Imp    []Imp    `json:"imp"`
	Site   *Site    `json:"site"`
	Device *Device  `json:"device"`
	User   *User    `json:"user"`
	Regs   *Regs    `json:"regs"`
	Test   int      `json:"test"`
	TMax   int64    `json:"tmax"` // milliseconds
	Cur    []string `json:"cur"`

	// Header is the HTTP request's header.
	Header http.Header `json:"-"`
}

// Imp is one impression (§3.2.4): one matched slot, whose id it carries.
type Imp struct {
	ID     string `json:"id"`
	TagID  string `json:"tagid"`
	Secure *int   `json:"secure"`
	Banner *struct {
		Format []Format `json:"format"`
	} `json:"banner"`
	// BidFloor is the slot's floor price (nil: none), in BidFloorCur.
	BidFloor    *float64 `json:"bidfloor"`
	BidFloorCur string   `json:"bidfloorcur"`
	// Ext is imp.ext as sent: Prebid Server's bidder parameters are in
	// ext.prebid.bidder.
	Ext json.RawMessage `json:"ext"`
}

// Format is one accepted banner size (§3.2.10).
type Format struct {
	W int `json:"w"`
	H int `json:"h"`
}

// Site is the page (§3.2.13); Publisher.ID is the account.
type Site struct {
	Domain    string `json:"domain"`
	Page      string `json:"page"`
	Publisher *struct {
		ID string `json:"id"`
	} `json:"publisher"`
}

// Device is the client's browser (§3.2.18).
type Device struct {
	UA       string `json:"ua"`
	IP       string `json:"ip"`
	IPv6     string `json:"ipv6"`
	Language string `json:"language"`
}

// User carries the TCF consent string (§3.2.20).
type User struct {
	Consent string `json:"consent"`
}

// Regs says whether GDPR applies (§3.2.3): 1 or 0.
type Regs struct {
	GDPR *int `json:"gdpr"`
}
