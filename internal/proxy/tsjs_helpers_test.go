package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The requests tsjs sends, for the guest's own tests of the callbacks'
// admission and consent gate; the callbacks' tests are internal/tsjs's.

// tsjsAdRequest is the body tsjs's requestAds POSTs, byte for byte as
// core/request.ts builds it: {...buildAdRequest(units), config}, where
// buildAdRequest (core/auction.ts) writes code, mediaTypes.banner.sizes
// and bids[] with bidder and params for every unit.
const tsjsAdRequest = `{"adUnits":[{"code":"top","mediaTypes":{"banner":{"sizes":[[728,90],[970,250]]}},"bids":[]},` +
	`{"code":"side","mediaTypes":{"banner":{"sizes":[[300,250]]}},"bids":[{"bidder":"kargo","params":{"placementId":"p1"}}]}],` +
	`"config":{}}`

// post sends body to path as tsjs's sendAuction does (fetch with
// content-type application/json).
func (e *env) post(t *testing.T, path, contentType, body string, opts ...reqOpt) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.front.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = testDomain
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for _, o := range opts {
		o(req)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// parsedBid is what tsjs's parseAuctionResponse keeps of one bid.
type parsedBid struct {
	impid, adm, seat, crid string
	price                  float64
	w, h                   int
}

// parseLikeTsjs reads a response as core/auction.ts parseAuctionResponse
// does, insisting on the JSON types it checks (typeof === 'number', ...).
func parseLikeTsjs(t *testing.T, body []byte) []parsedBid {
	t.Helper()
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatalf("response is not JSON: %v: %s", err, body)
	}
	var out []parsedBid
	seatbids, _ := raw["seatbid"].([]any)
	for _, sbAny := range seatbids {
		sb := sbAny.(map[string]any)
		seat, ok := sb["seat"].(string)
		if !ok {
			t.Errorf("seat is not a string: %v", sb["seat"])
		}
		for _, bAny := range sb["bid"].([]any) {
			b := bAny.(map[string]any)
			p := parsedBid{seat: seat}
			var okI, okP, okW, okH, okA, okC bool
			p.impid, okI = b["impid"].(string)
			price, okP := b["price"].(float64)
			w, okW := b["w"].(float64)
			h, okH := b["h"].(float64)
			p.adm, okA = b["adm"].(string)
			p.crid, okC = b["crid"].(string)
			if !okI || !okP || !okW || !okH || !okA || !okC {
				t.Errorf("bid fields of the wrong type for tsjs: %v", b)
			}
			p.price, p.w, p.h = price, int(w), int(h)
			out = append(out, p)
		}
	}
	return out
}
