package rewrite

// Escaped origin references (Options.Inline; docs/behaviour.md, "URL
// rewriting"): an absolute origin URL whose "://" is percent-encoded, as
// share links and tracking pixels carry the page's address in a query
// parameter (u=https%3A%2F%2Forigin.example%2Fa), percent-encoded twice
// (%252F), or written with JavaScript escapes inside a string literal
// ("https:\u002F\u002Forigin.example"). They follow the text rules of
// text.go after it, on its output, and are decided by the same matcher
// (refmatch.go) with the escape as its parameter: a host name ends where
// a host name cannot go on, a port must be the origin's (or its scheme's
// default written out), and a scheme, when there is one, becomes
// request_scheme.
// Only the host (and the scheme) change; the page's spelling of the
// separators is kept, and the request host is written in the same escape.

import "bytes"

// encMaxPrefix is the longest scheme and separator before a host:
// "https\u003a\u002f\u002f".
const encMaxPrefix = len(`https\u003a\u002f\u002f`)

// encRules are the escaped forms for one origin: the request host in each
// escape, by its index in escapings.
type encRules struct {
	on   bool
	host [len(escapings)][]byte
}

func (e *encRules) reset(on bool, name, requestHost string) {
	e.on = on
	if !on || name == "" {
		e.on = false
		return
	}
	for k := escPlain + 1; k < len(escapings); k++ {
		f := &escapings[k]
		b := e.host[k][:0]
		for i := 0; i < len(requestHost); i++ {
			switch c := requestHost[i]; c {
			case ':':
				b = append(b, f.hostColon...)
			case '[':
				b = append(b, f.lb...)
			case ']':
				b = append(b, f.rb...)
			default:
				b = append(b, c)
			}
		}
		e.host[k] = b
	}
}

// prefixOfPattern reports whether t is, in any letter case, a proper
// prefix of scheme, colon, two slashes and name one after the other (all
// lower case).
func prefixOfPattern(t []byte, scheme, colon, slash string, name []byte) bool {
	if len(t) >= len(scheme)+len(colon)+2*len(slash)+len(name) {
		return false
	}
	for _, part := range [...]string{scheme, colon, slash, slash} {
		n := min(len(t), len(part))
		if !prefixFold(t[:n], part) {
			return false
		}
		if t = t[n:]; len(t) == 0 {
			return true
		}
	}
	return equalFoldLower(t, name[:len(t)])
}

// prefixFold reports whether t is a prefix of the lower-case escape s in
// any letter case, but for the letter after a backslash: JavaScript and
// JSON write the \u of an escape in lower case, and "\U002F" is no escape
// but the text U002F (ECMA-262, "String Literals"; RFC 8259 §7). Hex
// digits may be in either case there, as in percent-encoding (RFC 3986
// §2.1).
func prefixFold(t []byte, s string) bool {
	if len(t) > len(s) {
		return false
	}
	for i, c := range t {
		if lower(c) != s[i] || i > 0 && s[i-1] == '\\' && c != s[i] {
			return false
		}
	}
	return true
}

// endsWithEsc reports whether t ends with the escape s, as prefixFold
// compares.
func endsWithEsc(t []byte, s string) bool {
	return len(t) >= len(s) && prefixFold(t[len(t)-len(s):], s)
}

// matchEscaped is matchRef for the escaped forms: in the escape k whose
// slash comes right before the name (escapingAt), by kindContent's rules
// (refScan).
func (h *hostRewriter) matchEscaped(v []byte, last, at int, final bool) (m refMatch, k int, ok, more bool) {
	if k = escapingAt(v, last, at); k < 0 {
		return m, k, false, false
	}
	m, ok, more = h.matchRef(v, last, at, refScan{kind: kindContent, esc: &escapings[k], final: final})
	return m, k, ok, more
}

// encRun applies the escaped forms to v, which continues a text whose
// bytes from skip on hold no host decided yet, writing the result to sink.
// Unless final, it keeps back a tail that more text may make part of a
// match, and returns how much of v it consumed and the next skip, as
// textRun does.
func (h *hostRewriter) encRun(sink textSink, v []byte, skip int, final bool) (consumed, nextSkip, changed int) {
	last, i, pending := 0, skip, -1
	if len(v) >= len(h.hostB) && skip < len(v) {
		find := newHostFinderPair(v, h.hostB, h.rare, h.pair, "2f")
		for {
			at := find.find(i)
			if at < 0 {
				i = max(i, len(v)-len(h.hostB)+1)
				break
			}
			m, k, ok, more := h.matchEscaped(v, last, at, final)
			if more {
				pending, i = at, at
				break
			}
			i = at + 1
			if !ok {
				continue
			}
			sink.write(v[last:m.from])
			if m.scheme {
				sink.write(h.repl[:h.relAt-1])
			}
			sink.write(v[m.keep:m.sep])
			sink.write(h.enc.host[k])
			last, i = m.to, m.to
			changed++
		}
	}
	if final {
		sink.write(v[last:])
		return len(v), 0, changed
	}
	var cut int
	if pending >= 0 {
		cut = pending - encMaxPrefix
	} else {
		cut = h.encHoldFrom(v, len(v)-len(h.hostB)+1-encMaxPrefix)
		if nulBefore(v, cut, nulWindow) {
			// The bytes nulBefore reads for a reference after cut: only a
			// NUL among them decides anything, so that a text without one
			// streams.
			cut -= nulWindow
		}
	}
	consumed, nextSkip = keepTail(sink, v, last, i, cut)
	return consumed, nextSkip, changed
}

// encHoldFrom is the first k from start on where v[k:] is, in any letter
// case, a proper prefix of one of the escaped patterns, or len(v). Every
// pattern starts with "ht", "%2", "%3" or "\\u": the byte after a
// candidate first byte rules most out.
func (h *hostRewriter) encHoldFrom(v []byte, start int) int {
	for k := max(start, 0); k < len(v); k++ {
		switch c := lower(v[k]); {
		case c != 'h' && c != '%' && c != '\\':
			continue
		case k+1 == len(v):
		case c == 'h' && lower(v[k+1]) != 't', c == '%' && v[k+1] != '2' && v[k+1] != '3', c == '\\' && v[k+1] != 'u':
			continue
		}
		for e := escPlain + 1; e < len(escapings); e++ {
			if h.mayBeginEscaped(v[k:], &escapings[e]) {
				return k
			}
		}
	}
	return len(v)
}

// mayBeginEscaped reports whether t is, in any letter case, a proper
// prefix of a reference in the escape e: its two slashes and the name,
// after a scheme (refSchemes) and its ':' or not.
func (h *hostRewriter) mayBeginEscaped(t []byte, e *escaping) bool {
	if prefixOfPattern(t, "", "", e.slash, h.hostB) {
		return true
	}
	for _, c := range [...]string{e.colon, ":"} {
		for _, s := range refSchemes {
			if prefixOfPattern(t, s.name, c, e.slash, h.hostB) {
				return true
			}
		}
	}
	return false
}

// encMay reports whether the escaped forms may change v or, unless final,
// begin in it: the origin's name after "2f" (f finds it in v), or a tail
// that may begin a pattern. Without either, textRun's output for v goes out directly: a
// replacement ends where a host name cannot go on, so it never makes a
// new escaped reference with what follows.
func (h *hostRewriter) encMay(f *hostFinder, v []byte, final bool) bool {
	if f.find(0) >= 0 {
		return true
	}
	return !final && h.encHoldFrom(v, len(v)-len(h.hostB)+1-encMaxPrefix) < len(v)
}

// encStream is the escaped forms on the way out of a text region or a
// text response: it takes textRun's output, holds back in tail what may
// begin a match, and writes the rest to out, adding the references it
// replaces to *count.
type encStream struct {
	hosts *hostRewriter
	out   textSink
	count *int
	tail  []byte
	skip  int
}

func (e *encStream) write(p []byte) {
	if len(e.tail) == 0 {
		n, skip, changed := e.hosts.encRun(e.out, p, e.skip, false)
		e.tail, e.skip = append(e.tail, p[n:]...), skip
		*e.count += changed
		return
	}
	e.tail = append(e.tail, p...)
	n, skip, changed := e.hosts.encRun(e.out, e.tail, e.skip, false)
	e.tail, e.skip = e.tail[:copy(e.tail, e.tail[n:])], skip
	*e.count += changed
}

// finish writes the held tail at the end of a text region.
func (e *encStream) finish() {
	if len(e.tail) > 0 {
		_, _, changed := e.hosts.encRun(e.out, e.tail, e.skip, true)
		*e.count += changed
	}
	e.tail, e.skip = e.tail[:0], 0
}

// rewriteEncodedValue applies the escaped forms to a whole value, appending
// the result to dst; when nothing changes, dst is returned as it was.
func (h *hostRewriter) rewriteEncodedValue(dst, v []byte) ([]byte, bool) {
	if !h.enc.on || bytes.IndexByte(v, '%') < 0 && bytes.IndexByte(v, '\\') < 0 {
		return dst, false
	}
	h.sink.b = dst
	start := len(dst)
	_, _, n := h.encRun(&h.sink, v, 0, true)
	out := h.sink.b
	h.sink.b = nil
	if n == 0 {
		return out[:start], false
	}
	return out, true
}
