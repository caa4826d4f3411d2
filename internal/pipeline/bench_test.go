package pipeline

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/testutil"
)

// BenchmarkTransformJob runs a Job per corpus page per op, with no guest
// around it: the body's journey alone (decode, rewrite, encode), without
// eligibility, auction or headers. Against proxy's
// BenchmarkTransformIdentity it shows what the guest adds per page.
func BenchmarkTransformJob(b *testing.B) {
	var pages [][]byte
	var size int64
	for _, f := range testutil.RequireCorpus(b) {
		p, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		pages = append(pages, p)
		size += int64(len(p))
	}
	for _, c := range []compress.Coding{compress.Identity, compress.Gzip} {
		b.Run("coding="+string(c), func(b *testing.B) {
			srcs := make([][]byte, len(pages))
			for i, p := range pages {
				e, err := compress.Encode(c, p, compress.Options{GzipLevel: -1})
				if err != nil {
					b.Fatal(err)
				}
				srcs[i] = e
			}
			b.SetBytes(size)
			b.ReportAllocs()
			var src bytes.Reader
			for b.Loop() {
				for _, s := range srcs {
					src.Reset(s)
					job := htmlJob(nil, c, c, io.Discard)
					job.Src = io.NopCloser(&src)
					if _, err := Do(job); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
