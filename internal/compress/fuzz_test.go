package compress

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/flate"
)

// FuzzDecode feeds arbitrary bytes to every decoder: it must return an
// error or some output, never panic or hang, and never more decoded bytes
// than the limit; when it succeeds, re-encoding and decoding that output
// round-trips.
func FuzzDecode(f *testing.F) {
	opts := Options{GzipLevel: 6, BrotliQuality: 4, BrotliWindow: 22}
	for _, c := range []Coding{Gzip, Deflate, Brotli} {
		for _, s := range []string{"", "hello", "<html><head></head></html>"} {
			var b bytes.Buffer
			w, _ := NewWriter(c, &b, opts)
			w.Write([]byte(s))
			w.Close()
			f.Add(b.Bytes())
			f.Add(b.Bytes()[:b.Len()/2])
		}
	}
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	// An empty gzip member followed by a newline (accepted padding), and
	// raw deflate without the zlib header.
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, '\n'})
	var raw bytes.Buffer
	fw, _ := flate.NewWriter(&raw, 6)
	fw.Write([]byte("<html><head></head></html>"))
	fw.Close()
	f.Add(raw.Bytes())
	const limit = 4096
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, c := range []Coding{Identity, Gzip, Deflate, Brotli} {
			r, err := NewReader(c, bytes.NewReader(in), limit)
			if err != nil {
				var de *DecodeError
				if !errors.As(err, &de) {
					t.Fatalf("%s: error is not a DecodeError: %v", c, err)
				}
				continue
			}
			out, err := io.ReadAll(r)
			r.Close()
			if len(out) > limit {
				t.Fatalf("%s: %d bytes decoded past the %d limit", c, len(out), limit)
			}
			if err != nil {
				var de *DecodeError
				if !errors.As(err, &de) {
					t.Fatalf("%s: error is not a DecodeError: %v", c, err)
				}
				continue
			}
			var b bytes.Buffer
			w, _ := NewWriter(c, &b, opts)
			w.Write(out)
			w.Close()
			r2, err := NewReader(c, &b, limit)
			if err != nil {
				t.Fatalf("%s: re-encoded output does not decode: %v", c, err)
			}
			again, err := io.ReadAll(r2)
			r2.Close()
			if err != nil || !bytes.Equal(again, out) {
				t.Fatalf("%s: round trip of decoded output failed: %v", c, err)
			}
		}
	})
}
