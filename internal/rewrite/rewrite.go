// Package rewrite is the guest's streaming HTML rewriter (docs/behaviour.md,
// "Rewriting").
//
// A purpose-built scanner finds tags, comments and raw-text elements while
// the page arrives (scan.go: the read loop and text; tag.go: tags and
// attributes; rawtext.go: comments, raw text and script data; states.go:
// the state tables), and copies every byte through unchanged,
// straight from its read buffer, except for the origin references of "URL
// rewriting" (URL attributes; with Options.Inline also other attributes,
// text, comments and raw text) and the script injections of "Bundle tag"
// and "SSAT injection".
// It never fails a page for being malformed: what is not a tag is copied as
// text. The output does not depend on how the input is split into reads.
//
// # Tokenization
//
// The scanner recognises what the WHATWG HTML tokenizer recognises, without
// the tree builder's context, as golang.org/x/net/html's Tokenizer does:
// start and end tags (attributes are parsed only to find the tag's end, and
// fully only for tags that may need rewriting), comments (including the
// "<!-->", "<!--->" and "--!>" forms), doctypes, bogus comments, and the
// raw-text and RCDATA elements script, style, textarea, title, xmp, iframe,
// noembed, noframes, noscript and plaintext, whose content ends only at the
// matching end tag, compared case-insensitively. Inside a script the
// script-data escaped and double-escaped states are followed, so that a
// "</script>" inside "<!-- <script> ... -->" does not end the element.
//
// Unlike the Tokenizer, which sees no tree, it follows SVG and MathML
// (foreign.go): inside them title, style and the other raw-text names are
// ordinary elements and "<![CDATA[" opens a CDATA section, as html.Parse
// and browsers read them (FuzzTreeDifferential compares the two). noscript
// is raw text, as in a browser with scripting on.
//
// The tests keep a rewriter built on the x/net/html Tokenizer as the
// reference (reference_test.go, which shares no code with the scanner),
// and the output is byte-identical to it. The reference drives the
// Tokenizer through foreign content as html.Parse does (NextIsNotRawText,
// AllowCDATA), and reads a script's text by the standard's states itself,
// where the Tokenizer departs from the WHATWG rules: in the script-data
// escaped less-than sign state ("<" inside "<script><!--"), a character
// other than "/" or a letter returns to the script-data escaped state; the
// Tokenizer returns to plain script data, so "<script><!--<!<script></script>"
// ends the script at its first "</script>" where a browser, and the
// scanner, do not (TestScriptEscapedLessThanFollowsStandard).
//
// URL attribute values are decoded by the attribute rule for legacy
// references written without ";" (&times, &copy, &not, ...), as the
// Tokenizer decodes them: they stay as written before "=" or a letter or
// digit, so "?a=1&timestamp=2" keeps its "&timestamp"; html.UnescapeString
// applies the text rule and would turn it into "×tamp"
// (TestQueryParameterLikeLegacyReferenceKept, TestUnescapeAttrMatchesTheTokenizer).
// A rewritten value reads, to a browser, as the original with only the
// origin replaced (TestRewrittenValueDecodesToRewrittenURL).
//
// # Memory
//
// Only an unfinished tag is held between reads, and, after <head>, the
// output up to the page's charset declaration, the end of the head or byte
// 1024 (charset.go); text, comments and raw text are written as they are
// scanned, but for Next.js's Flight data (flight.go): a push script is
// read whole, and the output is held while a text row runs over pushes,
// each up to Options.MaxTokenBytes. A tag that does not end within
// Options.MaxTokenBytes makes the rest of the page be copied through
// unchanged (Stats.Oversize), so memory per page is bounded by that limit
// however the page is built.
package rewrite

import (
	"errors"
	"io"
	"sync"

	"github.com/ssatd/ssatd/internal/csp"
)

// Options configure one page rewrite.
type Options struct {
	// OriginHost is host[:port] of the publisher origin, without the port
	// when it is the default of the origin's scheme (as config.Validate
	// derives it); URL attributes that name it, in any letter case, are
	// rewritten to RequestScheme://RequestHost. Empty disables URL rewriting.
	// RequestHost is a host name or IP literal with an optional port, as
	// docs/behaviour.md ("URL rewriting") admits it: it is written into
	// attribute values as it is, since it holds nothing that needs escaping.
	OriginHost    string
	RequestHost   string
	RequestScheme string

	// HeadPrepend is written right after the first <head> start tag, or
	// right after the page's charset <meta> when it would otherwise push
	// that out of the first 1024 bytes (charset.go).
	HeadPrepend []byte

	// BodyEnd, when set, is called once: at the first </body> end tag, or at
	// the end of the page when it has none, or just before the tag past
	// which the scanner stops following the page (Stats.Oversize,
	// Stats.DepthExceeded) when it comes first, and only if HeadPrepend was
	// written (the bids belong with the ad slots). Its result is written just before
	// that tag (or at the end). It may block (the auction hold of
	// docs/behaviour.md, "SSAT injection"); BeforeWait is called first so
	// that everything rewritten so far can be flushed to the client while it
	// waits.
	BodyEnd    func() []byte
	BeforeWait func() error

	// MaxTokenBytes bounds the memory held for a single tag (a huge
	// attribute, an unterminated tag). From the first tag that does not end
	// within this many bytes on, the rest of the page is copied through
	// unchanged, and BodyEnd, if not called yet, runs just before that tag.
	// Text, comments and the content
	// of raw-text elements are never held, whatever their size, but for
	// Next.js's Flight data, which it bounds too (flight.go). 0 means
	// DefaultMaxTokenBytes.
	MaxTokenBytes int

	// Inline applies the text rules inside the page (docs/behaviour.md,
	// "URL rewriting", inline.go, encoded.go): every attribute but xmlns,
	// text, comments and the content of every raw-text element, and the
	// percent- and \u002F-escaped forms, in URL attributes too.
	Inline bool

	// CSP is the page's Content Security Policy as its header set it
	// (csp.Page.ReadHeader), which the injections and the rewrite respect
	// (docs/behaviour.md, "Content Security Policy"); the policies of the
	// page's <meta http-equiv="content-security-policy"> are read as they
	// come. Nil turns these rules off.
	CSP *csp.Page
}

// DefaultMaxTokenBytes is three times the largest token of the 65 corpus
// pages (an inline script of 635 KB; their largest tag is far smaller).
const DefaultMaxTokenBytes = 2 << 20

// Stats describe what one rewrite did.
type Stats struct {
	HeadFound     bool // a <head> start tag was found and HeadPrepend written
	Oversize      bool // a tag exceeded MaxTokenBytes; from it on the page was copied as is
	BodyEndFound  bool // a </body> end tag was found
	URLsRewritten int  // attribute values changed
	// InlineRewritten counts origin references replaced in text, comments
	// and raw text (Options.Inline); attribute values count in URLsRewritten.
	InlineRewritten int
	InBytes         int64 // bytes consumed from the source
	OutBytes        int64 // bytes written to the destination

	// CSP is the page's policies' state at its end: the nonce the
	// injected scripts carried, whether they took the loader form, the
	// inline content kept and what a policy blocks (csp.Page).
	CSP csp.Page
	// CSPKept counts the inline <script> and <style> elements, and the
	// attributes, left byte for byte because a policy allows them by hash.
	CSPKept int
	// CSPMetaChanged counts the <meta> policies given the loader's hash.
	CSPMetaChanged int

	// BodyEndSkipped names the element (textarea, plaintext, script, ...)
	// whose raw text or RCDATA the page ended in, without </body>: BodyEnd
	// was not called, because its result would have been that element's
	// text, shown or run as part of it. "![CDATA[" is a CDATA section and
	// "math" MathML, where a script never runs. After Oversize or
	// DepthExceeded it names where the scanner stopped following the page,
	// the only place left for the bids.
	BodyEndSkipped string

	// DepthExceeded: SVG or MathML nested deeper than the scanner follows
	// (256 elements, or 16 KiB of their names); as after Oversize, the page
	// from that tag on was copied as is, and the bids script, if not
	// written yet, went just before the tag.
	DepthExceeded bool
}

// The caps past which the scanner stops following a page (Stats.Cap): a
// closed set, used as a metric label.
const (
	CapOversizeTag  = "oversize_tag"  // Stats.Oversize
	CapForeignDepth = "foreign_depth" // Stats.DepthExceeded
)

// Cap names the cap the page went past, or "" when the scanner followed
// it to its end.
func (st Stats) Cap() string {
	switch {
	case st.Oversize:
		return CapOversizeTag
	case st.DepthExceeded:
		return CapForeignDepth
	}
	return ""
}

// BidsLeftOut says why BodyEnd was not called for a page that got the head
// injection, as a closed set (a metric label): the page ends inside raw
// text or RCDATA ("raw_text"), a CDATA section ("cdata") or MathML
// ("mathml"), or it went past a cap (Cap) where a script would not run;
// "" when the bids were not left out for any of these.
func (st Stats) BidsLeftOut() string {
	switch {
	case st.BodyEndSkipped == "" || !st.HeadFound:
		return ""
	case st.Cap() != "":
		return st.Cap()
	case st.BodyEndSkipped == "math":
		return "mathml"
	case st.BodyEndSkipped == "![CDATA[":
		return "cdata"
	}
	return "raw_text"
}

// ErrWrite marks errors of the destination, as opposed to the source.
var ErrWrite = errors.New("rewrite: write failed")

// readSize is the read buffer's size: large enough that a page costs few
// reads and writes, small enough to pool one per page in flight.
const readSize = 32 << 10

// rewriter is the state of one page rewrite. It is pooled: the read buffer
// and the scratch slices are reused from page to page.
type rewriter struct {
	dst   io.Writer
	opts  *Options
	hosts hostRewriter
	stats Stats
	err   error // the first write error, wrapped in ErrWrite

	attrs []attr // scratch for scanAttrs
	out   []byte // scratch for a rewritten tag

	bodyEndDone bool
	// holding: the output after <head> is held in held, with the head
	// injection not yet written (charset.go); charsetSeen: the page's
	// charset declaration has been seen.
	holding, charsetSeen bool
	held                 []byte
	inl                  inlineText // the text region under the text rules
	fl                   flightPage // Next.js Flight data (flight.go)
	// flight is the state of a script region under the Flight rules:
	// flightMaybe until its first bytes tell.
	flight   uint8
	encs     encStream  // the escaped forms after them (encoded.go)
	names    nameSearch // the last search for the origin's name (inline.go)
	nameList []int      // namesIn's result
	// csp: the page's policies so far (injectcsp.go), when cspOn; keep is
	// csp.Keep, copied where the scanner tests it.
	csp   csp.Page
	cspOn bool
	keep  csp.Keep
	// keepScript: the script element the scanner is in is one a policy
	// allows by hash (keptByPolicy).
	keepScript bool
	injBuf     []byte // the dressed injection
	scanner
}

var pool = sync.Pool{New: func() any { return &rewriter{scanner: scanner{buf: make([]byte, readSize)}} }}

// Rewrite streams src to dst, rewriting it. It returns the source's error
// unchanged (a decoding error, a reset connection) so that the caller can
// tell a failed origin from a finished one, and write errors wrapped in
// ErrWrite.
func Rewrite(dst io.Writer, src io.Reader, opts *Options) (Stats, error) {
	rw := pool.Get().(*rewriter)
	rw.reset(dst, opts)
	err := rw.run(src)
	rw.stats.CSP = rw.csp
	st := rw.stats
	rw.release()
	return st, err
}

// reset prepares a pooled rewriter for one page.
func (rw *rewriter) reset(dst io.Writer, opts *Options) {
	rw.dst, rw.opts, rw.stats, rw.err = dst, opts, Stats{}, nil
	rw.holding, rw.charsetSeen, rw.held, rw.inl = false, false, rw.held[:0], inlineText{}
	rw.hosts.reset(opts.OriginHost, opts.RequestHost, opts.RequestScheme)
	rw.hosts.enc.reset(opts.Inline, rw.hosts.name, opts.RequestHost)
	rw.encs = encStream{hosts: &rw.hosts, out: rw, count: &rw.stats.InlineRewritten, tail: rw.encs.tail[:0]}
	rw.fl.reset()
	rw.flight = flightOff
	rw.names.stale()
	rw.bodyEndDone = opts.BodyEnd == nil
	rw.csp, rw.cspOn = csp.Page{}, opts.CSP != nil
	if rw.cspOn {
		rw.csp = *opts.CSP
	}
	rw.keep, rw.keepScript = rw.csp.Keep, false
	maxTok := opts.MaxTokenBytes
	if maxTok <= 0 {
		maxTok = DefaultMaxTokenBytes
	}
	rw.scanner.reset(maxTok)
	rw.textRegion(0)
}

// release returns the rewriter to the pool without the page's references.
// A buffer grown for a huge tag is dropped rather than kept for every page.
func (rw *rewriter) release() {
	rw.dst, rw.opts = nil, nil
	if cap(rw.buf) > 4*readSize {
		rw.buf = make([]byte, readSize)
	}
	if cap(rw.out) > 4*readSize {
		rw.out = nil
	}
	if cap(rw.held) > 4*readSize {
		rw.held = nil
	}
	if cap(rw.fl.src)+cap(rw.fl.held)+cap(rw.fl.scratch)+cap(rw.fl.joined)+cap(rw.fl.piece) > 4*readSize {
		rw.fl = flightPage{}
	}
	if cap(rw.injBuf) > 4*readSize {
		rw.injBuf = nil
	}
	if cap(rw.hosts.val) > 4*readSize {
		rw.hosts.val = nil
	}
	rw.encs.out, rw.encs.hosts, rw.encs.count = nil, nil, nil
	pool.Put(rw)
}

// write writes p to the page's output, or to the hold of a Flight text
// row (flight.go), which is let go unchanged rather than grow past maxTok.
// It repeats emit's write to the destination: it runs for every piece of
// output, and a call to emit there cost 0.3 % of the corpus rewrite.
func (rw *rewriter) write(p []byte) {
	if rw.fl.holding || rw.holding {
		rw.holdWrite(p)
		return
	}
	if rw.err != nil || len(p) == 0 {
		return
	}
	n, err := rw.dst.Write(p)
	rw.stats.OutBytes += int64(n)
	if err != nil {
		rw.err = errors.Join(ErrWrite, err)
	}
}

// holdWrite is write while a hold is on: the Flight hold's bytes stay
// within maxTok, and the charset hold's go to held.
func (rw *rewriter) holdWrite(p []byte) {
	if rw.fl.holding {
		if len(rw.fl.held)+len(p) <= rw.maxTok {
			rw.fl.held = append(rw.fl.held, p...)
			return
		}
		rw.flightRelease(false)
	}
	rw.emit(p)
}

// emit writes p to the destination, or to the charset hold (charset.go).
func (rw *rewriter) emit(p []byte) {
	if rw.err != nil || len(p) == 0 {
		return
	}
	if rw.holding {
		rw.held = append(rw.held, p...)
		return
	}
	n, err := rw.dst.Write(p)
	rw.stats.OutBytes += int64(n)
	if err != nil {
		rw.err = errors.Join(ErrWrite, err)
	}
}

func (rw *rewriter) bodyEnd() {
	// docs/behaviour.md, "SSAT injection": the bids script goes only into
	// pages that got the ad slots.
	if !rw.stats.HeadFound {
		return
	}
	if rw.holding {
		rw.releaseHead(false) // no charset declaration before </body>
	}
	if rw.fl.holding && !rw.fl.gap {
		// A text row open at </body> goes out as it came, so that the
		// auction's wait flushes the page; the few bytes after a cut
		// reference wait for the next push.
		rw.flightRelease(false)
	}
	if rw.opts.BeforeWait != nil {
		if err := rw.opts.BeforeWait(); err != nil {
			rw.err = errors.Join(ErrWrite, err)
			return
		}
	}
	rw.write(rw.injected(rw.opts.BodyEnd()))
}

// valueFilter tells rewriteAttrs which values of a tag to look at.
type valueFilter uint8

const (
	// allValues: every value may change (rewriteRawValue decides).
	allValues valueFilter = iota
	// byName: no character reference of the tag can make part of the
	// origin's name (refsMayMakeHost), and nameAt has the tag's names:
	// only a value that holds one may change.
	byName
	// byNamePlain: byName, and the tag holds no '&' at all, so that a
	// value's raw bytes are its decoded value.
	byNamePlain
)

// rewriteAttrs returns a start tag with its URL attributes rewritten, or
// nil when none changes. The scanner calls it only for a tag whose URL
// attribute values may change (tag.go, checkURLValue), or under
// Options.Inline for a tag that names the origin or holds a reference
// that may make its name.
func (rw *rewriter) rewriteAttrs(raw []byte, by valueFilter) []byte {
	rw.attrs = scanAttrs(raw, rw.attrs[:0])
	out := rw.out[:0]
	last := 0
	for _, a := range rw.attrs {
		if !a.hasValue {
			continue
		}
		if by != allValues {
			if at := rw.nameAt(rw.tokStart + a.valStart); at < 0 || at+len(rw.hosts.hostB) > rw.tokStart+a.valEnd {
				continue
			}
		}
		kind := classifyAttr(raw[a.nameStart:a.nameEnd])
		if kind == kindNone && rw.opts.Inline {
			kind = classifyInlineAttr(raw[a.nameStart:a.nameEnd])
			if kind != kindNone && rw.keep != 0 && rw.keptAttr(raw[a.nameStart:a.nameEnd]) {
				kind = kindNone
			}
		}
		if kind == kindNone {
			continue
		}
		var nv []byte
		var changed bool
		if by == byNamePlain {
			// The value is its own decoded text: the buffer's search knows
			// where it names the origin.
			names := rw.namesIn(rw.tokStart+a.valStart, rw.tokStart+a.valEnd)
			nv, changed = rw.hosts.rewritePlainValue(raw[a.valStart:a.valEnd], kind, names)
		} else {
			nv, changed = rw.hosts.rewriteRawValue(raw[a.valStart:a.valEnd], a.quote, kind)
		}
		if !changed {
			continue
		}
		out = append(out, raw[last:a.valStart]...)
		if a.quote == 0 && needsQuotes(nv) {
			// In double quotes a '"' of the value must be &quot;, or the
			// value would end there (TestRewrittenValueDecodesToRewrittenURL).
			out = append(out, '"')
			for _, c := range nv {
				if c == '"' {
					out = append(out, "&quot;"...)
				} else {
					out = append(out, c)
				}
			}
			out = append(out, '"')
		} else {
			out = append(out, nv...)
		}
		last = a.valEnd
		rw.stats.URLsRewritten++
	}
	if last == 0 {
		return nil
	}
	out = append(out, raw[last:]...)
	rw.out = out
	return out
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
