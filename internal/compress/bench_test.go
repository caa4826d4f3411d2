package compress

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/ssatd/ssatd/internal/testutil"
)

type corpusPage struct {
	name string
	data []byte
}

// corpusPages loads the largest pages of the folder named by SSATD_CORPUS.
// The corpus is real third-party HTML and stays outside the repository.
func corpusPages(b *testing.B, n int) []corpusPage {
	b.Helper()
	paths := testutil.RequireCorpus(b)
	pages := make([]corpusPage, 0, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatalf("read corpus page: %v", err)
		}
		pages = append(pages, corpusPage{name: filepath.Base(p), data: data})
	}
	sort.Slice(pages, func(i, j int) bool { return len(pages[i].data) > len(pages[j].data) })
	return pages[:min(n, len(pages))]
}

func BenchmarkEncode(b *testing.B) {
	pages := corpusPages(b, 3)
	for _, c := range compressedCodings {
		for _, p := range pages {
			b.Run(string(c)+"/"+p.name, func(b *testing.B) {
				b.SetBytes(int64(len(p.data)))
				b.ReportAllocs()
				for b.Loop() {
					w, err := NewWriter(c, io.Discard, testOpts)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := w.Write(p.data); err != nil {
						b.Fatal(err)
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	pages := corpusPages(b, 3)
	for _, c := range compressedCodings {
		for _, p := range pages {
			enc := encode(b, c, p.data, testOpts)
			b.Run(string(c)+"/"+p.name, func(b *testing.B) {
				b.SetBytes(int64(len(p.data)))
				b.ReportAllocs()
				for b.Loop() {
					rc, err := NewReader(c, bytes.NewReader(enc), 0)
					if err != nil {
						b.Fatal(err)
					}
					n, err := io.Copy(io.Discard, rc)
					if err != nil || n != int64(len(p.data)) {
						b.Fatalf("decoded %d of %d bytes: %v", n, len(p.data), err)
					}
					rc.Close()
				}
			})
		}
	}
}
