package rewrite

// Foreign content for the reference rewriter: which start tags are SVG or
// MathML elements, whose raw-text names (title, style, script, ...) open
// no raw text and inside which "<![CDATA[" opens a CDATA section. The
// reference tells the Tokenizer with NextIsNotRawText and AllowCDATA, the
// hooks html.Parse drives it with. The rules are HTML Living Standard
// §13.2.6 (the tree construction dispatcher) and §13.2.6.5 (foreign
// content), with the two simplifications docs/behaviour.md and the package
// doc state for the rewriter, which sees no HTML elements around the
// foreign content: an end tag that matches no open element here is a stray
// one, ignored; and of the implied end tags inside an integration point
// only those of <p> are followed. The stack is bounded, as the rewriter's
// is, by refForeignDepth elements and refForeignNameBytes bytes of names.
// Part of the reference (independence_test.go): nothing here comes from
// the scanner.

// The bounds of the open-element stack (the package doc, "Memory"); a
// differential test checks them against the scanner's.
const (
	refForeignDepth     = 256
	refForeignNameBytes = 16 << 10
)

// What an open element is.
const (
	refInSVGOrMath   = iota // an SVG or MathML element
	refHTMLPoint            // an HTML integration point (§13.2.6.2)
	refMathTextPoint        // a MathML text integration point
	refAnnotationXML        // annotation-xml that is no HTML integration point
	refHTMLElement          // an HTML element inside an integration point
)

type refOpenElement struct {
	name string // lower case
	kind int
	math bool
}

// refForeignStack is the open SVG and MathML elements, and the HTML
// elements open inside their integration points; empty outside them.
type refForeignStack struct {
	open      []refOpenElement
	nameBytes int
	full      bool // a start tag did not fit: the page is followed no further
}

func (f *refForeignStack) top() refOpenElement { return f.open[len(f.open)-1] }

// foreignNode reports whether the current node is an SVG or MathML
// element (html.Parse allows CDATA there).
func (f *refForeignStack) foreignNode() bool {
	return len(f.open) > 0 && f.top().kind != refHTMLElement
}

// scriptIsMathML reports whether a script start tag here would be a MathML
// element, which never runs.
func (f *refForeignStack) scriptIsMathML() bool {
	if len(f.open) == 0 {
		return false
	}
	t := f.top()
	return t.math && (t.kind == refInSVGOrMath || t.kind == refAnnotationXML)
}

func (f *refForeignStack) push(e refOpenElement) {
	if len(f.open) >= refForeignDepth || f.nameBytes+len(e.name) > refForeignNameBytes {
		f.full = true
		return
	}
	f.open = append(f.open, e)
	f.nameBytes += len(e.name)
}

func (f *refForeignStack) popTo(k int) {
	for len(f.open) > k {
		f.nameBytes -= len(f.top().name)
		f.open = f.open[:len(f.open)-1]
	}
}

// startTag follows a start tag named name (lower case) with the given
// attributes (the first of each name, decoded). It reports whether the
// tag is an SVG or MathML element.
func (f *refForeignStack) startTag(name string, attrs map[string]string, selfClosing bool) bool {
	if len(f.open) == 0 && name != "svg" && name != "math" {
		return false
	}
	if f.foreignNode() && !f.htmlStartTag(name) {
		if !refBreaksOut(name, attrs) {
			if t := f.top(); !selfClosing {
				f.push(refOpenElement{name: name, kind: refForeignKind(t.math, name, attrs), math: t.math})
			}
			return true
		}
		// Pop to the HTML around the foreign content; the tag is HTML.
		k := len(f.open)
		for k > 0 && (f.open[k-1].kind == refInSVGOrMath || f.open[k-1].kind == refAnnotationXML) {
			k--
		}
		f.popTo(k)
	}
	switch {
	case name == "svg" || name == "math":
		if !selfClosing {
			f.push(refOpenElement{name: name, kind: refInSVGOrMath, math: name == "math"})
		}
	case len(f.open) == 0 || refRawTextElement(name) != "" || refVoid[name] || name == "html" || name == "head" || name == "body":
		// Closed by its own end tag (the raw-text elements), by none, or
		// never an element here.
	default:
		if t := f.top(); (name == "p" || refClosesP[name]) && t.kind == refHTMLElement && t.name == "p" {
			f.popTo(len(f.open) - 1) // §13.2.6.4.7, "close a p element"
		}
		f.push(refOpenElement{name: name, kind: refHTMLElement})
	}
	return false
}

// htmlStartTag reports whether a start tag whose current node is SVG or
// MathML is still processed as HTML (§13.2.6, the dispatcher).
func (f *refForeignStack) htmlStartTag(name string) bool {
	switch f.top().kind {
	case refHTMLPoint:
		return true
	case refMathTextPoint:
		return name != "mglyph" && name != "malignmark"
	case refAnnotationXML:
		return name == "svg"
	}
	return false
}

// refForeignKind is what an SVG (or, with math, MathML) element is.
func refForeignKind(math bool, name string, attrs map[string]string) int {
	switch {
	case !math && (name == "foreignobject" || name == "desc" || name == "title"):
		return refHTMLPoint
	case !math:
		return refInSVGOrMath
	case name == "mi" || name == "mo" || name == "mn" || name == "ms" || name == "mtext":
		return refMathTextPoint
	case name == "annotation-xml":
		if enc, ok := attrs["encoding"]; ok && (refLower(enc) == "text/html" || refLower(enc) == "application/xhtml+xml") {
			return refHTMLPoint
		}
		return refAnnotationXML
	}
	return refInSVGOrMath
}

// endTag follows an end tag that ends no raw text: in foreign content it
// closes the nearest open foreign element of its name, looking no further
// than an HTML element (§13.2.6.5, "any other end tag"); otherwise the
// nearest HTML element of its name, unless a special element (an
// integration point, an HTML element) comes first (§13.2.6.4.7).
func (f *refForeignStack) endTag(name string) {
	if f.foreignNode() {
		for k := len(f.open) - 1; k >= 0; k-- {
			if f.open[k].name == name {
				f.popTo(k)
				return
			}
			if k == 0 || f.open[k-1].kind == refHTMLElement {
				break
			}
		}
	}
	for k := len(f.open) - 1; k >= 0; k-- {
		switch e := f.open[k]; {
		case e.kind == refHTMLElement && e.name == name:
			f.popTo(k)
			return
		case e.kind != refInSVGOrMath:
			return
		}
	}
}

// refBreaksOut reports whether a start tag in foreign content leaves it
// (§13.2.6.5): the listed HTML names, and font with color, face or size.
func refBreaksOut(name string, attrs map[string]string) bool {
	if name == "font" {
		_, color := attrs["color"]
		_, face := attrs["face"]
		_, size := attrs["size"]
		return color || face || size
	}
	return refBreakout[name]
}

func refNameSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

var (
	refBreakout = refNameSet("b", "big", "blockquote", "body", "br", "center", "code", "dd", "div", "dl", "dt",
		"em", "embed", "h1", "h2", "h3", "h4", "h5", "h6", "head", "hr", "i", "img", "li", "listing", "menu",
		"meta", "nobr", "ol", "p", "pre", "ruby", "s", "small", "span", "strong", "strike", "sub", "sup",
		"table", "tt", "u", "ul", "var")
	// refVoid: elements without an end tag (§13.1.2), and image, which
	// the tree builder turns into img.
	refVoid = refNameSet("area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "image",
		"img", "input", "keygen", "link", "meta", "param", "source", "track", "wbr")
	// refClosesP: start tags that close an open <p> (§13.2.6.4.7).
	refClosesP = refNameSet("address", "article", "aside", "blockquote", "center", "details", "dialog", "dir",
		"div", "dl", "fieldset", "figcaption", "figure", "footer", "header", "hgroup", "main", "menu", "nav",
		"ol", "search", "section", "summary", "ul", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "listing",
		"form", "hr", "table")
)
