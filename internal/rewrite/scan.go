package rewrite

// The scanner follows the WHATWG tokenizer (HTML Living Standard §13.2.5)
// only as far as the rewrite needs: where each tag, comment and raw-text
// element starts and ends. Everything between is jumped over with
// bytes.IndexByte, and bytes leave for the destination straight from the read
// buffer, one write per run of unchanged input.

import (
	"bytes"
	"io"
)

// scanner is the position of the scan in the read buffer.
type scanner struct {
	buf      []byte // the read buffer; buf[:n] holds input
	n        int
	done     int // buf[:done] has been written (or replaced by a rewrite)
	pos      int // the next byte to scan
	mode     mode
	sub      uint8  // the tag, comment or script state
	tokStart int    // where the held tag starts (inTag)
	endTag   bool   // the held tag is an end tag
	urlAttr  bool   // the held tag has a URL attribute that may be rewritten
	urlValue int    // where a URL attribute's value starts, while not yet checked; -1 if none
	rawName  string // the element whose end tag ends inRawText
	// closing is the raw-text element whose end tag is held (inTag): until
	// that tag is complete, the page is still inside the element.
	closing string
	maxTok  int
	// foreign is the stack of open SVG and MathML elements (foreign.go);
	// fnames holds their names and fscratch a tag's name. deep: a start
	// tag did not fit on it; fdepth is its bound, maxForeignDepth but in
	// tests.
	foreign          []felem
	fnames, fscratch []byte
	deep             bool
	fdepth           int
}

func (s *scanner) reset(maxTok int) {
	*s = scanner{buf: s.buf[:cap(s.buf)], maxTok: maxTok,
		foreign: s.foreign[:0], fnames: s.fnames[:0], fscratch: s.fscratch[:0], fdepth: maxForeignDepth}
}

// run rewrites the whole page from src.
func (rw *rewriter) run(src io.Reader) error {
	for {
		rw.scan()
		if rw.err != nil {
			return rw.err
		}
		if rw.mode == inTag && rw.n-rw.tokStart >= rw.maxTok {
			rw.oversize() // the tag did not end within maxTok bytes
		}
		// Everything before hold is final: write it before Read may block,
		// so that the client gets it while the origin is slow.
		hold := rw.pos
		if rw.mode == inTag {
			hold = rw.tokStart
		}
		rw.flush(hold)
		if rw.err != nil {
			return rw.err
		}
		rw.compact(min(hold, rw.done)) // inline.go may keep a tail unwritten
		m, rerr := readSome(src, rw.buf[rw.n:])
		rw.n += m
		rw.names.stale() // the search has not seen the new bytes
		rw.stats.InBytes += int64(m)
		if rerr == nil {
			continue
		}
		// The end of the input: what is still undecided is text.
		rw.scan()
		if rw.mode == inTag && rw.n-rw.tokStart >= rw.maxTok {
			rw.oversize()
		}
		rw.endInline(rw.n)
		rw.flush(rw.n)
		if rw.fl.holding {
			rw.flightRelease(false) // a text row the page does not finish
		}
		if rw.holding {
			rw.releaseHead(false)
		}
		if rerr != io.EOF {
			return rerr
		}
		if !rw.bodyEndDone && rw.err == nil {
			// docs/behaviour.md, "SSAT injection": a page that ends inside
			// raw text or RCDATA would show the bids script as text.
			if name := rw.openRawText(); name != "" {
				rw.stats.BodyEndSkipped = name
			} else {
				rw.bodyEnd()
			}
		}
		return rw.err
	}
}

// openRawText names the element whose raw text or RCDATA the scanner is
// in (script, plaintext, textarea, ...), "![CDATA[" in a CDATA section,
// "math" in MathML, where a script does not run, or "" when it is in none.
// While a tag is held, it is where that tag starts.
func (s *scanner) openRawText() string {
	switch s.mode {
	case inRawText:
		return s.rawName
	case inScript:
		return "script"
	case inPlaintext:
		return "plaintext"
	case inCDATA:
		return "![CDATA["
	}
	if s.mode == inTag && s.closing != "" {
		return s.closing
	}
	if s.bidsBlockedByForeign() {
		return "math"
	}
	return ""
}

// readSome reads into p, which is never empty, and never returns (0, nil).
func readSome(r io.Reader, p []byte) (int, error) {
	for range 100 {
		if n, err := r.Read(p); n != 0 || err != nil {
			return n, err
		}
	}
	return 0, io.ErrNoProgress
}

// flush writes the input up to end that has not been written yet.
func (rw *rewriter) flush(end int) {
	if rw.holding && rw.inputOffset(end) > prescanBytes {
		rw.releaseHead(false) // no charset declaration in the prescan window
	}
	if end > rw.done && rw.inl.kind != kindNone {
		rw.flushInline(end, false)
	} else if end > rw.done {
		rw.write(rw.buf[rw.done:end])
		rw.done = end
	}
}

// compact moves the held bytes, buf[hold:n], to the front of the buffer and
// makes room for the next read, growing the buffer only for a held tag.
func (rw *rewriter) compact(hold int) {
	s := &rw.scanner
	if hold > 0 {
		copy(s.buf, s.buf[hold:s.n])
		s.n -= hold
		s.pos -= hold
		s.done -= hold
		s.tokStart -= hold
		s.urlValue -= hold
		rw.inl.start -= hold
		rw.names.stale()
	}
	if s.n == len(s.buf) {
		// Only a tag is held across reads, and run stops holding one at
		// maxTok bytes, so the buffer stays within max(readSize, maxTok).
		grown := make([]byte, min(2*len(s.buf), max(s.maxTok, len(s.buf)+1)))
		copy(grown, s.buf[:s.n])
		s.buf = grown
	}
}

// oversize gives up at the held tag, which did not end within maxTok
// bytes: where it ends, and so what follows it, is unknown.
func (rw *rewriter) oversize() {
	rw.stats.Oversize = true
	rw.lose(rw.tokStart, rw.openRawText())
}

// lose stops following the page at the tag that starts at at, past one of
// the scanner's caps (oversize, a foreign stack too deep): what the page is
// after that tag (text, a script, an attribute value) is unknown, so from
// there on it is copied as it is, with nothing rewritten and nothing
// injected. The bids script, if it is still to come, goes at at, the last
// place the scanner knows, when a script written there runs as one, and is
// left out (Stats.BodyEndSkipped) when it would not, inside the element
// named (openRawText at at): rather than at a "</body>" or at an end whose
// place in the page it cannot tell.
func (rw *rewriter) lose(at int, inside string) {
	if !rw.bodyEndDone && rw.err == nil {
		rw.bodyEndDone = true
		if inside != "" {
			rw.stats.BodyEndSkipped = inside
		} else {
			rw.flush(at)
			rw.bodyEnd()
		}
	}
	rw.mode, rw.pos = inCopy, rw.n
}

// scan advances through buf[pos:n] until it needs more input.
func (rw *rewriter) scan() {
	for rw.err == nil {
		var next bool
		switch rw.mode {
		case inText:
			next = rw.scanText()
		case inTag:
			next = rw.scanTag()
		case inBogus:
			next = rw.scanBogus()
		case inComment:
			next = rw.scanComment()
		case inRawText:
			next = rw.scanRawText()
		case inScript:
			next = rw.scanScript()
		case inCDATA:
			next = rw.scanCDATA()
		default: // inPlaintext, inCopy
			rw.pos = rw.n
		}
		if !next {
			return
		}
	}
}

// Each scanX method below scans from pos in its mode. It returns true when
// it switched to another mode, and false, with pos where the scan resumes,
// when it needs more input.

// scanText is the data state (§13.2.5.1) and tag open (§13.2.5.6–7).
func (rw *rewriter) scanText() bool {
	b := rw.buf[:rw.n]
	for {
		i := bytes.IndexByte(b[rw.pos:], '<')
		if i < 0 {
			rw.pos = len(b)
			return false
		}
		lt := rw.pos + i
		rw.pos = lt // resume at the '<' when what follows is not here yet
		if lt+1 >= len(b) {
			return false
		}
		switch c := b[lt+1]; {
		case isAlpha(c):
			rw.openTag(lt, false)
			return true
		case c == '/':
			if lt+2 >= len(b) {
				return false
			}
			switch c := b[lt+2]; {
			case isAlpha(c):
				rw.openTag(lt, true)
				return true
			case c == '>':
				rw.pos = lt + 3 // "</>" is no token at all
			default:
				rw.endInline(lt) // a bogus comment goes out as it is
				rw.pos, rw.mode = lt+2, inBogus
				return true
			}
		case c == '!':
			// §13.2.5.42: "<!--" opens a comment, "<![CDATA[" a CDATA
			// section in foreign content; a doctype, a CDATA section
			// elsewhere and anything else end at '>'.
			if lt+2 >= len(b) || (b[lt+2] == '-' && lt+3 >= len(b)) {
				return false
			}
			if b[lt+2] == '-' && b[lt+3] == '-' {
				rw.tokenBoundary(lt)
				rw.pos, rw.mode, rw.sub = lt+4, inComment, cStart
				return true
			}
			if b[lt+2] == '[' && rw.inForeign() {
				switch prefixAt(b, lt+2, "[CDATA[") {
				case needMore:
					return false
				case matched:
					rw.pos, rw.mode, rw.sub = lt+2+len("[CDATA["), inCDATA, 0
					return true
				}
			}
			rw.endInline(lt) // a doctype or a bogus comment goes out as it is
			rw.pos, rw.mode = lt+2, inBogus
			return true
		case c == '?':
			rw.endInline(lt)
			rw.pos, rw.mode = lt+2, inBogus
			return true
		default:
			rw.pos = lt + 1 // a '<' that opens nothing is text
		}
	}
}

func isAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
