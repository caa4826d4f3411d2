package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/measure"
)

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
