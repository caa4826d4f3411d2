package proxy

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
func (g *Guest) serveAuction(w http.ResponseWriter, r *http.Request, x *exchange) {
	w.Header().Set("Cache-Control", noStorePrivate)
	if r.Method != http.MethodPost {
		// RFC 9110 §15.5.6: a 405 lists the methods the resource supports.
		w.Header().Set("Allow", http.MethodPost)
		g.refuseCallback(w, x, http.StatusMethodNotAllowed, reasonAuctionMethod, "405 Method Not Allowed: /auction accepts POST only", nil)
		return
	}
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		g.refuseCallback(w, x, http.StatusUnsupportedMediaType, reasonAuctionContentType,
			"415 Unsupported Media Type: the body must be application/json", nil)
		return
	}
	body, status, msg := readAuctionBody(r)
	if status != 0 {
		r := reasonAuctionBadBody
		if status == http.StatusRequestEntityTooLarge {
			r = reasonAuctionTooLarge
		}
		g.refuseCallback(w, x, status, r, msg, nil)
		return
	}
	slots, err := parseAdRequest(body)
	if err != nil {
		g.refuseCallback(w, x, http.StatusBadRequest, reasonAuctionBadBody, "400 Bad Request: "+err.Error(), err)
		return
	}
	x.slots = slots
	bids := map[string]ssat.Bid{}
	decision := g.decideConsent(x, r)
	switch {
	case !g.auctionEnabled:
		x.ineligible = ineligibleNoAuction
	case !decision.Allowed:
		// Upstream's /auction consent gate answers no bids and calls no
		// provider (auction/endpoints.rs, consent_allows_server_side_auction).
		x.ineligible = ineligibleConsent
	case len(slots) > 0:
		x.eligible = true
		req := g.callbackAuctionRequest(x, r, decision, callbackPageURL(r, x.view))
		// Its own deadline: upstream's POST /auction waits
		// auction.timeout_ms, not the page's auction_timeout_ms
		// (IABTechLab/trusted-server crates/trusted-server-core/src/
		// auction/endpoints.rs:295).
		bids = g.runCallbackAuction(r, x, req, g.postAuctionTimeout)
	}
	writeJSON(w, openRTBResponse(slots, bids, x.auctionTook.Milliseconds()))
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

// The OpenRTB 2.x response of POST /auction, as upstream's
// convert_to_openrtb_response (auction/formats.rs) writes it and tsjs's
// parseAuctionResponse (core/auction.ts) reads it: one seatbid per
// winning slot, seatbid omitted when there is none.
type ortbResponse struct {
	ID      string        `json:"id"`
	SeatBid []ortbSeatBid `json:"seatbid,omitempty"`
	Ext     ortbExt       `json:"ext"`
}

type ortbSeatBid struct {
	Seat string    `json:"seat"`
	Bid  []ortbBid `json:"bid"`
}

type ortbBid struct {
	ID    string  `json:"id"`
	ImpID string  `json:"impid"`
	Price float64 `json:"price"`
	AdM   string  `json:"adm"`
	AdID  string  `json:"adid,omitempty"`
	CrID  string  `json:"crid,omitempty"`
	W     int     `json:"w,omitempty"`
	H     int     `json:"h,omitempty"`
}

type ortbExt struct {
	Orchestrator struct {
		Strategy  string `json:"strategy"`
		TotalBids int    `json:"total_bids"`
		TimeMS    int64  `json:"time_ms"`
	} `json:"orchestrator"`
}

// openRTBResponse turns the winning bids into the response, in the order
// of slots. The price is the bid's price bucket (hb_pb) as a number, the
// figure a page gets for the same bid; a winner without a usable price or
// creative is left out, as upstream leaves it out.
func openRTBResponse(slots []ssat.Slot, bids map[string]ssat.Bid, tookMS int64) ortbResponse {
	resp := ortbResponse{ID: newResponseID()}
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
		resp.SeatBid = append(resp.SeatBid, ortbSeatBid{Seat: seat, Bid: []ortbBid{{
			ID: id, ImpID: s.ID, Price: price, AdM: b.Adm,
			AdID: b.HbAdid, CrID: b.HbAdid, W: max(b.W, 0), H: max(b.H, 0),
		}}})
	}
	resp.Ext.Orchestrator.TotalBids = len(resp.SeatBid)
	return resp
}

func newResponseID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeJSON sends v as a 200 application/json answer.
func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only maps of strings and numbers are encoded here.
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
