package auction

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the tracer taken from otel's global provider, a no-op
// until the daemon installs one ([tracing]). It is asked for at each span,
// not kept: a tracer taken before the provider was installed would stay
// bound to the first one installed. Spans are only made under a request
// span that the daemon started, so with tracing off nothing here runs.
const tracerName = "github.com/ssatd/ssatd/internal/auction"

// startSpan starts a child of the span in ctx; without one (tracing off,
// or a caller outside a request) it starts nothing.
func startSpan(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, trace.SpanFromContext(ctx)
	}
	return otel.Tracer(tracerName).Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// endAuctionSpan records how the auction's sources ended.
func endAuctionSpan(span trace.Span, p Progress) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("ssatd.auction.sources", p.Sources), attribute.Int("ssatd.auction.answered", p.Answered),
			attribute.Int("ssatd.auction.failed", p.Failed), attribute.Int("ssatd.auction.timed_out", p.TimedOut),
			attribute.Int("ssatd.auction.cancelled", p.Cancelled), attribute.Int("ssatd.auction.bids", len(p.Bids)))
	}
	span.End()
}

// endEndpointSpan records one endpoint call's outcome and usable bids.
func endEndpointSpan(span trace.Span, res result, bids int) {
	if span.IsRecording() {
		span.SetAttributes(attribute.String("ssatd.endpoint.outcome", res.outcome), attribute.String("ssatd.endpoint.reason", res.reason),
			attribute.Int("ssatd.endpoint.bids", bids))
		if res.status != 0 {
			span.SetAttributes(attribute.Int("http.response.status_code", res.status))
		}
		if res.outcome == EndpointError || res.outcome == EndpointTimeout {
			span.SetStatus(codes.Error, res.outcome+": "+res.reason)
		}
	}
	span.End()
}

// injectTraceparent sends the endpoint span's W3C traceparent with the
// bid request (a no-op with tracing off).
func injectTraceparent(ctx context.Context, h http.Header) {
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(h))
}

// startAuctionSpan starts the span of one page's auction.
func startAuctionSpan(ctx context.Context) (context.Context, trace.Span) {
	return startSpan(ctx, "auction", trace.SpanKindInternal)
}

// startEndpointSpan starts the span of one call to the endpoint name.
func startEndpointSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	return startSpan(ctx, "auction endpoint", trace.SpanKindClient, attribute.String("ssatd.endpoint", name))
}
