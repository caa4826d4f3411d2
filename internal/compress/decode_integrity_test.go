package compress

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

// truncationStreams builds small streams of each coding, including ones with
// a sync flush in the middle: after a flush everything so far has been
// decoded cleanly, which is where a decoder is most tempted to call a cut
// a clean end.
func truncationStreams(t *testing.T, c Coding) map[string][]byte {
	t.Helper()
	flushed := func(parts ...[]byte) []byte {
		var buf bytes.Buffer
		w, err := NewWriter(c, &buf, testOpts)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			if _, err := w.Write(p); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	return map[string][]byte{
		"empty":    encode(t, c, nil, testOpts),
		"one_byte": encode(t, c, []byte("a"), testOpts),
		"text":     encode(t, c, textPayload(2000, 5), testOpts),
		"flushed":  flushed(textPayload(700, 6), textPayload(300, 7)),
		"stored":   encode(t, c, textPayload(300, 8), Options{GzipLevel: 0, BrotliQuality: 0, BrotliWindow: 10}),
	}
}

func TestTruncationAtEveryCut(t *testing.T) {
	for _, c := range compressedCodings {
		for name, stream := range truncationStreams(t, c) {
			t.Run(string(c)+"/"+name, func(t *testing.T) {
				for cut := 0; cut < len(stream); cut++ {
					for _, src := range []struct {
						name string
						r    io.Reader
					}{
						{"whole", bytes.NewReader(stream[:cut])},
						{"one_byte", iotest.OneByteReader(bytes.NewReader(stream[:cut]))},
						{"data_with_eof", iotest.DataErrReader(bytes.NewReader(stream[:cut]))},
					} {
						_, err := decodeAll(c, src.r, 0)
						if err == nil {
							t.Fatalf("%s: cut at %d/%d decoded without error", src.name, cut, len(stream))
						}
						if k := decodeKind(t, err); k != KindTruncated && k != KindCorrupt {
							t.Fatalf("%s: cut at %d: kind %s (%v)", src.name, cut, k, err)
						}
					}
				}
			})
		}
	}
}

func TestCorruptByteFlips(t *testing.T) {
	payload := textPayload(1500, 9)
	for _, c := range compressedCodings {
		t.Run(string(c), func(t *testing.T) {
			stream := encode(t, c, payload, testOpts)
			detected, total := 0, 0
			for pos := range stream {
				for _, mask := range []byte{0x01, 0x10, 0x80, 0xff} {
					bad := bytes.Clone(stream)
					bad[pos] ^= mask
					total++
					got, err, p := decodeNoPanic(c, bytes.NewReader(bad))
					if p != nil {
						t.Fatalf("pos %d mask %#x: decoder panicked: %v", pos, mask, p)
					}
					if err != nil {
						detected++
						if k := decodeKind(t, err); k != KindCorrupt && k != KindTruncated {
							t.Fatalf("pos %d mask %#x: kind %s", pos, mask, k)
						}
						continue
					}
					if unchecked(c, pos, len(stream)) {
						// Header fields no checksum covers; the flip
						// must at least not change the content.
						if !bytes.Equal(got, payload) {
							t.Fatalf("pos %d mask %#x: unchecked header flip changed output", pos, mask)
						}
						continue
					}
					if c == Brotli {
						// Brotli has no checksum: a flip can decode to
						// different bytes without error. Only the absence
						// of panics is required; the rate is asserted below.
						continue
					}
					t.Fatalf("pos %d mask %#x: flip not detected (output equal: %v)", pos, mask, bytes.Equal(got, payload))
				}
			}
			t.Logf("%s: %d/%d flips detected", c, detected, total)
			if c == Brotli && detected < total/2 {
				t.Fatalf("brotli detected only %d/%d flips; expected most to break the stream", detected, total)
			}
		})
	}
}

// unchecked reports bytes whose flips no checksum can see:
//   - gzip FLG.FTEXT, MTIME, XFL and OS (bytes 3..9; no FHCRC is written);
//     other FLG bits are still caught because they change the parse;
//   - the zlib header (bytes 0..1), whose FLEVEL bits are informational and
//     whose FCHECK only guards against some flips;
//   - for both, the last byte of deflate data: its high bits are padding
//     after the final end-of-block code, which RFC 1951 decoders ignore.
//
// A flip there must leave the output identical.
func unchecked(c Coding, pos, streamLen int) bool {
	switch c {
	case Gzip:
		return (pos >= 3 && pos <= 9) || pos == streamLen-9
	case Deflate:
		return pos <= 1 || pos == streamLen-5
	}
	return false
}

func TestTrailingData(t *testing.T) {
	payload := textPayload(800, 10)
	tests := []struct {
		name     string
		c        Coding
		trailer  []byte
		allowed  []ErrorKind
		wantData bool // the payload itself must come out before the error
	}{
		{"gzip_garbage", Gzip, []byte("<html>garbage after the member"), []ErrorKind{KindCorrupt}, true},
		{"gzip_padding_then_garbage", Gzip, []byte("\n\n<html>"), []ErrorKind{KindTruncated, KindCorrupt}, true},
		{"gzip_zero_padding_over_bound", Gzip, make([]byte, 65), []ErrorKind{KindCorrupt}, true},
		{"gzip_partial_member_header", Gzip, []byte{0x1f, 0x8b, 0x08}, []ErrorKind{KindTruncated, KindCorrupt}, true},
		{"gzip_one_byte", Gzip, []byte{'x'}, []ErrorKind{KindTruncated, KindCorrupt}, true},
		{"deflate_one_byte", Deflate, []byte{'x'}, []ErrorKind{KindCorrupt}, true},
		{"deflate_second_stream", Deflate, encode(t, Deflate, []byte("more"), testOpts), []ErrorKind{KindCorrupt}, true},
		{"deflate_zero_padding", Deflate, make([]byte, 16), []ErrorKind{KindCorrupt}, true},
		{"br_one_byte", Brotli, []byte{'x'}, []ErrorKind{KindCorrupt}, false},
		{"br_second_stream", Brotli, encode(t, Brotli, []byte("more"), testOpts), []ErrorKind{KindCorrupt}, false},
		{"br_zero_padding", Brotli, make([]byte, 16), []ErrorKind{KindCorrupt}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream := append(encode(t, tt.c, payload, testOpts), tt.trailer...)
			for _, src := range []struct {
				name string
				r    io.Reader
			}{{"whole", bytes.NewReader(stream)}, {"one_byte", iotest.OneByteReader(bytes.NewReader(stream))}} {
				got, err := decodeAll(tt.c, src.r, 0)
				if err == nil {
					t.Fatalf("%s: trailing data accepted", src.name)
				}
				k := decodeKind(t, err)
				ok := false
				for _, a := range tt.allowed {
					ok = ok || k == a
				}
				if !ok {
					t.Fatalf("%s: kind %s, want one of %v", src.name, k, tt.allowed)
				}
				if tt.wantData && !bytes.Equal(got, payload) {
					t.Fatalf("%s: got %d bytes before the error, want the %d-byte payload", src.name, len(got), len(payload))
				}
			}
		})
	}
}

// TestGzipTrailingPaddingAccepted catches a complete gzip page followed by a
// newline or zero padding (PHP, some CMS plug-ins) being aborted as corrupt,
// although browsers render it.
func TestGzipTrailingPaddingAccepted(t *testing.T) {
	payload := textPayload(800, 10)
	member := encode(t, Gzip, payload, testOpts)
	for _, tt := range []struct {
		name    string
		trailer []byte
	}{
		{"newline", []byte("\n")},
		{"crlf_and_spaces", []byte("\r\n \t ")},
		{"zero_padding_16", make([]byte, 16)},
		{"zero_padding_at_bound", make([]byte, 64)},
		{"second_member_then_newline", append(encode(t, Gzip, nil, testOpts), '\n')},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stream := append(bytes.Clone(member), tt.trailer...)
			for _, src := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", bytes.NewReader(stream)},
				{"one_byte", iotest.OneByteReader(bytes.NewReader(stream))},
				{"data_with_eof", iotest.DataErrReader(bytes.NewReader(stream))},
			} {
				got, err := decodeAll(Gzip, src.r, 0)
				if err != nil || !bytes.Equal(got, payload) {
					t.Fatalf("%s: %v (got %d bytes, want %d)", src.name, err, len(got), len(payload))
				}
			}
			// The padding is never counted as page bytes: a limit of
			// exactly the payload still passes.
			if _, err := decodeAll(Gzip, bytes.NewReader(stream), int64(len(payload))); err != nil {
				t.Fatalf("at the limit: %v", err)
			}
		})
	}
}
