package measure

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
