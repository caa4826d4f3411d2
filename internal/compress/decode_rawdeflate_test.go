package compress

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/flate"
)

// rawDeflate encodes data as deflate without the zlib wrapper.
func rawDeflate(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, 6)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestRawDeflateDecoded catches "Content-Encoding: deflate" bodies without
// the zlib header (old IIS) being refused, and checks that raw deflate is
// held to the same truncation and trailing-data rules as zlib.
func TestRawDeflateDecoded(t *testing.T) {
	for _, payload := range [][]byte{nil, []byte("a"), textPayload(3000, 16)} {
		stream := rawDeflate(t, payload)
		if len(stream) >= 2 && (uint16(stream[0])<<8|uint16(stream[1]))%31 == 0 {
			t.Fatalf("raw stream %x looks like zlib; the test proves nothing", stream[:2])
		}
		for _, src := range []struct {
			name string
			r    io.Reader
		}{
			{"whole", bytes.NewReader(stream)},
			{"one_byte", iotest.OneByteReader(bytes.NewReader(stream))},
			{"data_with_eof", iotest.DataErrReader(bytes.NewReader(stream))},
		} {
			got, err := decodeAll(Deflate, src.r, 0)
			if err != nil || !bytes.Equal(got, payload) {
				t.Fatalf("%d bytes, %s: %v (got %d bytes)", len(payload), src.name, err, len(got))
			}
		}
		for cut := 0; cut < len(stream); cut++ {
			_, err := decodeAll(Deflate, bytes.NewReader(stream[:cut]), 0)
			if err == nil {
				t.Fatalf("%d bytes: cut at %d/%d decoded without error", len(payload), cut, len(stream))
			}
			if k := decodeKind(t, err); k != KindTruncated && k != KindCorrupt {
				t.Fatalf("cut at %d: kind %s", cut, k)
			}
		}
		got, err := decodeAll(Deflate, bytes.NewReader(append(bytes.Clone(stream), 'x')), 0)
		if k := decodeKind(t, err); k != KindCorrupt {
			t.Fatalf("trailing byte after raw deflate: kind %s, want corrupt", k)
		}
		if !bytes.Equal(got, payload) {
			t.Fatalf("trailing byte: got %d bytes before the error, want %d", len(got), len(payload))
		}
	}
	t.Run("limit", func(t *testing.T) {
		payload := textPayload(3000, 17)
		_, err := decodeAll(Deflate, bytes.NewReader(rawDeflate(t, payload)), int64(len(payload)-1))
		if k := decodeKind(t, err); k != KindLimit {
			t.Fatalf("kind %s, want decoded_limit", k)
		}
	})
}
