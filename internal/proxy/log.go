package proxy

import (
	"net/http"
	"time"

	"go.uber.org/zap"
)

// logExchange writes the one access line of a request.
func (g *Guest) logExchange(r *http.Request, x *exchange) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.outcome == "" {
		x.outcome = outcomeOK
	}
	if x.outcome == outcomeAborted && x.reason != "" && x.route == routePipeline {
		g.metrics.inc(x.reason)
	}
	g.metrics.request(string(x.route))
	if x.passBody != nil {
		x.originBytes = x.passBody.Count()
		x.outBytes = x.originBytes
	}
	fields := []zap.Field{
		zap.String("method", r.Method),
		zap.String("path", r.URL.Path),
		zap.Int("status", x.status),
		zap.String("route", string(x.route)),
		zap.Bool("eligible", x.eligible),
		zap.String("mode", string(x.mode)),
		zap.String("origin_accept_encoding", x.originAE),
		zap.String("origin_coding", x.originCoding),
		zap.String("output_coding", x.outCoding),
		zap.Int64("origin_bytes", x.originBytes),
		zap.Int64("output_bytes", x.outBytes),
		zap.Float64("guest_ms", float64(x.guestTime)/float64(time.Millisecond)),
		zap.Float64("total_ms", float64(time.Since(x.start))/float64(time.Millisecond)),
		zap.String("outcome", x.outcome),
	}
	if !x.eligible && x.ineligible != "" {
		fields = append(fields, zap.String("ineligible", x.ineligible))
	}
	if x.auctionOut != "" {
		fields = append(fields, zap.String("auction", string(x.auctionOut)))
	}
	if x.reason != "" {
		fields = append(fields, zap.String("reason", x.reason))
	}
	if x.err != nil {
		fields = append(fields, zap.NamedError("error", x.err))
	}
	g.log.Info("access", fields...)
}
