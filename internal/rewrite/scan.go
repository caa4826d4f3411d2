package rewrite

// The scanner follows the WHATWG tokenizer (HTML Living Standard §13.2.5)
// only as far as the rewrite needs: where each tag, comment and raw-text
// element starts and ends. Everything between is jumped over with
// bytes.IndexByte, and bytes leave for the destination straight from the read
// buffer, one write per run of unchanged input.

import (
	"bytes"
	"io"

	"golang.org/x/net/html/atom"
)

// mode is the kind of markup the scanner is inside.
type mode uint8

const (
	inText      mode = iota // the data state
	inTag                   // a start or end tag, held from tokStart until its '>'
	inBogus                 // a doctype or a bogus comment, up to the next '>'
	inComment               // a "<!--" comment; sub is a comment state
	inRawText               // RAWTEXT or RCDATA content, up to the end tag rawName
	inScript                // script data; sub is a script state
	inPlaintext             // after <plaintext>: the rest of the page is text
	inCopy                  // after an oversize tag: the rest is copied as is
)

// Tag states (§13.2.5.8 and §13.2.5.32–39), those that tell where a tag
// ends: only a quoted attribute value can hide a '>'. tagNext is their
// transition table by character class (tagClass). The states from tEnd on
// leave the table: the scan jumps to a value's closing quote with
// bytes.IndexByte, and at tEquals notes whether the attribute may be one
// that is rewritten.
const (
	tName         = iota // tag name
	tBefore              // before attribute name (and self-closing start tag)
	tAttrName            // attribute name
	tAfterName           // after attribute name
	tBeforeValue         // before attribute value
	tUnquoted            // attribute value (unquoted)
	tEnd                 // the '>' that ends the tag
	tEquals              // the '=' after an attribute name: then tBeforeValue
	tDoubleQuoted        // attribute value (double-quoted)
	tSingleQuoted        // attribute value (single-quoted)
)

// Character classes of the tag states.
const (
	clOther = iota
	clSpace
	clSlash
	clEquals
	clGT
	clDQuote
	clSQuote
)

var tagClass = func() (c [256]uint8) {
	for _, b := range []byte(" \n\r\t\f") {
		c[b] = clSpace
	}
	c['/'], c['='], c['>'], c['"'], c['\''] = clSlash, clEquals, clGT, clDQuote, clSQuote
	return c
}()

// tagTrans is tagNext by byte rather than by class: one load per byte.
var tagTrans = func() (t [tEnd][256]uint8) {
	for st := range t {
		for c := range 256 {
			t[st][c] = tagNext[st][tagClass[c]]
		}
	}
	return t
}()

var tagNext = [tEnd][7]uint8{
	//            other      space        slash      equals        >     "              '
	tName:        {tName, tBefore, tBefore, tName, tEnd, tName, tName},
	tBefore:      {tAttrName, tBefore, tBefore, tAttrName, tEnd, tAttrName, tAttrName}, // '=' starts a name (§13.2.5.32)
	tAttrName:    {tAttrName, tAfterName, tBefore, tEquals, tEnd, tAttrName, tAttrName},
	tAfterName:   {tAttrName, tAfterName, tBefore, tEquals, tEnd, tAttrName, tAttrName},
	tBeforeValue: {tUnquoted, tBeforeValue, tUnquoted, tUnquoted, tEnd, tDoubleQuoted, tSingleQuoted},
	tUnquoted:    {tUnquoted, tBefore, tUnquoted, tUnquoted, tEnd, tUnquoted, tUnquoted},
}

// Comment states (§13.2.5.43–52). The "<!--" nested in a comment only
// matters for parse errors, so its states are folded into these.
const (
	cStart     = iota // comment start
	cStartDash        // comment start dash
	cBody             // comment
	cEndDash          // comment end dash
	cEnd              // comment end
	cEndBang          // comment end bang
)

// Script states (§13.2.5.4 and §13.2.5.15–31). The less-than sign, end tag
// and escape start states look ahead from the '<' instead (tagAt, prefixAt).
const (
	sData = iota
	sEscaped
	sEscapedDash
	sEscapedDashDash
	sDouble
	sDoubleDash
	sDoubleDashDash
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
	quirks  bool // repeat the x/net/html Tokenizer's departures (tests)
}

func (s *scanner) reset(maxTok int, quirks bool) {
	*s = scanner{buf: s.buf[:cap(s.buf)], maxTok: maxTok, quirks: quirks}
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
		rw.compact(hold)
		m, rerr := readSome(src, rw.buf[rw.n:])
		rw.n += m
		rw.stats.InBytes += int64(m)
		if rerr == nil {
			continue
		}
		// The end of the input: what is still undecided is text.
		rw.scan()
		if rw.mode == inTag && rw.n-rw.tokStart >= rw.maxTok {
			rw.stats.Oversize = true
		}
		rw.flush(rw.n)
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
// in (script, plaintext, textarea, ...), or "" when it is in none.
func (s *scanner) openRawText() string {
	switch s.mode {
	case inRawText:
		return s.rawName
	case inScript:
		return "script"
	case inPlaintext:
		return "plaintext"
	case inTag:
		return s.closing
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
	if end > rw.done {
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
	}
	if s.n == len(s.buf) {
		// Only a tag is held across reads, and run stops holding one at
		// maxTok bytes, so the buffer stays within max(readSize, maxTok).
		grown := make([]byte, min(2*len(s.buf), max(s.maxTok, len(s.buf)+1)))
		copy(grown, s.buf[:s.n])
		s.buf = grown
	}
}

// oversize gives up on rewriting: the rest of the page is copied as is.
func (rw *rewriter) oversize() {
	rw.stats.Oversize = true
	rw.mode = inCopy
	rw.pos = rw.n
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
				rw.pos, rw.mode = lt+2, inBogus
				return true
			}
		case c == '!':
			// §13.2.5.42: "<!--" opens a comment; a doctype, a CDATA
			// section outside foreign content and anything else end at '>'.
			if lt+2 >= len(b) || (b[lt+2] == '-' && lt+3 >= len(b)) {
				return false
			}
			if b[lt+2] == '-' && b[lt+3] == '-' {
				rw.pos, rw.mode, rw.sub = lt+4, inComment, cStart
				return true
			}
			rw.pos, rw.mode = lt+2, inBogus
			return true
		case c == '?':
			rw.pos, rw.mode = lt+2, inBogus
			return true
		default:
			rw.pos = lt + 1 // a '<' that opens nothing is text
		}
	}
}

func isAlpha(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// openTag starts holding the tag that opens at lt.
func (rw *rewriter) openTag(lt int, end bool) {
	s := &rw.scanner
	s.mode, s.sub, s.tokStart, s.endTag, s.urlAttr, s.urlValue = inTag, tName, lt, end, false, -1
	s.pos = lt + 2 // past "<" and the name's first letter
	if end {
		s.pos++
	}
}

// scanTag finds the '>' that ends the held tag.
func (rw *rewriter) scanTag() bool {
	b := rw.buf[:rw.n]
	i, st := rw.pos, rw.sub
	for {
		switch st {
		case tDoubleQuoted, tSingleQuoted:
			q := byte('"')
			if st == tSingleQuoted {
				q = '\''
			}
			j := bytes.IndexByte(b[i:], q)
			if j < 0 {
				rw.pos, rw.sub = len(b), st
				return false
			}
			if rw.urlValue >= 0 { // the value that closes here is the URL value
				rw.checkURLValue(rw.urlValue, i+j)
			}
			i, st = i+j+1, tBefore
		case tEquals:
			if rw.urlValue >= 0 { // the previous URL value was unquoted
				rw.checkURLValue(rw.urlValue, i)
			}
			if len(rw.hosts.hostB) > 0 && urlAttrName(b[rw.tokStart:i-1]) {
				rw.urlValue = i
			}
			st = tBeforeValue
		}
		for ; i < len(b); i++ {
			if st = tagTrans[st][b[i]]; st >= tEnd {
				break
			}
		}
		if i == len(b) {
			rw.pos, rw.sub = i, st
			return false
		}
		i++
		if st == tEnd {
			rw.tagDone(i)
			return true
		}
	}
}

// tagDone acts on the held tag, buf[tokStart:end], which is complete.
func (rw *rewriter) tagDone(end int) {
	s := &rw.scanner
	s.pos, s.mode, s.closing = end, inText, ""
	raw := s.buf[s.tokStart:end]
	if len(raw) > s.maxTok {
		rw.oversize() // as if it had arrived in pieces: the output must not depend on reads
		return
	}
	if s.endTag {
		if !rw.bodyEndDone && lookupName(raw[2:]) == atom.Body {
			rw.bodyEndDone = true
			rw.stats.BodyEndFound = true
			rw.flush(s.tokStart)
			rw.bodyEnd()
		}
		return
	}
	if s.urlValue >= 0 {
		rw.checkURLValue(s.urlValue, end)
	}
	if s.urlAttr {
		if out := rw.rewriteAttrs(raw); out != nil {
			rw.flush(s.tokStart)
			rw.write(out)
			s.done = end
		}
	}
	switch a := lookupName(raw[1:]); a {
	case atom.Head:
		if !rw.stats.HeadFound {
			rw.stats.HeadFound = true
			rw.flush(end)
			rw.write(rw.opts.HeadPrepend)
		}
	case atom.Script:
		s.mode, s.sub = inScript, sData
	case atom.Style, atom.Xmp, atom.Iframe, atom.Noembed, atom.Noframes, atom.Noscript, atom.Textarea, atom.Title:
		s.mode, s.rawName = inRawText, a.String()
	case atom.Plaintext:
		s.mode = inPlaintext
	}
}

// lookupName returns the atom of the tag name that starts name, in any
// ASCII case, for the names the scanner acts on (head, body and the raw-text
// elements), and 0 for others.
func lookupName(name []byte) atom.Atom {
	if !mayStartName[name[0]] {
		return 0 // a, div, li, link, meta, ul, ...: spare the length loop
	}
	var lower [len("plaintext")]byte
	n := 0
	for n <= len(lower) && !endsName[name[n]] {
		n++
	}
	if !nameMayMatter(name[0]|0x20, n) {
		return 0 // most tags: a, div, span, img, li, meta, ...
	}
	for k, c := range name[:n] {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[k] = c
	}
	return atom.Lookup(lower[:n])
}

// mayStartName is the first letters, in either case, of the names
// lookupName is for (see nameMayMatter).
var mayStartName = func() (m [256]bool) {
	for _, c := range []byte("xhbstinp") {
		m[c], m[c-('a'-'A')] = true, true
	}
	return m
}()

// endsName is the bytes that end a tag name.
var endsName = func() (e [256]bool) {
	for _, c := range []byte(" \n\r\t\f/>") {
		e[c] = true
	}
	return e
}()

// nameMayMatter reports whether a name of length n starting with first may
// be one lookupName is for, to spare the hash lookup for the others.
func nameMayMatter(first byte, n int) bool {
	switch n {
	case 3:
		return first == 'x' // xmp
	case 4:
		return first == 'h' || first == 'b' // head, body
	case 5:
		return first == 's' || first == 't' // style, title
	case 6:
		return first == 's' || first == 'i' // script, iframe
	case 7:
		return first == 'n' // noembed
	case 8:
		return first == 'n' || first == 't' // noframes, noscript, textarea
	case 9:
		return first == 'p' // plaintext
	}
	return false
}

// checkURLValue notes whether buf[from:to], which holds the value of an
// attribute that urlAttrName accepted, names the origin host or holds a
// character reference that may decode to part of it: without either
// rewriteRawValue changes nothing, and rewriteAttrs is not called.
func (rw *rewriter) checkURLValue(from, to int) {
	v := rw.buf[from:to]
	rw.urlAttr = rw.urlAttr || containsFold(v, rw.hosts.hostB) ||
		(bytes.IndexByte(v, '&') >= 0 && rw.hosts.refsMayMakeHost(v))
	rw.urlValue = -1
}

// urlAttrName reports whether the attribute name that ends b (before an
// '=' and optional white space) may be one of those classifyAttr rewrites.
// It may report names that only end like them: rewriteAttrs decides.
func urlAttrName(b []byte) bool {
	end := len(b)
	for end > 0 && isSpace(b[end-1]) {
		end--
	}
	if end == 0 {
		return false
	}
	switch b[end-1] | 0x20 {
	case 'c', 'f', 't', 'n': // src, href, srcset, action
	default:
		return false
	}
	b = b[:end]
	return hasSuffixFold(b, "src") || hasSuffixFold(b, "href") || hasSuffixFold(b, "srcset") || hasSuffixFold(b, "action")
}

// hasSuffixFold reports whether b ends with s, which is lower case letters,
// in any ASCII case.
func hasSuffixFold(b []byte, s string) bool {
	if len(b) < len(s) {
		return false
	}
	b = b[len(b)-len(s):]
	for k := range len(s) {
		if b[k]|0x20 != s[k] {
			return false
		}
	}
	return true
}

// scanBogus skips a doctype or a bogus comment (§13.2.5.41, §13.2.5.53):
// both end at the first '>'.
func (rw *rewriter) scanBogus() bool {
	i := bytes.IndexByte(rw.buf[rw.pos:rw.n], '>')
	if i < 0 {
		rw.pos = rw.n
		return false
	}
	rw.pos, rw.mode = rw.pos+i+1, inText
	return true
}

// scanComment finds the end of a comment: "-->", "--!>", or right after
// "<!--" a '>' or "->".
func (rw *rewriter) scanComment() bool {
	b := rw.buf[:rw.n]
	i, st := rw.pos, rw.sub
	for i < len(b) {
		c := b[i]
		switch st {
		case cStart, cStartDash:
			switch c {
			case '>':
				rw.pos, rw.mode = i+1, inText
				return true
			case '-':
				if st == cStart {
					st = cStartDash
				} else {
					st = cEnd
				}
				i++
			default:
				st = cBody
			}
		case cBody:
			j := bytes.IndexByte(b[i:], '-')
			if j < 0 {
				i = len(b)
				break
			}
			i += j + 1
			st = cEndDash
		case cEndDash:
			if c == '-' {
				st = cEnd
				i++
			} else {
				st = cBody
			}
		case cEnd, cEndBang:
			switch {
			case c == '>':
				rw.pos, rw.mode = i+1, inText
				return true
			case c == '-' && st == cEnd:
				i++
			case c == '-':
				st = cEndDash
				i++
			case c == '!' && st == cEnd:
				st = cEndBang
				i++
			default:
				st = cBody
			}
		}
	}
	rw.pos, rw.sub = i, st
	return false
}

// scanRawText finds the end tag that ends a RAWTEXT or RCDATA element
// (§13.2.5.2–3, §13.2.5.9–14).
func (rw *rewriter) scanRawText() bool {
	b := rw.buf[:rw.n]
	for {
		i := bytes.IndexByte(b[rw.pos:], '<')
		if i < 0 {
			rw.pos = len(b)
			return false
		}
		lt := rw.pos + i
		switch tagAt(b, lt, true, rw.rawName) {
		case needMore:
			rw.pos = lt
			return false
		case matched:
			rw.pos, rw.mode = lt, inText // the end tag is scanned as a tag
			rw.closing = rw.rawName
			return true
		}
		rw.pos = lt + 1
	}
}

// scanScript finds the "</script" that ends a script, following the
// script-data escaped and double-escaped states.
func (rw *rewriter) scanScript() bool {
	b := rw.buf[:rw.n]
	i, st := rw.pos, rw.sub
loop:
	for i < len(b) {
		if st == sData {
			j := bytes.IndexByte(b[i:], '<')
			if j < 0 {
				i = len(b)
				break
			}
			i += j
			switch tagAt(b, i, true, "script") {
			case needMore:
				break loop
			case matched:
				rw.pos, rw.mode = i, inText
				rw.closing = "script"
				return true
			}
			switch prefixAt(b, i, "<!--") {
			case needMore:
				break loop
			case matched:
				st = sEscapedDashDash
				i += len("<!--")
				continue
			}
			i++
			continue
		}
		escaped := st < sDouble
		switch c := b[i]; {
		case c == '<' && escaped:
			switch tagAt(b, i, true, "script") {
			case needMore:
				break loop
			case matched:
				rw.pos, rw.mode = i, inText
				rw.closing = "script"
				return true
			}
			switch tagAt(b, i, false, "script") {
			case needMore:
				break loop
			case matched:
				st = sDouble
				i += len("<script>")
				continue
			}
			st = sEscaped
			if rw.quirks && b[i+1] != '/' && !isAlpha(b[i+1]) {
				st = sData // x/net/html's readScript: see the package doc
			}
			i++
		case c == '<':
			switch tagAt(b, i, true, "script") {
			case needMore:
				break loop
			case matched:
				st = sEscaped
				i += len("</script>")
				continue
			}
			st = sDouble
			i++
		case c == '-':
			switch st {
			case sEscaped:
				st = sEscapedDash
			case sEscapedDash:
				st = sEscapedDashDash
			case sDouble:
				st = sDoubleDash
			case sDoubleDash:
				st = sDoubleDashDash
			}
			i++
		case c == '>' && (st == sEscapedDashDash || st == sDoubleDashDash):
			st = sData
			i++
		default:
			if escaped {
				st = sEscaped
			} else {
				st = sDouble
			}
			i++
		}
	}
	rw.pos, rw.sub = i, st
	return false
}

type match uint8

const (
	noMatch match = iota
	matched
	needMore // the input ends before it can tell
)

// tagAt reports whether b[i:] is "<", then "/" if slash, then name in any
// ASCII case, then a character that ends a tag name. name is lower case
// letters.
func tagAt(b []byte, i int, slash bool, name string) match {
	i++
	if slash {
		if i >= len(b) {
			return needMore
		}
		if b[i] != '/' {
			return noMatch
		}
		i++
	}
	for k := 0; k < len(name); k, i = k+1, i+1 {
		if i >= len(b) {
			return needMore
		}
		if b[i]|0x20 != name[k] {
			return noMatch
		}
	}
	if i >= len(b) {
		return needMore
	}
	switch b[i] {
	case ' ', '\n', '\r', '\t', '\f', '/', '>':
		return matched
	}
	return noMatch
}

// prefixAt reports whether b[i:] starts with s.
func prefixAt(b []byte, i int, s string) match {
	for k := 0; k < len(s); k, i = k+1, i+1 {
		if i >= len(b) {
			return needMore
		}
		if b[i] != s[k] {
			return noMatch
		}
	}
	return matched
}
