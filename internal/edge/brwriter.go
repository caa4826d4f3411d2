package edge

import (
	"net/http"

	"github.com/ssatd/ssatd/internal/compress"
)

// brWriter is the outermost layer: when the gate chose br it compresses the
// body with a pooled brotli writer, streaming; otherwise it passes through.
type brWriter struct {
	http.ResponseWriter
	st      *state
	opts    compress.Options
	minSize int

	status    int  // held while deciding against minSize
	headerOut bool // the status line went to the client
	enc       compress.Writer
	buf       []byte // body held back until minSize is reached
	pending   bool
}

func (b *brWriter) WriteHeader(status int) {
	if status >= 100 && status < 200 {
		b.ResponseWriter.WriteHeader(status)
		return
	}
	if b.headerOut || b.pending {
		return
	}
	if b.st.choice != choiceBrotli {
		b.headerOut = true
		b.ResponseWriter.WriteHeader(status)
		return
	}
	b.status = status
	if b.minSize > 0 {
		b.pending = true
		return
	}
	b.start()
}

// start commits to br: headers first, then the encoder, then the body
// held back so far. An error is the client's write failing.
func (b *brWriter) start() error {
	h := b.Header()
	h.Set("Content-Encoding", string(compress.Brotli))
	h.Del("Content-Length")
	h.Del("Accept-Ranges") // ranges of the identity body do not apply
	b.pending = false
	b.headerOut = true
	b.ResponseWriter.WriteHeader(b.status)
	enc, err := compress.NewWriter(compress.Brotli, b.ResponseWriter, b.opts)
	if err != nil {
		// Options were checked by New; an error here is a programming
		// error, and a panic aborts the response rather than corrupt it.
		panic(err)
	}
	b.enc = enc
	if len(b.buf) == 0 {
		return nil
	}
	buf := b.buf
	b.buf = nil
	_, err = b.enc.Write(buf)
	return b.st.fail(err)
}

// startPlain gives up on compression for a body smaller than minSize.
func (b *brWriter) startPlain() error {
	b.pending = false
	b.headerOut = true
	b.ResponseWriter.WriteHeader(b.status)
	if len(b.buf) == 0 {
		return nil
	}
	_, err := b.ResponseWriter.Write(b.buf)
	b.buf = nil
	return b.st.fail(err)
}

func (b *brWriter) Write(p []byte) (int, error) {
	if !b.headerOut && !b.pending {
		b.WriteHeader(http.StatusOK)
	}
	switch {
	case b.enc != nil:
		n, err := b.enc.Write(p)
		return n, b.st.fail(err)
	case b.pending:
		b.buf = append(b.buf, p...)
		if len(b.buf) >= b.minSize {
			if err := b.start(); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	}
	return b.ResponseWriter.Write(p)
}

// Flush pushes what the guest produced so far to the client. A flush while
// still under minSize commits to compression: streaming beats ratio.
func (b *brWriter) Flush() {
	_ = b.FlushError()
}

func (b *brWriter) FlushError() error {
	if b.pending {
		if err := b.start(); err != nil {
			return err
		}
	}
	if b.enc != nil {
		if err := b.enc.Flush(); err != nil {
			return b.st.fail(err)
		}
	}
	if !b.headerOut {
		return nil
	}
	return b.st.fail(http.NewResponseController(b.ResponseWriter).Flush())
}

func (b *brWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// close ends a completed response; an error means the client did not get
// all of it.
func (b *brWriter) close() error {
	if b.pending {
		return b.startPlain()
	}
	if b.enc == nil {
		return nil
	}
	err := b.enc.Close()
	b.enc = nil
	return b.st.fail(err)
}

// abandon leaves the br stream unfinished (the response is being aborted).
func (b *brWriter) abandon() {
	b.enc = nil
}
