package config

import (
	"strings"
	"testing"
)

// TestTracingSection: [tracing] is off by default, its endpoint gets the
// OTLP traces path when it has none, and a bad value names its key.
func TestTracingSection(t *testing.T) {
	base := Defaults()
	if base.Tracing.Endpoint != "" || base.Tracing.SampleRatio != 1 {
		t.Fatalf("default tracing %+v, want off with sample_ratio 1", base.Tracing)
	}
	for _, tc := range []struct {
		endpoint string
		ratio    float64
		wantKey  string // "" when valid
		wantURL  string
	}{
		{"", 1, "", ""},
		{"http://collector:4318", 0.5, "", "http://collector:4318/v1/traces"},
		{"https://collector.example/otlp/v1/traces", 0, "", "https://collector.example/otlp/v1/traces"},
		{"collector:4318", 1, "tracing.endpoint", ""},
		{"http://user:pw@collector:4318", 1, "tracing.endpoint", ""},
		{"http://collector:4318/v1/traces?api_key=x", 1, "tracing.endpoint", ""},
		{"http://collector:4318/v1/traces?", 1, "tracing.endpoint", ""},
		{"http://collector:4318/#x", 1, "tracing.endpoint", ""},
		{"http://collector:4318", 1.5, "tracing.sample_ratio", ""},
		{"http://collector:4318", -0.1, "tracing.sample_ratio", ""},
	} {
		c := Defaults()
		c.Publisher.Domain, c.Publisher.OriginURL = "www.example.com", "https://origin.example.com"
		c.Tracing.Endpoint, c.Tracing.SampleRatio = tc.endpoint, tc.ratio
		err := c.Validate()
		switch {
		case tc.wantKey == "" && err != nil:
			t.Errorf("%q %v: %v", tc.endpoint, tc.ratio, err)
		case tc.wantKey != "" && (err == nil || !strings.Contains(err.Error(), tc.wantKey)):
			t.Errorf("%q %v: error %v, want one naming %s", tc.endpoint, tc.ratio, err, tc.wantKey)
		case tc.wantKey == "" && c.Tracing.TracesURL() != tc.wantURL:
			t.Errorf("%q: TracesURL %q, want %q", tc.endpoint, c.Tracing.TracesURL(), tc.wantURL)
		}
	}
}
