// Package edge is the stand-in for Fastly's dynamic compression (docs/behaviour.md, "Edge"):
// middleware in front of the guest that compresses the responses carrying
// X-Compress-Hint and removes the hint from everything it lets through.
//
// gzip (and zstd when enabled) is delegated to klauspost/compress/gzhttp;
// br is done here with pooled andybalholm/brotli writers. Responses without
// the hint pass through untouched, Vary included.
package edge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"

	"github.com/ssatd/ssatd/internal/compress"
	"github.com/ssatd/ssatd/internal/config"
	"github.com/ssatd/ssatd/internal/ssat"
)

// Options configure the edge. They are checked once, by New, against the
// ranges package compress owns.
type Options struct {
	GzipLevel     int  // compress.GzipLevels
	BrotliQuality int  // compress.BrotliQualities
	BrotliWindow  int  // compress.BrotliWindows; 0 means 22
	MinSize       int  // smallest body compressed, bytes; 0 compresses all
	Zstd          bool // let gzhttp answer zstd to clients that prefer it
}

// FromConfig wraps next in the edge the [delivery] section describes. It is
// the one translation of that section into Options, used by the daemon,
// measure, the load tool and the tests alike.
func FromConfig(next http.Handler, d config.DeliveryConfig) (*Edge, error) {
	return New(next, Options{
		GzipLevel:     d.GzipLevel,
		BrotliQuality: d.BrotliQuality,
		MinSize:       d.MinSize,
		Zstd:          d.Zstd,
	})
}

// Edge is the delivery compression middleware.
type Edge struct {
	next    http.Handler
	gz      http.Handler // gzhttp around the gate, for clients accepting gzip
	plain   http.Handler // the gate alone
	brOpts  compress.Options
	minSize int
}

// New wraps next.
func New(next http.Handler, o Options) (*Edge, error) {
	if o.BrotliWindow == 0 {
		o.BrotliWindow = 22
	}
	var errs []error
	if err := compress.GzipLevels.Check("gzip level", o.GzipLevel); err != nil {
		errs = append(errs, fmt.Errorf("edge: %w", err))
	}
	brOpts := compress.Options{BrotliQuality: o.BrotliQuality, BrotliWindow: o.BrotliWindow}
	// A brotli writer to nowhere checks the brotli options once, here,
	// rather than on a response.
	if bw, err := compress.NewWriter(compress.Brotli, io.Discard, brOpts); err != nil {
		errs = append(errs, fmt.Errorf("edge: %w", err))
	} else {
		_ = bw.Close()
	}
	if o.MinSize < 0 {
		errs = append(errs, fmt.Errorf("edge: min size %d is negative", o.MinSize))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	wrap, err := gzhttp.NewWrapper(
		gzhttp.CompressionLevel(o.GzipLevel),
		gzhttp.MinSize(o.MinSize),
		gzhttp.EnableZstd(o.Zstd),
		gzhttp.AcceptWildcards(true),
		// The gate decides which responses are compressed (by the hint);
		// gzhttp must not second-guess it by content type.
		gzhttp.ContentTypeFilter(gzhttp.CompressAllContentTypeFilter),
		gzhttp.SetContentType(false),
	)
	if err != nil {
		return nil, fmt.Errorf("edge: gzhttp: %w", err)
	}
	e := &Edge{next: next, brOpts: brOpts, minSize: o.MinSize}
	gate := http.HandlerFunc(e.serveGate)
	e.plain = gate
	e.gz = wrap(gate)
	return e, nil
}

type stateKey struct{}

// state is shared by the layers of one request.
type state struct {
	ae      compress.AcceptEncoding
	viaGzip bool // gzhttp is in the chain (it added a Vary line)
	choice  choice
	in      int64 // body bytes the guest wrote
	err     error // the first failure to deliver, from any layer
}

// fail records the first delivery failure and returns err.
func (st *state) fail(err error) error {
	if err != nil && st.err == nil {
		st.err = err
	}
	return err
}

func (e *Edge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st := &state{ae: compress.ParseAcceptEncoding(r.Header.Values("Accept-Encoding"))}
	d := &ssat.Delivery{}
	sent := &sentWriter{ResponseWriter: w, st: st}
	bw := &brWriter{ResponseWriter: sent, st: st, opts: e.brOpts, minSize: e.minSize}
	h := e.plain
	if st.ae.Q(string(compress.Gzip)) > 0 || st.ae.Q("zstd") > 0 {
		st.viaGzip = true
		h = e.gz
	}
	completed := false
	defer func() {
		// Finish the br stream only for a handler that returned normally:
		// after a panic (an aborted response) the stream must stay
		// unfinished so that no decoder can take it for a whole body.
		if completed {
			st.fail(bw.close())
			if st.err == nil && st.choice != choiceNone && sent.coding != "" {
				// Push the end of a compressed stream out while the handler
				// runs, so that a failure is seen here, not by net/http
				// after it.
				st.fail(sent.FlushError())
			}
		} else {
			bw.abandon()
		}
		sent.report(d, st)
		d.Finish()
		if completed && d.Err != nil {
			// A response the client did not receive whole is aborted like
			// any other: net/http then never writes the end of the body.
			panic(http.ErrAbortHandler)
		}
	}()
	ctx := ssat.WithDelivery(context.WithValue(r.Context(), stateKey{}, st), d)
	h.ServeHTTP(bw, r.WithContext(ctx))
	completed = true
}

// sentWriter is the innermost writer, under every encoder: it sees what
// the client receives, for the guest's access line and metrics.
type sentWriter struct {
	http.ResponseWriter
	st     *state
	coding string // Content-Encoding when the final header went out
	header bool
	n      int64
}

func (s *sentWriter) WriteHeader(status int) {
	if status >= 200 && !s.header {
		s.header = true
		s.coding = s.Header().Get("Content-Encoding")
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *sentWriter) Write(p []byte) (int, error) {
	if !s.header {
		s.WriteHeader(http.StatusOK)
	}
	n, err := s.ResponseWriter.Write(p)
	s.n += int64(n)
	return n, s.st.fail(err)
}

// FlushError records a failed flush: gzhttp's Flush drops the error, so
// the state is where the layers above find it.
func (s *sentWriter) FlushError() error {
	if !s.header {
		s.WriteHeader(http.StatusOK)
	}
	return s.st.fail(http.NewResponseController(s.ResponseWriter).Flush())
}

func (s *sentWriter) Flush() { _ = s.FlushError() }

func (s *sentWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// report fills d once the response is over.
func (s *sentWriter) report(d *ssat.Delivery, st *state) {
	d.Coding = s.coding
	if !s.header {
		d.Coding = s.Header().Get("Content-Encoding")
	}
	if d.Coding == "" {
		d.Coding = string(compress.Identity)
	}
	// The gate lets a coding through only for a response the guest left
	// unencoded, so any coding on a compressed choice is the edge's.
	d.Compressed = st.choice != choiceNone && d.Coding != string(compress.Identity)
	d.BytesIn, d.BytesOut = st.in, s.n
	d.Err = st.err
}

func stateOf(r *http.Request) *state {
	st, _ := r.Context().Value(stateKey{}).(*state)
	return st
}

// serveGate runs innermost, around the guest: it sees the guest's headers
// first and makes the "Edge" (docs/behaviour.md) decision for the layers outside it.
func (e *Edge) serveGate(w http.ResponseWriter, r *http.Request) {
	st := stateOf(r)
	e.next.ServeHTTP(&gateWriter{ResponseWriter: w, st: st, method: r.Method}, r)
}

// gateWriter makes the decision when the guest writes its header.
type gateWriter struct {
	http.ResponseWriter
	st      *state
	method  string
	written bool
}

func (g *gateWriter) WriteHeader(status int) {
	if status >= 100 && status < 200 {
		g.ResponseWriter.WriteHeader(status)
		return
	}
	if !g.written {
		g.written = true
		g.decide(status)
	}
	g.ResponseWriter.WriteHeader(status)
}

func (g *gateWriter) Write(p []byte) (int, error) {
	if !g.written {
		g.WriteHeader(http.StatusOK)
	}
	n, err := g.ResponseWriter.Write(p)
	g.st.in += int64(n)
	if err == nil {
		// A layer below may have failed and not said so (gzhttp holds
		// back a write error until Close).
		err = g.st.err
	}
	return n, err
}

// FlushError passes a flush down and reports any delivery failure so far,
// so that a guest streaming to a client that has gone stops.
func (g *gateWriter) FlushError() error {
	if !g.written {
		g.WriteHeader(http.StatusOK)
	}
	if err := http.NewResponseController(g.ResponseWriter).Flush(); err != nil {
		return g.st.fail(err)
	}
	return g.st.err
}

func (g *gateWriter) Flush() { _ = g.FlushError() }

func (g *gateWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

func (g *gateWriter) decide(status int) {
	h := g.Header()
	hints := h.Values(ssat.HintHeader)
	h.Del(ssat.HintHeader) // never reaches the client, compressed or not (docs/behaviour.md, "Edge")
	st := g.st
	if len(hints) == 0 {
		// Not ours to touch: undo gzhttp's Vary line and keep it out.
		g.noGzip()
		if st.viaGzip {
			removeFirstVary(h, "Accept-Encoding")
		}
		return
	}
	c := negotiate(hints[0], st.ae)
	if c != choiceNone && (h.Get("Content-Encoding") != "" || skip(g.method, status, h)) {
		c = choiceNone
	}
	if c == choiceGzip && !st.viaGzip {
		c = choiceNone
	}
	st.choice = c
	// The representation now depends on Accept-Encoding either way; the
	// guest may have listed it too, so keep a single line.
	compress.AddVary(h, "Accept-Encoding")
	if st.viaGzip && compress.VaryCount(h, "Accept-Encoding") > 1 {
		removeFirstVary(h, "Accept-Encoding")
	}
	if c != choiceGzip {
		g.noGzip()
	}
}

func (g *gateWriter) noGzip() {
	if g.st.viaGzip {
		g.Header().Set(gzhttp.HeaderNoCompression, "1")
	}
}

// removeFirstVary removes the first Vary line that is exactly token: the
// one gzhttp adds before the handler runs.
func removeFirstVary(h http.Header, token string) {
	vs := h.Values("Vary")
	for i, v := range vs {
		if strings.EqualFold(strings.TrimSpace(v), token) {
			rest := append(append([]string{}, vs[:i]...), vs[i+1:]...)
			if len(rest) == 0 {
				h.Del("Vary")
			} else {
				h["Vary"] = rest
			}
			return
		}
	}
}
