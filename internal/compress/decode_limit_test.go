package compress

import (
	"bytes"
	"io"
	"runtime"
	"testing"
	"testing/iotest"
)

func TestLimitBoundaries(t *testing.T) {
	payload := textPayload(10000, 12)
	size := int64(len(payload))
	tests := []struct {
		limit   int64
		wantN   int64
		wantErr bool
	}{
		{limit: 1, wantN: 1, wantErr: true},
		{limit: size - 1, wantN: size - 1, wantErr: true},
		{limit: size, wantN: size},
		{limit: size + 1, wantN: size},
		{limit: 0, wantN: size},
		{limit: -1, wantN: size},
	}
	for _, c := range allCodings {
		stream := encode(t, c, payload, testOpts)
		for _, tt := range tests {
			t.Run(string(c), func(t *testing.T) {
				for _, src := range []struct {
					name string
					r    io.Reader
				}{{"whole", bytes.NewReader(stream)}, {"one_byte", iotest.OneByteReader(bytes.NewReader(stream))}} {
					got, err := decodeAll(c, src.r, tt.limit)
					if int64(len(got)) != tt.wantN || !bytes.Equal(got, payload[:len(got)]) {
						t.Fatalf("%s limit %d: got %d bytes (prefix ok: %v), want %d", src.name, tt.limit, len(got),
							bytes.Equal(got, payload[:min(len(got), len(payload))]), tt.wantN)
					}
					if !tt.wantErr {
						if err != nil {
							t.Fatalf("%s limit %d: %v", src.name, tt.limit, err)
						}
						continue
					}
					if k := decodeKind(t, err); k != KindLimit {
						t.Fatalf("%s limit %d: kind %s, want decoded_limit", src.name, tt.limit, k)
					}
				}
			})
		}
	}
}

// zeros streams n zero bytes without allocating them all, so building a
// bomb does not itself need the memory the limit is protecting.
func writeZeros(t *testing.T, w io.Writer, n int) {
	t.Helper()
	chunk := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			t.Fatal(err)
		}
		n -= k
	}
}

func TestCompressionBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 100+ MB streams")
	}
	const limit = 1 << 20
	tests := []struct {
		c        Coding
		zeros    int
		o        Options
		minRatio int
	}{
		{Gzip, 100 << 20, Options{GzipLevel: 1}, 900},
		{Deflate, 100 << 20, Options{GzipLevel: 1}, 900},
		{Brotli, 64 << 20, Options{BrotliQuality: 5, BrotliWindow: 24}, 500000},
	}
	for _, tt := range tests {
		t.Run(string(tt.c), func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewWriter(tt.c, &buf, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			writeZeros(t, w, tt.zeros)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			bomb := buf.Bytes()
			ratio := tt.zeros / len(bomb)
			t.Logf("%s bomb: %d bytes -> %d bytes (%d:1)", tt.c, len(bomb), tt.zeros, ratio)
			if ratio < tt.minRatio {
				t.Fatalf("bomb ratio %d:1 below %d:1; the test would not prove anything", ratio, tt.minRatio)
			}

			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			rc, err := NewReader(tt.c, bytes.NewReader(bomb), limit)
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, rc)
			rc.Close()
			runtime.ReadMemStats(&after)

			if n != limit {
				t.Fatalf("decoded %d bytes, want exactly the limit %d", n, limit)
			}
			if k := decodeKind(t, err); k != KindLimit {
				t.Fatalf("kind %s, want decoded_limit", k)
			}
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %d KiB while decoding", allocated>>10)
			if allocated > 32<<20 {
				t.Fatalf("decoding allocated %d MiB; the limit must bound memory", allocated>>20)
			}
		})
	}
}
