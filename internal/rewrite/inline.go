package rewrite

// Inline text rules (Options.Inline; docs/behaviour.md, "URL rewriting"):
// origin references in every attribute but xmlns (rewriteAttrs), and in
// text regions: everything between a tag (or a doctype or bogus comment)
// and the next, that is text, comments, CDATA sections and the content of
// every raw-text element. The scanner already knows where a region starts
// and ends; its bytes pass through textRun, then the escaped forms
// (encoded.go), on their way out, in flush. textRun keeps back at most a
// tail of the length of one host reference, which stays in the read
// buffer (run compacts from the first byte not written); encStream keeps
// its own, as short. A region that does not name the origin is written as
// it is, with the tag after it (nameIn: one finder per read buffer).

import "bytes"

// inlineText is the text region being rewritten, if any.
type inlineText struct {
	kind attrKind // 0 when none
	prev byte     // the input byte before the first one not written
	skip int      // textRun's skip for the bytes not written
	// start is where the region's text begins in the read buffer; the
	// bytes before it that are not written yet (a tag) go out as they are.
	start int
}

// classifyInlineAttr is classifyAttr for the attributes of Options.Inline:
// every attribute but the namespace declarations (xmlns, xmlns:*), whose
// values name a vocabulary, never a resource (docs/behaviour.md, "URL
// rewriting"), and which an XML parser of the page would no longer
// recognise if they changed.
func classifyInlineAttr(name []byte) attrKind {
	if len(name) >= len("xmlns") && bytes.EqualFold(name[:len("xmlns")], []byte("xmlns")) &&
		(len(name) == len("xmlns") || name[len("xmlns")] == ':') {
		return kindNone
	}
	return kindContent
}

// textRegion starts the text rules at end, where the scanner enters text
// (after a tag, a doctype or a bogus comment, or at the start of the
// page): text, comments, CDATA sections, and the content of every raw-text
// element (script of any type, style, textarea, title, noscript, xmp,
// iframe, noembed, noframes, plaintext). A tag, a doctype or a bogus
// comment ends the region (endInline), so that they go out as they are.
func (rw *rewriter) textRegion(end int) {
	if !rw.opts.Inline || len(rw.hosts.hostB) == 0 || rw.mode == inCopy {
		return
	}
	if rw.keep != 0 && rw.keptByPolicy() {
		return
	}
	rw.inl = inlineText{kind: kindContent, prev: '>', start: end}
}

// tokenBoundary ends the text rules' run at end, where a comment begins or
// ends inside a region, and starts the next run there. The visitor's DOM
// never joins a comment with the text beside it, so no reference, and no
// NUL that nulBefore reads, spans the two; the rules then see each one as
// the reference tokenizer does.
func (rw *rewriter) tokenBoundary(end int) {
	if rw.inl.kind == kindNone {
		return
	}
	rw.endInline(end)
	rw.textRegion(end)
}

// flushInline writes buf[done:end] of the element's raw text through the
// text rules; final when end is where the element ends.
func (rw *rewriter) flushInline(end int, final bool) {
	if rw.flight != flightOff && rw.flightFlush(end, final) {
		return
	}
	if end <= rw.inl.start {
		rw.write(rw.buf[rw.done:end]) // still the tag before the region
		rw.done = end
		return
	}
	if rw.inl.start > rw.done {
		rw.write(rw.buf[rw.done:rw.inl.start]) // the tag before the region
		rw.done = rw.inl.start
	}
	v := rw.buf[rw.done:end]
	if !final && len(rw.encs.tail) == 0 && !rw.nameIn(rw.done, end) {
		// No origin name in v: only a tail that may begin one waits.
		cut := min(rw.hosts.holdFrom(v, len(v)-len(rw.hosts.hostB)+1-textLookbehind),
			rw.hosts.encHoldFrom(v, len(v)-len(rw.hosts.hostB)+1-encMaxPrefix)) - nulWindow
		cut = max(cut, 0)
		rw.write(v[:cut])
		rw.inl.skip = 0
		if cut > 0 {
			rw.inl.prev = v[cut-1]
		}
		rw.done += cut
		return
	}
	// The read buffer's search has found the names in v already: the
	// escaped forms' test and textRun go through them, not through v again.
	names := rw.namesIn(rw.done, end)
	var sink textSink = rw
	if rw.hosts.enc.on {
		if f := listHostFinder(v, names, "2f"); len(rw.encs.tail) > 0 || rw.hosts.encMay(&f, v, final) {
			sink = &rw.encs
		}
	}
	find := listHostFinder(v, names, textPre(rw.inl.kind))
	used, skip, changed := rw.hosts.textRunWith(&find, sink, v, rw.inl.kind, rw.inl.prev, rw.inl.skip, final)
	rw.inl.skip = skip
	rw.stats.InlineRewritten += changed
	if used > 0 {
		rw.inl.prev = v[used-1]
	}
	rw.done += used
}

// endInline ends the region's text rules at end, where a tag (or the
// page) begins. A rest that cannot hold the origin's name, and has no
// escaped form begun before it, is left to go out as it is with what
// follows: most regions are the white space between two tags, or text and
// scripts that never name the origin, and they then cost one search and
// no write of their own. openTag, which runs at every tag, does the same
// written out.
func (rw *rewriter) endInline(end int) {
	if rw.inl.kind == kindNone {
		return
	}
	if rw.flight != flightOff && rw.flightFlush(end, true) {
		return
	}
	if rw.regionClear(end) {
		rw.encs.skip, rw.inl.kind = 0, kindNone // what finish does to a stream that holds nothing
		return
	}
	rw.endInlineSearch(end)
}

// regionClear reports that the region's rest before end names the origin
// nowhere and no escaped form waits, as the last name search answers
// without a call (nameIn's test).
func (rw *rewriter) regionClear(end int) bool {
	c := &rw.names
	return len(rw.encs.tail) == 0 && max(rw.done, rw.inl.start) >= c.asked && end <= c.clear
}

// endInlineSearch is endInline past what the last name search answers.
//
//go:noinline
func (rw *rewriter) endInlineSearch(end int) {
	if from := max(rw.done, rw.inl.start); end > from && (len(rw.encs.tail) > 0 || rw.nameIn(from, end)) {
		rw.flushInline(end, true)
	}
	if len(rw.encs.tail) > 0 {
		rw.encs.finish()
	}
	rw.encs.skip = 0
	rw.inl.kind = kindNone
}

// nameSearch is the search for the origin's name in the read buffer,
// kept so that the tags and text regions after one name need no search of
// their own until they reach the next (nameIn). Its finder is valid for
// buf[:n]; compacting the buffer or reading into it makes it stale, so
// that the next ask searches again.
type nameSearch struct {
	n     int
	f     foldFinder
	asked int // the last from searched from
	at    int // the first name at or after asked, or -1
	// upTo is the last from that at answers: at, or the end of the
	// buffer when there is no name after asked.
	upTo int
	// clear: no name ends in buf[asked:clear], so that a span from asked
	// on that ends there holds none.
	clear int
}

// nameIn reports whether buf[from:to] holds the origin's name in any
// letter case. Most spans (the tags and text regions between two names)
// are answered by the last search without a call.
func (rw *rewriter) nameIn(from, to int) bool {
	c := &rw.names
	return (from < c.asked || to > c.clear) && rw.nameInSearch(from, to)
}

// nameInSearch is nameIn past the last search; kept out of line so that
// nameIn's common case inlines.
//
//go:noinline
func (rw *rewriter) nameInSearch(from, to int) bool {
	at := rw.nameAt(from)
	return at >= 0 && at+len(rw.hosts.hostB) <= to
}

// nameAt is where the origin's name first begins in buf[:n] at or after
// from, in any letter case, or -1. Its callers (every tag and text region)
// ask from places that move forward through the buffer, so one pass of the
// finder serves the whole buffer, and most calls are answered by the last
// search: the next name is past the span asked about.
func (rw *rewriter) nameAt(from int) int {
	c := &rw.names
	if from < c.asked || from > c.upTo {
		return rw.searchName(from)
	}
	return c.at
}

// namesIn lists where the origin's name begins in buf[from:to], relative
// to from, for the names that end there too. The list is valid until the
// next call.
func (rw *rewriter) namesIn(from, to int) []int {
	l := rw.nameList[:0]
	for at := rw.nameAt(from); at >= 0 && at+len(rw.hosts.hostB) <= to; at = rw.nameAt(at + 1) {
		l = append(l, at-from)
	}
	rw.nameList = l
	return l
}

// stale makes the next nameAt search: the buffer has moved or grown.
func (c *nameSearch) stale() { c.n, c.upTo, c.clear = -1, -1, -1 }

func (rw *rewriter) searchName(from int) int {
	c := &rw.names
	h := &rw.hosts
	if c.n != rw.n || from < c.asked {
		*c = nameSearch{n: rw.n, f: newFoldFinderPair(rw.buf[:rw.n], h.hostB, h.rare, h.pair)}
	}
	c.at, c.asked, c.upTo, c.clear = c.f.find(from), from, c.n, c.n
	if c.at >= 0 {
		c.upTo, c.clear = c.at, c.at+len(h.hostB)-1
	}
	return c.at
}
