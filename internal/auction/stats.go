package auction

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Endpoint outcomes, the outcome label of the endpoint metrics. Each call to
// an endpoint ends in exactly one outcome and, for all but bids, a reason.
const (
	EndpointBids      = "bids"
	EndpointNoBid     = "no_bid"
	EndpointTimeout   = "timeout"
	EndpointError     = "error"
	EndpointCancelled = "cancelled" // the page's request ended first
)

// Reasons, the reason label.
const (
	ReasonNoContent  = "no_content"   // 204
	ReasonEmpty      = "empty"        // 200 without a usable bid
	ReasonNoAnswer   = "no_answer"    // no response headers in time
	ReasonSlowDrip   = "slow_drip"    // headers came, the body did not finish in time
	ReasonStatus     = "status"       // a status other than 200 and 204
	ReasonJSON       = "invalid_json" // the body is not a bid response
	ReasonTooLarge   = "too_large"    // the body is over the cap
	ReasonConnection = "connection"   // the request could not be sent or the answer read
	ReasonCurrency   = "currency"     // bids in a currency other than the configured one
)

// Reasons a single bid is ignored.
const (
	IgnoredNoAdm        = "no_adm"
	IgnoredPrice        = "price" // not a positive number
	IgnoredUnknownImpID = "unknown_impid"
	IgnoredNoID         = "no_id"
)

// durationBuckets are the upper bounds, in seconds, of the per-endpoint
// duration histogram.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}

// maxSeatsPerEndpoint bounds the seat label: seats come from the
// endpoints' answers, and a misbehaving endpoint must not grow the metrics
// without limit. An endpoint's first 32 distinct seats keep their name,
// later ones count as otherSeat; a Prebid Server has a few dozen bidders
// configured, and a page rarely sees more than a handful win.
const maxSeatsPerEndpoint = 32

// otherSeat is the seat label of seats past the cap, and of seats that are
// not short plain tokens (seatLabel).
const otherSeat = "other"

// seatLabel is seat when it is a short plain token, [A-Za-z0-9_.-]{1,64},
// such as a Prebid bidder code, and otherSeat otherwise: an endpoint's
// strings never reach a label unchecked.
func seatLabel(seat string) string {
	if len(seat) == 0 || len(seat) > 64 {
		return otherSeat
	}
	for i := 0; i < len(seat); i++ {
		switch c := seat[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == '-':
		default:
			return otherSeat
		}
	}
	return seat
}

// Stats counts what the OpenRTB provider saw: per endpoint, the outcomes,
// the call durations and, per seat, the bids that reached a page; per
// reason, the bids ignored. It is safe for concurrent use.
//
// Every label has a bounded set of values: endpoint names come from the
// configuration, outcomes and reasons are this package's constants, and
// seats are capped per endpoint (seatLabel, maxSeatsPerEndpoint).
type Stats struct {
	mu        sync.Mutex
	endpoints map[string]*endpointStats
	ignored   map[string]int64
}

type endpointStats struct {
	won      map[string]int64 // by seat label
	outcomes map[OutcomeKey]int64
	buckets  []int64 // count per durationBuckets bound, not cumulative; last is +Inf
	sum      float64
	count    int64
}

// OutcomeKey is one (outcome, reason) pair.
type OutcomeKey struct{ Outcome, Reason string }

// NewStats returns empty counters.
func NewStats() *Stats {
	return &Stats{endpoints: map[string]*endpointStats{}, ignored: map[string]int64{}}
}

func (s *Stats) endpoint(name string) *endpointStats {
	e, ok := s.endpoints[name]
	if !ok {
		e = &endpointStats{won: map[string]int64{}, outcomes: map[OutcomeKey]int64{}, buckets: make([]int64, len(durationBuckets)+1)}
		s.endpoints[name] = e
	}
	return e
}

func (s *Stats) observe(endpoint string, d time.Duration, outcome, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.endpoint(endpoint)
	e.outcomes[OutcomeKey{outcome, reason}]++
	sec := d.Seconds()
	i, _ := slices.BinarySearch(durationBuckets, sec)
	e.buckets[i]++
	e.sum += sec
	e.count++
}

func (s *Stats) addWon(endpoint, seat string) {
	seat = seatLabel(seat)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.endpoint(endpoint)
	if _, ok := e.won[seat]; !ok {
		named := len(e.won)
		if _, ok := e.won[otherSeat]; ok {
			named--
		}
		if named >= maxSeatsPerEndpoint {
			seat = otherSeat // at most 32 named series per endpoint, and other
		}
	}
	e.won[seat]++
}

func (s *Stats) addIgnored(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ignored[reason]++
}

// Snapshot is a copy of the counters.
type Snapshot struct {
	Endpoints map[string]EndpointSnapshot
	Ignored   map[string]int64 // bids ignored, by reason
}

// EndpointSnapshot is one endpoint's counters.
type EndpointSnapshot struct {
	Won      map[string]int64 // winning bids written into pages, by seat label
	Outcomes map[OutcomeKey]int64
	Count    int64   // calls
	Sum      float64 // seconds, over all calls
}

// Snapshot reads the counters.
func (s *Stats) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Snapshot{Endpoints: map[string]EndpointSnapshot{}, Ignored: maps.Clone(s.ignored)}
	for name, e := range s.endpoints {
		out.Endpoints[name] = EndpointSnapshot{Won: maps.Clone(e.won), Outcomes: maps.Clone(e.outcomes), Count: e.count, Sum: e.sum}
	}
	return out
}

// The metrics Stats exposes as a prometheus.Collector.
var (
	descEndpointRequests = prometheus.NewDesc("ssatd_auction_endpoint_requests_total",
		"OpenRTB endpoint calls, by endpoint (its configured name), outcome and reason.", []string{"endpoint", "outcome", "reason"}, nil)
	descEndpointDuration = prometheus.NewDesc("ssatd_auction_endpoint_duration_seconds",
		"Time from sending a bid request to its outcome, by endpoint.", []string{"endpoint"}, nil)
	descBidsWon = prometheus.NewDesc("ssatd_auction_bids_won_total",
		"Winning bids written into pages, by endpoint and seat (a seat that is not [A-Za-z0-9_.-]{1,64}, and seats past an endpoint's first 32, count as other).",
		[]string{"endpoint", "seat"}, nil)
	descBidsIgnored = prometheus.NewDesc("ssatd_auction_bids_ignored_total",
		"Bids ignored as unusable, by reason.", []string{"reason"}, nil)
)

// Describe implements prometheus.Collector.
func (s *Stats) Describe(ch chan<- *prometheus.Desc) {
	ch <- descEndpointRequests
	ch <- descEndpointDuration
	ch <- descBidsWon
	ch <- descBidsIgnored
}

// Collect implements prometheus.Collector: the counters are read when
// scraped, so the provider's hot path stays a map increment under a lock.
func (s *Stats) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, e := range s.endpoints {
		for k, n := range e.outcomes {
			ch <- prometheus.MustNewConstMetric(descEndpointRequests, prometheus.CounterValue, float64(n), name, k.Outcome, k.Reason)
		}
		cum := make(map[float64]uint64, len(durationBuckets))
		var c uint64
		for i, b := range durationBuckets {
			c += uint64(e.buckets[i])
			cum[b] = c
		}
		ch <- prometheus.MustNewConstHistogram(descEndpointDuration, uint64(e.count), e.sum, cum, name)
		for seat, n := range e.won {
			ch <- prometheus.MustNewConstMetric(descBidsWon, prometheus.CounterValue, float64(n), name, seat)
		}
	}
	for reason, n := range s.ignored {
		ch <- prometheus.MustNewConstMetric(descBidsIgnored, prometheus.CounterValue, float64(n), reason)
	}
}
