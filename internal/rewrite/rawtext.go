package rewrite

// Comments, doctypes and bogus comments, raw text, RCDATA and script data:
// the states whose end is found by jumping to the next '-', '>' or '<'.

import "bytes"

// scanBogus skips a doctype or a bogus comment (§13.2.5.41, §13.2.5.53):
// both end at the first '>'.
func (rw *rewriter) scanBogus() bool {
	i := bytes.IndexByte(rw.buf[rw.pos:rw.n], '>')
	if i < 0 {
		rw.pos = rw.n
		return false
	}
	rw.pos, rw.mode = rw.pos+i+1, inText
	rw.textRegion(rw.pos)
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
				rw.tokenBoundary(i + 1)
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
				rw.tokenBoundary(i + 1)
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
			rw.endInline(lt)
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
	for i < len(b) {
		var m match
		if st == sData {
			i, st, m = scriptData(b, i)
		} else {
			i, st, m = rw.scriptEscaped(b, i, st)
		}
		switch m {
		case needMore:
			rw.pos, rw.sub = i, st
			return false
		case matched: // b[i:] is the end tag, scanned as a tag
			rw.endInline(i)
			rw.pos, rw.mode, rw.closing = i, inText, "script"
			return true
		}
	}
	rw.pos, rw.sub = i, st
	return false
}

// scriptData is the script data state (§13.2.5.4, §13.2.5.15–18) from
// b[i:]: it jumps to the next '<' and returns where the scan goes on, in
// which state, and matched at a "</script" end tag, needMore when the
// input ends before it can tell, or noMatch when it left the state.
func scriptData(b []byte, i int) (int, uint8, match) {
	for {
		j := bytes.IndexByte(b[i:], '<')
		if j < 0 {
			return len(b), sData, noMatch
		}
		i += j
		switch tagAt(b, i, true, "script") {
		case needMore:
			return i, sData, needMore
		case matched:
			return i, sData, matched
		}
		switch prefixAt(b, i, "<!--") {
		case needMore:
			return i, sData, needMore
		case matched:
			return i + len("<!--"), sEscapedDashDash, noMatch
		}
		i++
	}
}

// scriptEscaped follows the script data escaped and double-escaped states
// (§13.2.5.19–31) byte by byte from b[i:] in state st, until the script
// returns to script data, ends, or the input runs out; its results are
// scriptData's.
func (rw *rewriter) scriptEscaped(b []byte, i int, st uint8) (int, uint8, match) {
	for ; i < len(b) && st != sData; i++ {
		escaped := st < sDouble
		switch c := b[i]; {
		case c == '<' && escaped:
			if m := tagAt(b, i, true, "script"); m != noMatch {
				return i, st, m
			}
			switch tagAt(b, i, false, "script") {
			case needMore:
				return i, st, needMore
			case matched:
				st = sDouble
				i += len("<script>") - 1
				continue
			}
			st = sEscaped // §13.2.5.23, "anything else" included: see the package doc
		case c == '<':
			switch tagAt(b, i, true, "script") {
			case needMore:
				return i, st, needMore
			case matched:
				st = sEscaped
				i += len("</script>") - 1
				continue
			}
			st = sDouble
		case c == '-':
			st = dashNext[st]
		case c == '>' && (st == sEscapedDashDash || st == sDoubleDashDash):
			st = sData
		case escaped:
			st = sEscaped
		default:
			st = sDouble
		}
	}
	return i, st, noMatch
}

// dashNext is the state after a '-' in the escaped and double-escaped
// states: one more dash, up to two.
var dashNext = [...]uint8{
	sEscaped: sEscapedDash, sEscapedDash: sEscapedDashDash, sEscapedDashDash: sEscapedDashDash,
	sDouble: sDoubleDash, sDoubleDash: sDoubleDashDash, sDoubleDashDash: sDoubleDashDash,
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
