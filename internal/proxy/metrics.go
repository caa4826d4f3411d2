package proxy

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/ssatd/ssatd/internal/auction"
)

// Metrics counts requests by route and failures by reason (§7: one metric
// increment per limit or failure). It writes the Prometheus text format.
type Metrics struct {
	mu       sync.Mutex
	requests map[string]*atomic.Int64
	failures map[string]*atomic.Int64
	auction  *auction.Stats // the OpenRTB provider's counters, if any
	// unnamed counts rewritten pages in which no URL named the origin
	// host: many of them suggest that the pages call the origin by
	// another name than publisher.origin_url, so nothing is rewritten.
	unnamed atomic.Int64
}

// NewMetrics returns an empty set of counters.
func NewMetrics() *Metrics {
	return &Metrics{requests: map[string]*atomic.Int64{}, failures: map[string]*atomic.Int64{}}
}

func (m *Metrics) counter(set map[string]*atomic.Int64, key string) *atomic.Int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := set[key]
	if !ok {
		c = new(atomic.Int64)
		set[key] = c
	}
	return c
}

func (m *Metrics) inc(reason string) { m.counter(m.failures, reason).Add(1) }

func (m *Metrics) request(route string) { m.counter(m.requests, route).Add(1) }

// PagesWithoutOriginHost returns how many rewritten pages never named the
// origin host in a URL.
func (m *Metrics) PagesWithoutOriginHost() int64 { return m.unnamed.Load() }

// Failures returns the count for one reason.
func (m *Metrics) Failures(reason string) int64 { return m.counter(m.failures, reason).Load() }

// WritePrometheus writes the counters in the Prometheus text exposition format.
func (m *Metrics) WritePrometheus(w io.Writer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	write := func(name, help, label string, set map[string]*atomic.Int64) error {
		if _, err := fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n", name, help, name); err != nil {
			return err
		}
		keys := make([]string, 0, len(set))
		for k := range set {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, err := fmt.Fprintf(w, "%s{%s=%q} %d\n", name, label, k, set[k].Load()); err != nil {
				return err
			}
		}
		return nil
	}
	if err := write("ssatd_requests_total", "Requests handled by the guest, by route.", "route", m.requests); err != nil {
		return err
	}
	if err := write("ssatd_failures_total", "Failed or refused origin responses, by reason.", "reason", m.failures); err != nil {
		return err
	}
	const name = "ssatd_pages_without_origin_host_total"
	if _, err := fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", name,
		"Rewritten HTML pages in which no URL named the origin host of publisher.origin_url.", name, name, m.unnamed.Load()); err != nil {
		return err
	}
	if m.auction != nil {
		return m.auction.WritePrometheus(w)
	}
	return nil
}
