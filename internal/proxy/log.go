package proxy

import (
	"net/http"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/metrics"
	"github.com/ssatd/ssatd/internal/ssat"
	"github.com/ssatd/ssatd/internal/telemetry"
)

// finish ends a request: its access line and its metrics. With the builtin
// edge in front the record waits until the edge has sent the last byte, so
// that both report what reached the client (docs/behaviour.md, "Edge").
func (g *Guest) finish(r *http.Request, x *exchange) {
	if d := ssat.DeliveryOf(r.Context()); d != nil {
		d.AfterDelivery(func() { g.record(r, x, d) })
		return
	}
	g.record(r, x, nil)
}

// record writes the one access line of a request and its metrics; d is
// what the edge delivered, nil without an edge.
func (g *Guest) record(r *http.Request, x *exchange, d *ssat.Delivery) {
	x.mu.Lock()
	defer x.mu.Unlock()
	total := time.Since(x.start)
	if x.inFlightDone != nil {
		x.inFlightDone()
	}
	if d != nil && d.Err != nil {
		// The guest finished, but the edge could not deliver the whole
		// response to the client and aborted it.
		g.recordFailureLocked(x, outcomeAborted, reasonClientGone, d.Err)
	}
	if x.outcome == "" {
		x.outcome = outcomeOK
	}
	if x.passBody != nil {
		x.originBytes = x.passBody.Count()
		x.outBytes = x.originBytes
	}
	sentCoding, sentBytes := x.outCoding, x.outBytes
	if d != nil {
		sentCoding, sentBytes = d.Coding, d.BytesOut
	}
	g.count(x, d, total, sentCoding, sentBytes)
	fields := []zap.Field{
		zap.String("method", telemetry.Text(r.Method)),
		pathField(r.URL),
		zap.Int("status", x.status),
		zap.String("route", string(x.route)),
		zap.Bool("eligible", x.eligible),
		zap.String("mode", labelOr(string(x.mode))),
		zap.String("origin_accept_encoding", x.originAE),
		zap.String("origin_coding", x.originCoding),
		zap.String("output_coding", sentCoding),
		zap.Int64("origin_bytes", x.originBytes),
		zap.Int64("output_bytes", sentBytes),
	}
	if d != nil {
		// The guest's own output, before the edge: what the guest produced
		// and what the client received differ when the edge compresses.
		fields = append(fields, zap.String("guest_output_coding", x.outCoding), zap.Int64("guest_output_bytes", x.outBytes))
	}
	fields = append(fields,
		zap.Float64("guest_ms", millis(x.guestTime)),
		zap.Float64("total_ms", millis(total)),
		zap.String("outcome", x.outcome),
	)
	if x.cpuMeasured {
		fields = append(fields, zap.Float64("guest_cpu_ms", millis(x.guestCPU)))
	}
	if !x.eligible && x.ineligible != "" {
		fields = append(fields, zap.String("ineligible", x.ineligible))
	}
	if x.auctionOut != "" {
		fields = append(fields, zap.String("auction", string(x.auctionOut)))
	}
	if x.reason != reasonNone {
		fields = append(fields, zap.Stringer("reason", x.reason))
	}
	if x.err != nil {
		fields = append(fields, telemetry.Error(x.err))
	}
	annotateRequestSpan(r, x)
	g.log.Info("access", fields...)
}

// count records a finished request's metrics; x.mu is held.
func (g *Guest) count(x *exchange, d *ssat.Delivery, total time.Duration, sentCoding string, sentBytes int64) {
	ttfb := total
	if !x.firstByte.IsZero() {
		ttfb = x.firstByte.Sub(x.start)
	}
	g.metrics.Finished(metrics.Request{
		Route: labelOr(string(x.route)), Mode: labelOr(string(x.mode)), Eligible: x.eligible,
		Outcome: x.outcome, Status: x.status, Duration: total, TTFB: ttfb,
		OriginCoding: x.originCoding, OriginBytes: x.originBytes,
		DeliveredCoding: sentCoding, DeliveredBytes: sentBytes,
	})
	if d != nil && d.Compressed {
		g.metrics.EdgeCompressed(d.Coding, d.BytesIn, d.BytesOut)
	}
	if x.route == routeBundle {
		g.metrics.BundleHit()
	}
	if x.auctionOut != "" {
		g.metrics.Auction(string(x.auctionOut), x.auctionTook)
	}
}

// pathField is a request's path as the proxy's log lines carry it: valid
// UTF-8 and bounded (telemetry.Text), since the client chose it.
func pathField(u *url.URL) zap.Field { return zap.String("path", telemetry.Text(u.Path)) }

// labelOr names an unset route or mode (a request refused before either
// was decided) "none", in the access line as in the metrics.
func labelOr(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// firstByteWriter notes when the guest writes the first body byte, for the
// time-to-first-byte histogram, and the status and body bytes written, for
// the responses the guest answers itself (the bundle): those have no
// origin response or pipeline to take them from.
type firstByteWriter struct {
	http.ResponseWriter
	x       *exchange
	status  int
	written int64
}

func (f *firstByteWriter) WriteHeader(code int) {
	if f.status == 0 && code >= 200 {
		f.status = code
	}
	f.ResponseWriter.WriteHeader(code)
}

func (f *firstByteWriter) Write(p []byte) (int, error) {
	if f.x.firstByte.IsZero() && len(p) > 0 {
		f.x.firstByte = time.Now()
	}
	if f.status == 0 {
		f.status = http.StatusOK
	}
	n, err := f.ResponseWriter.Write(p)
	f.written += int64(n)
	return n, err
}

func (f *firstByteWriter) Unwrap() http.ResponseWriter { return f.ResponseWriter }
