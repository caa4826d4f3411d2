package proxy

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
)

// BenchmarkTransformIdentity runs Guest.Transform in identity mode (the
// offload page: identity in, identity out) over every corpus page per op,
// and over the ten smallest, where what a page costs before and after its
// bytes (exchange, rewrite options, buffers, writers) shows most. Profile
// it with -cpuprofile / -memprofile to see the per-page setup.
func BenchmarkTransformIdentity(b *testing.B) {
	pages := corpusPages(b)
	names := sortedNames(pages)
	bySize := slices.Clone(names)
	slices.SortFunc(bySize, func(a, c string) int { return len(pages[a]) - len(pages[c]) })
	for _, set := range []struct {
		name  string
		pages []string
	}{{"corpus", names}, {"small10", bySize[:10]}} {
		b.Run("pages="+set.name, func(b *testing.B) {
			g := benchGuest(b, "")
			reqs := make([]*http.Request, len(set.pages))
			var size int64
			for i, n := range set.pages {
				reqs[i] = httptest.NewRequest(http.MethodGet, "/"+n, nil)
				reqs[i].Host = testDomain
				reqs[i].Header.Set("Sec-Fetch-Dest", "document")
				size += int64(len(pages[n]))
			}
			b.SetBytes(size)
			b.ReportAllocs()
			var out countingDiscard
			var src bytes.Reader
			for b.Loop() {
				for i, n := range set.pages {
					src.Reset(pages[n])
					if _, err := g.Transform(&out, &src, compress.Identity, compress.Identity, reqs[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
