package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strings"

	"github.com/ssatd/ssatd/internal/compress"
)

// Error kinds, in report order.
const (
	errTransport    = iota // the request failed before a response arrived
	errStatus              // status != 200
	errCoding              // Content-Encoding unknown or not accepted by the client
	errBodyRead            // reading the body off the wire failed (connection cut, short body)
	errDecode              // the body did not decode as its Content-Encoding
	errNotRewritten        // HTML without the bundle tag (or an eligible page without ad slots)
	errTruncated           // decoded body shorter than the expected page
	errMismatch            // decoded body differs from the expected page
	numErrKinds
)

var errKindNames = [numErrKinds]string{"transport", "status", "coding", "body_read", "decode", "not_rewritten", "truncated", "body_mismatch"}

// Markers looked for in decoded HTML.
var (
	markBundle  = []byte(`id="trustedserver-js"`)
	markAdSlots = []byte(`adSlots=JSON.parse(`)
)

// expect is what a decoded body must be: its length and SHA-256.
type expect struct {
	n   int64
	sum [sha256.Size]byte
}

func expectOf(b []byte) expect { return expect{n: int64(len(b)), sum: sha256.Sum256(b)} }

// checker hashes and counts a decoded body and looks for the markers,
// which may straddle two writes.
type checker struct {
	h       hash.Hash
	n       int64
	html    bool
	found   [2]bool
	tail    []byte
	scratch []byte
}

var markers = [2][]byte{markBundle, markAdSlots}

func (c *checker) reset(html bool) {
	if c.h == nil {
		c.h = sha256.New()
	}
	c.h.Reset()
	c.n, c.html, c.found, c.tail = 0, html, [2]bool{}, c.tail[:0]
}

func (c *checker) Write(p []byte) (int, error) {
	c.h.Write(p)
	c.n += int64(len(p))
	if !c.html {
		return len(p), nil
	}
	keep := max(len(markBundle), len(markAdSlots)) - 1
	edge := append(append(c.scratch[:0], c.tail...), p[:min(len(p), keep)]...)
	c.scratch = edge
	for i, m := range markers {
		if !c.found[i] && (bytes.Contains(edge, m) || bytes.Contains(p, m)) {
			c.found[i] = true
		}
	}
	if len(p) >= keep {
		c.tail = append(c.tail[:0], p[len(p)-keep:]...)
	} else {
		c.tail = append(c.tail, p...)
		if len(c.tail) > keep {
			c.tail = c.tail[:copy(c.tail, c.tail[len(c.tail)-keep:])]
		}
	}
	return len(p), nil
}

// check reads resp completely and records in out what is wrong with it:
// the status, the coding, the body on the wire, its decoding, the markers
// of a rewritten page, and the exact decoded bytes.
func (l *loader) check(out *outcome, w *clientWork, resp *http.Response, r *resource, kind, aei int) {
	body := &countingReader{r: resp.Body}
	if refusedAsSpecified(r, resp) {
		// A page refused by server.max_concurrent_pages, or a request past
		// one client's share of the places (every load client is one
		// address): answered as specified (docs/behaviour.md, "Limits"),
		// counted apart.
		_, _ = io.CopyBuffer(io.Discard, io.LimitReader(body, 1<<20), w.buf)
		out.overloaded = true
		return
	}
	if resp.StatusCode != http.StatusOK {
		_, _ = io.CopyBuffer(io.Discard, io.LimitReader(body, 1<<20), w.buf)
		out.errKind, out.detail = errStatus, resp.Status
		return
	}
	ce := strings.Join(resp.Header.Values("Content-Encoding"), ", ")
	c, ok := compress.ParseContentEncoding(ce)
	if !ok || (c != compress.Identity && !l.accepts[aei].Accepts(string(c))) {
		_, _ = io.CopyBuffer(io.Discard, body, w.buf)
		out.errKind, out.detail = errCoding, fmt.Sprintf("Content-Encoding %q", ce)
		return
	}
	out.coding = string(c)
	dec, err := compress.NewReader(c, body, decodeLimit)
	if err == nil {
		w.chk.reset(r.html)
		_, err = io.CopyBuffer(&w.chk, dec, w.buf)
		dec.Close()
	}
	out.wire, out.decoded = body.n, w.chk.n
	if err != nil {
		if body.err != nil && !errors.Is(body.err, io.EOF) {
			out.errKind, out.detail = errBodyRead, fmt.Sprintf("after %d bytes: %v", body.n, body.err)
		} else {
			out.errKind, out.detail = errDecode, fmt.Sprintf("%s after %d wire bytes: %v", c, body.n, err)
		}
		return
	}
	var sum [sha256.Size]byte
	w.chk.h.Sum(sum[:0])
	got := expect{n: w.chk.n, sum: sum}
	want := r.want[kind]
	if r.html && r.hasHead && (!w.chk.found[0] || (kind == kindEligible && !w.chk.found[1])) {
		out.errKind, out.detail = errNotRewritten, fmt.Sprintf("bundle tag %v, ad slots %v, %d bytes (%s)", w.chk.found[0], w.chk.found[1], got.n, c)
		return
	}
	switch {
	case got == want:
	case kind == kindEligible && got == r.wantNoBids:
		out.noBids = true
	case got.n < want.n:
		out.errKind, out.detail = errTruncated, fmt.Sprintf("%d of %d bytes (%s, %d wire bytes)", got.n, want.n, c, body.n)
	default:
		out.errKind, out.detail = errMismatch, fmt.Sprintf("%d bytes, want %d (%s)", got.n, want.n, c)
	}
}

type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// refusedAsSpecified reports whether resp is a refusal that the limits
// call for: 503 with Retry-After for a page (server.max_concurrent_pages),
// 429 with Retry-After for any request past its client's share.
func refusedAsSpecified(r *resource, resp *http.Response) bool {
	if resp.Header.Get("Retry-After") == "" {
		return false
	}
	return resp.StatusCode == http.StatusTooManyRequests ||
		r.html && resp.StatusCode == http.StatusServiceUnavailable
}
