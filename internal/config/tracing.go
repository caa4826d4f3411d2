package config

import (
	"fmt"
	"math"
	"net/url"
	"strings"
)

// TracingConfig is [tracing]: OpenTelemetry traces sent over OTLP/HTTP.
// Off unless endpoint is set or the standard OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT variable is
// (https://opentelemetry.io/docs/specs/otel/protocol/exporter/).
type TracingConfig struct {
	// Endpoint is the collector's OTLP/HTTP traces URL; one without a path
	// gets /v1/traces, as OTEL_EXPORTER_OTLP_ENDPOINT does. It takes
	// precedence over the OTEL_EXPORTER_OTLP_* endpoint variables.
	Endpoint string `toml:"endpoint" env:"ENDPOINT"`
	// SampleRatio is the share of traces started here that are recorded;
	// a trusted proxy's sampled flag is followed (parent-based sampling).
	SampleRatio float64 `toml:"sample_ratio" env:"SAMPLE_RATIO"`
	// ServiceName is the service.name resource attribute; OTEL_SERVICE_NAME
	// is used when this is empty.
	ServiceName string `toml:"service_name" env:"SERVICE_NAME"`
}

// TracesURL is Endpoint with the default path added, or "" without one.
func (t *TracingConfig) TracesURL() string {
	u, err := url.Parse(t.Endpoint)
	if t.Endpoint == "" || err != nil {
		return ""
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String()
}

func (c *Config) validateTracing(p *problems) {
	t := &c.Tracing
	if t.Endpoint != "" {
		u, err := url.Parse(t.Endpoint)
		switch {
		case err != nil:
			p.addf("tracing.endpoint", "%w", err)
		case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
			p.addf("tracing.endpoint", "must be an http:// or https:// URL such as \"http://otel-collector:4318\", got %q", t.Endpoint)
		case u.User != nil:
			p.addf("tracing.endpoint", "must not carry credentials: send them with OTEL_EXPORTER_OTLP_HEADERS")
		case dropsPart(u):
			p.addf("tracing.endpoint", "%s", endpointPartDropped)
		}
	}
	if math.IsNaN(t.SampleRatio) || t.SampleRatio < 0 || t.SampleRatio > 1 {
		p.addf("tracing.sample_ratio", "must be between 0 and 1, got %v", t.SampleRatio)
	}
}

// endpointPartDropped says why an endpoint with a query or fragment is
// refused. The specification has the per-signal URL "used as-is"
// (https://opentelemetry.io/docs/specs/otel/protocol/exporter/,
// "Endpoint URLs for OTLP/HTTP"), but otlptracehttp keeps the scheme,
// host and path only (otlpconfig's WithEndpointURL and envconfig), so an
// ?api_key= would silently never reach the collector. Sending it anyway
// would take an http.Client of ssatd's own (WithHTTPClient), which turns
// off the exporter's OTEL_EXPORTER_OTLP_CERTIFICATE, _TIMEOUT and proxy
// handling; credentials belong in headers, which the specification
// provides for (OTEL_EXPORTER_OTLP_HEADERS, "Specifying headers via
// environment variables").
const endpointPartDropped = "must not carry a query string or fragment: the OTLP/HTTP exporter sends to the URL's scheme, host and path only, so they would never reach the collector; send credentials as headers with OTEL_EXPORTER_OTLP_HEADERS (\"api-key=...\")"

func dropsPart(u *url.URL) bool { return u.RawQuery != "" || u.ForceQuery || u.Fragment != "" }

// otelEndpointProblems refuses, as tracing.endpoint is refused, an
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT with
// a query or fragment. The value is not repeated: it may hold a secret.
func otelEndpointProblems(environ []string) []error {
	var problems []error
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if name != "OTEL_EXPORTER_OTLP_ENDPOINT" && name != "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" {
			continue
		}
		if u, err := url.Parse(value); err == nil && dropsPart(u) {
			problems = append(problems, fmt.Errorf("%s: %s", name, endpointPartDropped))
		}
	}
	return problems
}
