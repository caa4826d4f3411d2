package compress

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
)

// errWouldBlock marks the point where a flushed-but-unfinished stream runs
// out; a decoder that needs bytes beyond the flush point hits it.
var errWouldBlock = errors.New("would block: no more bytes yet")

func TestFlushMakesWrittenBytesDecodable(t *testing.T) {
	parts := [][]byte{[]byte("<"), textPayload(3000, 20), textPayload(70000, 21), []byte("</html>")}
	for _, c := range allCodings {
		t.Run(string(c), func(t *testing.T) {
			var enc bytes.Buffer
			w, err := NewWriter(c, &enc, testOpts)
			if err != nil {
				t.Fatal(err)
			}
			var written []byte
			for i, part := range parts {
				if _, err := w.Write(part); err != nil {
					t.Fatal(err)
				}
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
				written = append(written, part...)
				// Decode only what has been emitted so far; the source then
				// fails instead of ending, so any decoder that still needs
				// bytes for the written prefix errors out.
				src := &failingSource{data: bytes.Clone(enc.Bytes()), err: errWouldBlock}
				rc, err := NewReader(c, src, 0)
				if err != nil {
					t.Fatalf("part %d: NewReader on flushed prefix: %v", i, err)
				}
				got := make([]byte, len(written))
				if _, err := io.ReadFull(rc, got); err != nil {
					t.Fatalf("part %d: only part of the %d flushed bytes decodable: %v", i, len(written), err)
				}
				if !bytes.Equal(got, written) {
					t.Fatalf("part %d: flushed prefix decoded to different bytes", i)
				}
				rc.Close()
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := decodeAll(c, bytes.NewReader(enc.Bytes()), 0)
			if err != nil || !bytes.Equal(got, written) {
				t.Fatalf("complete stream: %v (equal %v)", err, bytes.Equal(got, written))
			}
		})
	}
}

func TestPooledWritersAreIndependent(t *testing.T) {
	for _, c := range allCodings {
		t.Run(string(c), func(t *testing.T) {
			// Several rounds with overlapping lifetimes, so the second
			// round gets encoders the first one returned to the pool.
			for round := 0; round < 3; round++ {
				const n = 4
				bufs := make([]bytes.Buffer, n)
				ws := make([]Writer, n)
				payloads := make([][]byte, n)
				for i := range ws {
					w, err := NewWriter(c, &bufs[i], testOpts)
					if err != nil {
						t.Fatal(err)
					}
					ws[i] = w
					payloads[i] = textPayload(2000+i*1000, uint64(100*round+i))
				}
				// Interleave writes so that shared state would mix streams.
				for off := 0; off < 5000; off += 500 {
					for i, w := range ws {
						if off < len(payloads[i]) {
							if _, err := w.Write(payloads[i][off:min(off+500, len(payloads[i]))]); err != nil {
								t.Fatal(err)
							}
						}
					}
				}
				lens := make([]int, n)
				for i, w := range ws {
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
					lens[i] = bufs[i].Len()
				}
				// A reused encoder that was not redirected would write the
				// next stream into an old destination.
				var fresh bytes.Buffer
				w, err := NewWriter(c, &fresh, testOpts)
				if err != nil {
					t.Fatal(err)
				}
				w.Write([]byte("next stream"))
				w.Close()
				for i := range ws {
					if bufs[i].Len() != lens[i] {
						t.Fatalf("round %d: closed stream %d grew from %d to %d bytes", round, i, lens[i], bufs[i].Len())
					}
					got, err := decodeAll(c, bytes.NewReader(bufs[i].Bytes()), 0)
					if err != nil || !bytes.Equal(got, payloads[i]) {
						t.Fatalf("round %d stream %d: %v (equal %v)", round, i, err, bytes.Equal(got, payloads[i]))
					}
				}
				if got, err := decodeAll(c, bytes.NewReader(fresh.Bytes()), 0); err != nil || string(got) != "next stream" {
					t.Fatalf("round %d: fresh stream decoded to %q, %v", round, got, err)
				}
			}
		})
	}
}

func TestWriterAfterDestinationFailure(t *testing.T) {
	errGone := errors.New("client went away")
	payload := textPayload(200000, 22)
	for _, c := range allCodings {
		t.Run(string(c), func(t *testing.T) {
			w, err := NewWriter(c, errWriter{err: errGone}, testOpts)
			if err != nil {
				t.Fatal(err)
			}
			_, werr := w.Write(payload)
			cerr := w.Close()
			if !errors.Is(werr, errGone) && !errors.Is(cerr, errGone) {
				t.Fatalf("destination error lost: write %v, close %v", werr, cerr)
			}
			// The next writer with the same settings must be unaffected.
			got, err := decodeAll(c, bytes.NewReader(encode(t, c, payload, testOpts)), 0)
			if err != nil || !bytes.Equal(got, payload) {
				t.Fatalf("writer after failure: %v", err)
			}
		})
	}
}

func TestWriterAfterClose(t *testing.T) {
	for _, c := range allCodings {
		t.Run(string(c), func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewWriter(c, &buf, testOpts)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			n := buf.Len()
			if _, err := w.Write([]byte("late")); err == nil {
				t.Fatal("write after close succeeded")
			}
			if err := w.Flush(); err == nil {
				t.Fatal("flush after close succeeded")
			}
			if err := w.Close(); err != nil {
				t.Fatalf("second close: %v", err)
			}
			if buf.Len() != n {
				t.Fatalf("calls after close wrote %d bytes", buf.Len()-n)
			}
		})
	}
}

func TestNewWriterOptions(t *testing.T) {
	tests := []struct {
		c     Coding
		o     Options
		valid bool
	}{
		{Gzip, Options{GzipLevel: -1}, true},
		{Gzip, Options{GzipLevel: -2}, true},
		{Gzip, Options{GzipLevel: 0}, true},
		{Gzip, Options{GzipLevel: 9}, true},
		{Gzip, Options{GzipLevel: 10}, false},
		{Gzip, Options{GzipLevel: -3}, false},
		{Deflate, Options{GzipLevel: 9}, true},
		{Deflate, Options{GzipLevel: 10}, false},
		{Deflate, Options{GzipLevel: -3}, false},
		{Brotli, Options{BrotliQuality: 0, BrotliWindow: 10}, true},
		{Brotli, Options{BrotliQuality: 11, BrotliWindow: 24}, true},
		{Brotli, Options{BrotliQuality: 12, BrotliWindow: 22}, false},
		{Brotli, Options{BrotliQuality: -1, BrotliWindow: 22}, false},
		{Brotli, Options{BrotliQuality: 5, BrotliWindow: 0}, false},
		{Brotli, Options{BrotliQuality: 5, BrotliWindow: 9}, false},
		{Brotli, Options{BrotliQuality: 5, BrotliWindow: 25}, false},
		{Identity, Options{GzipLevel: 99}, true},
		{"zstd", testOpts, false},
		{"", testOpts, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%+v", tt.c, tt.o), func(t *testing.T) {
			w, err := NewWriter(tt.c, io.Discard, tt.o)
			if (err == nil) != tt.valid {
				t.Fatalf("err = %v, want valid=%v", err, tt.valid)
			}
			if w != nil {
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestConcurrentUse runs many encoder/decoder pairs at once over the shared
// pools; run with -race.
func TestConcurrentUse(t *testing.T) {
	const goroutines = 32
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 6; i++ {
				c := allCodings[(g+i)%len(allCodings)]
				payload := textPayload(1000+g*100+i, uint64(g*10+i))
				var buf bytes.Buffer
				w, err := NewWriter(c, &buf, testOpts)
				if err != nil {
					errs <- err
					return
				}
				w.Write(payload[:len(payload)/2])
				w.Flush()
				w.Write(payload[len(payload)/2:])
				if err := w.Close(); err != nil {
					errs <- err
					return
				}
				got, err := decodeAll(c, bytes.NewReader(buf.Bytes()), 0)
				if err != nil || !bytes.Equal(got, payload) {
					errs <- fmt.Errorf("goroutine %d %s: %v (equal %v)", g, c, err, bytes.Equal(got, payload))
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
