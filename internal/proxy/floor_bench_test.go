package proxy

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/ssatd/ssatd/internal/compress"
)

// BenchmarkCodecFloor sets the guest against what its codecs alone cost, on
// every corpus page in one run (P1b, P2 and P3 of BENCHMARKS.md): Transform
// in identity and in gzip mirror mode, a bare klauspost gzip decode of the
// origin's level-6 body plus a level-6 encode of the page, and a bare
// bytes.IndexByte scan of the pages for '<'. Each phase's best thread CPU
// time over the iterations is reported, as ratios.
func BenchmarkCodecFloor(b *testing.B) {
	type page struct {
		g      *Guest
		req    *http.Request
		html   []byte
		gzBody []byte
	}
	var pages []page
	for _, name := range sortedNames(corpusPages(b)) {
		html := corpusPages(b)[name]
		req := httptest.NewRequest(http.MethodGet, "/"+name, nil)
		req.Host = testDomain
		req.Header.Set("Sec-Fetch-Dest", "document")
		pages = append(pages, page{benchGuest(b, pageHost(html)), req, html, encode(b, compress.Gzip, html)})
	}
	var out countingDiscard
	var r bytes.Reader
	transform := func(in compress.Coding, body func(page) []byte) func() {
		return func() {
			for _, p := range pages {
				r.Reset(body(p))
				if _, err := p.g.Transform(&out, &r, in, in, p.req); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	zr := new(gzip.Reader)
	zw, _ := gzip.NewWriterLevel(io.Discard, 6)
	bare := func() {
		for _, p := range pages {
			r.Reset(p.gzBody)
			if err := zr.Reset(&r); err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, zr); err != nil {
				b.Fatal(err)
			}
			zw.Reset(io.Discard)
			if _, err := zw.Write(p.html); err != nil {
				b.Fatal(err)
			}
			if err := zw.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
	var lts int
	scan := func() {
		for _, p := range pages {
			for i := 0; ; lts++ {
				j := bytes.IndexByte(p.html[i:], '<')
				if j < 0 {
					break
				}
				i += j + 1
			}
		}
	}
	phases := []func(){
		bare,
		transform(compress.Identity, func(p page) []byte { return p.html }),
		transform(compress.Gzip, func(p page) []byte { return p.gzBody }),
		scan,
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := make([]time.Duration, len(phases))
	for b.Loop() {
		for k, phase := range phases {
			c := threadCPU()
			phase()
			if d := threadCPU() - c; best[k] == 0 || d < best[k] {
				best[k] = d
			}
		}
	}
	b.ReportMetric(float64(best[1])/float64(best[2]), "identity/gzip_mirror")
	b.ReportMetric(float64(best[2])/float64(best[0]), "gzip_mirror/bare_codecs")
	b.ReportMetric(float64(best[1])/float64(best[3]), "identity/scan")
	b.ReportMetric(float64(best[0])/1e6, "bare-cpu-ms")
	b.ReportMetric(float64(best[3])/1e6, "scan-cpu-ms")
	b.ReportMetric(float64(best[1])/1e6, "identity-cpu-ms")
	b.ReportMetric(float64(best[2])/1e6, "gzip_mirror-cpu-ms")
	if lts == 0 {
		b.Fatal("the scan found no '<' in the corpus")
	}
}
