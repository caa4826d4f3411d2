package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/measure"
)

func TestMeasureUsage(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		args    []string
		code    int
		wantErr string
	}{
		{"no form", nil, 2, "exactly one of"},
		{"two forms", []string{"-pages", dir, "-url", "http://x/"}, 2, "exactly one of"},
		{"bad format", []string{"-pages", dir, "-format", "xml"}, 2, "-format"},
		{"zero runs", []string{"-pages", dir, "-runs", "0"}, 2, "-runs"},
		{"bad origin level", []string{"-pages", dir, "-origin-gzip-level", "12"}, 2, "-origin-gzip-level must be 1..9, got 12"},
		{"bad origin quality", []string{"-pages", dir, "-origin-brotli-quality", "12"}, 2, "-origin-brotli-quality must be 0..11, got 12"},
		{"proxy without path", []string{"-proxy", "http://127.0.0.1:1"}, 2, "-proxy needs exactly one -url"},
		{"chart with proxy", []string{"-proxy", "http://127.0.0.1:1", "-url", "/", "-chart", "x.svg"}, 2, "-chart"},
		{"network without browser", []string{"-proxy", "http://127.0.0.1:1", "-url", "/", "-network", "slow-4g"}, 2, "-network goes with -browser"},
		{"chrome without browser", []string{"-proxy", "http://127.0.0.1:1", "-url", "/", "-chrome", "chromium"}, 2, "-chrome goes with -browser"},
		{"browser without proxy", []string{"-pages", dir, "-browser"}, 2, "-browser goes with -proxy URL -url PATH"},
		{"browser with csv", []string{"-proxy", "http://127.0.0.1:1", "-url", "/", "-browser", "-format", "csv"}, 2, "-browser reports in -format table or json, not csv"},
		{"unknown network", []string{"-proxy", "http://127.0.0.1:1", "-url", "/", "-browser", "-network", "none,5g"}, 2, `-network: unknown profile "5g" (known: none, slow-4g, regular-3g)`},
		{"browser in ssatd", []string{"-proxy", "http://127.0.0.1:1", "-url", "/", "-browser", "-chrome", filepath.Join(dir, "chromium")}, 2, "-browser is not in this binary, which serves pages and so links no browser tooling; run ssatd-measure with the same flags (go install github.com/ssatd/ssatd/cmd/ssatd-measure@latest"},
		{"unknown flag", []string{"-bogus"}, 2, "bogus"},
		{"empty folder", []string{"-pages", dir}, 1, "no *.html pages"},
		{"missing folder", []string{"-pages", filepath.Join(dir, "nonexistent")}, 1, "nonexistent: the folder does not exist"},
		{"missing config", []string{"-pages", dir, "-config", filepath.Join(dir, "none.toml")}, 1, "none.toml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := measureRun(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.wantErr) {
				t.Fatalf("exit %d (want %d), stderr:\n%s", code, tt.code, stderr)
			}
		})
	}
}

// -config supplies the slots: a page no slot matches is measured without
// the SSAT injection and said to be so.
func TestMeasurePagesWithConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.html"), measurePage("origin.pub.example", ""), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, pattern string
		eligible      bool
	}{
		{"slot matches", "/*.html", true},
		{"no slot matches", "/news/**", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "c.toml")
			toml := fmt.Sprintf(`[publisher]
domain = %q
origin_url = "https://origin.pub.example"
[auction]
enabled = true
[[creative_opportunities.slot]]
id = "top"
page_patterns = [%q]
`, measureDomain, tt.pattern)
			if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := measureRun(t, "-pages", dir, "-config", cfg, "-runs", "1", "-format", "json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var rep measure.Report
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatal(err)
			}
			if len(rep.Pages) != 1 || rep.Pages[0].Eligible != tt.eligible || rep.Settings.Config != cfg {
				t.Fatalf("pages %+v settings %+v", rep.Pages, rep.Settings)
			}
			if noted := strings.Contains(stderr, "not SSAT-eligible"); noted == tt.eligible {
				t.Fatalf("eligibility note %v, eligible %v: %s", noted, tt.eligible, stderr)
			}
		})
	}
}
