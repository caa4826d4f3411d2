package compress

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

var (
	testOpts          = Options{GzipLevel: 6, BrotliQuality: 6, BrotliWindow: 22}
	allCodings        = []Coding{Identity, Gzip, Deflate, Brotli}
	compressedCodings = []Coding{Gzip, Deflate, Brotli}
)

// textPayload returns deterministic HTML-ish text of n bytes: compressible
// like a real page, but not so repetitive that codecs collapse it to a few
// bytes and skip their interesting code paths.
func textPayload(n int, seed uint64) []byte {
	words := []string{"<div>", "</div>", "<a href=\"/x\">", "</a>", "the", "proxy", "stream",
		"rewrite", "class=\"c\"", "lorem", "ipsum", "\n", "<p>", "</p>", "é", "日本"}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var b bytes.Buffer
	for b.Len() < n {
		if rng.IntN(8) == 0 {
			fmt.Fprintf(&b, "%d ", rng.Uint32())
			continue
		}
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(' ')
	}
	return b.Bytes()[:n]
}

func encode(t testing.TB, c Coding, data []byte, o Options) []byte {
	t.Helper()
	b, err := Encode(c, data, o)
	if err != nil {
		t.Fatalf("encode %s: %v", c, err)
	}
	return b
}

// decodeAll decodes everything from r, returning what was produced before
// the error, if any.
func decodeAll(c Coding, r io.Reader, limit int64) ([]byte, error) {
	rc, err := NewReader(c, r, limit)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// decodeNoPanic is decodeAll that reports a panic instead of crashing the
// test binary, so corruption sweeps can name the offending position.
func decodeNoPanic(c Coding, r io.Reader) (out []byte, err error, panicked any) {
	defer func() { panicked = recover() }()
	out, err = decodeAll(c, r, 0)
	return out, err, nil
}

func decodeKind(t testing.TB, err error) ErrorKind {
	t.Helper()
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error %v (%T) is not a *DecodeError", err, err)
	}
	return de.Kind
}

// failingSource returns data, then err instead of io.EOF, the way a reset
// connection does.
type failingSource struct {
	data []byte
	err  error
}

func (f *failingSource) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// errWriter fails every write, standing in for a client that went away.
type errWriter struct{ err error }

func (e errWriter) Write([]byte) (int, error) { return 0, e.err }
