package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/cputime"
	"github.com/ssatd/ssatd/internal/rewrite"
)

// metricsConfig offloads compression to the builtin edge, makes /page
// SSAT-eligible with a static auction, and sets a budget every page goes
// over (1 µs).
func metricsConfig(originURL string) string {
	return fmt.Sprintf(`
[publisher]
domain = "localhost"
origin_url = %q
ssat_compression_offload_enabled = true

[auction]
enabled = true
provider = "static"

[[auction.static_bids]]
slot_id = "top"
hb_pb = "1.00"
hb_bidder = "examplebidder"
w = 728
h = 90
hb_adid = "a1"
adm = "<div>ad</div>"

[[creative_opportunities.slot]]
id = "top"
page_patterns = ["/page"]
formats = [[728, 90]]
gam_unit_path = "/1/top"

[compute]
cpu_budget_ms = 0.001
`, originURL)
}

// fetched is what the client received for one request.
type fetched struct {
	status  int
	coding  string
	wire    int // body bytes as received
	decoded int // body bytes after decoding
}

func fetch(t *testing.T, c *http.Client, url, host, ae string, document bool) fetched {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("Accept-Encoding", ae)
	if document {
		req.Header.Set("Sec-Fetch-Dest", "document")
		req.Header.Set("Accept", "text/html")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	f := fetched{status: resp.StatusCode, coding: orIdentity(resp.Header.Get("Content-Encoding")), wire: len(body)}
	dec, err := compress.NewReader(compress.Coding(f.coding), bytes.NewReader(body), 10<<20)
	if err != nil {
		t.Fatalf("GET %s: decoding %s: %v", url, f.coding, err)
	}
	defer dec.Close()
	plain, err := io.ReadAll(dec)
	if err != nil {
		t.Fatalf("GET %s: decoding %s: %v", url, f.coding, err)
	}
	f.decoded = len(plain)
	return f
}

func orIdentity(s string) string {
	if s == "" {
		return "identity"
	}
	return s
}

// TestMetricsAfterKnownRequests scrapes /metrics after two offloaded pages,
// one pass-through answer and one bundle request, and checks the figures
// against what the client saw.
func TestMetricsAfterKnownRequests(t *testing.T) {
	origin := newTestOrigin(t)
	core, logs := observer.New(zapcore.InfoLevel)
	d := startDaemonWith(t, metricsConfig(origin.srv.URL), zap.New(core))
	c := newTestClient(t)
	host := "localhost:" + d.clientAddr[strings.LastIndexByte(d.clientAddr, ':')+1:]
	base := "http://" + d.clientAddr
	var pages []fetched
	for range 2 {
		pages = append(pages, fetch(t, c, base+"/page", host, "br", true))
	}
	other := fetch(t, c, base+"/other", host, "br", false)
	bundleGot := fetch(t, c, base+rewrite.BundlePath, host, "gzip", false)
	if pages[0].coding != "br" || other.status != http.StatusTeapot || other.coding != "identity" || bundleGot.coding != "gzip" {
		t.Fatalf("unexpected responses: pages %+v, other %+v, bundle %+v", pages, other, bundleGot)
	}

	g := d.metrics.Gatherer()
	// A request is recorded once its last byte is out, which may be just
	// after the client has read it; its access line is written after that.
	d.waitLogged(t, "access", 4)
	if n, f := sumOf(t, g, "ssatd_requests_total", nil), sumOf(t, g, "ssatd_requests_in_flight", nil); n != 4 || f != 0 {
		t.Fatalf("%v requests recorded and %v in flight, want 4 and 0", n, f)
	}

	metricsURL := "http://" + d.adminAddr + "/metrics"
	want := helpAndType(t, g, "ssatd_requests_total") + `
ssatd_requests_total{eligible="false",mode="mirror",outcome="ok",route="pass-through",status_class="4xx"} 1
ssatd_requests_total{eligible="false",mode="none",outcome="ok",route="bundle",status_class="2xx"} 1
ssatd_requests_total{eligible="true",mode="offload",outcome="ok",route="pipeline",status_class="2xx"} 2
` + helpAndType(t, g, "ssatd_bundle_requests_total") + `
ssatd_bundle_requests_total 1
` + helpAndType(t, g, "ssatd_edge_compressed_responses_total") + `
ssatd_edge_compressed_responses_total{coding="br"} 2
ssatd_edge_compressed_responses_total{coding="gzip"} 1
`
	if err := testutil.ScrapeAndCompare(metricsURL, strings.NewReader(want),
		"ssatd_requests_total", "ssatd_bundle_requests_total", "ssatd_edge_compressed_responses_total"); err != nil {
		t.Error(err)
	}

	pageLabels := map[string]string{"route": "pipeline", "mode": "offload"}
	for _, h := range []string{"ssatd_request_duration_seconds", "ssatd_time_to_first_byte_seconds"} {
		if n := sampleCount(t, g, h, pageLabels); n != 2 {
			t.Errorf("%s%v: %d observations, want 2", h, pageLabels, n)
		}
		if n := sampleCount(t, g, h, nil); n != 4 {
			t.Errorf("%s: %d observations in all, want 4", h, n)
		}
	}
	if n := sampleCount(t, g, "ssatd_auction_duration_seconds", map[string]string{"outcome": "completed"}); n != 2 {
		t.Errorf("completed auctions: %d, want 2", n)
	}
	if cputime.Clock != "unavailable" {
		cpu := map[string]string{"mode": "offload", "origin_coding": "identity"}
		if n := sampleCount(t, g, "ssatd_guest_cpu_seconds", cpu); n != 2 {
			t.Errorf("guest CPU observations: %d, want 2", n)
		}
		if n := sumOf(t, g, "ssatd_compute_budget_exceeded_total", cpu); n != 2 {
			t.Errorf("budget exceeded: %v, want 2 (budget 1µs)", n)
		}
		if n := logs.FilterMessage("compute budget exceeded").Len(); n != 2 {
			t.Errorf("%d budget warnings logged, want 2", n)
		}
	}

	// Bytes: what the client received, by coding, and what the edge took in.
	wantBytes := []struct {
		name   string
		labels map[string]string
		want   int
	}{
		{"ssatd_delivered_bytes_total", map[string]string{"coding": "br"}, pages[0].wire + pages[1].wire},
		{"ssatd_delivered_bytes_total", map[string]string{"coding": "gzip"}, bundleGot.wire},
		{"ssatd_delivered_bytes_total", map[string]string{"coding": "identity"}, other.wire},
		{"ssatd_edge_output_bytes_total", map[string]string{"coding": "br"}, pages[0].wire + pages[1].wire},
		{"ssatd_edge_input_bytes_total", map[string]string{"coding": "br"}, pages[0].decoded + pages[1].decoded},
		{"ssatd_edge_input_bytes_total", map[string]string{"coding": "gzip"}, bundleGot.decoded},
		{"ssatd_origin_bytes_total", map[string]string{"coding": "identity"}, 2*len(origin.page()) + other.wire},
	}
	for _, w := range wantBytes {
		if got := sumOf(t, g, w.name, w.labels); got != float64(w.want) {
			t.Errorf("%s%v = %v, want %d", w.name, w.labels, got, w.want)
		}
	}

	// The access line of a page reports what the client received.
	lines := logs.FilterMessage("access").FilterField(zap.String("route", "pipeline")).All()
	if len(lines) != 2 {
		t.Fatalf("%d pipeline access lines, want 2", len(lines))
	}
	for i, l := range lines {
		m := l.ContextMap()
		if m["output_coding"] != "br" || m["output_bytes"] != int64(pages[i].wire) ||
			m["guest_output_coding"] != "identity" || m["guest_output_bytes"] != int64(pages[i].decoded) {
			t.Errorf("access line %d: %v; client got br %d bytes (%d decoded)", i, m, pages[i].wire, pages[i].decoded)
		}
	}

	// promlint finds nothing to say about the whole exposition.
	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	problems, err := promlint.New(resp.Body).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

// helpAndType is the exposition's header for one family, as the registry
// has it, so that expected texts state only the samples.
func helpAndType(t *testing.T, g prometheus.Gatherer, name string) string {
	t.Helper()
	mf := family(t, g, name)
	return fmt.Sprintf("# HELP %s %s\n# TYPE %s %s", name, mf.GetHelp(), name, strings.ToLower(mf.GetType().String()))
}

func family(t *testing.T, g prometheus.Gatherer, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	return &dto.MetricFamily{Name: &name}
}

// matching are the series of a family whose labels include labels.
func matching(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) []*dto.Metric {
	t.Helper()
	var out []*dto.Metric
	for _, m := range family(t, g, name).GetMetric() {
		have := map[string]string{}
		for _, lp := range m.GetLabel() {
			have[lp.GetName()] = lp.GetValue()
		}
		ok := true
		for k, v := range labels {
			ok = ok && have[k] == v
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// sumOf adds the counter or gauge values of the matching series.
func sumOf(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	var s float64
	for _, m := range matching(t, g, name, labels) {
		s += m.GetCounter().GetValue() + m.GetGauge().GetValue()
	}
	return s
}

// sampleCount adds the observation counts of the matching histograms.
func sampleCount(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) uint64 {
	t.Helper()
	var n uint64
	for _, m := range matching(t, g, name, labels) {
		n += m.GetHistogram().GetSampleCount()
	}
	return n
}
