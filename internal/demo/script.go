package demo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"time"

	"github.com/ssatd/ssatd/internal/openrtb"
)

// Script is a scripted answer for the demo bidder, read from the JSON file
// of `ssatd demo-bidder -script FILE` (docs/testing.md, "From a shell"):
//
//	{"delay_ms": 100, "status": 0,
//	 "bids": [{"slot": "atf", "seat": "alpha", "price": "2.50", "w": 300, "h": 250, "adm": "<div>ad</div>"}]}
//
// With a script the bidder bids exactly the script's bids, on the slots
// the request carries; no bids is the OpenRTB no-bid (204), and a status
// other than 0 and 200 is sent instead of any bid.
type Script struct {
	DelayMS int           `json:"delay_ms"`
	Status  int           `json:"status"`
	Bids    []ScriptedBid `json:"bids"`
}

// ScriptedBid is one bid of a Script: seat Seat bids Price on the
// impression of slot Slot. W and H of 0 take the impression's first
// format; an empty Adm gets a visible demo creative.
type ScriptedBid struct {
	Slot  string `json:"slot"`
	Seat  string `json:"seat"`
	Price string `json:"price"`
	W     int    `json:"w"`
	H     int    `json:"h"`
	Adm   string `json:"adm"`
}

// LoadScript reads and checks a script file; an error names the field.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("script %s: %w", path, err)
	}
	return &s, nil
}

func (s *Script) check() error {
	var errs []error
	if s.DelayMS < 0 {
		errs = append(errs, fmt.Errorf("delay_ms: must not be negative, got %d", s.DelayMS))
	}
	if s.Status != 0 && (s.Status < 200 || s.Status > 599) {
		errs = append(errs, fmt.Errorf("status: must be an HTTP status from 200 to 599, got %d", s.Status))
	}
	for i, b := range s.Bids {
		if b.Slot == "" || b.Seat == "" {
			errs = append(errs, fmt.Errorf("bids[%d]: slot and seat are required", i))
		}
		if r, ok := new(big.Rat).SetString(b.Price); !ok || r.Sign() <= 0 {
			errs = append(errs, fmt.Errorf("bids[%d].price: must be a positive decimal, got %q", i, b.Price))
		}
		if b.W < 0 || b.H < 0 {
			errs = append(errs, fmt.Errorf("bids[%d]: w and h must not be negative", i))
		}
	}
	return errors.Join(errs...)
}

func (s *Script) delay() time.Duration { return time.Duration(s.DelayMS) * time.Millisecond }

// failure is the status the script answers instead of bids, or 0.
func (s *Script) failure() int {
	if s.Status == 0 || s.Status == http.StatusOK {
		return 0
	}
	return s.Status
}

// answer is the script's bid response to br.
func (s *Script) answer(br *openrtb.BidRequest) *openrtb.BidResponse {
	imps := make(map[string]openrtb.Imp, len(br.Imp))
	for _, imp := range br.Imp {
		imps[imp.ID] = imp
	}
	resp := &openrtb.BidResponse{ID: br.ID, Cur: "USD"}
	seat := map[string]int{}
	for _, b := range s.Bids {
		imp, ok := imps[b.Slot]
		if !ok {
			continue
		}
		f := openrtb.Format{W: b.W, H: b.H}
		if (f.W == 0 || f.H == 0) && imp.Banner != nil && len(imp.Banner.Format) > 0 {
			f = imp.Banner.Format[0]
		}
		adm := b.Adm
		if adm == "" {
			adm = creative(b.Seat, imp.ID, f, b.Price, "", "")
		}
		i, ok := seat[b.Seat]
		if !ok {
			i = len(resp.SeatBid)
			seat[b.Seat] = i
			resp.SeatBid = append(resp.SeatBid, openrtb.SeatBid{Seat: b.Seat})
		}
		resp.SeatBid[i].Bid = append(resp.SeatBid[i].Bid, openrtb.Bid{
			ID: b.Seat + "-" + imp.ID, ImpID: imp.ID, Price: json.Number(b.Price), W: f.W, H: f.H,
			AdM: adm, CrID: b.Seat + "-creative",
		})
	}
	return resp
}
