// Package metrics is the daemon's Prometheus instrumentation: one registry
// of its own (never the global default), the Go runtime and process
// collectors, and the ssatd_* metrics the guest and the edge record.
//
// Every label has a bounded set of values, closed where it is decided:
//
//   - route, mode, outcome and the failure reason: the guest's constants
//     (internal/proxy); stage: StageRefused, StageAborted; eligible: true or
//     false;
//   - status_class: StatusClass (1xx to 5xx, none);
//   - coding and origin_coding: Coding (the codings ssatd knows, identity,
//     other);
//   - the auction's outcome: the auction.Outcome constants;
//   - the rewrite's reason and cap: rewrite.Stats.BidsLeftOut and Cap;
//   - the auction's own collector (auction.Stats): endpoint, the configured
//     endpoint names; outcome and reason, its constants; seat, a short plain
//     token, at most 32 per endpoint, then other.
//
// Paths, hosts, user agents and any other string a client, an origin or a
// bidder sends never become labels unchecked.
//
// Another part of the daemon adds its own metrics with Register, by
// implementing prometheus.Collector (Describe and Collect) on the type that
// holds its figures, or on a small adapter that reads them when scraped.
package metrics

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

const namespace = "ssatd"

// Failure stages: a refused page got an error status before any body; an
// aborted one was cut off after its headers.
const (
	StageRefused = "refused"
	StageAborted = "aborted"
)

// Buckets, in seconds. Latency spans a fast loopback page to a slow
// origin; guest CPU spans a small page to well past a 50 ms budget.
var (
	latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	cpuBuckets     = []float64{.00025, .0005, .001, .002, .003, .005, .0075, .01, .015, .02, .03, .04, .05, .075, .1, .2, .5}
	auctionBuckets = []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}
)

// Set is the daemon's metrics. Its methods are safe for concurrent use.
type Set struct {
	reg *prometheus.Registry

	requests       *prometheus.CounterVec
	duration       *prometheus.HistogramVec
	ttfb           *prometheus.HistogramVec
	inFlight       prometheus.Gauge
	failures       *prometheus.CounterVec
	guestCPU       *prometheus.HistogramVec
	budgetExceeded *prometheus.CounterVec
	originBytes    *prometheus.CounterVec
	deliveredBytes *prometheus.CounterVec
	edgeResponses  *prometheus.CounterVec
	edgeIn         *prometheus.CounterVec
	edgeOut        *prometheus.CounterVec
	auction        *prometheus.HistogramVec
	bundleHits     prometheus.Counter
	noOriginHost   prometheus.Counter
	bidsLeftOut    *prometheus.CounterVec
	pastCap        *prometheus.CounterVec
	cspPages       *prometheus.CounterVec
}

// New builds a Set on a fresh registry with the Go and process collectors.
func New() *Set {
	s := &Set{reg: prometheus.NewRegistry()}
	s.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "requests_total",
		Help: "Requests handled by the guest, by route, compression mode, SSAT eligibility, outcome (ok, error: an error status before any body, aborted: cut off after the headers) and status class.",
	}, []string{"route", "mode", "eligible", "outcome", "status_class"})
	s.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "request_duration_seconds",
		Help:    "Time from receiving a request to handing its last body byte to the client connection (after the builtin edge, when it runs), by route and mode.",
		Buckets: latencyBuckets,
	}, []string{"route", "mode"})
	s.ttfb = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "time_to_first_byte_seconds",
		Help:    "Time from receiving a request to the guest writing the first body byte (the whole request when there is no body), by route and mode.",
		Buckets: latencyBuckets,
	}, []string{"route", "mode"})
	s.inFlight = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "requests_in_flight",
		Help: "Requests the guest has received and not yet finished delivering.",
	})
	s.failures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "failures_total",
		Help: "Failed or refused requests, by reason (a limit, an origin failure, client_gone, ...) and stage (refused: an error status before any body; aborted: cut off after the headers).",
	}, []string{"reason", "stage"})
	s.guestCPU = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "guest_cpu_seconds",
		Help:    "Guest CPU time per page served complete on the pipeline route: the CPU time of the one OS thread that read, decoded, rewrote and re-encoded the page (CLOCK_THREAD_CPUTIME_ID, as `ssatd measure` reports it), native to this machine and not scaled by compute.cpu_scale. Waiting for the origin or the auction costs nothing here; the edge's delivery compression is not included. By mode and origin coding.",
		Buckets: cpuBuckets,
	}, []string{"mode", "origin_coding"})
	s.budgetExceeded = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "compute_budget_exceeded_total",
		Help: "Pages whose guest CPU, scaled by compute.cpu_scale, went over compute.cpu_budget_ms, by mode and origin coding.",
	}, []string{"mode", "origin_coding"})
	s.originBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "origin_bytes_total",
		Help: "Body bytes read from the origin, as the origin sent them, by their content coding.",
	}, []string{"coding"})
	s.deliveredBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "delivered_bytes_total",
		Help: "Body bytes sent to clients (after the builtin edge, when it runs), by the content coding the client received.",
	}, []string{"coding"})
	s.edgeResponses = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "edge_compressed_responses_total",
		Help: "Responses the builtin edge compressed, by the coding it applied.",
	}, []string{"coding"})
	s.edgeIn = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "edge_input_bytes_total",
		Help: "Body bytes the builtin edge compressed, as the guest wrote them, by the coding it applied.",
	}, []string{"coding"})
	s.edgeOut = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "edge_output_bytes_total",
		Help: "Body bytes the builtin edge sent after compressing, by the coding it applied.",
	}, []string{"coding"})
	s.auction = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "auction_duration_seconds",
		Help:    "Time from starting a page's auction to the page receiving its bids or giving up, by outcome (completed, partial, timeout, failed, cancelled).",
		Buckets: auctionBuckets,
	}, []string{"outcome"})
	s.bundleHits = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "bundle_requests_total",
		Help: "Requests for the client bundle, which the guest answers itself.",
	})
	s.noOriginHost = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "pages_without_origin_host_total",
		Help: "Rewritten HTML pages in which no URL named the origin host of publisher.origin_url. Many of them suggest that the pages name the origin by another host, so no link is rewritten.",
	})
	s.bidsLeftOut = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "bids_not_injected_total",
		Help: "Pages that got the ad slots and no bids script, by reason: the page ends inside raw text (raw_text), a CDATA section (cdata) or MathML (mathml), where the script would be text or would not run, or it went past one of the rewriter's caps (oversize_tag, foreign_depth) at a place where it would not run.",
	}, []string{"reason"})
	s.pastCap = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "pages_past_rewrite_cap_total",
		Help: "Pages the rewriter stopped following at a tag past one of its caps and copied from there on as they came, nothing rewritten: a tag over the token limit (oversize_tag), SVG or MathML nested deeper than 256 elements (foreign_depth).",
	}, []string{"cap"})
	s.cspPages = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "csp_pages_total",
		Help: "Rewritten HTML pages under a Content Security Policy, by what ssatd did for it (docs/behaviour.md, \"Content Security Policy\"): nonce (the injected scripts carried the page's nonce), loader_hash (a policy was given the loader script's hash), kept (inline content a policy allows by hash was left byte for byte), inline_blocked and bundle_blocked (a policy blocks an injected script and ssatd could not allow it).",
	}, []string{"rule"})
	s.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		s.requests, s.duration, s.ttfb, s.inFlight, s.failures, s.guestCPU, s.budgetExceeded,
		s.originBytes, s.deliveredBytes, s.edgeResponses, s.edgeIn, s.edgeOut, s.auction, s.bundleHits,
		s.noOriginHost, s.bidsLeftOut, s.pastCap, s.cspPages,
	)
	return s
}

// Register adds another collector to the registry, for example the
// auction's per-endpoint statistics (see the package comment).
func (s *Set) Register(c prometheus.Collector) error { return s.reg.Register(c) }

// Gatherer is the registry, for tests and for exposition.
func (s *Set) Gatherer() prometheus.Gatherer { return s.reg }

// Handler serves the exposition format for /metrics.
func (s *Set) Handler() http.Handler {
	return promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: s.reg})
}

// Request is one finished request, as the access line reports it.
type Request struct {
	Route    string
	Mode     string
	Eligible bool
	Outcome  string
	Status   int // 0 when nothing was sent (the client went away first)
	Duration time.Duration
	TTFB     time.Duration

	OriginCoding    string
	OriginBytes     int64
	DeliveredCoding string
	DeliveredBytes  int64
}

// Finished records a request that has been delivered.
func (s *Set) Finished(r Request) {
	s.requests.WithLabelValues(r.Route, r.Mode, strconv.FormatBool(r.Eligible), r.Outcome, StatusClass(r.Status)).Inc()
	s.duration.WithLabelValues(r.Route, r.Mode).Observe(r.Duration.Seconds())
	s.ttfb.WithLabelValues(r.Route, r.Mode).Observe(r.TTFB.Seconds())
	if r.OriginBytes > 0 {
		s.originBytes.WithLabelValues(Coding(r.OriginCoding)).Add(float64(r.OriginBytes))
	}
	if r.DeliveredBytes > 0 {
		s.deliveredBytes.WithLabelValues(Coding(r.DeliveredCoding)).Add(float64(r.DeliveredBytes))
	}
}

// Started counts a request in flight until done is called.
func (s *Set) Started() (done func()) {
	s.inFlight.Inc()
	return s.inFlight.Dec
}

// Failure counts one failed request.
func (s *Set) Failure(reason, stage string) { s.failures.WithLabelValues(reason, stage).Inc() }

// Failures is the count for one reason, over both stages. It reads the
// registry as a scrape would, so asking creates no series.
func (s *Set) Failures(reason string) int64 {
	return int64(s.Sum(namespace+"_failures_total", map[string]string{"reason": reason}))
}

// GuestCPU records the native guest CPU of one page served complete.
func (s *Set) GuestCPU(mode, originCoding string, cpu time.Duration) {
	s.guestCPU.WithLabelValues(mode, Coding(originCoding)).Observe(cpu.Seconds())
}

// BudgetExceeded counts a page over compute.cpu_budget_ms.
func (s *Set) BudgetExceeded(mode, originCoding string) {
	s.budgetExceeded.WithLabelValues(mode, Coding(originCoding)).Inc()
}

// EdgeCompressed records a response the builtin edge compressed.
func (s *Set) EdgeCompressed(coding string, in, out int64) {
	c := Coding(coding)
	s.edgeResponses.WithLabelValues(c).Inc()
	s.edgeIn.WithLabelValues(c).Add(float64(in))
	s.edgeOut.WithLabelValues(c).Add(float64(out))
}

// Auction records how long a page's auction took and how it ended.
func (s *Set) Auction(outcome string, d time.Duration) {
	s.auction.WithLabelValues(outcome).Observe(d.Seconds())
}

// BundleHit counts a request for the client bundle.
func (s *Set) BundleHit() { s.bundleHits.Inc() }

// PageWithoutOriginHost counts a rewritten page in which no URL named the
// origin host.
func (s *Set) PageWithoutOriginHost() { s.noOriginHost.Inc() }

// BidsNotInjected counts a page that got the ad slots and no bids script;
// reason is one of rewrite.Stats.BidsLeftOut's values.
func (s *Set) BidsNotInjected(reason string) { s.bidsLeftOut.WithLabelValues(reason).Inc() }

// PagePastCap counts a page the rewriter stopped following at one of its
// caps; cap is one of rewrite.Stats.Cap's values.
func (s *Set) PagePastCap(cap string) { s.pastCap.WithLabelValues(cap).Inc() }

// CSPRules are the values of csp_pages_total's rule label, a closed set.
var CSPRules = []string{"nonce", "loader_hash", "kept", "inline_blocked", "bundle_blocked"}

// CSPPage counts a page under a policy for rule, one of CSPRules.
func (s *Set) CSPPage(rule string) { s.cspPages.WithLabelValues(rule).Inc() }

// WritePrometheus writes every metric of the registry in the Prometheus
// text format, as /metrics serves it; tests read it.
func (s *Set) WritePrometheus(w io.Writer) error {
	mfs, err := s.reg.Gather()
	if err != nil {
		return fmt.Errorf("gather metrics: %w", err)
	}
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
			return fmt.Errorf("write metrics: %w", err)
		}
	}
	return nil
}

// StatusClass is "2xx" for 200 and so on; "none" when no status was sent.
func StatusClass(status int) string {
	if status < 100 || status > 599 {
		return "none"
	}
	return strconv.Itoa(status/100) + "xx"
}

// Coding bounds a content-coding label: the codings ssatd knows, "identity"
// for none, and "other" for anything an origin may invent.
func Coding(c string) string {
	switch c {
	case "identity", "gzip", "br", "deflate", "zstd":
		return c
	case "":
		return "identity"
	}
	return "other"
}

// Sum adds the values of one family's series whose labels include labels:
// counters and gauges by value, histograms by observation count. It reads
// the registry as a scrape would, for tests and tools.
func (s *Set) Sum(name string, labels map[string]string) float64 {
	mfs, err := s.reg.Gather()
	if err != nil {
		return 0
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, labels) {
				sum += m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, lp := range m.GetLabel() {
		if v, ok := want[lp.GetName()]; ok {
			if v != lp.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}
