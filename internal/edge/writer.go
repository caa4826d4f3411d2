package edge

import (
	"bufio"
	"io"
	"net/http"
	"sync"

	"github.com/klauspost/compress/gzhttp/writer/zstdkp"
	"github.com/klauspost/compress/zstd"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/ssat"
)

// counter is the writer under every encoder: it counts what the client
// receives and records a failed write.
type counter struct {
	w    io.Writer
	n    int64
	fail func(error) error
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, c.fail(err)
}

// encOutPool holds the buffers between an encoder and the counter. The
// encoders write their output in pieces of a few hundred bytes (klauspost's
// deflate emits every 240 bytes), and each piece that reaches the client
// side costs a write deadline and a pass through net/http's response
// writer: measured with perf at c=16 on a 1.3 MB page, that was 9 % of the
// daemon's CPU. The buffer turns them into one write per flush.
var encOutPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, encOutSize) }}

// encOutSize holds the encoder output of one 32 KiB write of the guest at
// the delivery levels with room to spare.
const encOutSize = 16 << 10

// encoder is a streaming encoder of the chosen coding.
type encoder interface {
	io.Writer
	Flush() error
	Close() error
}

// writer is the edge's ResponseWriter for one response: it applies the
// decision made when the guest writes its final header, holds the body
// back while it is under min_size, and streams it through the encoder.
type writer struct {
	http.ResponseWriter
	e      *Edge
	ae     compress.AcceptEncoding
	method string
	out    counter

	decided    bool // the guest's final header is written: dec holds
	dec        decision
	status     int
	headerOut  bool   // the status line went to the client
	coding     string // the Content-Encoding that went with it
	compressed bool   // the edge applied coding
	enc        encoder
	encOut     *bufio.Writer // between enc and out, pooled; nil when not compressing
	pending    bool          // compressing, but holding the body under min_size
	buf        []byte        // the body held back
	in         int64         // body bytes the guest wrote
	err        error         // the first failure to deliver
}

// fail records the first delivery failure and returns err.
func (w *writer) fail(err error) error {
	if err != nil && w.err == nil {
		w.err = err
	}
	return err
}

// surrogateOnly are response headers meant for the CDN alone, which Fastly
// removes before it delivers a response: Surrogate-Control is read for the
// cache's TTL and "stripped from the response before sending to the end
// user" (Fastly's note on
// https://www.fastly.com/documentation/reference/http/http-headers/Surrogate-Control/,
// pointing at https://www.fastly.com/documentation/guides/concepts/edge-state/cache/cache-freshness/;
// the same page says it passes on only within a service chain). The edge
// is the last hop before the browser, so it removes it too.
var surrogateOnly = []string{"Surrogate-Control"}

func stripSurrogateOnly(h http.Header) {
	for _, k := range surrogateOnly {
		h.Del(k)
	}
}

func (w *writer) WriteHeader(status int) {
	if status >= 100 && status < 200 {
		w.informational(status)
		return
	}
	if w.decided {
		if w.headerOut {
			w.ResponseWriter.WriteHeader(status) // net/http reports the superfluous call
		}
		return
	}
	w.decided, w.status = true, status
	stripSurrogateOnly(w.Header())
	w.dec = w.e.decide(w.method, status, w.Header(), w.ae)
	switch {
	case w.dec.coding == choiceNone:
		w.sendHeader()
	case w.e.minSize > 0 && w.Header().Get("Content-Length") == "":
		w.pending = true // decide found no declared length to check
	default:
		_ = w.start()
	}
}

// informational sends a 1xx without the hint, which stays for the final
// header's decision.
func (w *writer) informational(status int) {
	h := w.Header()
	key := http.CanonicalHeaderKey(ssat.HintHeader)
	hints, had := h[key]
	delete(h, key)
	stripSurrogateOnly(h)
	w.ResponseWriter.WriteHeader(status)
	if had {
		h[key] = hints
	}
}

func (w *writer) sendHeader() {
	w.headerOut = true
	w.coding = w.Header().Get("Content-Encoding")
	w.ResponseWriter.WriteHeader(w.status)
}

// start commits to compressing: headers first, then the encoder, then the
// body held back so far.
func (w *writer) start() error {
	h := w.Header()
	h.Set("Content-Encoding", w.dec.coding.String())
	h.Del("Content-Length")
	h.Del("Accept-Ranges") // ranges of the identity body do not apply
	w.pending, w.compressed = false, true
	w.sendHeader()
	w.enc = w.newEncoder()
	if len(w.buf) == 0 {
		return nil
	}
	buf := w.buf
	w.buf = nil
	_, err := w.enc.Write(buf)
	return w.fail(err)
}

// newEncoder starts the response's encoder. It cannot fail: the levels
// were checked when the edge was built (New).
func (w *writer) newEncoder() encoder {
	w.encOut = encOutPool.Get().(*bufio.Writer)
	w.encOut.Reset(&w.out)
	switch w.dec.coding {
	case choiceBrotli:
		return w.e.codecs.Writer(compress.Brotli, w.encOut)
	case choiceZstd:
		// Pooled, one goroutine, a 128 KiB window: what gzhttp uses.
		return zstdkp.NewWriter(w.encOut, int(zstd.SpeedFastest))
	}
	return w.e.codecs.Writer(compress.Gzip, w.encOut)
}

// releaseEncOut gives the encoder's output buffer back; what it still
// holds is dropped (the response is over or aborted).
func (w *writer) releaseEncOut() {
	if w.encOut != nil {
		w.encOut.Reset(nil)
		encOutPool.Put(w.encOut)
		w.encOut = nil
	}
}

func (w *writer) Write(p []byte) (int, error) {
	if !w.decided {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return 0, w.err
	}
	switch {
	case w.enc != nil:
		n, err := w.enc.Write(p)
		w.in += int64(n)
		return n, w.fail(err)
	case w.pending:
		w.buf = append(w.buf, p...)
		w.in += int64(len(p))
		if len(w.buf) >= w.e.minSize {
			if err := w.start(); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	}
	n, err := w.out.Write(p)
	w.in += int64(n)
	return n, err
}

// FlushError pushes what the guest produced so far to the client. A flush
// while still under min_size commits to compression: streaming beats
// ratio. It reports any delivery failure so far, so that a guest
// streaming to a client that has gone stops.
func (w *writer) FlushError() error {
	if !w.decided {
		w.WriteHeader(http.StatusOK)
	}
	if w.pending {
		if err := w.start(); err != nil {
			return err
		}
	}
	if w.err != nil {
		return w.err
	}
	if w.enc != nil {
		if err := w.enc.Flush(); err != nil {
			return w.fail(err)
		}
		if err := w.encOut.Flush(); err != nil {
			return w.fail(err)
		}
	}
	return w.fail(http.NewResponseController(w.ResponseWriter).Flush())
}

func (w *writer) Flush() { _ = w.FlushError() }

func (w *writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// close ends a response whose handler returned; an error means the client
// did not get all of it.
func (w *writer) close() error {
	switch {
	case w.err != nil:
		w.releaseEncOut()
		return w.err
	case !w.decided:
		// Nothing written: net/http sends an empty 200, without the hint.
		w.Header().Del(ssat.HintHeader)
		stripSurrogateOnly(w.Header())
		return nil
	case w.pending:
		// The body ended under min_size: it goes as it is.
		w.pending, w.dec = false, decision{choiceNone, reasonSmall}
		w.sendHeader()
		buf := w.buf
		w.buf = nil
		_, err := w.out.Write(buf)
		return err
	case w.enc == nil:
		return nil
	}
	err := w.enc.Close()
	w.enc = nil
	if err == nil {
		err = w.encOut.Flush()
	}
	w.releaseEncOut()
	if err != nil {
		return w.fail(err)
	}
	// Push the end of the stream out while the handler runs: a failure is
	// seen here rather than by net/http after it, and net/http cannot give
	// a compressed body a Content-Length it computed from a short buffer.
	return w.fail(http.NewResponseController(w.ResponseWriter).Flush())
}

// abandon leaves the stream unfinished (the response is being aborted).
func (w *writer) abandon() {
	w.enc, w.buf = nil, nil
	w.releaseEncOut()
}

// report fills d once the response is over.
func (w *writer) report(d *ssat.Delivery) {
	d.Coding = w.coding
	if !w.headerOut {
		d.Coding = w.Header().Get("Content-Encoding")
	}
	if d.Coding == "" {
		d.Coding = string(compress.Identity)
	}
	d.Compressed = w.compressed
	d.BytesIn, d.BytesOut = w.in, w.out.n
	d.Err = w.err
}
