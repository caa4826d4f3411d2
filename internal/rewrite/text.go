package rewrite

// Text rules (docs/behaviour.md, "URL rewriting", "Text responses"): the
// origin host in CSS, JavaScript, JSON, XML and other text, in text
// responses and, inside HTML, in style and meta content attributes and in
// the content of style and script elements. They are the attribute rules
// with a host anywhere in the text, the JSON-escaped forms (https:\/\/host,
// \/\/host) and a host-name boundary after the host instead of a URL
// delimiter. Upstream rewrites every processable text response
// (trusted-server-core publisher.rs, is_processable_content_type;
// streaming_replacer.rs, create_url_replacer) and bare hosts only at
// host-name boundaries (host_rewrite.rs, rewrite_bare_host_at_boundaries).

import "bytes"

const (
	// kindContent: inside a page (Options.Inline): the scheme-qualified,
	// protocol-relative and JSON-escaped forms anywhere (an og:image URL,
	// a URL list, "0; url=..." of refresh, a URL in a style, a script or
	// JSON-LD), never a bare host. There, a host without "//" before it is
	// prose (a description naming the site) or a relative path
	// (url(origin.example/a.png) in CSS, fetch("origin.example/x") in a
	// script), not the origin; and leaving it out lets the search take
	// only a host right after '/' (hostFinder's pre).
	kindContent attrKind = 16 + iota
	// kindCSS: style attributes and elements, CSS, JSON, XML and other
	// text: also a bare host at a host-name boundary.
	kindCSS
	// kindScript: JavaScript, where a bare host at a boundary may be code
	// ("x/example.com" divides by a member chain): a bare host only right
	// after a quote, which starts a string or template literal.
	kindScript
)

const (
	// textLookbehind is the longest form before the host, "https:\/\/":
	// a match starts at most this many bytes before the host name.
	textLookbehind = len(`https:\/\/`)
	// nulWindow is the bytes before a relative reference where a NUL
	// leaves it as it is (nulBefore): a scheme and its colon, the longest
	// "https\u003a". Every tail kept for a reference not decided yet
	// holds them.
	nulWindow = len(`https\u003a`)
)

func isTextKind(k attrKind) bool { return k >= kindContent }

// textLookahead is how many bytes after a host's first byte decide it: the
// name, ':', the port digits and the byte after them.
func (h *hostRewriter) textLookahead() int { return len(h.hostB) + 1 + maxPortDigits + 1 }

// writeMatch writes the replacement of m to sink.
func (h *hostRewriter) writeMatch(sink textSink, v []byte, m refMatch) {
	if m.scheme {
		sink.write(h.repl[:h.relAt-1])
	}
	sink.write(v[m.keep:m.sep])
	sink.write(h.repl[h.bareAt:])
}

// nulBefore reports a NUL among the n bytes of v before i. Inside a page
// the tree builder drops a NUL from text, and a comment, raw text or an
// attribute value gets U+FFFD for it (WHATWG HTML §13.2.5, §13.2.6.4.7),
// so that the visitor's DOM may join what the bytes keep apart:
// "//origin.example\x00y" is the host origin.exampley there, and
// "http:\x00//origin.example" a URL with a scheme. A reference with a NUL
// right after it, or a relative one with a NUL among the nulWindow bytes
// where a scheme would be, is left as it is.
func nulBefore(v []byte, i, n int) bool {
	return bytes.IndexByte(v[max(0, i-n):i], 0) >= 0
}

// textSink takes the output of textRun.
type textSink interface{ write(p []byte) }

// textRun applies the text rules to v, which continues a text whose byte
// before v[0] is prev and which is not written yet, and writes the result
// to sink. Hosts starting before skip were decided by the previous call.
// Unless final (v ends the text), it keeps back a tail that a later byte
// may make part of a match, and returns how much of v it consumed and the
// skip of the next call: the caller passes v[consumed:] again, followed by
// more text. The tail is shorter than textLookbehind+textLookahead (and,
// inside a page, nulWindow more), and it starts either where a replacement
// ended or at least textLookbehind bytes before any host not yet decided
// (inside a page, before any form that may begin one, nulWindow more), so
// that no form before a host is cut in two, nor the bytes nulBefore reads.
func (h *hostRewriter) textRun(sink textSink, v []byte, kind attrKind, prev byte, skip int, final bool) (consumed, nextSkip, changed int) {
	find := newHostFinderPair(v, h.hostB, h.rare, h.pair, textPre(kind))
	return h.textRunWith(&find, sink, v, kind, prev, skip, final)
}

// textPre is what the host must follow for textRun's rules: kindContent
// rewrites no bare host.
func textPre(kind attrKind) string {
	if kind == kindContent {
		return "/"
	}
	return ""
}

// textRunWith is textRun with the finder of the host in v given.
func (h *hostRewriter) textRunWith(find *hostFinder, sink textSink, v []byte, kind attrKind, prev byte, skip int, final bool) (consumed, nextSkip, changed int) {
	last, pending := 0, -1
	i := skip
	for i < len(v) {
		at := find.find(i)
		if at < 0 {
			// No host starts in v[i:len(v)-len(name)+1].
			i = max(i, len(v)-len(h.hostB)+1)
			break
		}
		m, ok, more := h.matchRef(v, last, at, refScan{kind: kind, esc: &escapings[escPlain], prev: prev, final: final})
		if more {
			pending, i = at, at
			break
		}
		i = at + len(h.hostB)
		if !ok {
			continue
		}
		sink.write(v[last:m.from])
		h.writeMatch(sink, v, m)
		last, i = m.to, m.to
		changed++
	}
	if final {
		sink.write(v[last:])
		return len(v), 0, changed
	}
	var cut int
	if pending >= 0 {
		cut = pending - textLookbehind
	} else {
		// A host not found yet starts at len(v)-len(name)+1 or later, and
		// its match at most textLookbehind bytes before that. Only a tail
		// that may begin one is kept, so that a text that names no origin
		// streams as it arrives.
		cut = h.holdFrom(v, len(v)-len(h.hostB)+1-textLookbehind)
		if kind == kindContent {
			cut -= nulWindow // the bytes nulBefore reads
		}
	}
	consumed, nextSkip = keepTail(sink, v, last, i, cut)
	return consumed, nextSkip, changed
}

// keepTail ends a run of textRun or encRun that is not final: it writes
// v[last:cut], cut moved to at least last (the end of the last
// replacement) and at most len(v), keeps the rest, and gives the skip of
// the next run for the first host not decided, at i.
func keepTail(sink textSink, v []byte, last, i, cut int) (consumed, nextSkip int) {
	cut = min(max(cut, last), len(v))
	sink.write(v[last:cut])
	return cut, max(0, i-cut)
}

// holdFrom is the first k from start on where v[k:] may begin a match
// that continues after v (mayBeginRef). It is len(v) when there is none.
func (h *hostRewriter) holdFrom(v []byte, start int) int {
	for k := max(start, 0); k < len(v); k++ {
		c := lower(v[k])
		if c != 'h' && !isSlash(c) && c != h.hostB[0] {
			continue
		}
		if h.mayBeginRef(v[k:]) {
			return k
		}
	}
	return len(v)
}

// mayBeginRef reports whether t is, in any letter case, a proper prefix
// of a form of the text rules followed by the host name: a scheme
// (refSchemes), its ':' and up to maxSlashRun slashes, or slashes alone,
// and then the name (after two slashes at least), or the name alone.
func (h *hostRewriter) mayBeginRef(t []byte) bool {
	if prefixOfName(t, h.hostB) {
		return true
	}
	rest, slashes := t, -1 // -1: no scheme
	for _, sch := range refSchemes {
		n := min(len(t), len(sch.name))
		if !prefixFold(t[:n], sch.name) {
			continue
		}
		if n == len(t) {
			return true // inside the scheme, or right after it
		}
		if n == len(sch.name) && t[n] == ':' {
			rest, slashes = t[n+1:], maxSlashRun
			break
		}
	}
	r := 0
	for r < len(rest) && isSlash(rest[r]) && (slashes < 0 || r < slashes) {
		r++
	}
	if r == len(rest) {
		return r > 0 || slashes >= 0
	}
	return r >= 2 && prefixOfName(rest[r:], h.hostB)
}

// prefixOfName reports whether t is a proper prefix of name in any letter
// case.
func prefixOfName(t, name []byte) bool {
	return len(t) < len(name) && equalFoldLower(t, name[:len(t)])
}

// appendSink collects textRun's output in a slice.
type appendSink struct{ b []byte }

func (s *appendSink) write(p []byte) { s.b = append(s.b, p...) }

// rewriteTextValue is rewrite for the text kinds: a whole attribute value,
// in which the origin's name begins at names when the caller knows
// (rewriteAt).
func (h *hostRewriter) rewriteTextValue(dst, v []byte, kind attrKind, names []int) ([]byte, bool) {
	h.sink.b = dst
	start := len(dst)
	var n int
	if len(names) > 0 {
		find := listHostFinder(v, names, textPre(kind))
		_, _, n = h.textRunWith(&find, &h.sink, v, kind, 0, 0, true)
	} else {
		_, _, n = h.textRun(&h.sink, v, kind, 0, 0, true)
	}
	out := h.sink.b
	h.sink.b = nil
	if n == 0 {
		return out[:start], false
	}
	return out, true
}
