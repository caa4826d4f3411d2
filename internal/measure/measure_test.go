package measure

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/cputime"
)

// testPage is a small page naming its own host, so that the URL rules and
// the SSAT injection both have work to do. n repeats a paragraph to vary
// the size.
func testPage(n int) string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title>` +
		`<link rel="canonical" href="https://news.example/story"><link rel="stylesheet" href="https://news.example/s.css"></head><body>`)
	for i := range n {
		fmt.Fprintf(&b, `<p id="p%d">Paragraph %d with <a href="https://news.example/a/%d">a link</a> and text.</p>`+"\n", i, i, i)
	}
	b.WriteString(`<div id="top"></div></body></html>`)
	return b.String()
}

// pagesDir writes pages into a fresh folder.
func pagesDir(t *testing.T, pages map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range pages {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type cmdResult struct {
	code           int
	stdout, stderr string
}

func runMain(t *testing.T, args ...string) cmdResult {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &out, &errb, nil)
	return cmdResult{code, out.String(), errb.String()}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want float64
	}{
		{"empty", nil, 0},
		{"one", []float64{3}, 3},
		{"odd unsorted", []float64{5, 1, 3}, 3},
		{"even: mean of the middle two", []float64{4, 1, 3, 2}, 2.5},
		{"even two", []float64{1, 10}, 5.5},
		{"odd with duplicates", []float64{7, 7, 1, 9, 7}, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.in...)
			if got := Median(in); got != tt.want {
				t.Fatalf("Median(%v) = %v, want %v", tt.in, got, tt.want)
			}
			for i := range in {
				if in[i] != tt.in[i] {
					t.Fatalf("Median reordered its input: %v", in)
				}
			}
		})
	}
}

// page builds a PageResult with the given CPU per mode (the other modes 1 ms).
func pageWith(name string, cpu map[string]float64, failures ...string) PageResult {
	p := PageResult{Name: name, IdentityBytes: 100, OriginBytes: map[string]int64{"gzip": 30, "br": 20, "deflate": 29},
		Modes: map[string]ModeResult{}, DeliveredBytes: map[string]int64{"br": 25, "gzip": 28},
		DeliveredCPUMS: map[string]float64{"br": 0.5, "gzip": 0.25}, Failures: failures}
	for _, n := range ModeNames() {
		v, ok := cpu[n]
		if !ok {
			v = 1
		}
		p.Modes[n] = ModeResult{CPUMS: v, WallMS: 2 * v, OutBytes: 10, Equivalent: len(failures) == 0}
	}
	return p
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name                    string
		pages                   []PageResult
		wantMirror, wantOffload float64
		wantIdentity            float64
		wantOffloadRatio        float64
		wantIdentityRatio       float64
		wantEquivalent          bool
		wantTotalMirror         float64
	}{
		{
			name: "odd page count",
			pages: []PageResult{
				pageWith("a", map[string]float64{ModeGzipMirror: 10, ModeGzipToIdentity: 4, ModeIdentity: 2}),
				pageWith("b", map[string]float64{ModeGzipMirror: 20, ModeGzipToIdentity: 5, ModeIdentity: 1}),
				pageWith("c", map[string]float64{ModeGzipMirror: 40, ModeGzipToIdentity: 9, ModeIdentity: 3}),
			},
			wantMirror: 20, wantOffload: 5, wantIdentity: 2, wantOffloadRatio: 0.25, wantIdentityRatio: 0.1,
			wantEquivalent: true, wantTotalMirror: 70,
		},
		{
			name: "even page count, one failure",
			pages: []PageResult{
				pageWith("a", map[string]float64{ModeGzipMirror: 10, ModeGzipToIdentity: 2, ModeIdentity: 1}),
				pageWith("b", map[string]float64{ModeGzipMirror: 30, ModeGzipToIdentity: 6, ModeIdentity: 3}, "br_mirror: broken"),
			},
			wantMirror: 20, wantOffload: 4, wantIdentity: 2, wantOffloadRatio: 0.2, wantIdentityRatio: 0.1,
			wantEquivalent: false, wantTotalMirror: 40,
		},
		{
			name: "no gzip_mirror CPU: ratios are 0, not NaN",
			pages: []PageResult{
				pageWith("a", map[string]float64{ModeGzipMirror: 0, ModeGzipToIdentity: 2}),
			},
			wantMirror: 0, wantOffload: 2, wantIdentity: 1, wantOffloadRatio: 0, wantIdentityRatio: 0,
			wantEquivalent: true, wantTotalMirror: 0,
		},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Summarize(tt.pages)
			if s.Pages != len(tt.pages) {
				t.Errorf("pages %d, want %d", s.Pages, len(tt.pages))
			}
			if !near(s.MedianCPUMS[ModeGzipMirror], tt.wantMirror) || !near(s.MedianCPUMS[ModeGzipToIdentity], tt.wantOffload) || !near(s.MedianCPUMS[ModeIdentity], tt.wantIdentity) {
				t.Errorf("medians %v", s.MedianCPUMS)
			}
			if !near(s.MedianWallMS[ModeGzipMirror], 2*tt.wantMirror) {
				t.Errorf("median wall %v", s.MedianWallMS)
			}
			if !near(s.OffloadCPURatio, tt.wantOffloadRatio) || !near(s.IdentityCPURatio, tt.wantIdentityRatio) {
				t.Errorf("ratios offload %v identity %v, want %v %v", s.OffloadCPURatio, s.IdentityCPURatio, tt.wantOffloadRatio, tt.wantIdentityRatio)
			}
			if s.AllEquivalent != tt.wantEquivalent || (len(s.Failures) == 0) != tt.wantEquivalent {
				t.Errorf("all equivalent %v, failures %q", s.AllEquivalent, s.Failures)
			}
			if !near(s.TotalCPUMS[ModeGzipMirror], tt.wantTotalMirror) {
				t.Errorf("total gzip_mirror CPU %v, want %v", s.TotalCPUMS[ModeGzipMirror], tt.wantTotalMirror)
			}
			n := int64(len(tt.pages))
			if s.TotalIdentityBytes != 100*n || s.TotalOriginBytes["br"] != 20*n || s.TotalDeliveredBytes["gzip"] != 28*n || s.TotalOutBytes[ModeBrMirror] != 10*n {
				t.Errorf("byte totals %+v", s)
			}
			if _, err := json.Marshal(s); err != nil {
				t.Errorf("summary does not marshal: %v", err)
			}
		})
	}
}

func TestDifferingBytes(t *testing.T) {
	tests := []struct {
		a, b string
		want int64
	}{
		{"same", "same", 0},
		{"abcXdef", "abcYdef", 1},
		{"abcdef", "abcXYZdef", 3},
		{"", "abc", 3},
		{"abc", "abd", 1},
		{"xbc", "abc", 1},
		{"aaaa", "aa", 2},
	}
	for _, tt := range tests {
		if got := differingBytes([]byte(tt.a), []byte(tt.b)); got != tt.want {
			t.Errorf("differingBytes(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestOverrideURL(t *testing.T) {
	tests := []struct {
		proxy, path, mode, want string
		wantErr                 bool
	}{
		{"http://127.0.0.1:8080", "/a/b.html", "identity", "http://127.0.0.1:8080/a/b.html?__ts_ssat_compression=identity", false},
		{"http://127.0.0.1:8080/", "a?x=1", "mirror", "http://127.0.0.1:8080/a?__ts_ssat_compression=mirror&x=1", false},
		{"http://h/base", "/p", "mirror", "http://h/base/p?__ts_ssat_compression=mirror", false},
		{"127.0.0.1:8080", "/", "mirror", "", true},
	}
	for _, tt := range tests {
		got, err := overrideURL(tt.proxy, tt.path, tt.mode)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("overrideURL(%q, %q, %q) = %q, %v; want %q (error %v)", tt.proxy, tt.path, tt.mode, got, err, tt.want, tt.wantErr)
		}
	}
}

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

// A mode whose output does not decode to the identity output makes the
// command exit 1 and name the page and the mode.
func TestEquivalenceFailure(t *testing.T) {
	tests := []struct {
		name     string
		mode     string
		damage   func(call int, out []byte) []byte // call 0 is the warm-up
		wantCode int
	}{
		{"no damage", "", nil, 0},
		{"br_mirror truncated", ModeBrMirror, func(_ int, b []byte) []byte { return b[:len(b)-3] }, 1},
		{"gzip_to_identity one byte changed", ModeGzipToIdentity, func(_ int, b []byte) []byte {
			c := bytes.Clone(b)
			c[len(c)/2] ^= 0x20
			return c
		}, 1},
		{"deflate_mirror extra byte", ModeDeflateMirror, func(_ int, b []byte) []byte { return append(bytes.Clone(b), 'x') }, 1},
		{"br_mirror damaged in the second timed run only", ModeBrMirror, func(call int, b []byte) []byte {
			if call == 2 {
				return b[:len(b)/2]
			}
			return b
		}, 1},
		{"identity differs in a timed run", ModeIdentity, func(call int, b []byte) []byte {
			if call == 1 {
				return append(bytes.Clone(b), ' ')
			}
			return b
		}, 1},
		// Encoded bytes may legitimately differ between runs (a latency
		// flush at another point); the decoded page is what counts.
		{"gzip_mirror encoded differently in timed runs", ModeGzipMirror, func(call int, b []byte) []byte {
			if call == 0 {
				return b
			}
			plain, err := decodeAll("gzip", b)
			if err != nil {
				panic(err)
			}
			re, err := compress.Encode(compress.Gzip, plain, compressOptions(1))
			if err != nil || bytes.Equal(re, b) {
				panic("re-encoding did not change the bytes")
			}
			return re
		}, 0},
	}
	dir := pagesDir(t, map[string]string{"good.html": testPage(3), "victim.html": testPage(30)})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.damage != nil {
				calls := 0
				corruptHook = func(page, mode string, out []byte) []byte {
					if page == "victim.html" && mode == tt.mode {
						calls++
						return tt.damage(calls-1, out)
					}
					return out
				}
				t.Cleanup(func() { corruptHook = nil })
			}
			r := runMain(t, "-pages", dir, "-runs", "2", "-format", "json")
			if r.code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, tt.wantCode, r.stderr)
			}
			var rep Report
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Summary.AllEquivalent != (tt.wantCode == 0) {
				t.Fatalf("all_equivalent %v", rep.Summary.AllEquivalent)
			}
			if tt.wantCode == 0 {
				return
			}
			if !strings.Contains(r.stderr, "NOT EQUIVALENT: victim.html: "+tt.mode+":") {
				t.Fatalf("stderr does not name the page and mode:\n%s", r.stderr)
			}
			if strings.Contains(r.stderr, "good.html") {
				t.Fatalf("stderr blames the undamaged page:\n%s", r.stderr)
			}
			for _, p := range rep.Pages {
				eq := p.Modes[tt.mode].Equivalent
				if eq != (p.Name == "good.html") {
					t.Errorf("%s: %s equivalent = %v", p.Name, tt.mode, eq)
				}
			}
		})
	}
}

// The chart is valid XML with a labelled bar for every mode, ordered as
// the modes are, scaled to the values, with an axis and units.
func TestChart(t *testing.T) {
	cpu := map[string]float64{ModeIdentity: 1, ModeGzipMirror: 8, ModeDeflateMirror: 9, ModeBrMirror: 12,
		ModeGzipToIdentity: 2, ModeDeflateToIdentity: 2.5, ModeBrToIdentity: 3}
	rep := &Report{Settings: Settings{Runs: 3}, Pages: []PageResult{pageWith("a", cpu), pageWith("b", cpu)}}
	rep.Summary = Summarize(rep.Pages)
	var buf bytes.Buffer
	if err := rep.WriteChart(&buf); err != nil {
		t.Fatal(err)
	}
	type rect struct {
		Series string  `xml:"data-series,attr"`
		Key    string  `xml:"data-key,attr"`
		Class  string  `xml:"class,attr"`
		Width  float64 `xml:"width,attr"`
		Y      float64 `xml:"y,attr"`
	}
	var rects []rect
	texts := map[string][]string{} // class → contents
	dec := xml.NewDecoder(&buf)
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("chart is not valid XML: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = se.Name.Local
		}
		switch se.Name.Local {
		case "rect":
			var r rect
			if err := dec.DecodeElement(&r, &se); err != nil {
				t.Fatal(err)
			}
			if r.Class == "bar" {
				rects = append(rects, r)
			}
		case "text":
			var s struct {
				Class string `xml:"class,attr"`
				Body  string `xml:",chardata"`
			}
			if err := dec.DecodeElement(&s, &se); err != nil {
				t.Fatal(err)
			}
			texts[s.Class] = append(texts[s.Class], s.Body)
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q", root)
	}
	var cpuBars []rect
	for _, r := range rects {
		if r.Series == "cpu" {
			cpuBars = append(cpuBars, r)
		}
	}
	if len(cpuBars) != len(Modes) {
		t.Fatalf("%d CPU bars, want %d", len(cpuBars), len(Modes))
	}
	for i, m := range ModeNames() {
		b := cpuBars[i]
		if b.Key != m {
			t.Errorf("bar %d is %q, want %q (mode order)", i, b.Key, m)
		}
		if i > 0 && b.Y <= cpuBars[i-1].Y {
			t.Errorf("bar %s is not below the previous bar", m)
		}
		// Widths are proportional to the values.
		want := cpu[m] / cpu[ModeBrMirror] * cpuBars[3].Width
		if math.Abs(b.Width-want) > 0.05 {
			t.Errorf("bar %s width %.2f, want %.2f", m, b.Width, want)
		}
		if !contains(texts["label"], m) {
			t.Errorf("no label %q in %q", m, texts["label"])
		}
		if !contains(texts["value"], strconv.FormatFloat(cpu[m], 'f', 3, 64)+" ms") {
			t.Errorf("no value label for %s in %q", m, texts["value"])
		}
	}
	series := map[string]int{}
	for _, r := range rects {
		series[r.Series]++
	}
	if series["edge-cpu"] != 2 || series["bytes"] < 7 {
		t.Errorf("bars per series %v", series)
	}
	if len(texts["title"]) != 1 || len(texts["panel-title"]) != 2 || len(texts["unit"]) != 2 || len(texts["tick-label"]) < 4 {
		t.Errorf("title, panel titles, units or ticks missing: %v", texts)
	}
	if !strings.Contains(strings.Join(texts["unit"], "|"), "ms") || !strings.Contains(strings.Join(texts["unit"], "|"), "kB") {
		t.Errorf("units %q", texts["unit"])
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
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

func TestGroup(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1285977: "1,285,977", -1234: "-1,234"} {
		if got := group(in); got != want {
			t.Errorf("group(%d) = %q, want %q", in, got, want)
		}
	}
}

func compressOptions(level int) compress.Options {
	return compress.Options{GzipLevel: level, BrotliQuality: 1, BrotliWindow: 22}
}
