package demo

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func recorded(t *testing.T, url string) []map[string]any {
	t.Helper()
	resp, err := http.Get(url + RequestsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s: %d %v", RequestsPath, resp.StatusCode, resp.Header)
	}
	var list []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	return list
}

// The record is the requests as sent, newest last, the oldest dropped past
// MaxRecorded; DELETE empties it.
func TestBidderRecordsRequests(t *testing.T) {
	b, _ := NewBidder(BidderOptions{})
	srv := httptest.NewServer(b)
	defer srv.Close()
	if got := recorded(t, srv.URL); len(got) != 0 {
		t.Fatalf("a new bidder has %d requests", len(got))
	}
	postBid(t, srv.URL, "not json") // refused, not recorded
	for i := range MaxRecorded + 2 {
		// "x-unknown" is no field of the demo's own types: the record
		// keeps it, as sent.
		postBid(t, srv.URL, fmt.Sprintf(`{"id":"r%d","imp":[{"id":"s","banner":{"format":[{"w":1,"h":1}]}}],"x-unknown":%d}`, i, i))
	}
	list := recorded(t, srv.URL)
	if len(list) != MaxRecorded {
		t.Fatalf("%d recorded, want the bound %d", len(list), MaxRecorded)
	}
	if list[0]["id"] != "r2" || list[MaxRecorded-1]["id"] != fmt.Sprintf("r%d", MaxRecorded+1) || list[0]["x-unknown"] != float64(2) {
		t.Errorf("first %v, last %v: want r2 .. r%d, newest last, as sent", list[0], list[MaxRecorded-1], MaxRecorded+1)
	}
	req, _ := http.NewRequest(http.MethodDelete, srv.URL+RequestsPath, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE: %d", resp.StatusCode)
	}
	if got := recorded(t, srv.URL); len(got) != 0 {
		t.Errorf("%d requests after DELETE", len(got))
	}
	resp, err = http.Post(srv.URL+RequestsPath, "application/json", strings.NewReader("[]"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD, DELETE" {
		t.Errorf("POST %s: %d, Allow %q", RequestsPath, resp.StatusCode, resp.Header.Get("Allow"))
	}
}

func writeScript(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBidderAnswersTheScript(t *testing.T) {
	const req = `{"id":"r","imp":[{"id":"atf","banner":{"format":[{"w":300,"h":250}]}},{"id":"side","banner":{"format":[{"w":160,"h":600}]}}]}`
	tests := []struct {
		name, script string
		status       int
		want         map[string]string // impid -> "seat price w x h adm"
	}{
		{"bids", `{"bids":[{"slot":"atf","seat":"a","price":"2.50"},{"slot":"atf","seat":"b","price":"1.10","w":320,"h":50,"adm":"<b>x</b>"},{"slot":"other","seat":"a","price":"9"}]}`,
			http.StatusOK, map[string]string{"a atf": "2.50 300x250 demo", "b atf": "1.10 320x50 <b>x</b>"}},
		{"no bid", `{"bids":[]}`, http.StatusNoContent, nil},
		{"failure", `{"status":503,"bids":[{"slot":"atf","seat":"a","price":"1"}]}`, http.StatusServiceUnavailable, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadScript(writeScript(t, tt.script))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := NewBidder(BidderOptions{Script: s})
			srv := httptest.NewServer(b)
			defer srv.Close()
			resp, br := postBid(t, srv.URL, req)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			got := map[string]string{}
			for _, sb := range br.SeatBid {
				for _, bid := range sb.Bid {
					adm := bid.AdM
					if strings.Contains(adm, "via OpenRTB") {
						adm = "demo"
					}
					got[sb.Seat+" "+bid.ImpID] = fmt.Sprintf("%s %dx%d %s", bid.Price, bid.W, bid.H, adm)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("bids %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s: %q, want %q", k, got[k], v)
				}
			}
			if n := len(recorded(t, srv.URL)); n != 1 {
				t.Errorf("%d recorded, want 1", n)
			}
		})
	}
}

func TestLoadScriptNamesTheField(t *testing.T) {
	tests := map[string]string{
		`{"bids":[{"slot":"a","seat":"s","price":"free"}]}`: "bids[0].price",
		`{"bids":[{"seat":"s","price":"1"}]}`:               "bids[0]: slot and seat are required",
		`{"delay_ms":-1}`:                                   "delay_ms",
		`{"status":42}`:                                     "status",
		`{"bid":[]}`:                                        `unknown field "bid"`,
	}
	for text, want := range tests {
		_, err := LoadScript(writeScript(t, text))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to name %s", text, err, want)
		}
	}
	if _, err := LoadScript(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing file loads")
	}
}
