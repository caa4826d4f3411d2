package edge

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/ssatd/ssatd/internal/ssat"
)

// tracerName names the tracer taken from otel's global provider at each
// span (a no-op until the daemon installs one, [tracing]).
const tracerName = "github.com/ssatd/ssatd/internal/edge"

// startSpan starts the "edge compression" span beside the guest's spans
// (the guest's spans keep the request span as their parent); nil when the
// request has no span (tracing off).
func startSpan(ctx context.Context) trace.Span {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	_, span := otel.Tracer(tracerName).Start(ctx, "edge compression")
	return span
}

// endSpan records what the edge delivered.
func endSpan(span trace.Span, d *ssat.Delivery) {
	if span == nil {
		return
	}
	span.SetAttributes(attribute.String("ssatd.edge.coding", d.Coding), attribute.Bool("ssatd.edge.compressed", d.Compressed),
		attribute.Int64("ssatd.edge.bytes_in", d.BytesIn), attribute.Int64("ssatd.edge.bytes_out", d.BytesOut))
	if d.Err != nil {
		span.RecordError(d.Err)
		span.SetStatus(codes.Error, "delivery failed")
	}
	span.End()
}
