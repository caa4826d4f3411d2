package measure

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// offloadReport is two pages whose CPU figures make every total and
// median distinct: gzip mirror 3, gzip→identity 2, edge gzip 0.25 (page a)
// and 0.75 (page b).
func offloadReport() *Report {
	cpu := map[string]float64{ModeGzipMirror: 3, ModeBrMirror: 6, ModeGzipToIdentity: 2, ModeBrToIdentity: 2.5}
	a, b := pageWith("a.html", cpu), pageWith("b.html", cpu)
	b.DeliveredCPUMS = map[string]float64{"br": 1.5, "gzip": 0.75}
	rep := &Report{Settings: Settings{Runs: 1}, Pages: []PageResult{a, b}}
	rep.Summary = Summarize(rep.Pages)
	return rep
}

// TestEdgeTotalsAreReported catches a TOTAL row that showed 0.000 under
// the edge columns, a JSON summary with no edge total and a CSV with no
// edge CPU columns.
func TestEdgeTotalsAreReported(t *testing.T) {
	rep := offloadReport()
	s := rep.Summary
	if s.TotalDeliveredCPU["br"] != 2 || s.TotalDeliveredCPU["gzip"] != 1 {
		t.Fatalf("TotalDeliveredCPU = %v, want br 2 and gzip 1", s.TotalDeliveredCPU)
	}

	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	total := regexp.MustCompile(`(?m)^\s*TOTAL(\s+[0-9.]+){7}\s+2\.000\s+1\.000\s*$`)
	if !total.MatchString(table.String()) {
		t.Errorf("no CPU TOTAL row ending in edge br 2.000 and edge gzip 1.000:\n%s", table.String())
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Summary struct {
			TotalDeliveredCPU map[string]float64 `json:"total_delivered_cpu_ms"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil {
		t.Fatal(err)
	}
	if decoded.Summary.TotalDeliveredCPU["br"] != 2 || decoded.Summary.TotalDeliveredCPU["gzip"] != 1 {
		t.Errorf("JSON total_delivered_cpu_ms = %v", decoded.Summary.TotalDeliveredCPU)
	}

	var c bytes.Buffer
	if err := rep.WriteCSV(&c); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int {
		for i, h := range rows[0] {
			if h == name {
				return i
			}
		}
		t.Fatalf("CSV header %v lacks %s", rows[0], name)
		return -1
	}
	br, gz := col("delivered_br_cpu_ms"), col("delivered_gzip_cpu_ms")
	for _, row := range rows[1:] {
		want := map[string][2]string{"a.html": {"0.500", "0.250"}, "b.html": {"1.500", "0.750"}}[row[0]]
		if row[br] != want[0] || row[gz] != want[1] {
			t.Errorf("CSV row %v: edge CPU br %s gzip %s, want %v", row[:2], row[br], row[gz], want)
		}
	}
}

// TestOffloadIsSetBesideMirror: guest plus builtin edge is reported next
// to mirror, per page summed before the median, and the report says in
// words when offload saves CPU (external) and when it moves it (builtin).
func TestOffloadIsSetBesideMirror(t *testing.T) {
	rep := offloadReport()
	// Guest + edge per page, then the median over pages (identity 1 by
	// default). gzip: identity 1 + 0.25 and 1 + 0.75, median 1.5;
	// gzip_to_identity 2 + 0.25 and 2 + 0.75, median 2.5. br: identity
	// 1 + 0.5 and 1 + 1.5, median 2; br_to_identity 2.5 + 0.5 and
	// 2.5 + 1.5, median 3.5.
	want := map[string]float64{"identity+edge_gzip": 1.5, "gzip_to_identity+edge_gzip": 2.5,
		"identity+edge_br": 2, "br_to_identity+edge_br": 3.5}
	for k, v := range want {
		if got := rep.Summary.MedianBuiltinCPU[k]; got != v {
			t.Errorf("MedianBuiltinCPU[%s] = %v, want %v", k, got, v)
		}
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile(`(?m)^\s*(gzip|br)\s+(identity|gzip|br)\s+([0-9.]+)\s+([0-9.]+) \(([-+0-9]+%)\)\s+([0-9.]+) \(([-+0-9]+%)\)\s+[0-9,]+ vs [0-9,]+ \([-+0-9.]+%\)\s*$`).FindAllStringSubmatch(table.String(), -1)
	wantRows := [][]string{
		{"br", "identity", "6.000", "1.000", "-83%", "2.000", "-67%"},
		{"br", "br", "6.000", "2.500", "-58%", "3.500", "-42%"},
		{"gzip", "identity", "3.000", "1.000", "-67%", "1.500", "-50%"},
		{"gzip", "gzip", "3.000", "2.000", "-33%", "2.500", "-17%"},
	}
	if len(rows) != len(wantRows) {
		t.Fatalf("offload table has %d rows, want %d:\n%s", len(rows), len(wantRows), table.String())
	}
	for i, w := range wantRows {
		if got := rows[i][1:]; strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("offload row %d = %q, want %q", i, got, w)
		}
	}
	for _, want := range []string{
		"offload, builtin edge: guest + edge",
		`With platform.delivery_compression = "external" a CDN compresses`,
		`With "builtin" ssatd's own edge compresses in the same process: offload moves CPU from the guest to the edge`,
	} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}

	var svg bytes.Buffer
	if err := rep.WriteChart(&svg); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`data-series="builtin-cpu" data-key="identity+edge_gzip"`,
		`<title>gzip_to_identity + edge gzip (builtin): 2.500 ms</title>`,
		`<title>identity + edge br (builtin): 2.000 ms</title>`,
		`<title>br_to_identity + edge br (builtin): 3.500 ms</title>`,
	} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("chart lacks %s", want)
		}
	}
	// The mirror bar the builtin bars are set beside is the CPU panel's own.
	for _, m := range []string{ModeGzipMirror, ModeBrMirror} {
		if n := strings.Count(svg.String(), "<title>"+m+": "); n != 1 {
			t.Errorf("chart draws %s %d times, want once", m, n)
		}
	}
}

func TestGuessOriginKeepsThePort(t *testing.T) {
	tests := []struct {
		page, origin, from string
	}{
		{`<link rel="canonical" href="http://127.0.0.1:8000/article">`, "http://127.0.0.1:8000", originFromCanonical},
		{`<link rel=canonical href=https://News.Example/x>`, "https://news.example", originFromCanonical},
		{`<meta property="og:url" content="http://localhost:8000/">`, "http://localhost:8000", originFromOGURL},
		{`<p>no canonical link</p>`, fallbackOrigin, originFromFallback},
	}
	for _, tt := range tests {
		if origin, from := guessOrigin([]byte(tt.page)); origin != tt.origin || from != tt.from {
			t.Errorf("guessOrigin(%s) = %s, %s; want %s, %s", tt.page, origin, from, tt.origin, tt.from)
		}
	}
}

// TestMeasuredOriginIsReported: a demo page (origin 127.0.0.1:8000) is
// measured with its own links rewritten, and the report says which origin
// each page was measured against, and when it fell back.
func TestMeasuredOriginIsReported(t *testing.T) {
	const demo = `<html><head><link rel="canonical" href="http://127.0.0.1:8000/a"></head><body>` +
		`<a href="http://127.0.0.1:8000/b">b</a><div id="top"></div></body></html>`
	dir := pagesDir(t, map[string]string{"demo.html": demo, "plain.html": "<html><head></head><body>x</body></html>"})
	r := runMain(t, "-pages", dir, "-runs", "1", "-format", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range rep.Pages {
		got[p.Name] = p.Origin + " " + p.OriginFrom
	}
	if got["demo.html"] != "http://127.0.0.1:8000 canonical link" || got["plain.html"] != fallbackOrigin+" fallback" {
		t.Errorf("origins = %v", got)
	}
	// The report keeps no output, so the rewrite of the page's link to its
	// origin is checked on the guest measure builds for the page.
	m, err := newMeasurer(Options{Runs: 1, OriginGzipLevel: 6, OriginBrotliQuality: 5})
	if err != nil {
		t.Fatal(err)
	}
	g, _, _, _, err := m.setup(Page{Name: "demo.html", Path: "/demo.html", Body: []byte(demo)})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var out bytes.Buffer
	req := httptest.NewRequest(http.MethodGet, "/demo.html", nil)
	req.Host = DefaultDomain
	req.Header.Set("Sec-Fetch-Dest", "document")
	if _, err := g.Transform(&out, strings.NewReader(demo), "identity", "identity", req); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `href="http://`+DefaultDomain+`/b"`) {
		t.Errorf("the page's link to its origin was not rewritten:\n%s", out.String())
	}
	if !strings.Contains(r.stderr, "note: 1 page(s) with no canonical link or og:url (plain.html) were measured as if their origin were "+fallbackOrigin) {
		t.Errorf("stderr does not name exactly the fallback page:\n%s", r.stderr)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "origin http://127.0.0.1:8000 (from the canonical link): demo.html") {
		t.Errorf("table does not say which origin was used:\n%s", table.String())
	}
}

// The offload table sets offload's byte penalty beside its CPU change, per
// client coding, and a verdict line weighs the two by the rule of
// docs/measuring.md: it showed CPU only.
func TestOffloadVerdictWeighsCPUAndBytes(t *testing.T) {
	verdicts := []struct {
		name            string
		cpu, bytes      float64
		want            string
		delivered, outs int64 // per page, for the report case
	}{
		{"saves CPU, same bytes", -0.5, 0, VerdictOffload, 100, 100},
		{"saves CPU, bytes within tolerance", -0.5, 0.05, VerdictOffload, 105, 100},
		{"saves CPU, fewer bytes", -0.5, -0.1, VerdictOffload, 90, 100},
		{"saves more CPU than it adds bytes", -0.5, 0.2, VerdictTradeOff, 120, 100},
		{"adds more bytes than it saves CPU", -0.5, 0.8, VerdictMirror, 180, 100},
		{"saves no CPU", 0, -0.1, VerdictMirror, 90, 100},
	}
	for _, v := range verdicts {
		t.Run(v.name, func(t *testing.T) {
			if got := verdict(v.cpu, v.bytes); got != v.want {
				t.Errorf("verdict(%v, %v) = %s, want %s", v.cpu, v.bytes, got, v.want)
			}
			if v.cpu != -0.5 {
				return
			}
			// The same case through a report: identity CPU is half of
			// each mirror's, the bytes as given, on two pages.
			cpu := map[string]float64{ModeIdentity: 1, ModeGzipMirror: 2, ModeBrMirror: 2}
			var pages []PageResult
			for _, n := range []string{"a", "b"} {
				p := pageWith(n, cpu)
				p.DeliveredBytes = map[string]int64{"br": v.delivered, "gzip": v.delivered}
				for _, m := range []string{ModeGzipMirror, ModeBrMirror} {
					mr := p.Modes[m]
					mr.OutBytes = v.outs
					p.Modes[m] = mr
				}
				pages = append(pages, p)
			}
			rep := &Report{Settings: Settings{Runs: 1}, Pages: pages}
			rep.Summary = Summarize(pages)
			if got := rep.Summary.OffloadVerdict["br"]; got != v.want {
				t.Errorf("summary verdict br = %q, want %s", got, v.want)
			}
			var table bytes.Buffer
			if err := rep.WriteTable(&table); err != nil {
				t.Fatal(err)
			}
			pct := fmt.Sprintf("%+.1f%%", (float64(v.delivered)/float64(v.outs)-1)*100)
			cell := fmt.Sprintf("%d vs %d (%s)", 2*v.delivered, 2*v.outs, pct)
			for _, c := range []string{"br", "gzip"} {
				row := regexp.MustCompile(`(?m)^\s*` + c + `\s+identity\s.*\s` + regexp.QuoteMeta(cell) + `\s*$`)
				if !row.MatchString(table.String()) {
					t.Errorf("no %s offload row ending in %q:\n%s", c, cell, table.String())
				}
			}
			line := fmt.Sprintf("br: %s (guest CPU -50%%, bytes %s); gzip: %s (guest CPU -50%%, bytes %s)", strings.ToUpper(v.want), pct, strings.ToUpper(v.want), pct)
			if !regexp.MustCompile(`(?m)^verdict over 2 pages, .*` + regexp.QuoteMeta(line) + `$`).MatchString(table.String()) {
				t.Errorf("no verdict line ending %q:\n%s", line, table.String())
			}
		})
	}
}
