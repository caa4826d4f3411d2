package tsjs

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ssatd/ssatd/internal/family"
	"github.com/ssatd/ssatd/internal/openrtb"
	"github.com/ssatd/ssatd/internal/ssat"
)

// maxAuctionBody is upstream's MAX_AUCTION_BODY_SIZE
// (crates/trusted-server-core/src/auction/endpoints.rs): 256 KiB.
const maxAuctionBody = 256 << 10

// adRequest is tsjs's AdRequest as POST /auction receives it
// (crates/trusted-server-js/lib/src/core/auction.ts, buildAdRequest;
// crates/trusted-server-core/src/auction/formats.rs, AdRequest). Pointers
// tell a missing or null field from an empty one, as serde does: adUnits,
// code, sizes and bidder are required where their parent is present.
type adRequest struct {
	AdUnits *[]adUnit       `json:"adUnits"`
	Config  json.RawMessage `json:"config"` // accepted; ssatd passes no client context to bidders
	EIDs    json.RawMessage `json:"eids"`   // accepted; ssatd passes no client identifiers to bidders
}

type adUnit struct {
	Code       *string `json:"code"`
	MediaTypes *struct {
		Banner *struct {
			Sizes *[][]uint32 `json:"sizes"`
		} `json:"banner"`
	} `json:"mediaTypes"`
	Bids *[]struct {
		Bidder *string         `json:"bidder"`
		Params json.RawMessage `json:"params"`
	} `json:"bids"`
}

// errBadAdRequest marks a body that is not a valid AdRequest; its message
// is the reason the client is told.
var errBadAdRequest = errors.New("invalid auction request")

// parseAdRequest decodes body into the slots to auction, one per banner
// ad unit, in the order given; a repeated code keeps its first unit. A unit
// without a banner is skipped, as upstream's convert_tsjs_to_auction_request
// skips it.
func parseAdRequest(body []byte) ([]ssat.Slot, error) {
	var req adRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("%w: the body is not JSON of the AdRequest shape: %v", errBadAdRequest, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the JSON value", errBadAdRequest)
	}
	if req.AdUnits == nil {
		return nil, fmt.Errorf("%w: adUnits is required", errBadAdRequest)
	}
	var slots []ssat.Slot
	seen := map[string]bool{}
	for i, u := range *req.AdUnits {
		if u.Code == nil {
			return nil, fmt.Errorf("%w: adUnits[%d].code is required", errBadAdRequest, i)
		}
		if u.MediaTypes == nil || u.MediaTypes.Banner == nil {
			continue
		}
		s, err := slotOfUnit(i, u)
		if err != nil {
			return nil, err
		}
		if !seen[s.ID] {
			seen[s.ID] = true
			slots = append(slots, s)
		}
	}
	return slots, nil
}

func slotOfUnit(i int, u adUnit) (ssat.Slot, error) {
	s := ssat.Slot{ID: *u.Code, DivID: *u.Code, Formats: [][]int{}, Targeting: map[string]any{}}
	sizes := u.MediaTypes.Banner.Sizes
	if sizes == nil {
		return s, fmt.Errorf("%w: adUnits[%d].mediaTypes.banner.sizes is required", errBadAdRequest, i)
	}
	for _, sz := range *sizes {
		if len(sz) != 2 {
			return s, fmt.Errorf("%w: adUnits[%d]: invalid banner size; expected [width, height]", errBadAdRequest, i)
		}
		s.Formats = append(s.Formats, []int{int(sz[0]), int(sz[1])})
	}
	if u.Bids != nil {
		for j, b := range *u.Bids {
			if b.Bidder == nil {
				return s, fmt.Errorf("%w: adUnits[%d].bids[%d].bidder is required", errBadAdRequest, i, j)
			}
			params := b.Params
			if len(params) == 0 || string(params) == "null" {
				params = json.RawMessage("{}")
			}
			if s.Bidders == nil {
				s.Bidders = map[string]json.RawMessage{}
			}
			s.Bidders[*b.Bidder] = params
		}
	}
	return s, nil
}

// isJSONContentType accepts application/json and any +json type, with
// parameters. tsjs always sends application/json; a form or text/plain
// body is refused, because it is what a cross-site page can POST without
// a CORS preflight.
func isJSONContentType(v string) bool {
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && (mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")))
}

// serveAuction answers tsjs's POST /auction (requestAds, refreshes) with
// the auction pages use, in the OpenRTB shape tsjs parses
// (docs/behaviour.md, "tsjs callbacks").
func (f *Family) serveAuction(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", string(family.NoStorePrivate))
	if r.Method != http.MethodPost {
		// RFC 9110 §15.5.6: a 405 lists the methods the resource supports.
		w.Header().Set("Allow", http.MethodPost)
		f.refuse(w, r, http.StatusMethodNotAllowed, family.AuctionMethod, "405 Method Not Allowed: /auction accepts POST only", nil)
		return
	}
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		f.refuse(w, r, http.StatusUnsupportedMediaType, family.AuctionContentType,
			"415 Unsupported Media Type: the body must be application/json", nil)
		return
	}
	body, status, msg := readAuctionBody(r)
	if status != 0 {
		why := family.AuctionBadBody
		if status == http.StatusRequestEntityTooLarge {
			why = family.AuctionTooLarge
		}
		f.refuse(w, r, status, why, msg, nil)
		return
	}
	slots, err := parseAdRequest(body)
	if err != nil {
		f.refuse(w, r, http.StatusBadRequest, family.AuctionBadBody, "400 Bad Request: "+err.Error(), err)
		return
	}
	bids, took := f.auctionBids(r, slots)
	writeJSON(w, openRTBResponse(slots, bids, took.Milliseconds()))
}

// auctionBids runs the auction for slots unless the auction is off or
// consent refuses it, and returns the bids and how long it took.
func (f *Family) auctionBids(r *http.Request, slots []ssat.Slot) (map[string]ssat.Bid, time.Duration) {
	decision := f.seam.Consent(r)
	switch {
	case !f.auctionEnabled:
		f.seam.Ineligible(r, family.IneligibleNoAuction)
	case !decision.Allowed:
		// Upstream's /auction consent gate answers no bids and calls no
		// provider (auction/endpoints.rs, consent_allows_server_side_auction).
		f.seam.Ineligible(r, family.IneligibleConsent)
	case len(slots) > 0:
		// Its own deadline: upstream's POST /auction waits
		// auction.timeout_ms, not the page's auction_timeout_ms
		// (IABTechLab/trusted-server crates/trusted-server-core/src/
		// auction/endpoints.rs:295).
		return f.seam.Auction(r, family.AuctionCall{Slots: slots, PageURL: callbackPageURL(r, f.seam.View(r)),
			Consent: decision, Timeout: f.postAuctionTimeout, Render: family.RenderAuction})
	}
	return map[string]ssat.Bid{}, 0
}

// readAuctionBody reads at most maxAuctionBody bytes; a non-zero status
// says why the body was refused. A declared length over the limit is
// refused before reading, as upstream does.
func readAuctionBody(r *http.Request) (body []byte, status int, msg string) {
	tooLarge := fmt.Sprintf("413 Content Too Large: the request body exceeds the %d byte limit", maxAuctionBody)
	if r.ContentLength > maxAuctionBody {
		return nil, http.StatusRequestEntityTooLarge, tooLarge
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxAuctionBody+1))
	if err != nil {
		return nil, http.StatusBadRequest, "400 Bad Request: the request body could not be read"
	}
	if len(body) > maxAuctionBody {
		return nil, http.StatusRequestEntityTooLarge, tooLarge
	}
	return body, 0, ""
}

// auctionAnswer is the OpenRTB 2.x response of POST /auction, as
// upstream's convert_to_openrtb_response (auction/formats.rs) writes it
// and tsjs's parseAuctionResponse (core/auction.ts) reads it: one seatbid
// per winning slot, seatbid omitted when there is none, and upstream's
// orchestrator summary in ext. The bid objects are internal/openrtb's, the
// ones bidders answer with.
type auctionAnswer struct {
	openrtb.BidResponse
	Ext struct {
		Orchestrator struct {
			Strategy  string `json:"strategy"`
			TotalBids int    `json:"total_bids"`
			TimeMS    int64  `json:"time_ms"`
		} `json:"orchestrator"`
	} `json:"ext"`
}

// openRTBResponse turns the winning bids into the response, in the order
// of slots. The price is the bid's price bucket (hb_pb) as a number, the
// figure a page gets for the same bid; a winner without a usable price or
// creative is left out, as upstream leaves it out.
func openRTBResponse(slots []ssat.Slot, bids map[string]ssat.Bid, tookMS int64) auctionAnswer {
	var resp auctionAnswer
	resp.ID = newResponseID()
	resp.Ext.Orchestrator.Strategy = "parallel_only"
	resp.Ext.Orchestrator.TimeMS = tookMS
	for _, s := range slots {
		b, ok := bids[s.ID]
		if !ok {
			continue
		}
		price, err := strconv.ParseFloat(strings.TrimSpace(b.HbPb), 64)
		if err != nil || math.IsNaN(price) || math.IsInf(price, 0) || price < 0 || strings.TrimSpace(b.Adm) == "" {
			continue
		}
		// The bid's own id where the provider kept it (hb_adid is the
		// OpenRTB bid id), else "{seat}-{slot}", as upstream falls back.
		seat, id := b.HbBidder, b.HbAdid
		if id == "" {
			id = b.HbBidder + "-" + s.ID
		}
		resp.SeatBid = append(resp.SeatBid, openrtb.SeatBid{Seat: seat, Bid: []openrtb.Bid{{
			ID: id, ImpID: s.ID, Price: jsonNumber(price), AdM: b.Adm,
			AdID: b.HbAdid, CrID: b.HbAdid, W: max(b.W, 0), H: max(b.H, 0),
		}}})
	}
	resp.Ext.Orchestrator.TotalBids = len(resp.SeatBid)
	return resp
}

// jsonNumber is f as encoding/json writes a float64, which tsjs reads as
// a number: the shortest decimal that reads back as f.
func jsonNumber(f float64) json.Number {
	b, _ := json.Marshal(f) // f is finite: openRTBResponse checked
	return json.Number(b)
}

func newResponseID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
