package compress

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
)

// ErrorKind classifies why decoding failed, so the proxy can log and count
// failures without parsing library error strings.
type ErrorKind int

// Decoding failure kinds.
const (
	// KindTruncated: the compressed stream ended before its format says it
	// is complete.
	KindTruncated ErrorKind = iota + 1
	// KindCorrupt: the stream is malformed, fails a checksum, or is followed
	// by bytes that are not part of it.
	KindCorrupt
	// KindLimit: the stream decodes to more bytes than the configured limit.
	KindLimit
	// KindSource: reading the compressed bytes failed (e.g. connection reset).
	KindSource
)

// String returns the label used in logs and metrics.
func (k ErrorKind) String() string {
	switch k {
	case KindTruncated:
		return "truncated"
	case KindCorrupt:
		return "corrupt"
	case KindLimit:
		return "decoded_limit"
	case KindSource:
		return "source"
	}
	return fmt.Sprintf("unknown(%d)", int(k))
}

// DecodeError reports a failure to decode a response body.
type DecodeError struct {
	Coding Coding
	Kind   ErrorKind
	// Err is the underlying cause; for KindSource it is the source reader's
	// own error so that callers can match it with errors.Is.
	Err error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("compress: decode %s: %s: %v", e.Coding, e.Kind, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

var errReaderClosed = errors.New("compress: read after close")

// errBrotliExcess is the brotli package's unexported "excessive input"
// error, captured by decoding a minimal empty stream (a single 0x06 byte)
// followed by one stray byte.
var errBrotliExcess = func() error {
	_, err := io.ReadAll(brotli.NewReader(bytes.NewReader([]byte{0x06, 0x00})))
	return err
}()

// emptyZlib is a complete zlib stream of no data. The zlib package has no way
// to build a reader without parsing a header, so pooled readers are born from
// this and then Reset onto the real body.
var emptyZlib = []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01}

// source wraps the body reader and remembers the first error that is not
// io.EOF. Decoders are free to swallow, wrap or replace read errors (bufio
// hands an error out only once, brotli drops an error that arrives with data,
// flate may report it as an unexpected EOF), so the decoder's error alone
// cannot tell "the connection broke" from "the stream is truncated".
type source struct {
	r   io.Reader
	err error
}

func (s *source) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// decoder holds all per-stream state. The whole struct is pooled per coding
// so that the codec's window, the bufio buffer and the brotli input buffer
// are reused together.
type decoder struct {
	coding Coding
	src    source
	br     *bufio.Reader // gzip and zlib read through this to stop exactly at stream end
	gz     *gzip.Reader
	zr     io.ReadCloser
	fr     io.ReadCloser // raw deflate, for origins that omit the zlib wrapper
	head   primed
	bro    *brotli.Reader
	dec    io.Reader

	limit int64
	n     int64
	err   error
	probe [1]byte
}

var decoderPools = map[Coding]*sync.Pool{
	Identity: {New: func() any { return &decoder{coding: Identity} }},
	Gzip:     {New: func() any { return &decoder{coding: Gzip} }},
	Deflate:  {New: func() any { return &decoder{coding: Deflate} }},
	Brotli:   {New: func() any { return &decoder{coding: Brotli} }},
}

// NewReader returns a streaming decoder of r for coding c.
//
// limit > 0 caps the number of decoded bytes: the reader yields at most limit
// bytes and then a *DecodeError of KindLimit if the stream would produce more;
// limit <= 0 means no cap. Every decoding failure is a *DecodeError. For gzip
// and deflate the header is parsed before NewReader returns, so a body that
// is not what Content-Encoding claims is rejected before the proxy commits to
// response headers. Close returns pooled state and does not close r.
func NewReader(c Coding, r io.Reader, limit int64) (io.ReadCloser, error) {
	pool, ok := decoderPools[c]
	if !ok {
		return nil, fmt.Errorf("compress: new reader: unsupported coding %q", c)
	}
	d := pool.Get().(*decoder)
	d.src = source{r: r}
	d.limit, d.n, d.err = limit, 0, nil
	if err := d.reset(); err != nil {
		d.release()
		pool.Put(d)
		return nil, err
	}
	return &decodeHandle{d: d}, nil
}

func (d *decoder) reset() error {
	switch d.coding {
	case Identity:
		d.dec = &d.src
	case Gzip:
		d.resetBufio()
		if d.gz == nil {
			d.gz = new(gzip.Reader)
		}
		if err := d.resetGzip(); err != nil {
			if err == io.EOF && d.src.err == nil {
				// The gzip package accepts zero members, but an origin that
				// labels a body gzip always sends at least one, so an empty
				// body means the member was lost.
				return d.fail(fmt.Errorf("empty body: %w", io.ErrUnexpectedEOF))
			}
			return d.fail(fmt.Errorf("gzip header: %w", err))
		}
		d.dec = d.gz
	case Deflate:
		d.resetBufio()
		if b, _ := d.br.Peek(2); len(b) == 2 && !isZlibHeader(b[0], b[1]) {
			return d.resetRawDeflate()
		}
		if d.zr == nil {
			zr, err := zlib.NewReader(bytes.NewReader(emptyZlib))
			if err != nil {
				return fmt.Errorf("compress: init zlib reader: %w", err)
			}
			d.zr = zr
		}
		if err := d.zr.(zlib.Resetter).Reset(d.br, nil); err != nil {
			return d.fail(fmt.Errorf("zlib header: %w", err))
		}
		d.dec = d.zr
	case Brotli:
		if d.bro == nil {
			d.bro = brotli.NewReader(&d.src)
		} else if err := d.bro.Reset(&d.src); err != nil {
			return fmt.Errorf("compress: reset brotli reader: %w", err)
		}
		d.dec = d.bro
	}
	return nil
}

// resetGzip starts the next gzip member. Members are read one at a time
// (Multistream off) so that gzipMemberEnd, not the gzip package, decides what may
// follow a member.
func (d *decoder) resetGzip() error {
	if err := d.gz.Reset(d.br); err != nil {
		return err
	}
	d.gz.Multistream(false)
	return nil
}

// isZlibHeader reports whether two bytes form a valid zlib header (RFC 1950
// §2.2): compression method 8, a window of at most 32 KiB, and a header
// checksum that makes CMF*256+FLG a multiple of 31.
func isZlibHeader(cmf, flg byte) bool {
	return cmf&0x0f == 8 && cmf>>4 <= 7 && (uint16(cmf)<<8|uint16(flg))%31 == 0
}

// resetRawDeflate decodes a "deflate" body that lacks the zlib wrapper, as
// old IIS and some PHP set-ups send (RFC 9110 §8.4.1.2 says "deflate" is zlib,
// but browsers accept both, so origins never learn). Without a header there
// is nothing to check before the body, so the first decoded byte is read now:
// a body that is not deflate at all (HTML labelled deflate) then fails here,
// before the proxy commits to response headers, as a bad zlib header does.
// Raw deflate has no checksum; truncation is still caught because the stream
// must end with its final block.
func (d *decoder) resetRawDeflate() error {
	if d.fr == nil {
		d.fr = flate.NewReader(d.br)
	} else if err := d.fr.(flate.Resetter).Reset(d.br, nil); err != nil {
		return fmt.Errorf("compress: reset flate reader: %w", err)
	}
	d.head = primed{r: d.fr}
	n, err := d.fr.Read(d.head.b[:])
	if err != nil && err != io.EOF {
		return d.fail(fmt.Errorf("raw deflate: %w", err))
	}
	d.head.n, d.head.err = n, err
	d.dec = &d.head
	return nil
}

// primed hands out a byte read ahead of the caller, then the rest of r.
type primed struct {
	b   [1]byte
	n   int
	err error // what r returned with the byte (nil or io.EOF)
	r   io.Reader
}

func (p *primed) Read(b []byte) (int, error) {
	if p.n == 0 {
		if p.err != nil {
			return 0, p.err
		}
		return p.r.Read(b)
	}
	if len(b) == 0 {
		return 0, nil
	}
	b[0] = p.b[0]
	p.n = 0
	return 1, p.err
}

func (d *decoder) resetBufio() {
	if d.br == nil {
		d.br = bufio.NewReader(&d.src)
		return
	}
	d.br.Reset(&d.src)
}

// release drops every reference to the caller's body so a pooled decoder does
// not keep a finished response alive.
func (d *decoder) release() {
	d.src = source{}
	if d.br != nil {
		d.br.Reset(&d.src)
	}
	d.dec = nil
	d.head = primed{}
	d.err = nil
}

// fail turns a decoder error into a *DecodeError. A recorded source error
// takes precedence because whatever the codec made of the broken read
// (usually "unexpected EOF") is a consequence, not the cause.
func (d *decoder) fail(err error) error {
	switch {
	case d.src.err != nil:
		return &DecodeError{Coding: d.coding, Kind: KindSource, Err: d.src.err}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &DecodeError{Coding: d.coding, Kind: KindTruncated, Err: err}
	default:
		return &DecodeError{Coding: d.coding, Kind: KindCorrupt, Err: err}
	}
}

// readDecoded reads from the codec and converts its errors; io.EOF is only
// passed on once the whole body is known to have been consumed.
func (d *decoder) readDecoded(p []byte) (int, error) {
	for {
		n, err := d.dec.Read(p)
		switch {
		case err == nil:
			return n, nil
		case d.coding == Brotli && err == errBrotliExcess:
			return n, d.brotliExcess()
		case err == io.EOF && d.coding == Identity:
			return n, io.EOF
		case err == io.EOF && d.coding == Gzip:
			err = d.gzipMemberEnd()
			if err == nil && n == 0 {
				continue // the next member starts; read from it
			}
			return n, err
		case err == io.EOF:
			return n, d.atEnd()
		default:
			return n, d.fail(err)
		}
	}
}

// maxGzipPadding bounds the filler accepted after the last gzip member.
const maxGzipPadding = 64

// gzipMemberEnd runs when a gzip member ends with a good trailer. Another
// member may follow (RFC 1952 §2.2); it returns nil once that member's header
// is read. Otherwise only filler may follow: PHP and some CMS plug-ins append
// a newline or zero padding after the compressed output, and browsers render
// such pages, so up to maxGzipPadding bytes of NUL or ASCII whitespace are
// dropped. Anything else, or more filler than that, is rejected as corrupt,
// for the same reason as bytes after a zlib stream (see atEnd); the member
// before it was complete and checked, so nothing of the page is lost.
func (d *decoder) gzipMemberEnd() error {
	b, err := d.br.Peek(1)
	switch {
	case len(b) == 0 && err == io.EOF:
		return io.EOF
	case len(b) == 0:
		return d.fail(err)
	case b[0] == 0x1f:
		// The start of another member; a cut or bad header is reported as
		// truncated or corrupt by the header parse.
		if err := d.resetGzip(); err != nil {
			return d.fail(fmt.Errorf("gzip header: %w", err))
		}
		return nil
	}
	for i := 0; ; i++ {
		c, err := d.br.ReadByte()
		switch {
		case err == io.EOF:
			return io.EOF
		case err != nil:
			return d.fail(err)
		case !isPadding(c):
			return d.fail(errors.New("data after end of gzip stream"))
		case i >= maxGzipPadding:
			return d.fail(fmt.Errorf("more than %d bytes of padding after gzip stream", maxGzipPadding))
		}
	}
}

func isPadding(c byte) bool {
	return c == 0 || c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

// atEnd runs when a deflate stream (zlib or raw) ends; gzip has its own
// gzipMemberEnd and brotli rejects excess input itself. The zlib and flate
// readers stop after the stream without looking further. Bytes after a
// complete deflate stream are rejected:
// the proxy cannot tell whether they are a second response glued on, padding
// or an attack, and silently dropping them would change what was served.
func (d *decoder) atEnd() error {
	if d.coding != Deflate {
		return io.EOF
	}
	_, err := d.br.ReadByte()
	switch {
	case err == nil:
		return d.fail(errors.New("data after end of deflate stream"))
	case err == io.EOF:
		return io.EOF
	default:
		return d.fail(err)
	}
}

// brotliExcess decides whether an "excessive input" report from the brotli
// reader is real. The reader also reports it when the last bits of a valid
// stream arrived split across source reads: the decoder then finishes while
// still reading from its internal carry-over buffer, and the reader mistakes
// that non-empty buffer for unconsumed input. Reading once more tells the two
// apart: with genuinely unconsumed bytes the reader repeats the error without
// touching the source, otherwise it asks the source for more and reports
// io.EOF only if the source is at its end and the stream is complete.
func (d *decoder) brotliExcess() error {
	for range 100 {
		n, err := d.bro.Read(d.probe[:])
		switch {
		case n > 0 || err == errBrotliExcess:
			// Bytes after the end of a brotli stream are rejected for the
			// same reason as after zlib: the proxy cannot tell what they are.
			return d.fail(errors.New("data after end of brotli stream"))
		case err == io.EOF:
			return io.EOF
		case err != nil:
			return d.fail(err)
		}
	}
	return d.fail(io.ErrNoProgress)
}

func (d *decoder) read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if d.limit > 0 && d.n >= d.limit {
		// The limit is reached; only a stream that ends right here is
		// acceptable, so probe for one more decoded byte.
		n, err := d.readDecoded(d.probe[:])
		switch {
		case n > 0:
			d.err = &DecodeError{Coding: d.coding, Kind: KindLimit,
				Err: fmt.Errorf("more than %d decoded bytes", d.limit)}
		case err != nil:
			d.err = err
		}
		return 0, d.err
	}
	if d.limit > 0 && int64(len(p)) > d.limit-d.n {
		p = p[:d.limit-d.n]
	}
	n, err := d.readDecoded(p)
	d.n += int64(n)
	d.err = err
	return n, err
}

// decodeHandle is what callers hold. Close detaches it from the pooled
// decoder, so a Read after Close cannot touch a decoder already serving
// another stream.
type decodeHandle struct {
	d *decoder
}

func (h *decodeHandle) Read(p []byte) (int, error) {
	if h.d == nil {
		return 0, errReaderClosed
	}
	return h.d.read(p)
}

func (h *decodeHandle) Close() error {
	d := h.d
	if d == nil {
		return nil
	}
	h.d = nil
	d.release()
	decoderPools[d.coding].Put(d)
	return nil
}
