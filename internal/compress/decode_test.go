package compress

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestRoundTrip(t *testing.T) {
	payloads := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"one_byte", []byte("x")},
		{"small_text", textPayload(3000, 1)},
		{"1MB_text", textPayload(1<<20, 2)},
	}
	opts := []struct {
		name string
		o    Options
	}{
		{"default", testOpts},
		{"fastest", Options{GzipLevel: 1, BrotliQuality: 0, BrotliWindow: 10}},
		{"best", Options{GzipLevel: 9, BrotliQuality: 11, BrotliWindow: 24}},
	}
	for _, c := range allCodings {
		for _, o := range opts {
			for _, p := range payloads {
				if o.name == "best" && len(p.data) > 1<<16 && c == Brotli {
					continue // quality 11 on 1 MB is slow and adds no coverage
				}
				t.Run(string(c)+"/"+o.name+"/"+p.name, func(t *testing.T) {
					enc := encode(t, c, p.data, o.o)
					if c != Identity && len(p.data) > 1000 && len(enc) >= len(p.data) {
						t.Errorf("encoded %d bytes into %d: not compressed", len(p.data), len(enc))
					}
					got, err := decodeAll(c, bytes.NewReader(enc), 0)
					if err != nil {
						t.Fatalf("decode: %v", err)
					}
					if !bytes.Equal(got, p.data) {
						t.Fatalf("round trip mismatch: got %d bytes, want %d", len(got), len(p.data))
					}
				})
			}
		}
	}
}

func TestGzipConcatenatedMembers(t *testing.T) {
	a, b := textPayload(500, 3), textPayload(700, 4)
	encA, encB := encode(t, Gzip, a, testOpts), encode(t, Gzip, b, testOpts)
	emptyMember := encode(t, Gzip, nil, testOpts)
	tests := []struct {
		name    string
		members [][]byte
		want    []byte
	}{
		{"two", [][]byte{encA, encB}, append(append([]byte{}, a...), b...)},
		{"three_with_empty", [][]byte{encA, emptyMember, encB}, append(append([]byte{}, a...), b...)},
		{"only_empty", [][]byte{emptyMember}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream := bytes.Join(tt.members, nil)
			for _, src := range []struct {
				name string
				r    io.Reader
			}{{"whole", bytes.NewReader(stream)}, {"one_byte", iotest.OneByteReader(bytes.NewReader(stream))}} {
				got, err := decodeAll(Gzip, src.r, 0)
				if err != nil {
					t.Fatalf("%s: decode: %v", src.name, err)
				}
				if !bytes.Equal(got, tt.want) {
					t.Fatalf("%s: got %d bytes, want %d", src.name, len(got), len(tt.want))
				}
			}
			// Every cut except at a member boundary must be detected; a cut
			// at a boundary is itself a valid multi-member file.
			boundaries := map[int]bool{}
			off := 0
			for _, m := range tt.members {
				off += len(m)
				boundaries[off] = true
			}
			for cut := 0; cut < len(stream); cut++ {
				if boundaries[cut] {
					continue
				}
				_, err := decodeAll(Gzip, bytes.NewReader(stream[:cut]), 0)
				if err == nil {
					t.Fatalf("cut at %d/%d: decoded cleanly", cut, len(stream))
				}
				if k := decodeKind(t, err); k != KindTruncated && k != KindCorrupt {
					t.Fatalf("cut at %d: kind %s", cut, k)
				}
			}
		})
	}
}

func TestSourceError(t *testing.T) {
	errReset := errors.New("connection reset")
	payload := textPayload(5000, 11)
	for _, c := range allCodings {
		stream := encode(t, c, payload, testOpts)
		// Includes 0 (nothing arrives), the gzip header region, and
		// len(stream): every byte arrived but the close was not clean.
		for _, n := range []int{0, 1, 5, 12, len(stream) / 2, len(stream) - 4, len(stream) - 1, len(stream)} {
			t.Run(string(c), func(t *testing.T) {
				for _, wrap := range []struct {
					name string
					f    func(io.Reader) io.Reader
				}{
					{"plain", func(r io.Reader) io.Reader { return r }},
					{"one_byte", iotest.OneByteReader},
				} {
					src := wrap.f(&failingSource{data: bytes.Clone(stream[:n]), err: errReset})
					_, err := decodeAll(c, src, 0)
					if !errors.Is(err, errReset) {
						t.Fatalf("%s: after %d/%d bytes: got %v, want it to wrap the source error", wrap.name, n, len(stream), err)
					}
					if k := decodeKind(t, err); k != KindSource {
						t.Fatalf("%s: after %d bytes: kind %s, want source", wrap.name, n, k)
					}
				}
			})
		}
	}
}

func TestReaderReuseAfterFailure(t *testing.T) {
	payload := textPayload(4000, 13)
	for _, c := range compressedCodings {
		t.Run(string(c), func(t *testing.T) {
			good := encode(t, c, payload, testOpts)
			bad := bytes.Clone(good)
			bad[len(bad)/2] ^= 0xff
			// Many rounds so that pooled decoders that just failed, were
			// truncated, or were abandoned mid-stream are handed out again.
			for i := 0; i < 20; i++ {
				if _, err := decodeAll(c, bytes.NewReader(bad), 0); err == nil {
					t.Fatal("corrupt stream decoded cleanly")
				}
				if _, err := decodeAll(c, bytes.NewReader(good[:len(good)-3]), 0); err == nil {
					t.Fatal("truncated stream decoded cleanly")
				}
				rc, err := NewReader(c, bytes.NewReader(good), 0)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := rc.Read(make([]byte, 10)); err != nil {
					t.Fatal(err)
				}
				rc.Close()
				got, err := decodeAll(c, bytes.NewReader(good), 0)
				if err != nil || !bytes.Equal(got, payload) {
					t.Fatalf("round %d: reused decoder failed: %v (equal %v)", i, err, bytes.Equal(got, payload))
				}
			}
		})
	}
}

func TestReaderAPI(t *testing.T) {
	t.Run("unsupported_coding", func(t *testing.T) {
		if _, err := NewReader("zstd", strings.NewReader(""), 0); err == nil {
			t.Fatal("zstd accepted")
		}
	})
	t.Run("read_after_close", func(t *testing.T) {
		for _, c := range allCodings {
			rc, err := NewReader(c, bytes.NewReader(encode(t, c, []byte("hello"), testOpts)), 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := rc.Close(); err != nil {
				t.Fatal(err)
			}
			if err := rc.Close(); err != nil {
				t.Fatalf("%s: second close: %v", c, err)
			}
			if _, err := rc.Read(make([]byte, 10)); err == nil {
				t.Fatalf("%s: read after close succeeded", c)
			}
		}
	})
	t.Run("eager_header", func(t *testing.T) {
		tests := []struct {
			c    Coding
			body string
			kind ErrorKind
		}{
			{Gzip, "", KindTruncated},
			{Gzip, "\x1f\x8b", KindTruncated},
			{Gzip, "<html>not gzip</html>", KindCorrupt},
			{Deflate, "<html>not zlib</html>", KindCorrupt},
			{Deflate, "", KindTruncated},
		}
		for _, tt := range tests {
			_, err := NewReader(tt.c, strings.NewReader(tt.body), 0)
			if err == nil {
				t.Fatalf("%s %q: NewReader accepted a bad header", tt.c, tt.body)
			}
			if k := decodeKind(t, err); k != tt.kind {
				t.Fatalf("%s %q: kind %s, want %s", tt.c, tt.body, k, tt.kind)
			}
		}
	})
	t.Run("does_not_close_source", func(t *testing.T) {
		src := &closeTracker{Reader: bytes.NewReader(encode(t, Gzip, []byte("x"), testOpts))}
		rc, err := NewReader(Gzip, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		rc.Close()
		if src.closed {
			t.Fatal("Close closed the source")
		}
	})
}

type closeTracker struct {
	io.Reader
	closed bool
}

func (c *closeTracker) Close() error { c.closed = true; return nil }

func TestDecodeError(t *testing.T) {
	cause := errors.New("boom")
	tests := []struct {
		kind ErrorKind
		want string
	}{
		{KindTruncated, "truncated"},
		{KindCorrupt, "corrupt"},
		{KindLimit, "decoded_limit"},
		{KindSource, "source"},
		{ErrorKind(99), "unknown(99)"},
	}
	for _, tt := range tests {
		if got := tt.kind.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
		e := &DecodeError{Coding: Brotli, Kind: tt.kind, Err: cause}
		if msg := e.Error(); !strings.Contains(msg, "br") || !strings.Contains(msg, tt.want) || !strings.Contains(msg, "boom") {
			t.Errorf("Error() = %q lacks coding, kind or cause", msg)
		}
		if !errors.Is(e, cause) {
			t.Errorf("errors.Is does not see the cause through %v", e)
		}
	}
}
