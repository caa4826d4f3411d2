package measure

import (
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/cputime"
)

// The JSON report has the documented shape, and the numbers in it are the
// measured ones (eligible pages, rewritten output, real compression).
func TestJSONShape(t *testing.T) {
	dir := pagesDir(t, map[string]string{"one.html": testPage(40), "two.html": testPage(5)})
	r := runMain(t, "-pages", dir, "-runs", "2", "-format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	pages, ok := doc["pages"].([]any)
	if !ok || len(pages) != 2 {
		t.Fatalf("pages: %v", doc["pages"])
	}
	for _, pg := range pages {
		p := pg.(map[string]any)
		name, _ := p["name"].(string)
		for _, k := range []string{"name", "identity_bytes", "origin_bytes", "modes", "delivered_bytes"} {
			if _, ok := p[k]; !ok {
				t.Errorf("%s: page lacks %q", name, k)
			}
		}
		if p["eligible"] != true {
			t.Errorf("%s: not eligible: the SSAT injection did not run", name)
		}
		origin := p["origin_bytes"].(map[string]any)
		ident := p["identity_bytes"].(float64)
		for _, c := range []string{"gzip", "deflate", "br"} {
			v, ok := origin[c].(float64)
			if !ok || v <= 0 || (name == "one.html" && v >= ident) {
				t.Errorf("%s: origin_bytes.%s = %v (identity %v)", name, c, origin[c], ident)
			}
		}
		modes := p["modes"].(map[string]any)
		for _, m := range ModeNames() {
			mr, ok := modes[m].(map[string]any)
			if !ok {
				t.Errorf("%s: no mode %s", name, m)
				continue
			}
			for _, k := range []string{"wall_ms", "cpu_ms", "out_bytes", "equivalent"} {
				if _, ok := mr[k]; !ok {
					t.Errorf("%s: %s lacks %q", name, m, k)
				}
			}
			if mr["equivalent"] != true || mr["out_bytes"].(float64) <= 0 || mr["wall_ms"].(float64) <= 0 {
				t.Errorf("%s: %s = %v", name, m, mr)
			}
			if cputime.Clock != "unavailable" && mr["cpu_ms"].(float64) <= 0 {
				t.Errorf("%s: %s cpu_ms = %v", name, m, mr["cpu_ms"])
			}
		}
		// The guest rewrote and injected: identity output is larger
		// than the page.
		if out := modes[ModeIdentity].(map[string]any)["out_bytes"].(float64); out <= ident {
			t.Errorf("%s: identity output %v bytes, page %v: nothing injected", name, out, ident)
		}
		del := p["delivered_bytes"].(map[string]any)
		for _, c := range []string{"br", "gzip"} {
			if v, ok := del[c].(float64); !ok || v <= 0 {
				t.Errorf("%s: delivered_bytes.%s = %v", name, c, del[c])
			}
		}
	}
	sum, ok := doc["summary"].(map[string]any)
	if !ok {
		t.Fatalf("no summary")
	}
	for _, k := range []string{"pages", "all_equivalent", "median_cpu_ms", "offload_cpu_ratio", "identity_cpu_ratio"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary lacks %q", k)
		}
	}
	if sum["pages"] != 2.0 || sum["all_equivalent"] != true {
		t.Errorf("summary %v", sum)
	}
	med := sum["median_cpu_ms"].(map[string]any)
	for _, m := range ModeNames() {
		if _, ok := med[m]; !ok {
			t.Errorf("median_cpu_ms lacks %s", m)
		}
	}
	if cputime.Clock != "unavailable" {
		want := med[ModeGzipToIdentity].(float64) / med[ModeGzipMirror].(float64)
		if got := sum["offload_cpu_ratio"].(float64); math.Abs(got-want) > 1e-9 {
			t.Errorf("offload_cpu_ratio %v, want %v", got, want)
		}
	}
}

// CSV: a header and one row per page and mode; -chart writes a file next
// to it.
func TestCSVRowsAndChartFile(t *testing.T) {
	tests := []struct {
		name  string
		pages map[string]string
	}{
		{"one page", map[string]string{"a.html": testPage(2)}},
		{"three pages", map[string]string{"a.html": testPage(2), "b.html": testPage(8), "c.html": "<p>no head at all"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := pagesDir(t, tt.pages)
			chart := filepath.Join(t.TempDir(), "c.svg")
			out := filepath.Join(t.TempDir(), "r.csv")
			r := runMain(t, "-pages", dir, "-runs", "1", "-format", "csv", "-out", out, "-chart", chart)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("with -out, stdout should be empty: %q", r.stdout)
			}
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rows, err := csv.NewReader(f).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1+len(tt.pages)*len(Modes) {
				t.Fatalf("%d rows, want 1 + %d×%d", len(rows), len(tt.pages), len(Modes))
			}
			if strings.Join(rows[0], ",") != strings.Join(csvHeader, ",") {
				t.Errorf("header %v", rows[0])
			}
			seen := map[string]bool{}
			for _, row := range rows[1:] {
				if len(row) != len(csvHeader) {
					t.Fatalf("row %v has %d fields", row, len(row))
				}
				seen[row[0]+"/"+row[1]] = true
				if row[10] != "true" {
					t.Errorf("row %v not equivalent", row)
				}
			}
			for name := range tt.pages {
				for _, m := range ModeNames() {
					if !seen[name+"/"+m] {
						t.Errorf("no row for %s %s", name, m)
					}
				}
			}
			svg, err := os.ReadFile(chart)
			if err != nil {
				t.Fatal(err)
			}
			if err := xml.Unmarshal(svg, new(struct{})); err != nil {
				t.Fatalf("chart file is not XML: %v", err)
			}
			if !strings.Contains(r.stderr, "summary: ") {
				t.Errorf("stderr lacks the summary line: %q", r.stderr)
			}
		})
	}
}

// The table lists every page and mode, the totals and the summary line.
func TestTable(t *testing.T) {
	dir := pagesDir(t, map[string]string{"alpha.html": testPage(10), "beta.html": testPage(1)})
	r := runMain(t, "-pages", dir, "-runs", "1")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"alpha.html", "beta.html", "gzip→identity", "br mirror", "delivered br", "MEDIAN", "TOTAL",
		"summary: 2 pages, all outputs equivalent", "offload_cpu_ratio"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.stderr != "" {
		t.Errorf("stderr not silent when it is not a terminal: %q", r.stderr)
	}
}
