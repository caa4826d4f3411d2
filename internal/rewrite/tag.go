package rewrite

// Start and end tags: where a tag ends, which attribute values may need
// rewriting, and what a complete tag switches the scanner to.

import (
	"bytes"

	"golang.org/x/net/html/atom"

	"github.com/ssatd/ssatd/internal/csp"
)

// openTag starts holding the tag that opens at lt.
func (rw *rewriter) openTag(lt int, end bool) {
	// The tag is no text: endInline, written out because a call at every
	// tag costs more than its common case.
	if rw.inl.kind != kindNone {
		if rw.regionClear(lt) {
			rw.encs.skip, rw.inl.kind = 0, kindNone
		} else {
			rw.endInlineSearch(lt)
		}
	}
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
			// With Options.Inline every attribute may name the origin
			// (classifyInlineAttr), and tagDone looks at the whole tag.
			if len(rw.hosts.hostB) > 0 && !rw.opts.Inline && urlAttrName(b[rw.tokStart:i-1]) {
				rw.urlValue = i
			}
			st = tBeforeValue
		}
		// st changes only where a state ends, so that a run of bytes in one
		// state (a name, white space, an unquoted value) costs no load
		// that waits on the one before: assigning st at every byte would
		// chain each table load to the previous one.
		row := &tagTrans[st]
		for ; i < len(b); i++ {
			if next := row[b[i]]; next != st {
				if st = next; st >= tEnd {
					break
				}
				row = &tagTrans[st]
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

// tagDone acts on the held tag, buf[tokStart:end], which is complete;
// what follows it is text or raw text (textRegion, called last so that it
// sees the mode the tag switched to).
func (rw *rewriter) tagDone(end int) {
	s := &rw.scanner
	if end-s.tokStart > s.maxTok {
		rw.oversize() // as if it had arrived in pieces: the output must not depend on reads
		return
	}
	closing := s.closing
	s.pos, s.mode, s.closing = end, inText, ""
	raw := s.buf[s.tokStart:end]
	if s.endTag {
		rw.endTagDone(raw, closing)
	} else {
		rw.startTagDone(raw, end)
	}
	rw.textRegion(end)
}

// startTagDone acts on a complete start tag, raw, which ends at end.
func (rw *rewriter) startTagDone(raw []byte, end int) {
	s := &rw.scanner
	a := lookupName(raw[1:])
	foreign := (len(s.foreign) > 0 || a == atom.Svg || a == atom.Math) && rw.foreignTag(raw, a)
	if s.deep {
		return // this tag and the rest go out as they came (foreignTag)
	}
	if s.urlValue >= 0 {
		rw.checkURLValue(s.urlValue, end)
	}
	var by valueFilter
	if rw.opts.Inline && len(rw.hosts.hostB) > 0 {
		// One search of the whole tag, rather than one per value.
		amp := bytes.IndexByte(raw, '&') >= 0
		refs := amp && rw.hosts.refsMayMakeHost(raw)
		s.urlAttr = refs || rw.nameIn(s.tokStart, end)
		switch {
		case rw.hosts.isV4:
			// A URL value may spell the origin's address otherwise
			// (respell.go): every value is looked at.
			s.urlAttr = true
		case !amp:
			by = byNamePlain
		case !refs:
			by = byName
		}
	}
	if a == atom.Meta && rw.cspOn && rw.cspMetaDone(raw, end) {
		s.urlAttr = false // written with the loader's hash (injectcsp.go)
	}
	if s.urlAttr {
		if out := rw.rewriteAttrs(raw, by); out != nil {
			rw.flush(s.tokStart)
			rw.write(out)
			s.done = end
		}
	}
	if foreign {
		return // an SVG or MathML element: never raw text
	}
	switch a {
	case atom.Head:
		if !rw.stats.HeadFound {
			rw.headDone(end)
		}
	case atom.Meta:
		rw.metaDone(raw, end)
	case atom.Body:
		if rw.holding {
			rw.releaseHead(false) // the head is over
		}
	case atom.Script:
		s.mode, s.sub = inScript, sData
		rw.keepScript = rw.keep&csp.KeepScripts != 0 && rw.scriptRuns(raw)
		if rw.opts.Inline && len(rw.hosts.hostB) > 0 && !rw.keepScript {
			rw.flight = flightMaybe // the region textRegion starts (flight.go)
		}
	case atom.Style:
		s.mode, s.rawName = inRawText, "style"
	case atom.Xmp, atom.Iframe, atom.Noembed, atom.Noframes, atom.Noscript, atom.Textarea, atom.Title:
		s.mode, s.rawName = inRawText, a.String()
	case atom.Plaintext:
		s.mode = inPlaintext
	}
}

// endTagDone acts on a complete end tag; closing is the raw-text element
// it ends, if any.
func (rw *rewriter) endTagDone(raw []byte, closing string) {
	s := &rw.scanner
	if closing == "" && len(s.foreign) > 0 {
		rw.foreignEndTag(raw)
	}
	if rw.holding && lookupName(raw[2:]) == atom.Head {
		rw.releaseHead(false) // the head is over
	}
	// docs/behaviour.md, "SSAT injection": in MathML the bids script would
	// be a MathML element, which never runs; the end of the page is tried
	// instead. The bids go only into pages that got the ad slots, so a
	// </body> before the head injection ("</body><head>") is passed over
	// too: the next </body>, or the end of the page, gets them.
	if !rw.bodyEndDone && lookupName(raw[2:]) == atom.Body && !s.bidsBlockedByForeign() {
		rw.stats.BodyEndFound = true
		if rw.stats.HeadFound {
			rw.bodyEndDone = true
			rw.flush(s.tokStart)
			rw.bodyEnd()
		}
	}
}

// lookupName returns the atom of the tag name that starts name, in any
// ASCII case, for the names the scanner acts on (actedNames), and 0 for
// every other. name runs at least to the tag's '>'.
func lookupName(name []byte) atom.Atom {
	for _, c := range namesByFirst[name[0]] {
		if hasNameFold(name, c.name) {
			return c.a
		}
	}
	return 0 // a, div, span, li, ...: most first letters have no candidate
}

// hasNameFold reports whether name begins with the tag name want (lower
// case letters), in any ASCII case, ended there. A mismatch stops the
// compare before name's end, which is the tag's '>'.
func hasNameFold(name []byte, want string) bool {
	for k := 1; k < len(want); k++ {
		if name[k]|0x20 != want[k] {
			return false
		}
	}
	return endsName[name[len(want)]]
}

// actedNames are the elements the scanner acts on by name: head and body
// (the injections), meta (the charset), svg and math (foreign content),
// and the raw-text elements.
var actedNames = []atom.Atom{atom.Head, atom.Body, atom.Meta, atom.Svg, atom.Math,
	atom.Script, atom.Style, atom.Xmp, atom.Iframe, atom.Noembed, atom.Noframes,
	atom.Noscript, atom.Textarea, atom.Title, atom.Plaintext}

type actedName struct {
	name string
	a    atom.Atom
}

// namesByFirst is actedNames by their first letter, in either case.
var namesByFirst = func() (t [256][]actedName) {
	for _, a := range actedNames {
		n := a.String()
		t[n[0]] = append(t[n[0]], actedName{n, a})
		t[n[0]-('a'-'A')] = append(t[n[0]-('a'-'A')], actedName{n, a})
	}
	return t
}()

// endsName is the bytes that end a tag name.
var endsName = func() (e [256]bool) {
	for _, c := range []byte(" \n\r\t\f/>") {
		e[c] = true
	}
	return e
}()

// checkURLValue notes whether buf[from:to], which holds the value of an
// attribute that urlAttrName accepted, names the origin host or holds a
// character reference that may decode to part of it: without either
// rewriteRawValue changes nothing, and rewriteAttrs is not called.
func (rw *rewriter) checkURLValue(from, to int) {
	v := rw.buf[from:to]
	hasHost := containsFold(v, rw.hosts.hostB) || rw.hosts.isV4
	rw.urlAttr = rw.urlAttr || hasHost ||
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
