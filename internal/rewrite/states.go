package rewrite

// The scanner's states and their transition tables. Each names the WHATWG
// tokenizer states (HTML Living Standard §13.2.5) it stands for.

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
	inCDATA                 // a CDATA section in foreign content; sub counts ']'
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
	clSpace // clSpace, clSlash and clEquals stay 1, 2 and 3 (attr.go)
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
