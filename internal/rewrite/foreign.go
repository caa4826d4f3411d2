package rewrite

// Foreign content: SVG and MathML (HTML Living Standard §13.2.6.5, "the
// rules for parsing tokens in foreign content", and §13.2.6, the tree
// construction dispatcher). Inside them, title, style, script and the other
// raw-text names are ordinary elements, and "<![CDATA[" opens a CDATA
// section that ends at "]]>". Telling which applies takes part of the tree:
// the scanner keeps a stack of the foreign elements open, and of the HTML
// elements open inside their integration points (foreignObject, desc and
// title in SVG, mi, mo, mn, ms, mtext and annotation-xml in MathML). The
// stack is empty, and costs nothing, outside SVG and MathML.
//
// It follows golang.org/x/net/html's Parse, which implements those rules,
// as far as they decide where elements and text are, with two
// simplifications where the full tree builder needs the HTML elements open
// around the foreign content, which the scanner does not track: an end tag
// that matches no open foreign element is taken as a stray one and ignored,
// so the "</div>" of "<div><svg></div>", which closes the svg in a browser,
// leaves it open here; and of the implied end tags inside an integration
// point only those of <p> are followed.

import (
	"bytes"

	"golang.org/x/net/html/atom"
)

// Kinds of the elements on the foreign stack.
const (
	fForeign    uint8 = iota // an SVG or MathML element
	fHTMLPoint               // an HTML integration point: start tags and text are HTML
	fMathText                // a MathML text integration point (mi, mo, mn, ms, mtext)
	fAnnotation              // annotation-xml that is no HTML integration point: <svg> is HTML
	fHTML                    // an HTML element open inside an integration point
)

// maxForeignDepth and maxForeignNames bound the stack, in elements and in
// bytes of their names, so that memory stays bounded whatever the page. A
// start tag that would take it past either is one the scanner cannot
// follow: where the elements after it are, and so whether a "</body>" or
// a "<script>" after it is a tag, is unknown, and the rest of the page is
// copied as it is (rewriter.lose). 256 elements of 64-letter names fit.
const (
	maxForeignDepth = 256
	maxForeignNames = 16 << 10
)

// felem is one open element: its kind, whether it is in the MathML
// namespace, and its lower-case name, s.fnames[off:off+n].
type felem struct {
	kind   uint8
	math   bool
	off, n int32
}

// inForeign reports whether the current node is an SVG or MathML element,
// where "<![CDATA[" opens a CDATA section (x/net/html's Parse allows CDATA
// when the current node is not in the HTML namespace).
func (s *scanner) inForeign() bool {
	return len(s.foreign) > 0 && s.foreign[len(s.foreign)-1].kind != fHTML
}

// foreignName returns the name of an open element.
func (s *scanner) foreignName(e felem) []byte { return s.fnames[e.off : e.off+e.n] }

func (s *scanner) pushForeign(kind uint8, math bool, name []byte) {
	if len(s.foreign) >= s.fdepth || len(s.fnames)+len(name) > maxForeignNames {
		s.deep = true
		return
	}
	s.foreign = append(s.foreign, felem{kind: kind, math: math, off: int32(len(s.fnames)), n: int32(len(name))})
	s.fnames = append(s.fnames, name...)
}

// popForeign closes the open elements from the k-th on.
func (s *scanner) popForeign(k int) {
	if k < len(s.foreign) {
		s.fnames = s.fnames[:s.foreign[k].off]
		s.foreign = s.foreign[:k]
	}
}

// lowerTagName writes the lower-case name of a raw tag ("<SVG ...>",
// "</Title>") to dst and returns it.
func lowerTagName(raw, dst []byte) []byte {
	dst = dst[:0]
	for _, c := range tagName(raw) {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// foreignTag is foreignStartTag, and stops following the page (lose) at a
// start tag nested deeper than the stack holds: this tag and the rest go
// out as they came. The bids' place there is taken before the tag, and so
// before a breakout pops the MathML it leaves.
func (rw *rewriter) foreignTag(raw []byte, a atom.Atom) bool {
	here := rw.openRawText()
	foreign := rw.foreignStartTag(raw, a)
	if rw.deep {
		rw.stats.DepthExceeded = true
		rw.lose(rw.tokStart, here)
	}
	return foreign
}

// foreignStartTag follows a start tag while foreign content may be open (a
// non-empty stack, or the tag is <svg> or <math>). It reports whether the
// tag was taken as a foreign element, which never opens raw text; false
// means it is processed as HTML (after any breakout), by tagDone.
func (rw *rewriter) foreignStartTag(raw []byte, a atom.Atom) bool {
	s := &rw.scanner
	name := lowerTagName(raw, s.fscratch[:0])
	s.fscratch = name
	if a == 0 {
		a = atom.Lookup(name)
	}
	selfClosing := len(raw) >= 2 && raw[len(raw)-2] == '/' // as x/net/html's Tokenizer tells it
	if s.inForeign() && !rw.htmlStartTagHere(a) {
		if breakout(a, raw) {
			// Pop to the HTML context, then the tag is HTML (§13.2.6.5).
			k := len(s.foreign)
			for k > 0 && (s.foreign[k-1].kind == fForeign || s.foreign[k-1].kind == fAnnotation) {
				k--
			}
			s.popForeign(k)
		} else {
			top := s.foreign[len(s.foreign)-1]
			if !selfClosing {
				s.pushForeign(foreignKind(top.math, a, name, raw), top.math, name)
			}
			return true
		}
	}
	// HTML processing with foreign content around (an integration point),
	// or the root of new foreign content.
	switch {
	case a == atom.Svg || a == atom.Math:
		if !selfClosing {
			s.pushForeign(fForeign, a == atom.Math, name)
		}
	case len(s.foreign) == 0 || rawTextAtom(a) || voidElement(a) || a == atom.Html || a == atom.Head || a == atom.Body:
	default:
		if a == atom.P || closesP(a) {
			if top := s.foreign[len(s.foreign)-1]; top.kind == fHTML && bytes.Equal(s.foreignName(top), []byte("p")) {
				s.popForeign(len(s.foreign) - 1) // §13.2.6.4.7: "close a p element"
			}
		}
		s.pushForeign(fHTML, false, name)
	}
	return false
}

// htmlStartTagHere reports whether a start tag whose current node is a
// foreign element is nonetheless processed as HTML (§13.2.6, the
// dispatcher): at an HTML integration point, at a MathML text integration
// point except mglyph and malignmark, and <svg> in annotation-xml.
func (rw *rewriter) htmlStartTagHere(a atom.Atom) bool {
	switch rw.foreign[len(rw.foreign)-1].kind {
	case fHTMLPoint:
		return true
	case fMathText:
		return a != atom.Mglyph && a != atom.Malignmark
	case fAnnotation:
		return a == atom.Svg
	}
	return false
}

// foreignKind is the kind of a foreign element named a (lower-case name),
// in MathML if math.
func foreignKind(math bool, a atom.Atom, name, raw []byte) uint8 {
	if !math {
		// The atom of "foreignObject" has its SVG spelling: name is compared.
		if a == atom.Desc || a == atom.Title || string(name) == "foreignobject" {
			return fHTMLPoint
		}
		return fForeign
	}
	switch a {
	case atom.Mi, atom.Mo, atom.Mn, atom.Ms, atom.Mtext:
		return fMathText
	case atom.AnnotationXml:
		if v, ok := attrValue(raw, "encoding"); ok && (foldEq([]byte(v), "text/html") || foldEq([]byte(v), "application/xhtml+xml")) {
			return fHTMLPoint
		}
		return fAnnotation
	}
	return fForeign
}

// foreignEndTag follows an end tag while the stack is not empty: an end
// tag in foreign content closes the nearest open foreign element of its
// name, looking no further than the HTML element below (§13.2.6.5, "any
// other end tag"); otherwise, and for an end tag whose current node is
// HTML, the HTML rules apply (§13.2.6.4.7, "any other end tag").
func (rw *rewriter) foreignEndTag(raw []byte) {
	s := &rw.scanner
	name := lowerTagName(raw, s.fscratch[:0])
	s.fscratch = name
	if s.inForeign() {
		for k := len(s.foreign) - 1; k >= 0; k-- {
			if bytes.Equal(s.foreignName(s.foreign[k]), name) {
				s.popForeign(k)
				return
			}
			if k == 0 || s.foreign[k-1].kind == fHTML {
				break
			}
		}
	}
	for k := len(s.foreign) - 1; k >= 0; k-- {
		e := s.foreign[k]
		switch {
		case e.kind == fHTML && bytes.Equal(s.foreignName(e), name):
			s.popForeign(k)
			return
		case e.kind != fForeign:
			return // a special element (an integration point, an HTML element): ignored
		}
	}
	// An HTML element below the foreign content, which the stack does not
	// know, may have this name; the tag is taken as a stray one, ignored.
}

// bidsBlockedByForeign reports whether a script written here would be a
// MathML element, which never runs: the current node is MathML, and not a
// point where a start tag is HTML.
func (s *scanner) bidsBlockedByForeign() bool {
	if len(s.foreign) == 0 {
		return false
	}
	top := s.foreign[len(s.foreign)-1]
	return top.math && (top.kind == fForeign || top.kind == fAnnotation)
}

// breakout reports whether a start tag leaves foreign content (§13.2.6.5):
// the listed HTML names, and font with a color, face or size attribute.
func breakout(a atom.Atom, raw []byte) bool {
	switch a {
	case atom.B, atom.Big, atom.Blockquote, atom.Body, atom.Br, atom.Center, atom.Code, atom.Dd, atom.Div,
		atom.Dl, atom.Dt, atom.Em, atom.Embed, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Head, atom.Hr, atom.I, atom.Img, atom.Li, atom.Listing, atom.Menu, atom.Meta, atom.Nobr,
		atom.Ol, atom.P, atom.Pre, atom.Ruby, atom.S, atom.Small, atom.Span, atom.Strong, atom.Strike,
		atom.Sub, atom.Sup, atom.Table, atom.Tt, atom.U, atom.Ul, atom.Var:
		return true
	case atom.Font:
		for _, k := range []string{"color", "face", "size"} {
			if _, ok := attrValue(raw, k); ok {
				return true
			}
		}
	}
	return false
}

// rawTextAtom reports whether a is one of the elements tagDone switches to
// raw text, RCDATA, script data or plaintext: they are closed by their own
// end tag, which the scanner finds, so they are not put on the stack.
func rawTextAtom(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Xmp, atom.Iframe, atom.Noembed, atom.Noframes, atom.Noscript,
		atom.Textarea, atom.Title, atom.Plaintext:
		return true
	}
	return false
}

// voidElement reports whether a has no end tag (§13.1.2).
func voidElement(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Basefont, atom.Bgsound, atom.Br, atom.Col, atom.Embed, atom.Frame,
		atom.Hr, atom.Image, atom.Img, atom.Input, atom.Keygen, atom.Link, atom.Meta, atom.Param,
		atom.Source, atom.Track, atom.Wbr:
		return true
	}
	return false
}

// closesP reports whether a start tag closes an open <p> (§13.2.6.4.7).
func closesP(a atom.Atom) bool {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Center, atom.Details, atom.Dialog,
		atom.Dir, atom.Div, atom.Dl, atom.Fieldset, atom.Figcaption, atom.Figure, atom.Footer, atom.Header,
		atom.Hgroup, atom.Main, atom.Menu, atom.Nav, atom.Ol, atom.Search, atom.Section, atom.Summary,
		atom.Ul, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Pre, atom.Listing, atom.Form,
		atom.Hr, atom.Table:
		return true
	}
	return false
}

// attrValue returns the decoded value of the attribute key (lower case) of
// a raw start tag; ok is false when the tag has no such attribute. Only the
// first attribute of a name counts, as in the tokenizer.
func attrValue(raw []byte, key string) (string, bool) {
	for _, a := range scanAttrs(raw, nil) {
		if foldEq(raw[a.nameStart:a.nameEnd], key) {
			return unescapeAttr(string(raw[a.valStart:a.valEnd])), true
		}
	}
	return "", false
}

// foldEq reports whether b is s, which is lower case, in any ASCII case.
func foldEq(b []byte, s string) bool { return len(b) == len(s) && equalFoldLower(b, []byte(s)) }

// scanCDATA finds the "]]>" that ends a CDATA section (§13.2.5.69–71).
// sub counts the ']' just before pos, up to two.
func (rw *rewriter) scanCDATA() bool {
	b := rw.buf[:rw.n]
	i, br := rw.pos, rw.sub
	for i < len(b) {
		if br == 0 {
			j := bytes.IndexByte(b[i:], ']')
			if j < 0 {
				i = len(b)
				break
			}
			i, br = i+j+1, 1
			continue
		}
		switch b[i] {
		case ']':
			br = min(br+1, 2)
		case '>':
			if br == 2 {
				rw.pos, rw.mode = i+1, inText
				return true
			}
			br = 0
		default:
			br = 0
		}
		i++
	}
	rw.pos, rw.sub = i, br
	return false
}
