package compress

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
)

// Options are the encoder settings. They are validated by the configuration
// layer; NewEncoders and NewWriter check them again so that a bad value can
// never reach a library that would silently clamp it.
type Options struct {
	GzipLevel     int // gzip and deflate: GzipLevels, or -2 (Huffman only), -1 (default), 0 (stored)
	BrotliQuality int // BrotliQualities
	BrotliWindow  int // log2 of the window, BrotliWindows
}

// Writer is a streaming encoder.
//
// Flush emits everything written so far as decodable bytes (a sync flush),
// which lets the proxy push a page's head to the client before the origin
// has sent the rest. Close finishes the stream and returns pooled state; any
// use after Close is an error, except that Close itself may be repeated.
type Writer interface {
	io.Writer
	Flush() error
	Close() error
}

var errWriterClosed = errors.New("compress: write after close")

// resetWriter is what the three encoders have in common, which is what makes
// them poolable.
type resetWriter interface {
	io.Writer
	Flush() error
	Close() error
	Reset(io.Writer)
}

// writerKey identifies encoders that can stand in for one another. The level
// and window are fixed at construction, so pooling by coding alone would hand
// out an encoder with the wrong settings.
type writerKey struct {
	coding        Coding
	level, window int
}

// writerPools maps writerKey to *sync.Pool. Options are validated before a
// key is made (NewEncoders, NewWriter), so the map holds a small bounded
// set of pools.
var writerPools sync.Map

// Encoders starts encoders whose settings were validated once, when it was
// built (NewEncoders), as klauspost's gzhttp validates its options when the
// handler is built: starting one for a response cannot fail for a setting.
// The zero Encoders has checked nothing; build one with NewEncoders.
type Encoders struct{ o Options }

// NewEncoders checks o for every coding it encodes.
func NewEncoders(o Options) (Encoders, error) {
	var errs []error
	for _, c := range []Coding{Gzip, Brotli} { // Deflate shares gzip's level
		if err := o.check(c); err != nil {
			errs = append(errs, err)
		}
	}
	return Encoders{o: o}, errors.Join(errs...)
}

// Writer returns an encoder of coding c writing to w. c is one of the
// codings ParseContentEncoding returns; any other is a caller's bug.
func (e Encoders) Writer(c Coding, w io.Writer) Writer {
	if c == Identity {
		return &identityWriter{w: w}
	}
	key := e.o.key(c)
	p, _ := writerPools.LoadOrStore(key, new(sync.Pool))
	pool := p.(*sync.Pool)
	if rw, ok := pool.Get().(resetWriter); ok {
		// Reset on the way out of the pool, not only on the way in, so
		// that correctness never depends on how the writer was returned.
		rw.Reset(w)
		return &encodeHandle{coding: c, w: rw, pool: pool}
	}
	return &encodeHandle{coding: c, w: newResetWriter(key, w), pool: pool}
}

// NewWriter returns an encoder of coding c writing to w, checking the
// settings c uses: for tools and tests that start one encoder. The
// request path starts them from Encoders.
func NewWriter(c Coding, w io.Writer, o Options) (Writer, error) {
	if err := o.check(c); err != nil {
		return nil, err
	}
	return Encoders{o: o}.Writer(c, w), nil
}

// check validates the settings coding c uses.
func (o Options) check(c Coding) error {
	switch c {
	case Identity:
		return nil
	case Gzip, Deflate:
		if err := encoderGzipLevels.Check("level", o.GzipLevel); err != nil {
			return fmt.Errorf("compress: new %s writer: %w", c, err)
		}
		return nil
	case Brotli:
		if err := BrotliQualities.Check("quality", o.BrotliQuality); err != nil {
			return fmt.Errorf("compress: new br writer: %w", err)
		}
		// The library reads a window of 0 as "pick for me"; the configured
		// window is meant to bound memory, so an explicit value is required.
		if err := BrotliWindows.Check("window", o.BrotliWindow); err != nil {
			return fmt.Errorf("compress: new br writer: %w", err)
		}
		return nil
	}
	return fmt.Errorf("compress: new writer: unsupported coding %q", c)
}

// key is the pool of coding c's encoders under o.
func (o Options) key(c Coding) writerKey {
	switch c {
	case Gzip, Deflate:
		return writerKey{coding: c, level: o.GzipLevel}
	case Brotli:
		return writerKey{coding: c, level: o.BrotliQuality, window: o.BrotliWindow}
	}
	panic(fmt.Sprintf("compress: no encoder for coding %q", c))
}

// newResetWriter builds an encoder for a key of checked settings. The
// libraries fail only for a level outside encoderGzipLevels, which check
// refuses first, so an error here is a bug of this package.
func newResetWriter(k writerKey, w io.Writer) resetWriter {
	var rw resetWriter
	var err error
	switch k.coding {
	case Gzip:
		rw, err = gzip.NewWriterLevel(w, k.level)
	case Deflate:
		rw, err = zlib.NewWriterLevel(w, k.level)
	default:
		rw = brotli.NewWriterOptions(w, brotli.WriterOptions{Quality: k.level, LGWin: k.window})
	}
	if err != nil {
		panic(fmt.Sprintf("compress: %s encoder with checked settings: %v", k.coding, err))
	}
	return rw
}

// encodeHandle is what callers hold; Close detaches it from the pooled
// encoder so that late calls cannot write into someone else's stream.
type encodeHandle struct {
	coding Coding
	w      resetWriter
	pool   *sync.Pool
}

func (h *encodeHandle) Write(p []byte) (int, error) {
	if h.w == nil {
		return 0, errWriterClosed
	}
	n, err := h.w.Write(p)
	if err != nil {
		return n, fmt.Errorf("compress: %s write: %w", h.coding, err)
	}
	return n, nil
}

func (h *encodeHandle) Flush() error {
	if h.w == nil {
		return errWriterClosed
	}
	if err := h.w.Flush(); err != nil {
		return fmt.Errorf("compress: %s flush: %w", h.coding, err)
	}
	return nil
}

func (h *encodeHandle) Close() error {
	w := h.w
	if w == nil {
		return nil
	}
	h.w = nil
	if err := w.Close(); err != nil {
		// An encoder that failed mid-stream is dropped rather than trusted
		// to Reset cleanly; failures are rare enough that the lost reuse
		// does not matter.
		return fmt.Errorf("compress: %s close: %w", h.coding, err)
	}
	// Point the encoder away from the caller's writer so the pool does
	// not keep a finished response alive.
	w.Reset(io.Discard)
	h.pool.Put(w)
	return nil
}

type identityWriter struct {
	w      io.Writer
	closed bool
}

func (iw *identityWriter) Write(p []byte) (int, error) {
	if iw.closed {
		return 0, errWriterClosed
	}
	n, err := iw.w.Write(p)
	if err != nil {
		return n, fmt.Errorf("compress: identity write: %w", err)
	}
	return n, nil
}

func (iw *identityWriter) Flush() error {
	if iw.closed {
		return errWriterClosed
	}
	return nil
}

func (iw *identityWriter) Close() error {
	iw.closed = true
	iw.w = nil
	return nil
}

// Encode returns data encoded as c in one piece: for origins, tests and
// tools that hold a whole body, not for the streaming path.
func Encode(c Coding, data []byte, o Options) ([]byte, error) {
	var buf bytes.Buffer
	w, err := NewWriter(c, &buf, o)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
