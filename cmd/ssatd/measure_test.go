package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ssatd/ssatd/internal/bundle"
	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/measure"
	"github.com/ssatd/ssatd/internal/proxy"
	"github.com/ssatd/ssatd/internal/server"
)

const measureDomain = "www.pub.example"

// measurePage is a small article naming host in its links.
func measurePage(host string, extra string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html><html><head><meta charset="utf-8"><title>m</title><link rel="stylesheet" href="//%s/s.css"></head><body>`, host)
	for i := range 20 {
		fmt.Fprintf(&b, `<p>paragraph %d <a href="http://%s/a/%d">link</a></p>`+"\n", i, host, i)
	}
	b.WriteString(extra)
	b.WriteString(`<div id="top"></div></body></html>`)
	return []byte(b.String())
}

// measureEncode encodes page as an origin would.
func measureEncode(t *testing.T, c compress.Coding, page []byte) []byte {
	t.Helper()
	b, err := compress.Encode(c, page, compress.Options{GzipLevel: 6, BrotliQuality: 5, BrotliWindow: 22})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// measureOrigin serves body() in the coding choose picks from the request's
// Accept-Encoding.
func measureOrigin(t *testing.T, body func() []byte, choose func(ae string) compress.Coding) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := choose(r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Vary", "Accept-Encoding")
		if c != compress.Identity {
			w.Header().Set("Content-Encoding", string(c))
		}
		_, _ = w.Write(measureEncode(t, c, body()))
	}))
	t.Cleanup(s.Close)
	return s
}

// negotiate is what a well-behaved origin does.
func negotiate(ae string) compress.Coding {
	switch {
	case strings.Contains(ae, "br"):
		return compress.Brotli
	case strings.Contains(ae, "gzip"):
		return compress.Gzip
	case strings.Contains(ae, "deflate"):
		return compress.Deflate
	}
	return compress.Identity
}

func measureRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"measure"}, args...), &stdout, &stderr, nil)
	return code, stdout.String(), stderr.String()
}

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
		{"missing chrome", []string{"-proxy", "http://127.0.0.1:1", "-url", "/", "-browser", "-chrome", filepath.Join(dir, "chromium")}, 2, "-chrome " + filepath.Join(dir, "chromium") + ": "},
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

// -url against live origins: the codings each one returns are reported as
// returned, an origin that ignores identity is reported (not hidden), and a
// dynamic page is reported with the size of the difference.
func TestMeasureURL(t *testing.T) {
	var counter atomic.Int64
	tests := []struct {
		name             string
		body             func(host string) func() []byte
		choose           func(string) compress.Coding
		wantCE           map[string]string
		identityHonoured bool
		dynamic          bool
	}{
		{
			name:             "negotiating origin",
			body:             func(h string) func() []byte { return func() []byte { return measurePage(h, "") } },
			choose:           negotiate,
			wantCE:           map[string]string{"identity": "identity", "gzip": "gzip", "br": "br"},
			identityHonoured: true,
		},
		{
			name:             "origin ignores identity",
			body:             func(h string) func() []byte { return func() []byte { return measurePage(h, "") } },
			choose:           func(string) compress.Coding { return compress.Gzip },
			wantCE:           map[string]string{"identity": "gzip", "gzip": "gzip", "br": "gzip"},
			identityHonoured: false,
		},
		{
			name: "dynamic page",
			body: func(h string) func() []byte {
				return func() []byte { return measurePage(h, fmt.Sprintf("<p>request %06d</p>", counter.Add(1))) }
			},
			choose:           negotiate,
			wantCE:           map[string]string{"identity": "identity", "gzip": "gzip", "br": "br"},
			identityHonoured: true,
			dynamic:          true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var host string
			body := func() []byte { return tt.body(host)() }
			origin := measureOrigin(t, body, tt.choose)
			host = strings.TrimPrefix(origin.URL, "http://")
			url := origin.URL + "/news/story.html"

			code, stdout, stderr := measureRun(t, "-url", url, "-runs", "1", "-format", "json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var rep measure.Report
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatal(err)
			}
			if len(rep.Fetches) != 1 || len(rep.Pages) != 1 {
				t.Fatalf("fetches %d pages %d", len(rep.Fetches), len(rep.Pages))
			}
			f := rep.Fetches[0]
			if f.IdentityHonoured != tt.identityHonoured || len(f.Responses) != 3 {
				t.Fatalf("fetch %+v", f)
			}
			var identitySize int64
			for _, r := range f.Responses {
				if r.ContentEncoding != tt.wantCE[r.AcceptEncoding] || r.Status != 200 || r.Error != "" {
					t.Errorf("asked %s: got %+v", r.AcceptEncoding, r)
				}
				if r.TransferBytes <= 0 || r.DecodedBytes <= 0 || r.TotalMS <= 0 || r.TTFBMS <= 0 || r.TTFBMS > r.TotalMS {
					t.Errorf("asked %s: sizes or times %+v", r.AcceptEncoding, r)
				}
				if r.AcceptEncoding == "identity" {
					identitySize = r.TransferBytes
				}
				if r.ContentEncoding != "identity" && r.TransferBytes >= r.DecodedBytes {
					t.Errorf("asked %s: compressed transfer %d not smaller than decoded %d", r.AcceptEncoding, r.TransferBytes, r.DecodedBytes)
				}
				sameWanted := !tt.dynamic || r.AcceptEncoding == "identity"
				if r.SameAsIdentity != sameWanted || (r.DifferingBytes > 0) == sameWanted {
					t.Errorf("asked %s: same %v differing %d", r.AcceptEncoding, r.SameAsIdentity, r.DifferingBytes)
				}
				if tt.dynamic && !sameWanted && r.DifferingBytes > 6 {
					t.Errorf("asked %s: %d bytes differ, want at most the 6 digits of the counter", r.AcceptEncoding, r.DifferingBytes)
				}
			}
			p := rep.Pages[0]
			if !p.Eligible || !rep.Summary.AllEquivalent || p.Path != "/news/story.html" || p.IdentityBytes != f.Responses[0].DecodedBytes {
				t.Errorf("guest modes on the fetched page: %+v", p)
			}
			if tt.identityHonoured && identitySize != p.IdentityBytes {
				t.Errorf("identity transfer %d, page %d", identitySize, p.IdentityBytes)
			}
			// The origin's own links were rewritten to the client-facing
			// host: the guest was set up for this origin.
			if p.Modes[measure.ModeIdentity].OutBytes <= p.IdentityBytes {
				t.Errorf("identity output %d bytes for a %d-byte page", p.Modes[measure.ModeIdentity].OutBytes, p.IdentityBytes)
			}

			// The table says so in words.
			code, table, _ := measureRun(t, "-url", url, "-runs", "1")
			if code != 0 {
				t.Fatalf("table: exit %d", code)
			}
			ignored := strings.Contains(table, "ignored Accept-Encoding: identity and sent gzip")
			if ignored == tt.identityHonoured {
				t.Errorf("identity note present %v, origin honoured identity %v:\n%s", ignored, tt.identityHonoured, table)
			}
			if tt.dynamic && !strings.Contains(table, "bytes differ") {
				t.Errorf("table does not report the difference:\n%s", table)
			}
		})
	}
}

func TestMeasureURLUnreachable(t *testing.T) {
	s := httptest.NewServer(http.NotFoundHandler())
	url := s.URL + "/"
	s.Close()
	for _, format := range []string{"table", "json"} {
		code, stdout, stderr := measureRun(t, "-url", url, "-runs", "1", "-format", format, "-timeout", "2s")
		if code != 1 || !strings.Contains(stderr, url) || !strings.Contains(stderr, "refused") {
			t.Fatalf("-format %s: exit %d, stderr %s", format, code, stderr)
		}
		// The error alone: no report of zeros, no summary claiming success.
		if stdout != "" || strings.Contains(stderr, "summary:") {
			t.Errorf("-format %s: a report was printed for no page:\nstdout: %s\nstderr: %s", format, stdout, stderr)
		}
	}
}

// measureDaemon is the daemon's client-facing handler (edge in front of the
// guest) for origin, served over loopback.
func measureDaemon(t *testing.T, originURL string, mutate func(*config.Config)) *httptest.Server {
	t.Helper()
	c := config.Defaults()
	c.Publisher.Domain = measureDomain
	c.Publisher.OriginURL = originURL
	c.Auction.Enabled = true
	c.CreativeOpportunities.Slots = []config.Slot{{ID: "top", PagePatterns: []string{"/**"}}}
	mutate(c)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	g, err := proxy.New(c, proxy.Options{Bundle: bundle.JS()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := server.ClientHandler(c, g)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// -proxy against a real daemon handler: both modes and both client codings
// are reported with the codings the daemon used.
func TestMeasureProxy(t *testing.T) {
	var host string
	origin := measureOrigin(t, func() []byte { return measurePage(host, "") }, negotiate)
	host = strings.TrimPrefix(origin.URL, "http://")
	front := measureDaemon(t, origin.URL, func(c *config.Config) {
		c.Debug.DiagnosticsHeaders = true
		c.Debug.AllowModeOverride = true
	})
	code, stdout, stderr := measureRun(t, "-proxy", front.URL, "-url", "/news/a.html?x=1", "-host", measureDomain, "-runs", "2", "-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct{ Daemon measure.DaemonReport }
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	type key struct{ mode, ae string }
	want := map[key]struct{ diag, output, delivery, delivered string }{
		{"identity", "br"}:   {"offload", "identity", "fastly-dynamic", "br"},
		{"identity", "gzip"}: {"offload", "identity", "fastly-dynamic", "gzip"},
		{"mirror", "br"}:     {"mirror", "br", "in-guest", "br"},
		{"mirror", "gzip"}:   {"mirror", "gzip", "in-guest", "gzip"},
	}
	rep := doc.Daemon
	if len(rep.Results) != len(want) || len(rep.Problems) != 0 {
		t.Fatalf("results %+v problems %q", rep.Results, rep.Problems)
	}
	var decoded int64
	for _, r := range rep.Results {
		w, ok := want[key{r.Mode, r.AcceptEncoding}]
		if !ok {
			t.Errorf("unexpected result %+v", r)
			continue
		}
		delete(want, key{r.Mode, r.AcceptEncoding})
		if r.Status != 200 || r.DiagMode != w.diag || r.OutputCoding != w.output || r.Delivery != w.delivery || r.DeliveredCoding != w.delivered {
			t.Errorf("%s/%s: %+v, want %+v", r.Mode, r.AcceptEncoding, r, w)
		}
		if r.Mode == "identity" && r.OriginAE != "identity" {
			t.Errorf("%s/%s: origin asked %q", r.Mode, r.AcceptEncoding, r.OriginAE)
		}
		if r.Mode == "mirror" && r.OriginCoding != r.AcceptEncoding {
			t.Errorf("%s/%s: origin coding %q", r.Mode, r.AcceptEncoding, r.OriginCoding)
		}
		if r.ProcessingMS <= 0 || r.TotalMS <= 0 || r.TTFBMS <= 0 || r.DeliveredBytes <= 0 || r.DeliveredBytes >= r.DecodedBytes {
			t.Errorf("%s/%s: times or sizes %+v", r.Mode, r.AcceptEncoding, r)
		}
		// Trusted Server's set is read: processed bytes are the origin body
		// as read, the identity page or its smaller coded form.
		if r.Headers != "x-ts-ssat" || !r.SameAsFirst {
			t.Errorf("%s/%s: headers %q, same %v", r.Mode, r.AcceptEncoding, r.Headers, r.SameAsFirst)
		}
		if page := int64(len(measurePage(host, ""))); (r.Mode == "identity" && r.ProcessedBytes != page) || (r.Mode == "mirror" && (r.ProcessedBytes <= 0 || r.ProcessedBytes >= page)) {
			t.Errorf("%s/%s: processed %d bytes, origin page %d", r.Mode, r.AcceptEncoding, r.ProcessedBytes, page)
		}
		decoded = r.DecodedBytes
	}
	if decoded <= int64(len(measurePage(host, ""))) {
		t.Errorf("decoded page %d bytes: the SSAT injection did not run", decoded)
	}

	code, table, _ := measureRun(t, "-proxy", front.URL, "-url", "/news/a.html", "-runs", "1")
	if code != 0 || !strings.Contains(table, "offload") || !strings.Contains(table, "in-guest") {
		t.Fatalf("table (exit %d):\n%s", code, table)
	}
}

// A daemon without the diagnostics, or a page it does not treat as SSAT,
// is not measured silently: the command says which settings must be on.
// The diagnostics alone are enough, since with them ssatd accepts
// Trusted Server's ?__ts_ssat_compression.
func TestMeasureProxyNeedsDebugSettings(t *testing.T) {
	origin := measureOrigin(t, func() []byte { return measurePage("x.example", "") }, negotiate)
	tests := []struct {
		name    string
		mutate  func(*config.Config)
		wantErr string
	}{
		{"no diagnostics", func(c *config.Config) {}, "with neither X-Ts-Ssat-Compression-Mode nor X-Ssatd-Compression-Mode"},
		{"not an SSAT page", func(c *config.Config) {
			c.Debug.DiagnosticsHeaders = true
			c.CreativeOpportunities.Slots[0].PagePatterns = []string{"/elsewhere/**"}
		}, "the override was ignored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			front := measureDaemon(t, origin.URL, tt.mutate)
			code, stdout, stderr := measureRun(t, "-proxy", front.URL, "-url", "/", "-runs", "1")
			if code != 1 || !strings.Contains(stderr, tt.wantErr) || !strings.Contains(stderr, "debug.diagnostics_headers = true") {
				t.Fatalf("exit %d, stderr:\n%s", code, stderr)
			}
			// Said once, with no table of what could not be measured.
			if n := strings.Count(stderr, "debug.diagnostics_headers"); n != 1 || stdout != "" {
				t.Errorf("advice given %d times, stdout %q; want once and no table", n, stdout)
			}
		})
	}
}

// upstreamLike is a small server speaking Trusted Server's measurement
// protocol as its Fastly staging build did (upstream issue #858): it
// answers ?__ts_ssat_compression=identity|mirror with the x-ts-ssat-*
// values observed there, all as response headers before the body, and
// compresses identity output per the client's Accept-Encoding as Fastly's
// dynamic compression would.
func upstreamLike(t *testing.T, page []byte) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		out := compress.Gzip
		switch r.URL.Query().Get("__ts_ssat_compression") {
		case "identity":
			h.Set("x-ts-ssat-compression-mode", "identity")
			h.Set("x-ts-ssat-delivery-compression", "fastly-dynamic")
			h.Set("x-ts-ssat-fastly-vcpu-ms", "19")
			h.Set("x-ts-ssat-origin-accept-encoding", "identity")
			h.Set("x-ts-ssat-origin-content-encoding", "identity")
			h.Set("x-ts-ssat-output-content-encoding", "identity")
			h.Set("x-ts-ssat-processed-bytes", "1365106")
			h.Set("x-ts-ssat-processing-ms", "9.045")
			out = negotiate(r.Header.Get("Accept-Encoding"))
		case "mirror":
			h.Set("x-ts-ssat-compression-mode", "mirror")
			h.Set("x-ts-ssat-delivery-compression", "in-guest")
			h.Set("x-ts-ssat-fastly-vcpu-ms", "47")
			h.Set("x-ts-ssat-origin-accept-encoding", "gzip, deflate, br")
			h.Set("x-ts-ssat-origin-content-encoding", "gzip")
			h.Set("x-ts-ssat-output-content-encoding", "gzip")
			h.Set("x-ts-ssat-processed-bytes", "178351")
			h.Set("x-ts-ssat-processing-ms", "44.630")
		}
		h.Set("Content-Encoding", string(out))
		_, _ = w.Write(measureEncode(t, out, page))
	}))
	t.Cleanup(s.Close)
	return s
}

// -proxy A,B,C measures deployments side by side in one run: a server
// speaking the upstream headers and ssatd twice. Each row carries that
// deployment's own figures, and the decoded pages are compared with the
// first deployment's.
func TestMeasureProxyComparesDeployments(t *testing.T) {
	var host string
	origin := measureOrigin(t, func() []byte { return measurePage(host, "") }, negotiate)
	host = strings.TrimPrefix(origin.URL, "http://")
	ssatd := measureDaemon(t, origin.URL, func(c *config.Config) { c.Debug.DiagnosticsHeaders = true })
	fastly := upstreamLike(t, measurePage("elsewhere.example", ""))
	code, stdout, stderr := measureRun(t, "-proxy", ssatd.URL+","+fastly.URL+","+ssatd.URL, "-url", "/news/a.html",
		"-host", measureDomain, "-runs", "1", "-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct{ Comparison measure.Comparison }
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Comparison
	if len(c.Deployments) != 3 {
		t.Fatalf("%d deployments", len(c.Deployments))
	}
	for i, d := range c.Deployments {
		if len(d.Results) != 4 {
			t.Fatalf("deployment %d: %d results", i, len(d.Results))
		}
		for _, r := range d.Results {
			if r.Headers != "x-ts-ssat" || r.Status != 200 || r.DecodedBytes <= 0 {
				t.Errorf("deployment %d %s/%s: %+v", i, r.Mode, r.AcceptEncoding, r)
			}
		}
	}
	for _, r := range c.Deployments[1].Results {
		want := map[string]struct {
			vcpu, proc float64
			bytes      int64
			out        string
		}{"identity": {19, 9.045, 1365106, "identity"}, "mirror": {47, 44.630, 178351, "gzip"}}[r.Mode]
		if r.VCPUMS != want.vcpu || r.ProcessingMS != want.proc || r.ProcessedBytes != want.bytes || r.OutputCoding != want.out || r.DiagMode != map[string]string{"identity": "offload", "mirror": "mirror"}[r.Mode] {
			t.Errorf("upstream-like %s/%s: %+v, want %+v", r.Mode, r.AcceptEncoding, r, want)
		}
	}
	for i, r := range c.Deployments[2].Results {
		if r.BodySHA256 != c.Deployments[0].Results[i].BodySHA256 || r.BodySHA256 == c.Deployments[1].Results[i].BodySHA256 {
			t.Errorf("row %d: page hashes %s, %s, %s; want the two ssatd runs alike and the other page different", i,
				c.Deployments[0].Results[i].BodySHA256, c.Deployments[1].Results[i].BodySHA256, r.BodySHA256)
		}
	}
	code, table, _ := measureRun(t, "-proxy", ssatd.URL+","+fastly.URL, "-url", "/news/a.html", "-host", measureDomain, "-runs", "1")
	if code != 0 || !strings.Contains(table, "[2] vCPU ms") || !strings.Contains(table, "differs") || !strings.Contains(table, "1,365,106") {
		t.Fatalf("table (exit %d):\n%s", code, table)
	}
}

// The daemon sends the page's guest CPU in a trailer; -proxy with one URL
// reports it, to the microsecond, in the table, the JSON and the CSV.
func TestMeasureProxyReportsGuestCPU(t *testing.T) {
	var host string
	origin := measureOrigin(t, func() []byte { return measurePage(host, "") }, negotiate)
	host = strings.TrimPrefix(origin.URL, "http://")
	front := measureDaemon(t, origin.URL, func(c *config.Config) {
		c.Debug.DiagnosticsHeaders = true
		c.Debug.AllowModeOverride = true
	})
	code, stdout, stderr := measureRun(t, "-proxy", front.URL, "-url", "/news/a.html", "-host", measureDomain, "-runs", "3", "-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Daemon struct {
			Results []struct {
				Mode           string   `json:"mode"`
				AcceptEncoding string   `json:"accept_encoding"`
				GuestCPUMS     *float64 `json:"guest_cpu_ms"`
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Daemon.Results) != 4 {
		t.Fatalf("results %+v", doc.Daemon.Results)
	}
	for _, r := range doc.Daemon.Results {
		if r.GuestCPUMS == nil || *r.GuestCPUMS <= 0 {
			t.Errorf("%s/%s: guest_cpu_ms %v, want the daemon's trailer", r.Mode, r.AcceptEncoding, r.GuestCPUMS)
		}
	}
	code, table, _ := measureRun(t, "-proxy", front.URL, "-url", "/news/a.html", "-host", measureDomain, "-runs", "1")
	lines := strings.Split(table, "\n")
	if code != 0 || len(lines) < 3 || !strings.HasSuffix(strings.TrimSpace(lines[1]), "guest CPU ms") {
		t.Fatalf("table has no guest CPU column (exit %d):\n%s", code, table)
	}
	for _, l := range lines[2:6] {
		f := strings.Fields(l)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err != nil || v <= 0 {
			t.Errorf("row %q: last column is not a guest CPU figure", l)
		}
	}
	code, csvOut, _ := measureRun(t, "-proxy", front.URL, "-url", "/news/a.html", "-host", measureDomain, "-runs", "1", "-format", "csv")
	if code != 0 || !strings.HasSuffix(strings.SplitN(csvOut, "\n", 2)[0], ",vcpu_ms,guest_cpu_ms") {
		t.Fatalf("csv header (exit %d):\n%s", code, csvOut)
	}
}

// With -url, an origin that answers Accept-Encoding: br with identity has no
// br of its own: its "origin br" size and the br modes are simulated, and
// the JSON, the table and a note line say so. deflate is never asked.
func TestMeasureURLMarksSimulatedBr(t *testing.T) {
	tests := []struct {
		name      string
		choose    func(string) compress.Coding
		simulated []string
	}{
		{"origin without br", func(ae string) compress.Coding {
			if ae == "gzip" {
				return compress.Gzip
			}
			return compress.Identity
		}, []string{"deflate", "br"}},
		{"negotiating origin", negotiate, []string{"deflate"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var host string
			origin := measureOrigin(t, func() []byte { return measurePage(host, "") }, tc.choose)
			host = strings.TrimPrefix(origin.URL, "http://")
			u := origin.URL + "/news/a.html"
			code, stdout, stderr := measureRun(t, "-url", u, "-runs", "1", "-format", "json")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var rep measure.Report
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatal(err)
			}
			p := rep.Pages[0]
			if strings.Join(p.SimulatedOrigin, ",") != strings.Join(tc.simulated, ",") {
				t.Errorf("simulated_origin_codings %q, want %q", p.SimulatedOrigin, tc.simulated)
			}
			for name, m := range p.Modes {
				if want := slices.Contains(tc.simulated, m.In); m.Simulated != want {
					t.Errorf("mode %s (in %s): simulated %v, want %v", name, m.In, m.Simulated, want)
				}
			}
			code, table, _ := measureRun(t, "-url", u, "-runs", "1")
			brSimulated := slices.Contains(tc.simulated, "br")
			note := regexp.MustCompile(`(?m)^note: ` + regexp.QuoteMeta(u) + `: origin ([a-z, ]+) and the modes starting from them are SIMULATED`).FindStringSubmatch(table)
			if code != 0 || note == nil || note[1] != strings.Join(tc.simulated, ", ") {
				t.Fatalf("no note naming %q (exit %d):\n%s", tc.simulated, code, table)
			}
			if got := strings.Contains(table, "Accept-Encoding: br with that coding"); got != brSimulated {
				t.Errorf("note blames br: %v, want %v:\n%s", got, brSimulated, table)
			}
			// The sizes row: identity, origin gzip, deflate, br, then the mirror outputs.
			row := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(u) + `((\s+[0-9,]+\*?){9})\s*$`).FindStringSubmatch(table)
			if row == nil {
				t.Fatalf("no sizes row:\n%s", table)
			}
			f := strings.Fields(row[1])
			for i, c := range map[int]string{1: "gzip", 2: "deflate", 3: "br", 4: "gzip", 5: "deflate", 6: "br"} {
				if got, want := strings.HasSuffix(f[i], "*"), slices.Contains(tc.simulated, c); got != want {
					t.Errorf("sizes column %d (%s) = %q: marked %v, want %v", i, c, f[i], got, want)
				}
			}
		})
	}
}
