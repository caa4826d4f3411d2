// Package rewrite is the guest's streaming HTML rewriter (spec §4).
//
// It tokenizes the page with golang.org/x/net/html while it arrives and copies
// every token's raw bytes through unchanged, except for the URL attributes of
// §4.1 and the script injections of §4.2 and §4.3. It never fails a page for
// being malformed: what the tokenizer cannot make sense of is copied as text.
// Because the tokenizer pulls bytes until a token is complete, the output does
// not depend on how the input is split into reads.
package rewrite

import (
	"bytes"
	"errors"
	"io"

	"golang.org/x/net/html"
)

// Options configure one page rewrite.
type Options struct {
	// OriginHost is host[:port] of the publisher origin; URL attributes that
	// name it are rewritten to RequestScheme://RequestHost. Empty disables
	// URL rewriting.
	OriginHost    string
	RequestHost   string
	RequestScheme string

	// HeadPrepend is written right after the first <head> start tag.
	HeadPrepend []byte

	// BodyEnd, when set, is called once: at the first </body> end tag, or at
	// the end of the page when it has none, and only if HeadPrepend was
	// written (the bids belong with the ad slots). Its result is written just before
	// that tag (or at the end). It may block (the auction hold of §4.3);
	// BeforeWait is called first so that everything rewritten so far can be
	// flushed to the client while it waits.
	BodyEnd    func() []byte
	BeforeWait func() error

	// MaxTokenBytes bounds the memory the tokenizer may hold for a single
	// token (a huge inline script, an unterminated comment). From the first
	// token larger than this on, the rest of the page is copied through
	// unchanged, and BodyEnd runs at its end. 0 means DefaultMaxTokenBytes.
	MaxTokenBytes int
}

// DefaultMaxTokenBytes is three times the largest token of the 65 corpus
// pages (an inline script of 635 KB). The tokenizer's buffer may grow to
// twice this while reading such a token.
const DefaultMaxTokenBytes = 2 << 20

// Stats describe what one rewrite did.
type Stats struct {
	HeadFound     bool  // a <head> start tag was found and HeadPrepend written
	Oversize      bool  // a token exceeded MaxTokenBytes; the rest was copied as is
	BodyEndFound  bool  // a </body> end tag was found
	URLsRewritten int   // attribute values changed
	InBytes       int64 // bytes consumed from the source
	OutBytes      int64 // bytes written to the destination

	// BodyEndSkipped names the element (textarea, plaintext, script, ...)
	// whose raw text or RCDATA the page ended in, without </body>: BodyEnd
	// was not called, because its result would have been that element's
	// text, shown or run as part of it.
	BodyEndSkipped string
}

// ErrWrite marks errors of the destination, as opposed to the source.
var ErrWrite = errors.New("rewrite: write failed")

type rewriter struct {
	dst   io.Writer
	opts  *Options
	hosts hostRewriter
	stats Stats
	// rawOpen is the element whose raw text or RCDATA the tokenizer is in
	// (it reports the content as text until the matching end tag).
	rawOpen string
	attrs   []attr
	buf     []byte
	err     error
}

// Rewrite streams src to dst, rewriting it. It returns the source's error
// unchanged (a decoding error, a reset connection) so that the caller can
// tell a failed origin from a finished one, and write errors wrapped in
// ErrWrite.
func Rewrite(dst io.Writer, src io.Reader, opts *Options) (Stats, error) {
	cr := &countingReader{r: src}
	rw := &rewriter{
		dst:  dst,
		opts: opts,
		hosts: hostRewriter{
			originHost:  opts.OriginHost,
			hostB:       []byte(opts.OriginHost),
			requestHost: opts.RequestHost,
			scheme:      opts.RequestScheme,
		},
	}
	z := html.NewTokenizer(cr)
	maxTok := opts.MaxTokenBytes
	if maxTok <= 0 {
		maxTok = DefaultMaxTokenBytes
	}
	z.SetMaxBuf(maxTok)
	bodyEndDone := opts.BodyEnd == nil
	for rw.err == nil {
		tt := z.Next()
		raw := z.Raw()
		switch tt {
		case html.ErrorToken:
			// A tag cut off by the end of input is returned as the error
			// token's raw bytes; it is still page content.
			rw.write(raw)
			err := z.Err()
			if err == html.ErrBufferExceeded {
				err = rw.copyRest(z.Buffered(), cr)
			}
			rw.stats.InBytes = cr.n
			if err != io.EOF {
				return rw.stats, err
			}
			if !bodyEndDone && rw.err == nil {
				if rw.rawOpen != "" && !rw.stats.Oversize {
					rw.stats.BodyEndSkipped = rw.rawOpen
				} else {
					rw.bodyEnd()
				}
			}
			return rw.stats, rw.err
		case html.StartTagToken, html.SelfClosingTagToken:
			rw.startTag(raw)
			rw.rawOpen = rawTextElement(tagName(raw))
		case html.EndTagToken:
			rw.rawOpen = "" // inside raw text, only the element's own end tag is a tag
			if !bodyEndDone && bytes.EqualFold(tagName(raw), []byte("body")) {
				bodyEndDone = true
				rw.stats.BodyEndFound = true
				rw.bodyEnd()
			}
			rw.write(raw)
		default:
			rw.write(raw)
		}
	}
	rw.stats.InBytes = cr.n
	return rw.stats, rw.err
}

// copyRest copies the page's remaining bytes unchanged after a token too
// large to hold. It returns io.EOF when the source ended cleanly.
func (rw *rewriter) copyRest(buffered []byte, src io.Reader) error {
	rw.stats.Oversize = true
	rw.write(buffered)
	buf := make([]byte, 32<<10)
	for rw.err == nil {
		n, err := src.Read(buf)
		rw.write(buf[:n])
		if err != nil {
			return err
		}
	}
	return io.EOF
}

func (rw *rewriter) write(p []byte) {
	if rw.err != nil || len(p) == 0 {
		return
	}
	n, err := rw.dst.Write(p)
	rw.stats.OutBytes += int64(n)
	if err != nil {
		rw.err = errors.Join(ErrWrite, err)
	}
}

func (rw *rewriter) bodyEnd() {
	// §4.3: the bids script goes only into pages that got the ad slots.
	if !rw.stats.HeadFound {
		return
	}
	if rw.opts.BeforeWait != nil {
		if err := rw.opts.BeforeWait(); err != nil {
			rw.err = errors.Join(ErrWrite, err)
			return
		}
	}
	rw.write(rw.opts.BodyEnd())
}

func (rw *rewriter) startTag(raw []byte) {
	isHead := !rw.stats.HeadFound && bytes.EqualFold(tagName(raw), []byte("head"))
	rw.rewriteAttrs(raw)
	if isHead {
		rw.stats.HeadFound = true
		rw.write(rw.opts.HeadPrepend)
	}
}

// rewriteAttrs writes a start tag, with its URL attributes rewritten.
func (rw *rewriter) rewriteAttrs(raw []byte) {
	// Most tags name neither the origin host nor a character reference;
	// they are copied without scanning their attributes.
	if len(rw.hosts.hostB) == 0 || (!bytes.Contains(raw, rw.hosts.hostB) && bytes.IndexByte(raw, '&') < 0) {
		rw.write(raw)
		return
	}
	rw.attrs = scanAttrs(raw, rw.attrs[:0])
	out := rw.buf[:0]
	last := 0
	for _, a := range rw.attrs {
		if !a.hasValue {
			continue
		}
		kind := classifyAttr(raw[a.nameStart:a.nameEnd])
		if kind == kindNone {
			continue
		}
		nv, changed := rw.hosts.rewriteRawValue(raw[a.valStart:a.valEnd], a.quote, kind)
		if !changed {
			continue
		}
		out = append(out, raw[last:a.valStart]...)
		if a.quote == 0 && needsQuotes(nv) {
			out = append(out, '"')
			out = append(out, nv...)
			out = append(out, '"')
		} else {
			out = append(out, nv...)
		}
		last = a.valEnd
		rw.stats.URLsRewritten++
	}
	if last == 0 {
		rw.write(raw)
		return
	}
	out = append(out, raw[last:]...)
	rw.buf = out
	rw.write(out)
}

// needsQuotes reports whether an unquoted attribute value would end early.
func needsQuotes(v []byte) bool {
	for _, c := range v {
		if isSpace(c) || c == '>' || c == '"' || c == '\'' || c == '=' || c == '<' || c == '`' {
			return true
		}
	}
	return false
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// rawTextElement returns the lower-case name of an element whose content
// the tokenizer reads as raw text or RCDATA (the HTML standard's raw text
// and escapable raw text elements, plus plaintext, xmp, iframe, noembed,
// noframes and noscript as golang.org/x/net/html treats them), else "".
func rawTextElement(name []byte) string {
	for _, n := range []string{"script", "style", "textarea", "title", "plaintext", "xmp", "iframe", "noembed", "noframes", "noscript"} {
		if bytes.EqualFold(name, []byte(n)) {
			return n
		}
	}
	return ""
}
