package proxy

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
)

func diagnostics(c *config.Config) { c.Debug.DiagnosticsHeaders = true }
func override(c *config.Config)    { c.Debug.AllowModeOverride = true }

func TestDiagnosticsOffByDefault(t *testing.T) {
	var e *env
	e = newEnv(t, serveCoded(func() []byte { return []byte(e.page()) }, compress.Gzip))
	resp, _ := e.mustGet(t, "/", navigate, header("Accept-Encoding", "gzip"))
	for k := range resp.Header {
		if strings.HasPrefix(k, "X-Ssatd-") {
			t.Errorf("diagnostics header %s sent while off", k)
		}
	}
	if len(resp.Trailer) != 0 {
		t.Errorf("trailers sent while off: %v", resp.Trailer)
	}
}

// The diagnostics are true for the whole body: processed bytes and time
// come as trailers once the body is done.
func TestDiagnosticsHeadersAndTrailers(t *testing.T) {
	tests := []struct {
		name, mode, out, delivery string
		mut                       []func(*config.Config)
	}{
		{"mirror gzip", "mirror", "gzip", "in-guest", nil},
		{"offload builtin", "offload", "identity", "builtin", []func(*config.Config){offload("builtin")}},
		{"offload external", "offload", "identity", "external", []func(*config.Config){offload("external")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *env
			e = newEnv(t, serveCoded(func() []byte { return []byte(e.page()) }, compress.Gzip), append(tt.mut, diagnostics)...)
			resp, body := e.mustGet(t, "/", navigate, header("Accept-Encoding", "gzip"))
			h := resp.Header
			if h.Get(DiagMode) != tt.mode || h.Get(DiagOutputCoding) != tt.out || h.Get(DiagDelivery) != tt.delivery {
				t.Fatalf("diagnostics %v", h)
			}
			if h.Get(DiagOriginCoding) == "" || h.Get(DiagOriginAE) == "" {
				t.Fatalf("origin diagnostics missing: %v", h)
			}
			plain := decode(t, compress.Coding(orIdentity(h.Get("Content-Encoding"))), body)
			n, err := strconv.Atoi(resp.Trailer.Get(DiagProcessedBytes))
			if err != nil || n != len(plain) {
				t.Fatalf("processed bytes trailer %q, decoded body %d bytes", resp.Trailer.Get(DiagProcessedBytes), len(plain))
			}
			if ms, err := strconv.ParseFloat(resp.Trailer.Get(DiagProcessingMillis), 64); err != nil || ms <= 0 {
				t.Fatalf("processing ms trailer %q", resp.Trailer.Get(DiagProcessingMillis))
			}
		})
	}
}

// debug.allow_mode_override: the query forces the mode and never reaches
// the origin; without the setting it is an ordinary parameter.
func TestModeOverride(t *testing.T) {
	tests := []struct {
		name, query          string
		mut                  []func(*config.Config)
		wantAsked, wantQuery string
		wantCE               string
	}{
		{"identity forced", "?a=1&__ssatd_compression=identity", []func(*config.Config){override}, "identity", "a=1", "br"},
		{"mirror forced over offload", "?__ssatd_compression=mirror", []func(*config.Config){override, offload("builtin")}, "gzip, br", "", "gzip"},
		{"not allowed", "?__ssatd_compression=identity", nil, "gzip, br", "__ssatd_compression=identity", "gzip"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked, query string
			var e *env
			e = newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				asked, query = r.Header.Get("Accept-Encoding"), r.URL.RawQuery
				serveCoded(func() []byte { return []byte(e.page()) }, compress.Gzip)(w, r)
			}), tt.mut...)
			resp, _ := e.mustGet(t, "/"+tt.query, navigate, header("Accept-Encoding", "br, gzip"))
			if asked != tt.wantAsked || query != tt.wantQuery || resp.Header.Get("Content-Encoding") != tt.wantCE {
				t.Fatalf("origin asked %q query %q; client got %q", asked, query, resp.Header.Get("Content-Encoding"))
			}
		})
	}
}
