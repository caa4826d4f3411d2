package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	bodypipe "github.com/ssatd/ssatd/internal/pipeline"
	"github.com/ssatd/ssatd/internal/telemetry"
)

// tracerName names the tracer taken from otel's global provider, a no-op
// until the daemon installs one ([tracing]). It is asked for at each span,
// not kept: a tracer taken before the provider was installed would stay
// bound to the first one installed. Spans are only made under a request
// span that the daemon started, so with tracing off nothing here runs.
const tracerName = "github.com/ssatd/ssatd/internal/proxy"

// annotateRequestSpan puts the access line's decisions on the request's
// span: route, mode, eligibility, outcome and failure reason.
func annotateRequestSpan(r *http.Request, x *exchange) {
	span := trace.SpanFromContext(r.Context())
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(
		attribute.String("ssatd.route", string(x.route)),
		attribute.String("ssatd.mode", labelOr(string(x.mode))),
		attribute.Bool("ssatd.eligible", x.eligible),
		attribute.String("ssatd.outcome", x.outcome),
		attribute.Int("http.response.status_code", x.status),
	)
	if !x.eligible && x.ineligible != "" {
		span.SetAttributes(attribute.String("ssatd.ineligible", x.ineligible))
	}
	if x.auctionOut != "" {
		span.SetAttributes(attribute.String("ssatd.auction", string(x.auctionOut)))
	}
	if x.reason != reasonNone {
		span.SetAttributes(attribute.String("ssatd.reason", x.reason.String()))
		span.SetStatus(codes.Error, x.reason.String())
	}
}

// tracedOrigin makes the "origin fetch" span of each origin request, from
// sending it to the end of its body, with events for the connection and
// the response headers, and sends the span's traceparent to the origin.
type tracedOrigin struct{ rt http.RoundTripper }

func (t tracedOrigin) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return t.rt.RoundTrip(req)
	}
	ctx, span := otel.Tracer(tracerName).Start(ctx, "origin fetch", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(telemetry.String("http.request.method", req.Method), attribute.String("server.address", req.URL.Host)))
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) {
			span.AddEvent("connection", trace.WithAttributes(attribute.Bool("reused", i.Reused)))
		},
		GotFirstResponseByte: func() { span.AddEvent("response headers") },
	})
	// A RoundTripper must not change the request it was given.
	req = req.Clone(ctx)
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		telemetry.RecordError(span, err, "origin request failed")
		span.End()
		return nil, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	resp.Body = &spanBody{ReadCloser: resp.Body, span: span}
	return resp, nil
}

// CloseIdleConnections passes on to the transport, so that closing the
// guest's idle origin connections (wholePages) still reaches them.
func (t tracedOrigin) CloseIdleConnections() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// spanBody ends the origin span when the body ends: at EOF, at a read
// error, or at Close, whichever comes first.
type spanBody struct {
	io.ReadCloser
	span trace.Span
	n    int64
	once sync.Once
}

func (b *spanBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	if err != nil {
		b.end(err)
	}
	return n, err
}

func (b *spanBody) Close() error {
	err := b.ReadCloser.Close()
	b.end(nil)
	return err
}

func (b *spanBody) end(err error) {
	b.once.Do(func() {
		b.span.SetAttributes(attribute.Int64("ssatd.origin_body_bytes", b.n))
		if err != nil && err != io.EOF {
			telemetry.RecordError(b.span, err, "origin body: "+strconv.Quote(err.Error()))
		}
		b.span.AddEvent("body end")
		b.span.End()
	})
}

// startSpan starts a child of the request's span; nil when the request
// has none (tracing off).
func startSpan(ctx context.Context, name string) trace.Span {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	_, span := otel.Tracer(tracerName).Start(ctx, name)
	return span
}

// endSpan ends span (nil-safe), marking it failed with err.
func endSpan(span trace.Span, err error, attrs ...attribute.KeyValue) {
	if span == nil {
		return
	}
	span.SetAttributes(attrs...)
	telemetry.RecordError(span, err, "")
	span.End()
}

// admitPage is the page gate (admission.go), behind the client's share of
// it (clientshare.go), with its wait as a span.
func (g *Guest) admitPage(x *exchange, deadline time.Time) (*pageSlot, error) {
	span := startSpan(x.ctx, "page gate wait")
	slot, err := admitShared(x.ctx, g.clientPages, g.pages, x.client, deadline)
	endSpan(span, err)
	return slot, err
}

// tracedProcess is the page's journey as the "rewrite" span: decode,
// rewrite and encode of the whole page, with the origin bytes read and the
// guest CPU spent.
func (p *pipeline) tracedProcess() bodypipe.Result {
	span := startSpan(p.x.ctx, "rewrite")
	res := p.body.Process()
	if span != nil {
		attrs := []attribute.KeyValue{attribute.Int64("ssatd.origin_body_bytes", res.InBytes),
			attribute.String("ssatd.output_coding", string(res.Out))}
		if res.CPUMeasured {
			attrs = append(attrs, attribute.Float64("ssatd.guest_cpu_ms", float64(res.CPU)/float64(time.Millisecond)))
		}
		endSpan(span, servedError(res.Err), attrs...)
	}
	return res
}
