package config

import (
	"fmt"
	"math"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpguts"
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
		if msg := endpointProblem(t.Endpoint); msg != "" {
			p.addf("tracing.endpoint", "%s", msg)
		}
	}
	if math.IsNaN(t.SampleRatio) || t.SampleRatio < 0 || t.SampleRatio > 1 {
		p.addf("tracing.sample_ratio", "must be between 0 and 1, got %v", t.SampleRatio)
	}
}

// endpointProblem is what is wrong with an OTLP/HTTP endpoint, from
// tracing.endpoint or the OTEL_EXPORTER_OTLP_* variables alike, or "".
// The value is never repeated, nor url.Parse's error, which quotes it
// whole: an endpoint may hold a password or an api key. The exporter
// keeps scheme, host and path only (see endpointPartDropped), so
// credentials in the URL would never reach the collector; and for a
// variable it cannot parse it printed the value to stderr itself and
// sent to https://localhost:4318 instead.
func endpointProblem(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "does not parse as a URL; it must be an http:// or https:// URL such as \"http://otel-collector:4318\" (the value is not repeated: it may hold a secret)"
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return "must be an http:// or https:// URL such as \"http://otel-collector:4318\" (the value is not repeated: it may hold a secret)"
	case u.User != nil:
		return "must not carry credentials: the OTLP/HTTP exporter sends to the URL's scheme, host and path only; send them as headers with OTEL_EXPORTER_OTLP_HEADERS"
	case dropsPart(u):
		return endpointPartDropped
	}
	return ""
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
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT that
// the exporter would not send to as written (endpointProblem).
func otelEndpointProblems(environ []string) []error {
	var problems []error
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if name != "OTEL_EXPORTER_OTLP_ENDPOINT" && name != "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" || value == "" {
			continue
		}
		if msg := endpointProblem(value); msg != "" {
			problems = append(problems, fmt.Errorf("%s: %s", name, msg))
		}
	}
	return problems
}

// otelHeaderProblems refuses an OTEL_EXPORTER_OTLP_HEADERS or
// OTEL_EXPORTER_OTLP_TRACES_HEADERS (where docs/deployment.md sends a
// collector's key) that the exporter would not send as written. It reads
// them as otlptracehttp's envconfig.stringToHeader does (v1.47.0:
// comma-separated name=value, the name an HTTP token once trimmed, the
// value percent-decoded), which drops a pair it cannot read and prints the
// pair or its value, the secret itself, to stderr. Here the pair is
// named by its place only; an empty one (a trailing comma) loses nothing.
func otelHeaderProblems(environ []string) []error {
	var problems []error
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if name != "OTEL_EXPORTER_OTLP_HEADERS" && name != "OTEL_EXPORTER_OTLP_TRACES_HEADERS" || value == "" {
			continue
		}
		pairs := strings.Split(value, ",")
		for i, pair := range pairs {
			if strings.TrimSpace(pair) == "" {
				continue
			}
			var why string
			k, v, found := strings.Cut(pair, "=")
			_, err := url.PathUnescape(v)
			switch {
			case !found:
				why = "is not name=value"
			case !httpguts.ValidHeaderFieldName(strings.TrimSpace(k)):
				why = "has a name that is not an HTTP token (RFC 9110 §5.6.2)"
			case err != nil:
				why = "has a value that does not percent-decode (write % as %25)"
			default:
				continue
			}
			problems = append(problems, fmt.Errorf("%s: header %d of %d %s; the exporter would drop it (the value is not repeated: it may hold a secret)", name, i+1, len(pairs), why))
		}
	}
	return problems
}
