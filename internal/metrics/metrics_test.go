package metrics

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/ssatd/ssatd/internal/auction"
	"github.com/ssatd/ssatd/internal/ssat"
)

// populated is a Set with one series in every family, since a vector with
// no series is not exposed at all.
func populated() *Set {
	s := New()
	s.Finished(Request{Route: "pipeline", Mode: "offload", Eligible: true, Outcome: "ok", Status: 200,
		Duration: 30 * time.Millisecond, TTFB: 5 * time.Millisecond,
		OriginCoding: "identity", OriginBytes: 1000, DeliveredCoding: "br", DeliveredBytes: 200})
	done := s.Started()
	done()
	s.Failure("origin_body_too_large", StageRefused)
	s.Failure("origin_body_too_large", StageAborted)
	s.GuestCPU("mirror", "gzip", 3*time.Millisecond)
	s.BudgetExceeded("mirror", "gzip")
	s.EdgeCompressed("br", 1000, 200)
	s.Auction("completed", 2*time.Millisecond)
	s.BundleHit()
	return s
}

func TestRecordedValues(t *testing.T) {
	s := populated()
	tests := []struct {
		c    prometheus.Collector
		want float64
	}{
		{s.requests.WithLabelValues("pipeline", "offload", "true", "ok", "2xx"), 1},
		{s.inFlight, 0},
		{s.failures.WithLabelValues("origin_body_too_large", StageRefused), 1},
		{s.budgetExceeded.WithLabelValues("mirror", "gzip"), 1},
		{s.originBytes.WithLabelValues("identity"), 1000},
		{s.deliveredBytes.WithLabelValues("br"), 200},
		{s.edgeResponses.WithLabelValues("br"), 1},
		{s.edgeIn.WithLabelValues("br"), 1000},
		{s.edgeOut.WithLabelValues("br"), 200},
		{s.bundleHits, 1},
	}
	for i, tt := range tests {
		if got := testutil.ToFloat64(tt.c); got != tt.want {
			t.Errorf("%d: got %v, want %v", i, got, tt.want)
		}
	}
	if got := s.Failures("origin_body_too_large"); got != 2 {
		t.Errorf("Failures over both stages = %d, want 2", got)
	}
	// Reading a reason that never happened must not add zero-valued
	// series to /metrics.
	if got := s.Failures("never_happened"); got != 0 {
		t.Errorf("Failures of an unseen reason = %d", got)
	}
	if n := testutil.CollectAndCount(s.failures); n != 2 {
		t.Errorf("failures has %d series after reading, want the 2 recorded", n)
	}
	if got := s.Sum("ssatd_guest_cpu_seconds", map[string]string{"mode": "mirror"}); got != 1 {
		t.Errorf("guest CPU observations = %v, want 1", got)
	}
	if got := s.Sum("ssatd_guest_cpu_seconds", map[string]string{"mode": "offload"}); got != 0 {
		t.Errorf("offload guest CPU observations = %v, want 0", got)
	}
}

// promlint finds nothing in any family, ours or the collectors'.
func TestLintClean(t *testing.T) {
	problems, err := testutil.GatherAndLint(populated().Gatherer())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

func TestLabelsAreBounded(t *testing.T) {
	for in, want := range map[string]string{"": "identity", "gzip": "gzip", "br": "br", "x-custom": "other", "gzip, br": "other"} {
		if got := Coding(in); got != want {
			t.Errorf("Coding(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[int]string{0: "none", 101: "1xx", 200: "2xx", 418: "4xx", 504: "5xx", 999: "none"} {
		if got := StatusClass(in); got != want {
			t.Errorf("StatusClass(%d) = %q, want %q", in, got, want)
		}
	}
}

// A collector of another part of the daemon (the auction's statistics)
// joins the same registry and exposition.
func TestRegisterAnotherCollector(t *testing.T) {
	s := New()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "ssatd_test_extra_total", Help: "A test counter."})
	if err := s.Register(c); err != nil {
		t.Fatal(err)
	}
	c.Add(3)
	if got := s.Sum("ssatd_test_extra_total", nil); got != 3 {
		t.Errorf("registered collector reads %v, want 3", got)
	}
	if err := s.Register(c); err == nil {
		t.Error("registering the same collector twice succeeded")
	}
}

// dashboard is the part of a Grafana dashboard the test reads.
type dashboard struct {
	UID    string  `json:"uid"`
	Title  string  `json:"title"`
	Panels []panel `json:"panels"`
}

type panel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	GridPos struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

// metricName finds the metric names in a PromQL expression: every
// identifier with one of the prefixes this daemon exposes.
var metricName = regexp.MustCompile(`\b(?:ssatd|go|process)_[a-zA-Z0-9_]*`)

// The dashboard is valid JSON, every panel has a query, and every query
// names only metrics this registry exposes.
func TestDashboardQueriesNameExistingMetrics(t *testing.T) {
	data, err := os.ReadFile("../../deploy/grafana/ssatd.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("deploy/grafana/ssatd.json: %v", err)
	}
	if d.UID == "" || d.Title == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard without uid, title or panels: %+v", d)
	}
	exposed := exposedNames(t, withAuction(t, populated()).Gatherer())
	ids := map[int]bool{}
	queries := 0
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.W == 0 || p.GridPos.H == 0 {
			t.Errorf("panel %q has no size", p.Title)
		}
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			names := metricName.FindAllString(tg.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q query %s names no metric: %s", p.Title, tg.RefID, tg.Expr)
			}
			for _, n := range names {
				queries++
				if !exposed[n] {
					t.Errorf("panel %q query %s names %s, which /metrics does not expose", p.Title, tg.RefID, n)
				}
			}
		}
	}
	// The dashboard's panels: request rate and errors, latency percentiles,
	// guest CPU by mode, bytes saved, auction outcomes, budget warnings.
	all := string(data)
	for _, m := range []string{"ssatd_requests_total", "ssatd_failures_total", "ssatd_request_duration_seconds_bucket",
		"ssatd_guest_cpu_seconds_bucket", "ssatd_edge_output_bytes_total", "ssatd_auction_duration_seconds_count",
		"ssatd_compute_budget_exceeded_total", "ssatd_auction_endpoint_requests_total"} {
		if !strings.Contains(all, m) {
			t.Errorf("the dashboard never queries %s", m)
		}
	}
	if queries == 0 {
		t.Fatal("no metric names found in any query")
	}
}

// The alerting rules name only metrics this registry exposes (promtool
// checks their syntax and behaviour in deploy/alerts_test.go).
func TestAlertRulesNameExistingMetrics(t *testing.T) {
	data, err := os.ReadFile("../../deploy/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	exposed := exposedNames(t, withAuction(t, populated()).Gatherer())
	names := metricName.FindAllString(string(data), -1)
	if len(names) < 5 {
		t.Fatalf("only %d metric names in alerts.yml", len(names))
	}
	for _, n := range names {
		if !exposed[n] {
			t.Errorf("alerts.yml names %s, which /metrics does not expose", n)
		}
	}
}

// withAuction adds to s the statistics of a real OpenRTB auction over
// loopback, with one bid won and one ignored, so that every auction metric
// is exposed, as the guest registers them.
func withAuction(t *testing.T, s *Set) *Set {
	t.Helper()
	ep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"id":"r","seatbid":[{"seat":"s","bid":[`+
			`{"id":"a","impid":"top","price":1,"adm":"x"},{"id":"b","impid":"top","price":0,"adm":"x"}]}]}`)
	}))
	defer ep.Close()
	p := auction.NewOpenRTB(auction.OpenRTBOptions{Endpoints: []auction.Endpoint{{Name: "pbs", URL: ep.URL}}})
	defer p.Close()
	c := auction.Start(context.Background(), p, auction.Request{Slots: []ssat.Slot{{ID: "top"}}}, 5*time.Second)
	if bids, out := c.Wait(context.Background()); out != auction.Completed || len(bids) != 1 {
		t.Fatalf("auction: %v, %v", out, bids)
	}
	c.Stop()
	if err := s.Register(p.Stats()); err != nil {
		t.Fatal(err)
	}
	return s
}

// exposedNames are the sample names of the exposition: histograms expose
// _bucket, _sum and _count, summaries _sum and _count.
func exposedNames(t *testing.T, g prometheus.Gatherer) map[string]bool {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		n := mf.GetName()
		names[n] = true
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM:
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[n+s] = true
			}
		case dto.MetricType_SUMMARY:
			names[n+"_sum"], names[n+"_count"] = true, true
		}
	}
	if !names["ssatd_requests_total"] || !slices.ContainsFunc(mapKeys(names), func(k string) bool { return strings.HasPrefix(k, "go_") }) {
		t.Fatalf("exposition lacks ssatd or Go metrics: %v", names)
	}
	return names
}

func mapKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
