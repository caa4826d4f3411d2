package testutil

import (
	"encoding/json"
	"testing"
)

// TsjsAdRequest is the body tsjs's requestAds POSTs to /auction, byte for
// byte as core/request.ts builds it: {...buildAdRequest(units), config},
// where buildAdRequest (core/auction.ts) writes code, mediaTypes.banner.sizes
// and bids[] with bidder and params for every unit.
const TsjsAdRequest = `{"adUnits":[{"code":"top","mediaTypes":{"banner":{"sizes":[[728,90],[970,250]]}},"bids":[]},` +
	`{"code":"side","mediaTypes":{"banner":{"sizes":[[300,250]]}},"bids":[{"bidder":"kargo","params":{"placementId":"p1"}}]}],` +
	`"config":{}}`

// TsjsBid is what tsjs's parseAuctionResponse keeps of one bid.
type TsjsBid struct {
	ImpID, Adm, Seat, CrID string
	Price                  float64
	W, H                   int
}

// ParseLikeTsjs reads a /auction answer as core/auction.ts
// parseAuctionResponse does, insisting on the JSON types it checks
// (typeof === 'number', ...).
func ParseLikeTsjs(t *testing.T, body []byte) []TsjsBid {
	t.Helper()
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatalf("response is not JSON: %v: %s", err, body)
	}
	var out []TsjsBid
	seatbids, _ := raw["seatbid"].([]any)
	for _, sbAny := range seatbids {
		sb := sbAny.(map[string]any)
		seat, ok := sb["seat"].(string)
		if !ok {
			t.Errorf("seat is not a string: %v", sb["seat"])
		}
		for _, bAny := range sb["bid"].([]any) {
			b := bAny.(map[string]any)
			p := TsjsBid{Seat: seat}
			var okI, okA, okC bool
			p.ImpID, okI = b["impid"].(string)
			price, okP := b["price"].(float64)
			w, okW := b["w"].(float64)
			h, okH := b["h"].(float64)
			p.Adm, okA = b["adm"].(string)
			p.CrID, okC = b["crid"].(string)
			if !okI || !okP || !okW || !okH || !okA || !okC {
				t.Errorf("bid fields of the wrong type for tsjs: %v", b)
			}
			p.Price, p.W, p.H = price, int(w), int(h)
			out = append(out, p)
		}
	}
	return out
}
