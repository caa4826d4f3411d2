package rewrite

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ssatd/ssatd/internal/ssat"
)

// benchPage is a corpus page with the options of an eligible navigation:
// URL rewriting of the page's own host and the SSAT injections.
type benchPage struct {
	body []byte
	opts *Options
}

func benchCorpus(b *testing.B) ([]benchPage, int64) {
	dir := os.Getenv("SSATD_CORPUS")
	if dir == "" {
		b.Skip("SSATD_CORPUS is not set: the benchmark needs a folder of HTML pages (CI uses ../shared/corpus)")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.html"))
	if len(files) == 0 {
		b.Fatalf("no pages in %s", dir)
	}
	slots, err := AdSlotsScript([]ssat.Slot{{ID: "top", Formats: [][]int{{728, 90}}}})
	if err != nil {
		b.Fatal(err)
	}
	bids, err := BidsScript(map[string]ssat.Bid{"top": {}})
	if err != nil {
		b.Fatal(err)
	}
	head := append(slots, BundleTag("0123456789abcdef")...)
	var pages []benchPage
	var total int64
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		host := "absent.invalid"
		if m := canonicalHost.FindSubmatch(body); m != nil {
			host = string(m[1])
		}
		pages = append(pages, benchPage{body, &Options{
			OriginHost: host, RequestHost: "www.pub.example", RequestScheme: "https",
			HeadPrepend: head, BodyEnd: func() []byte { return bids },
		}})
		total += int64(len(body))
	}
	return pages, total
}

// scanLT is the floor of P1 (BENCHMARKS.md): a bare bytes.IndexByte scan
// for '<' over the page.
func scanLT(p []byte) int {
	n := 0
	for i := 0; ; n++ {
		j := bytes.IndexByte(p[i:], '<')
		if j < 0 {
			return n
		}
		i += j + 1
	}
}

type discard struct{ n int64 }

func (d *discard) Write(p []byte) (int, error) { d.n += int64(len(p)); return len(p), nil }

func rewriteAll(b *testing.B, pages []benchPage, f func(dst *discard, src *bytes.Reader, o *Options) (Stats, error)) {
	var out discard
	var r bytes.Reader
	for _, p := range pages {
		r.Reset(p.body)
		if _, err := f(&out, &r, p.opts); err != nil {
			b.Fatal(err)
		}
	}
}

func scanner2(dst *discard, src *bytes.Reader, o *Options) (Stats, error) {
	return Rewrite(dst, src, o)
}
func reference(dst *discard, src *bytes.Reader, o *Options) (Stats, error) {
	return referenceRewrite(dst, src, o)
}

// BenchmarkCorpus rewrites every corpus page, identity in and out, with the
// SSAT injection, and scans the same bytes for '<'. One op is the whole
// corpus. The ratio sub-benchmark times all three in each iteration, so that
// P1 (rewrite/scan) comes from one run on a busy machine.
func BenchmarkCorpus(b *testing.B) {
	pages, total := benchCorpus(b)
	b.Run("impl=scan", func(b *testing.B) {
		b.SetBytes(total)
		for b.Loop() {
			for _, p := range pages {
				scanLT(p.body)
			}
		}
	})
	b.Run("impl=rewrite", func(b *testing.B) {
		b.SetBytes(total)
		b.ReportAllocs()
		for b.Loop() {
			rewriteAll(b, pages, scanner2)
		}
	})
	b.Run("impl=reference", func(b *testing.B) {
		b.SetBytes(total)
		b.ReportAllocs()
		for b.Loop() {
			rewriteAll(b, pages, reference)
		}
	})
	b.Run("impl=ratio", func(b *testing.B) {
		var scan, rw, ref time.Duration
		for b.Loop() {
			t0 := time.Now()
			for _, p := range pages {
				scanLT(p.body)
			}
			t1 := time.Now()
			rewriteAll(b, pages, scanner2)
			t2 := time.Now()
			rewriteAll(b, pages, reference)
			t3 := time.Now()
			scan, rw, ref = scan+t1.Sub(t0), rw+t2.Sub(t1), ref+t3.Sub(t2)
		}
		b.ReportMetric(float64(rw)/float64(scan), "rewrite/scan")
		b.ReportMetric(float64(ref)/float64(scan), "reference/scan")
		b.ReportMetric(float64(total)/1e6/rw.Seconds()*float64(b.N), "rewrite-MB/s")
	})
}
