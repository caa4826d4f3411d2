package rewrite

// Escaped origin references (Options.Inline; docs/behaviour.md, "URL
// rewriting"): an absolute origin URL whose "://" is percent-encoded, as
// share links and tracking pixels carry the page's address in a query
// parameter (u=https%3A%2F%2Forigin.example%2Fa), percent-encoded twice
// (%252F), or written with JavaScript escapes inside a string literal
// ("https:\u002F\u002Forigin.example"). They follow the text rules of
// text.go after it, on its output: a host name ends where a host name
// cannot go on, a port must be the origin's (or its scheme's default
// written out), and a scheme, when there is one, becomes request_scheme.
// Only the host (and the scheme) change; the page's spelling of the
// separators is kept, and the request host is written in the same escape.

import "bytes"

// encFamily is one escaped spelling of the "//" before a host.
type encFamily struct {
	sep    string   // the two slashes, lower case
	colons []string // spellings of the ':' after a scheme, lower case
	colon  string   // the ':' of the request host's port, in this escape
	lb, rb string   // '[' and ']' of an IPv6 request host
}

var encFamilies = [...]encFamily{
	{sep: "%2f%2f", colons: []string{"%3a", ":"}, colon: "%3A", lb: "%5B", rb: "%5D"},
	{sep: "%252f%252f", colons: []string{"%253a", ":"}, colon: "%253A", lb: "%255B", rb: "%255D"},
	{sep: `\u002f\u002f`, colons: []string{`\u003a`, ":"}, colon: ":", lb: "[", rb: "]"},
}

// encMaxPrefix is the longest scheme and separator before a host:
// "https\u003a\u002f\u002f".
const encMaxPrefix = len(`https\u003a\u002f\u002f`)

// encRules are the escaped forms for one origin: the request host in each
// family's escape.
type encRules struct {
	on   bool
	host [len(encFamilies)][]byte
}

func (e *encRules) reset(on bool, name, requestHost string) {
	e.on = on
	if !on || name == "" {
		e.on = false
		return
	}
	for k, f := range encFamilies {
		b := e.host[k][:0]
		for i := 0; i < len(requestHost); i++ {
			switch c := requestHost[i]; c {
			case ':':
				b = append(b, f.colon...)
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

// encMatch is one escaped reference: v[from:to] is replaced by scheme
// (when set), v[keep:at] as written, and the escaped request host.
type encMatch struct {
	from, keep, at, to int
	family             int
	scheme             bool
	ok, more           bool
}

// matchEncoded decides the origin name found at at in v, whose bytes from
// last on are not written yet. more reports that v ends before it can
// tell; it is never set when final.
func (h *hostRewriter) matchEncoded(v []byte, last, at int, final bool) (m encMatch) {
	if at == 0 || lower(v[at-1]) != 'f' {
		return m // every separator ends with "2f"
	}
	prefix := v[last:at]
	m.family = -1
	for k, f := range encFamilies {
		if endsWithEsc(prefix, f.sep) {
			m.family = k
			break
		}
	}
	if m.family < 0 {
		return m
	}
	f := &encFamilies[m.family]
	m.from, m.keep, m.at = at-len(f.sep), at-len(f.sep), at
	form := formRelative
	for _, c := range f.colons {
		before := v[last:m.from]
		if !endsWithEsc(before, c) {
			continue
		}
		before = before[:len(before)-len(c)]
		switch {
		case endsWithFold(before, "https"):
			m.from, m.keep, form = m.from-len(c)-len("https"), m.from-len(c), formHTTPS
		case endsWithFold(before, "http"):
			m.from, m.keep, form = m.from-len(c)-len("http"), m.from-len(c), formHTTP
		default:
			continue
		}
		m.scheme = true
		break
	}
	to := at + len(h.hostB)
	if to == len(v) && !final {
		return encMatch{more: true} // a port may follow, or a host character
	}
	isColon, n := encPortColon(v[to:], f)
	if n > 0 && !isColon {
		if !final {
			return encMatch{more: true}
		}
		n = 0 // the page ends in part of an escaped ':'
	}
	if isColon {
		p := to + n
		for p < len(v) && p-to-n < maxPortDigits && v[p] >= '0' && v[p] <= '9' {
			p++
		}
		if p == len(v) && !final {
			return encMatch{more: true}
		}
		if p-to-n == maxPortDigits || !h.portOK(v[to+n:p], form) {
			return encMatch{}
		}
		to = p
	} else if h.port != "" {
		return encMatch{}
	}
	if to == len(v) {
		if !final {
			return encMatch{more: true}
		}
	} else if !endsText(v[to]) || v[to] == 0 {
		return encMatch{} // a NUL right after: see nulBefore
	}
	if !m.scheme && nulBefore(v, m.from, nulWindow) {
		return encMatch{}
	}
	m.to, m.ok = to, true
	return m
}

// encPortColon reports whether t starts with the ':' before a port, as ':'
// or in family f's escape, and its length. A t that ends inside the escape
// gives (false, len(t)): more text decides.
func encPortColon(t []byte, f *encFamily) (isColon bool, n int) {
	if len(t) > 0 && t[0] == ':' {
		return true, 1
	}
	c := f.colons[0]
	switch {
	case len(t) >= len(c):
		return prefixFold(t[:len(c)], c), len(c) * b2i(prefixFold(t[:len(c)], c))
	case len(t) > 0 && prefixFold(t, c):
		return false, len(t)
	}
	return false, 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// prefixOfPattern reports whether t is, in any letter case, a proper
// prefix of scheme, colon, sep and name one after the other (all lower
// case).
func prefixOfPattern(t []byte, scheme, colon, sep string, name []byte) bool {
	if len(t) >= len(scheme)+len(colon)+len(sep)+len(name) {
		return false
	}
	for _, part := range [...]string{scheme, colon, sep} {
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
			m := h.matchEncoded(v, last, at, final)
			if m.more {
				pending, i = at, at
				break
			}
			i = at + 1
			if !m.ok {
				continue
			}
			sink.write(v[last:m.from])
			if m.scheme {
				sink.write(h.repl[:h.relAt-1])
			}
			sink.write(v[m.keep:m.at])
			sink.write(h.enc.host[m.family])
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
		for _, f := range encFamilies {
			if prefixOfPattern(v[k:], "", "", f.sep, h.hostB) {
				return k
			}
			for _, c := range f.colons {
				if prefixOfPattern(v[k:], "https", c, f.sep, h.hostB) || prefixOfPattern(v[k:], "http", c, f.sep, h.hostB) {
					return k
				}
			}
		}
	}
	return len(v)
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
