package main

import (
	"context"
	"net/http"
	"net/netip"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/telemetry"
)

// tracing is the daemon's OpenTelemetry set-up; the zero value is off.
// The guest, the origin transport and the auction take their tracer and
// propagator from otel's globals, which are no-ops until start sets them:
// with tracing off a span costs a context lookup.
type tracing struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
}

// tracingEnabled: [tracing] endpoint, or the standard endpoint variables
// (https://opentelemetry.io/docs/specs/otel/protocol/exporter/), with
// OTEL_SDK_DISABLED=true turning both off
// (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/).
func tracingEnabled(t *config.TracingConfig, environ []string) bool {
	if lookupEnv(environ, "OTEL_SDK_DISABLED") == "true" {
		return false
	}
	return t.Endpoint != "" || lookupEnv(environ, "OTEL_EXPORTER_OTLP_ENDPOINT") != "" ||
		lookupEnv(environ, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// startTracing installs the OTLP/HTTP exporter, the sampler and W3C Trace
// Context propagation (https://www.w3.org/TR/trace-context/) when tracing
// is enabled. The exporter reads the other OTEL_EXPORTER_OTLP_* variables
// (headers, timeout, compression, certificates) itself.
func startTracing(ctx context.Context, t *config.TracingConfig, environ []string) (*tracing, error) {
	if !tracingEnabled(t, environ) {
		return &tracing{}, nil
	}
	var opts []otlptracehttp.Option
	if u := t.TracesURL(); u != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, err
	}
	attrs := []attribute.KeyValue{}
	if t.ServiceName != "" {
		attrs = append(attrs, semconv.ServiceName(t.ServiceName))
	} else if lookupEnv(environ, "OTEL_SERVICE_NAME") == "" {
		attrs = append(attrs, semconv.ServiceName("ssatd"))
	}
	attrs = append(attrs, semconv.ServiceVersion(version))
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attrs...))
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(t.SampleRatio))),
	)
	prop := propagation.TraceContext{}
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(prop)
	return &tracing{provider: tp, tracer: tp.Tracer("github.com/ssatd/ssatd"), prop: prop}, nil
}

// shutdown sends the spans still buffered; a no-op when off.
func (t *tracing) shutdown(ctx context.Context) error {
	if t == nil || t.provider == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// traceHeaders are W3C Trace Context's request headers.
var traceHeaders = []string{"traceparent", "tracestate"}

// traced starts the request's server span around next. A traceparent is
// taken only from server.trusted_proxies: from anyone else it would let a
// client choose trace IDs and sampling, so it is removed before the guest
// forwards the request (the origin gets ssatd's own traceparent instead).
func (t *tracing) traced(trusted func(r *http.Request) bool, next http.Handler) http.Handler {
	if t == nil || t.provider == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if trusted(r) {
			ctx = t.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
		}
		for _, h := range traceHeaders {
			r.Header.Del(h)
		}
		ctx, span := t.tracer.Start(ctx, "ssatd.request", trace.WithSpanKind(trace.SpanKindServer),
			// The method and path are the client's: telemetry.Text keeps
			// one invalid byte from costing the whole export batch.
			trace.WithAttributes(telemetry.String(string(semconv.HTTPRequestMethodKey), r.Method),
				telemetry.String(string(semconv.URLPathKey), r.URL.Path)))
		defer span.End()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// trustedPeer reports whether r comes from server.trusted_proxies.
func trustedPeer(cfg func() *config.Config) func(r *http.Request) bool {
	return func(r *http.Request) bool {
		ap, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil {
			return false
		}
		addr := ap.Addr().Unmap()
		for _, p := range cfg().Server.TrustedPrefixes {
			if p.Contains(addr) {
				return true
			}
		}
		return false
	}
}

// useTracing serves client requests under t's request spans.
func (d *daemon) useTracing(t *tracing) {
	d.tracing = t
	if t.provider != nil {
		// An export that fails (the collector is down) is a log line like
		// any other, not a line of otel's own on stderr.
		log := d.log.Named("tracing")
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing: export failed", zap.Error(err)) }))
	}
	// Around the handler newDaemon built, which counts the running
	// handlers for shutdown (waitHandlers).
	d.client.Handler = t.traced(trustedPeer(d.config), d.client.Handler)
}

// stopTracing sends the buffered spans, for at most five seconds.
func (d *daemon) stopTracing() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.tracing.shutdown(ctx); err != nil {
		d.log.Warn("tracing: spans not sent at shutdown", zap.Error(err))
	}
}
