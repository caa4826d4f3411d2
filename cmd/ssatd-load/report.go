package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/pprof"
	"slices"
	"strings"
	"time"
)

// latency is a summary in milliseconds.
type latency struct {
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
	MaxMS float64 `json:"max_ms"`
}

// report is what a run found. It is printed as text or as JSON.
type report struct {
	Command          string             `json:"command,omitempty"`
	GoVersion        string             `json:"go_version"`
	NumCPU           int                `json:"num_cpu"`
	GOMAXPROCS       int                `json:"gomaxprocs"`
	Pages            int                `json:"pages"`
	PagesWithoutHead []string           `json:"pages_without_head,omitempty"`
	CorpusBytes      int64              `json:"corpus_bytes"`
	OriginHeldBytes  int64              `json:"origin_held_bytes"` // all encodings held by the origin
	Concurrency      int                `json:"concurrency"`
	WarmupS          float64            `json:"warmup_s"`
	DurationS        float64            `json:"duration_s"`
	ElapsedS         float64            `json:"elapsed_s"` // measured phase, until the last request finished
	StoppedBy        string             `json:"stopped_by"`
	Requests         int64              `json:"requests"`
	WarmupRequests   int64              `json:"warmup_requests"`
	RequestsPerSec   float64            `json:"requests_per_s"`
	Latency          latency            `json:"latency"`
	LatencyByProxy   map[string]latency `json:"latency_by_proxy"`
	ByProxy          map[string]int64   `json:"requests_by_proxy"`
	ByKind           map[string]int64   `json:"requests_by_kind"`
	ByAcceptEncoding map[string]int64   `json:"requests_by_accept_encoding"`
	ByCoding         map[string]int64   `json:"requests_by_content_encoding"`
	BytesReceived    int64              `json:"bytes_received"` // body bytes on the wire
	BytesDecoded     int64              `json:"bytes_decoded"`
	Errors           int64              `json:"errors"` // warm-up included
	ErrorsByKind     map[string]int64   `json:"errors_by_kind"`
	ErrorSamples     []string           `json:"error_samples,omitempty"`
	AuctionTimeouts  int64              `json:"auction_timeouts"` // eligible pages served with empty bids (not an error)
	Overloaded       int64              `json:"overloaded"`       // pages answered 503, or requests 429, with Retry-After (not an error)
	// RequestsSent counts every request the clients sent, warm-up
	// included; Recorded is what the proxies' metrics counted of them.
	RequestsSent int64          `json:"requests_sent"`
	Recorded     recordedCounts `json:"metrics_recorded"`

	PeakRSSBytes    int64     `json:"peak_rss_bytes"` // VmHWM
	RSSSeriesMiB    []float64 `json:"rss_series_mib"` // VmRSS every SampleEvery during the measured phase
	RSSMinMiB       float64   `json:"rss_min_mib"`
	RSSMaxMiB       float64   `json:"rss_max_mib"`
	RSSFirstMeanMiB float64   `json:"rss_first_third_mean_mib"`
	RSSLastMeanMiB  float64   `json:"rss_last_third_mean_mib"`
	RSSTrendPct     float64   `json:"rss_trend_pct"`
	RSSTrend        string    `json:"rss_trend"` // flat, up, down, or n/a

	GoroutinesBefore int    `json:"goroutines_before"`
	GoroutinesAfter  int    `json:"goroutines_after"`
	GoroutineSlack   int    `json:"goroutine_tolerance"`
	HeapInuseBytes   uint64 `json:"heap_inuse_bytes"` // after the load, idle connections closed, a final GC
	// HeapInusePoolsFreedBytes is after a second GC, which empties sync.Pools.
	HeapInusePoolsFreedBytes uint64 `json:"heap_inuse_pools_freed_bytes"`
	// GoroutineStacks are the goroutines still running when they did not drain.
	GoroutineStacks string `json:"goroutine_stacks,omitempty"`

	Pass     bool     `json:"pass"`
	Failures []string `json:"failures,omitempty"`
}

// fill copies the load's counts into rep.
func (l *loader) fill(rep *report) {
	t := &l.total
	measuredFrom := l.warmEnd
	if l.done.Before(measuredFrom) {
		measuredFrom = l.done
	}
	rep.ElapsedS = l.done.Sub(measuredFrom).Seconds()
	switch {
	case l.hitMax.Load():
		rep.StoppedBy = "max-requests"
	case l.done.Before(l.end):
		rep.StoppedBy = "interrupted"
	default:
		rep.StoppedBy = "duration"
	}
	var all []time.Duration
	rep.LatencyByProxy = map[string]latency{}
	rep.ByProxy = map[string]int64{}
	for p := range numProxies {
		slices.Sort(t.lat[p])
		rep.LatencyByProxy[proxyNames[p]] = summarize(t.lat[p])
		rep.ByProxy[proxyNames[p]] = int64(len(t.lat[p]))
		all = append(all, t.lat[p]...)
	}
	slices.Sort(all)
	rep.Latency = summarize(all)
	rep.Requests = int64(len(all))
	rep.WarmupRequests = t.warm
	if rep.ElapsedS > 0 {
		rep.RequestsPerSec = float64(rep.Requests) / rep.ElapsedS
	}
	rep.ByKind = map[string]int64{}
	for k := range numKinds {
		rep.ByKind[kindNames[k]] = t.byKind[k]
	}
	rep.ByAcceptEncoding = map[string]int64{}
	for i, ae := range clientEncodings {
		rep.ByAcceptEncoding[ae] = t.byAE[i]
	}
	rep.ByCoding = t.byCoding
	if rep.ByCoding == nil {
		rep.ByCoding = map[string]int64{}
	}
	rep.BytesReceived, rep.BytesDecoded = t.wire, t.decoded
	rep.AuctionTimeouts = t.auctionTimeouts
	rep.Overloaded = t.overloaded
	rep.ErrorsByKind = map[string]int64{}
	for k := range numErrKinds {
		rep.ErrorsByKind[errKindNames[k]] = l.errN[k].Load()
	}
	rep.Errors = l.errAll.Load()
	rep.ErrorSamples = l.errEx
}

// summarize takes sorted durations; percentiles are nearest-rank.
func summarize(d []time.Duration) latency {
	if len(d) == 0 {
		return latency{}
	}
	pct := func(p float64) float64 {
		i := int(p*float64(len(d))+0.999999) - 1
		return ms(d[min(max(i, 0), len(d)-1)])
	}
	return latency{P50MS: pct(0.50), P99MS: pct(0.99), MaxMS: ms(d[len(d)-1])}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// judge decides pass or fail.
func judge(rep *report) {
	if rep.Errors > 0 {
		rep.Failures = append(rep.Failures, fmt.Sprintf("%d errors", rep.Errors))
	}
	if rep.GoroutinesAfter > rep.GoroutinesBefore+rep.GoroutineSlack {
		rep.Failures = append(rep.Failures, fmt.Sprintf("goroutines did not drain: %d before, %d after (tolerance +%d)",
			rep.GoroutinesBefore, rep.GoroutinesAfter, rep.GoroutineSlack))
	}
	if rep.Requests+rep.WarmupRequests == 0 {
		rep.Failures = append(rep.Failures, "no requests were made")
	}
	if rep.StoppedBy == "interrupted" {
		rep.Failures = append(rep.Failures, "interrupted")
	} else if r := rep.Recorded; r.Requests != rep.RequestsSent || r.DurationCount != rep.RequestsSent || r.TTFBCount != rep.RequestsSent {
		rep.Failures = append(rep.Failures, fmt.Sprintf("metrics do not count the requests sent (%d): requests_total %d, duration histogram %d, TTFB histogram %d",
			rep.RequestsSent, r.Requests, r.DurationCount, r.TTFBCount))
	}
	rep.Pass = len(rep.Failures) == 0
}

// goroutineStacks is the running goroutines, grouped by stack.
func goroutineStacks() string {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	return b.String()
}

// printReport writes rep as text, or as one JSON object.
func printReport(w io.Writer, rep *report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	p := func(label, format string, args ...any) {
		fmt.Fprintf(w, "%-18s %s\n", label, fmt.Sprintf(format, args...))
	}
	p("machine", "%s, %d CPUs, GOMAXPROCS %d", rep.GoVersion, rep.NumCPU, rep.GOMAXPROCS)
	p("corpus", "%d pages, %.1f MiB identity (%.1f MiB held by the origin in 4 codings)",
		rep.Pages, float64(rep.CorpusBytes)/mib, float64(rep.OriginHeldBytes)/mib)
	if len(rep.PagesWithoutHead) > 0 {
		p("", "without <head> (no bundle tag expected): %s", strings.Join(rep.PagesWithoutHead, ", "))
	}
	p("load", "c=%d, warm-up %gs, measured %.1fs (stopped by %s)", rep.Concurrency, rep.WarmupS, rep.ElapsedS, rep.StoppedBy)
	p("requests", "%d measured (+%d in warm-up)", rep.Requests, rep.WarmupRequests)
	p("", "by proxy: %s", counts(rep.ByProxy, proxyNames[:]...))
	p("", "by kind: %s", counts(rep.ByKind, kindNames[:]...))
	p("", "by Accept-Encoding: %s", counts(rep.ByAcceptEncoding, clientEncodings...))
	p("", "by Content-Encoding received: %s", counts(rep.ByCoding, "br", "gzip", "deflate", "identity"))
	p("requests/s", "%.1f", rep.RequestsPerSec)
	p("latency", "p50 %.1fms  p99 %.1fms  max %.1fms", rep.Latency.P50MS, rep.Latency.P99MS, rep.Latency.MaxMS)
	for _, n := range proxyNames {
		l := rep.LatencyByProxy[n]
		p("", "%-7s p50 %.1fms  p99 %.1fms  max %.1fms", n, l.P50MS, l.P99MS, l.MaxMS)
	}
	p("errors", "%d (warm-up included): %s", rep.Errors, counts(rep.ErrorsByKind, errKindNames[:]...))
	for _, e := range rep.ErrorSamples {
		p("", "%s", e)
	}
	p("metrics", "%d requests sent; the proxies recorded requests_total %d, duration histogram %d, TTFB histogram %d",
		rep.RequestsSent, rep.Recorded.Requests, rep.Recorded.DurationCount, rep.Recorded.TTFBCount)
	p("auction timeouts", "%d (eligible pages served with empty bids; not an error)", rep.AuctionTimeouts)
	p("overloaded", "%d (refused as the limits specify, with Retry-After: pages 503 by server.max_concurrent_pages, requests 429 past one client's share; not an error)", rep.Overloaded)
	p("bytes received", "%.1f MiB on the wire, %.1f MiB decoded", float64(rep.BytesReceived)/mib, float64(rep.BytesDecoded)/mib)
	p("peak RSS", "%.1f MiB (VmHWM, whole run including start-up)", float64(rep.PeakRSSBytes)/mib)
	p("RSS after warm-up", "min %.1f MiB, max %.1f MiB over %d samples; first third mean %.1f, last third mean %.1f (%+.1f%%): %s",
		rep.RSSMinMiB, rep.RSSMaxMiB, len(rep.RSSSeriesMiB), rep.RSSFirstMeanMiB, rep.RSSLastMeanMiB, rep.RSSTrendPct, rep.RSSTrend)
	p("RSS series (MiB)", "%s", series(rep.RSSSeriesMiB))
	p("goroutines", "%d before the load, %d after (tolerance +%d)", rep.GoroutinesBefore, rep.GoroutinesAfter, rep.GoroutineSlack)
	p("heap in use", "%.1f MiB after a final GC (%.1f MiB after a second one, which empties the codec pools)",
		float64(rep.HeapInuseBytes)/mib, float64(rep.HeapInusePoolsFreedBytes)/mib)
	if rep.GoroutineStacks != "" {
		p("goroutines left", "\n%s", rep.GoroutineStacks)
	}
	if rep.Pass {
		p("result", "PASS")
	} else {
		p("result", "FAIL: %s", strings.Join(rep.Failures, "; "))
	}
	return nil
}

func counts(m map[string]int64, order ...string) string {
	var b strings.Builder
	for i, k := range order {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, m[k])
	}
	return b.String()
}

func series(v []float64) string {
	var b strings.Builder
	for i, x := range v {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.0f", x)
	}
	return b.String()
}
