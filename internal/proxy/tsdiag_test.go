package proxy

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
)

// TestTSSSATMeasurementHeaders: with diagnostics on, ?__ts_ssat_compression
// forces the mode as on Trusted Server's Fastly experiment, the x-ts-ssat-*
// headers carry its names and value formats beside ssatd's own, the
// end-of-body figures come as trailers, and the parameter never reaches
// the origin.
func TestTSSSATMeasurementHeaders(t *testing.T) {
	tests := []struct {
		param, mode, delivery, originAE, out string
	}{
		{"identity", "identity", "fastly-dynamic", "identity", "identity"},
		{"mirror", "mirror", "in-guest", "", "gzip"},
	}
	for _, tt := range tests {
		t.Run(tt.param, func(t *testing.T) {
			var e *env
			var originQuery []string
			page := serveCoded(func() []byte { return []byte(e.page()) }, compress.Gzip)
			origin := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				originQuery = append(originQuery, r.URL.RawQuery)
				page.ServeHTTP(w, r)
			})
			e = newEnv(t, origin, diagnostics, offload("builtin"), func(c *config.Config) { c.Compute.CPUScale = 3 })
			resp, body := e.mustGet(t, "/?a=1&"+TSModeParam+"="+tt.param, navigate, header("Accept-Encoding", "gzip"))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			h := resp.Header
			if h.Get(TSMode) != tt.mode || h.Get(TSDelivery) != tt.delivery || h.Get(TSOutputCoding) != tt.out {
				t.Errorf("mode %q delivery %q output %q; want %s, %s, %s", h.Get(TSMode), h.Get(TSDelivery), h.Get(TSOutputCoding), tt.mode, tt.delivery, tt.out)
			}
			if tt.originAE != "" && h.Get(TSOriginAE) != tt.originAE {
				t.Errorf("origin Accept-Encoding %q, want %q", h.Get(TSOriginAE), tt.originAE)
			}
			if h.Get(TSOriginAE) != h.Get(DiagOriginAE) || h.Get(TSOriginCoding) != orIdentityCoding(h.Get(DiagOriginCoding)) {
				t.Errorf("x-ts-ssat origin headers %q/%q differ from ssatd's %q/%q", h.Get(TSOriginAE), h.Get(TSOriginCoding), h.Get(DiagOriginAE), h.Get(DiagOriginCoding))
			}
			if len(originQuery) != 1 || originQuery[0] != "a=1" {
				t.Errorf("origin saw query %q, want a=1 alone", originQuery)
			}
			tr := resp.Trailer
			if !regexp.MustCompile(`^\d+\.\d{3}$`).MatchString(tr.Get(TSProcessingMillis)) {
				t.Errorf("processing-ms %q, want milliseconds with 3 decimals", tr.Get(TSProcessingMillis))
			}
			if tr.Get(TSProcessingMillis) != tr.Get(DiagProcessingMillis) {
				t.Errorf("processing-ms %q, ssatd's %q", tr.Get(TSProcessingMillis), tr.Get(DiagProcessingMillis))
			}
			if !regexp.MustCompile(`^\d+$`).MatchString(tr.Get(TSVCPUMillis)) {
				t.Errorf("fastly-vcpu-ms %q, want whole milliseconds", tr.Get(TSVCPUMillis))
			}
			if scaled, err := strconv.ParseFloat(tr.Get(DiagGuestCPUMillis), 64); err == nil && strconv.Itoa(int(scaled)) != tr.Get(TSVCPUMillis) {
				t.Errorf("fastly-vcpu-ms %q, want the whole part of guest CPU × cpu_scale %v", tr.Get(TSVCPUMillis), scaled)
			}
			line := e.accessLine(t, 1)
			if fmt.Sprint(line["origin_bytes"]) != tr.Get(TSProcessedBytes) {
				t.Errorf("processed-bytes %q, origin bytes in the access line %v", tr.Get(TSProcessedBytes), line["origin_bytes"])
			}
			if tt.param == "mirror" && !bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
				t.Errorf("mirror output is not gzip")
			}
		})
	}
}

// Without diagnostics the parameter changes nothing and no x-ts-ssat-*
// header is sent.
func TestTSSSATParameterIgnoredWithoutDiagnostics(t *testing.T) {
	var e *env
	e = newEnv(t, serveCoded(func() []byte { return []byte(e.page()) }, compress.Gzip), offload("builtin"))
	resp, _ := e.mustGet(t, "/?"+TSModeParam+"=mirror", navigate, header("Accept-Encoding", "gzip"))
	for k := range resp.Header {
		if strings.HasPrefix(k, "X-Ts-Ssat-") {
			t.Errorf("%s sent with diagnostics off", k)
		}
	}
	if m := e.accessLine(t, 1)["mode"]; m != string(modeOffload) {
		t.Errorf("mode %v: the parameter forced mirror mode with diagnostics off", m)
	}
}
