package edge

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/ssatd/ssatd/internal/ssat"

	"github.com/ssatd/ssatd/internal/testutil"
)

// BenchmarkEdge times the edge layer alone: compressing an identity page,
// as the guest hands it over in offload mode, at the delivery defaults
// (br quality 1, gzip level 1). MB/s is of the identity page.
func BenchmarkEdge(b *testing.B) {
	dir := filepath.Dir(testutil.RequireCorpus(b)[0])
	for _, name := range []string{"yahoo-3.html", "guardian-1.html", "nytimes-5.html", "ars-1.html"} {
		page, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set(ssat.HintHeader, "on")
			for p := page; len(p) > 0; {
				n := min(len(p), 32<<10) // the guest's buffer size
				w.Write(p[:n])
				p = p[n:]
			}
		})
		e, err := New(inner, Options{GzipLevel: 1, BrotliQuality: 1})
		if err != nil {
			b.Fatal(err)
		}
		for _, ae := range []string{"br", "gzip"} {
			b.Run(fmt.Sprintf("page=%s/coding=%s", name[:len(name)-5], ae), func(b *testing.B) {
				req := httptest.NewRequest("GET", "/", nil)
				req.Header.Set("Accept-Encoding", ae)
				b.SetBytes(int64(len(page)))
				b.ReportAllocs()
				var out int
				for b.Loop() {
					rec := httptest.NewRecorder()
					e.ServeHTTP(rec, req)
					if rec.Header().Get("Content-Encoding") != ae {
						b.Fatalf("not compressed: %v", rec.Header())
					}
					out = rec.Body.Len()
				}
				b.ReportMetric(float64(out), "out-B/op")
			})
		}
	}
}
