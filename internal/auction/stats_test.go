package auction

import (
	"bytes"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
)

func TestStatsPrometheus(t *testing.T) {
	verifyNoLeaks(t)
	s := NewStats()
	s.observe("pbs", 30*time.Millisecond, EndpointBids, "")
	s.observe("pbs", 700*time.Millisecond, EndpointTimeout, ReasonSlowDrip)
	s.addWon("pbs", "appnexus")
	s.addIgnored(IgnoredNoAdm)
	text, err := testutil.CollectAndFormat(s, expfmt.TypeTextPlain, "ssatd_auction_endpoint_requests_total",
		"ssatd_auction_endpoint_duration_seconds", "ssatd_auction_bids_won_total", "ssatd_auction_bids_ignored_total")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.Write(text)
	for _, want := range []string{
		`ssatd_auction_endpoint_requests_total{endpoint="pbs",outcome="bids",reason=""} 1`,
		`ssatd_auction_endpoint_requests_total{endpoint="pbs",outcome="timeout",reason="slow_drip"} 1`,
		`ssatd_auction_endpoint_duration_seconds_bucket{endpoint="pbs",le="0.025"} 0`,
		`ssatd_auction_endpoint_duration_seconds_bucket{endpoint="pbs",le="0.05"} 1`,
		`ssatd_auction_endpoint_duration_seconds_bucket{endpoint="pbs",le="1"} 2`,
		`ssatd_auction_endpoint_duration_seconds_bucket{endpoint="pbs",le="+Inf"} 2`,
		`ssatd_auction_endpoint_duration_seconds_count{endpoint="pbs"} 2`,
		`ssatd_auction_bids_won_total{endpoint="pbs",seat="appnexus"} 1`,
		`ssatd_auction_bids_ignored_total{reason="no_adm"} 1`,
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("no %s in\n%s", want, b.String())
		}
	}
}

// TestSeatLabels: a seat is its own label only when it is a short plain
// token, and an endpoint has at most 32 named seats and other; another
// endpoint has a cap of its own.
func TestSeatLabels(t *testing.T) {
	verifyNoLeaks(t)
	for _, tt := range []struct{ seat, want string }{
		{"appnexus", "appnexus"},
		{"rubicon_2.b-X", "rubicon_2.b-X"},
		{strings.Repeat("a", 64), strings.Repeat("a", 64)},
		{strings.Repeat("a", 65), "other"},
		{"", "other"},
		{"two words", "other"},
		{`quote"d`, "other"},
		{"line\nbreak", "other"},
		{"ünïcode", "other"},
		{"seat}", "other"},
	} {
		if got := seatLabel(tt.seat); got != tt.want {
			t.Errorf("seatLabel(%q) = %q, want %q", tt.seat, got, tt.want)
		}
	}
	s := NewStats()
	s.addWon("pbs", "bad seat") // other first: it does not take a named place
	for i := range 40 {
		s.addWon("pbs", fmt.Sprintf("seat%d", i))
	}
	s.addWon("pbs", "seat3") // a named seat keeps its series
	s.addWon("backup", "seat39")
	snap := s.Snapshot()
	pbs := snap.Endpoints["pbs"].Won
	if len(pbs) != 33 || pbs["other"] != 1+8 || pbs["seat31"] != 1 || pbs["seat32"] != 0 || pbs["seat3"] != 2 {
		t.Errorf("pbs seats: %d series, other %d, seat31 %d, seat32 %d, seat3 %d; want 33, 9, 1, 0, 2",
			len(pbs), pbs["other"], pbs["seat31"], pbs["seat32"], pbs["seat3"])
	}
	if got := snap.Endpoints["backup"].Won; !reflect.DeepEqual(got, map[string]int64{"seat39": 1}) {
		t.Errorf("backup seats %v: another endpoint's cap must not apply", got)
	}
}

// TestHostileSeatsDoNotGrowMetrics: a bidder that wins every page with a
// distinct 200 KB seat grew the exposition by 200 KB per page (8 MB after
// 40 pages). Its seats count as other: the exposition has the same size
// after 20 pages as after one, give or take the digits of the counts.
func TestHostileSeatsDoNotGrowMetrics(t *testing.T) {
	verifyNoLeaks(t)
	const pages = 20
	var n atomic.Int64
	long := strings.Repeat("s", 200<<10)
	e := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"r","seatbid":[{"seat":"%d-%s","bid":[{"id":"x","impid":"top","price":1,"adm":"<b>x</b>"}]}]}`, n.Add(1), long)
	})
	f := newFixture(t, OpenRTBOptions{}, e)
	reg := prometheus.NewRegistry()
	reg.MustRegister(f.p.Stats())
	size := func() int {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		for _, mf := range mfs {
			if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
				t.Fatal(err)
			}
		}
		return b.Len()
	}
	var first int
	for i := range pages {
		if bids, out, _ := f.run(t, 5*time.Second); out != Completed || len(bids) != 1 {
			t.Fatalf("page %d: outcome %v, bids %v", i, out, bids)
		}
		if i == 0 {
			first = size()
		}
	}
	if got := size(); got > first+64 || got > 16<<10 {
		t.Errorf("exposition %d bytes after %d pages, %d after one", got, pages, first)
	}
	if got := f.p.Stats().Snapshot().Endpoints["ep1"].Won; !reflect.DeepEqual(got, map[string]int64{"other": pages}) {
		t.Errorf("won %v, want other %d", got, pages)
	}
}
