package proxy

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"testing"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/openrtb"
)

// diagOf decodes a DiagDecisions value, which must be ASCII.
func diagOf(t *testing.T, where, v string) diagnosis {
	t.Helper()
	for i := 0; i < len(v); i++ {
		if v[i] >= 0x80 || v[i] < 0x20 {
			t.Fatalf("%s %q is not printable ASCII", where, v)
		}
	}
	var d diagnosis
	if err := json.Unmarshal([]byte(v), &d); err != nil {
		t.Fatalf("%s %q: %v", where, v, err)
	}
	return d
}

// The header says what was decided before the body; the trailer repeats
// it with how each endpoint answered and the bids the page got.
func TestDiagnosticsDecisionsHeaderAndTrailer(t *testing.T) {
	for _, mode := range []string{"mirror", "offload"} {
		t.Run(mode, func(t *testing.T) {
			bids := newBidEndpoint(t, bidOn("seat-é", "2.345"))
			broken := newBidEndpoint(t, func(w http.ResponseWriter, _ *http.Request, _ openrtb.BidRequest) {
				http.Error(w, "down", http.StatusServiceUnavailable)
			})
			mut := []func(*config.Config){withOpenRTB(2000, bids, broken), diagnostics}
			if mode == "offload" {
				mut = append(mut, offload("builtin")) // the edge compresses the page
			}
			e := newEnv(t, htmlPage, mut...)
			resp, _ := e.mustGet(t, "/news/a", navigate, header("Accept-Encoding", "gzip"))
			if mode == "offload" && resp.Header.Get("Content-Encoding") != "gzip" {
				t.Errorf("the edge did not compress: %v", resp.Header)
			}
			checkDecisions(t, resp, mode)
		})
	}
}

func checkDecisions(t *testing.T, resp *http.Response, mode string) {
	t.Helper()
	head := diagOf(t, "header", resp.Header.Get(DiagDecisions))
	want := diagnosis{Eligible: true, Mode: mode, Slots: []string{"top"}, Auction: "pending"}
	if !reflect.DeepEqual(head, want) {
		t.Errorf("header %+v, want %+v", head, want)
	}
	tr := diagOf(t, "trailer", resp.Trailer.Get(DiagDecisions))
	if tr.Auction != "partial" || tr.AuctionMS == nil || *tr.AuctionMS <= 0 || !tr.Eligible || !reflect.DeepEqual(tr.Slots, []string{"top"}) {
		t.Errorf("trailer %+v", tr)
	}
	if len(tr.Endpoints) != 2 {
		t.Fatalf("endpoints %+v, want both", tr.Endpoints)
	}
	first, second := tr.Endpoints[0], tr.Endpoints[1]
	if first.Name != "first" || first.Outcome != "bids" || first.Status != 200 || first.MS <= 0 {
		t.Errorf("first endpoint %+v", first)
	}
	if second.Name != "second" || second.Outcome != "error" || second.Reason != "status" || second.Status != 503 {
		t.Errorf("second endpoint %+v", second)
	}
	wantBids := []diagBid{{Slot: "top", ID: "seat-é-top", Bidder: "seat-é", Price: "2.34", W: 728, H: 90}}
	if !reflect.DeepEqual(tr.Bids, wantBids) {
		t.Errorf("bids %+v, want %+v", tr.Bids, wantBids)
	}
	if n := len(resp.Trailer.Values(DiagDecisions)); n != 1 {
		t.Errorf("%d trailer values, want 1", n)
	}
}

func TestDiagnosticsDecisionsWithoutAuction(t *testing.T) {
	tests := []struct {
		name       string
		opts       []reqOpt
		mut        []func(*config.Config)
		path       string
		ineligible string
		trailer    bool
	}{
		{"not a navigation", nil, nil, "/", ineligibleNotDoc, true},
		{"a bot", []reqOpt{navigate, header("User-Agent", "Googlebot/2.1")}, nil, "/", ineligibleBot, true},
		{"no slot", []reqOpt{navigate}, []func(*config.Config){func(c *config.Config) {
			c.CreativeOpportunities.Slots[0].PagePatterns = []string{"/ads/**"}
		}}, "/", ineligibleNoSlot, true},
		{"pass-through", []reqOpt{navigate}, nil, "/data.bin", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/data.bin" {
					// Outside publisher.rewrite_content_types: passed through.
					w.Header().Set("Content-Type", "application/octet-stream")
					_, _ = io.WriteString(w, "{}")
					return
				}
				htmlPage(w, r)
			}), append(tt.mut, diagnostics)...)
			resp, _ := e.mustGet(t, tt.path, tt.opts...)
			want := diagnosis{Eligible: tt.ineligible == "", Ineligible: tt.ineligible, Mode: "mirror", Slots: []string{}, Auction: "none"}
			if tt.ineligible == "" {
				// Eligible, but the origin's answer is not a page: the
				// auction was started and is never waited for.
				want.Slots, want.Auction = []string{"top"}, "pending"
			}
			if got := diagOf(t, "header", resp.Header.Get(DiagDecisions)); !reflect.DeepEqual(got, want) {
				t.Errorf("header %+v, want %+v", got, want)
			}
			tr := resp.Trailer.Get(DiagDecisions)
			if !tt.trailer {
				if tr != "" {
					t.Errorf("pass-through response has a trailer %q", tr)
				}
				return
			}
			if got := diagOf(t, "trailer", tr); !reflect.DeepEqual(got, want) {
				t.Errorf("trailer %+v, want %+v", got, want)
			}
		})
	}
}

// The static provider has no endpoints; its bids are listed all the same.
func TestDiagnosticsStaticBids(t *testing.T) {
	e := newEnv(t, htmlPage, diagnostics)
	resp, _ := e.mustGet(t, "/", navigate)
	tr := diagOf(t, "trailer", resp.Trailer.Get(DiagDecisions))
	want := []diagBid{{Slot: "top", ID: "a1", Bidder: "example", Price: "1.50", W: 728, H: 90}}
	if tr.Auction != "completed" || len(tr.Endpoints) != 0 || !reflect.DeepEqual(tr.Bids, want) {
		t.Errorf("trailer %+v", tr)
	}
}
