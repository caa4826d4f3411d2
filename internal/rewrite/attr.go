package rewrite

import "bytes"

// Start tags that may need rewriting are parsed here from their raw bytes,
// with the attribute grammar of the WHATWG tokenizer (§13.2.5.32–38), and
// only the value spans that change are replaced, so that everything else
// stays byte for byte as the page had it.

// attr is one attribute of a raw start tag: byte offsets into the raw tag.
type attr struct {
	nameStart, nameEnd int
	valStart, valEnd   int  // the value without its quotes; empty when absent
	quote              byte // '"', '\'' or 0 for unquoted or absent values
	hasValue           bool
}

// isSpace reports whether c is HTML white space (WHATWG "ASCII
// whitespace", which is what the tokenizer's attribute states skip).
func isSpace(c byte) bool { return tagClass[c] == clSpace }

// The attribute grammar's loops test the tag scanner's class of a byte
// (states.go), one table entry a byte instead of four or five compares:
// clSpace, clSlash and clEquals are 1, 2 and 3.

// spaceOrSlash reports whether c is white space or '/'.
func spaceOrSlash(c byte) bool { return tagClass[c]-clSpace < 2 }

// endsAttrName reports whether c ends an attribute name: white space, '/'
// or '='.
func endsAttrName(c byte) bool { return tagClass[c]-clSpace < 3 }

// tagName returns the name of a raw start or end tag ("<Head ...>" → "Head").
func tagName(raw []byte) []byte {
	i := 1
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	start := i
	for i < len(raw) && !endsName[raw[i]] {
		i++
	}
	return raw[start:i]
}

// scanAttrs appends the attributes of a raw start tag to dst.
func scanAttrs(raw []byte, dst []attr) []attr {
	name := tagName(raw)
	i := 1 + len(name)
	n := len(raw)
	if n > 0 && raw[n-1] == '>' {
		n-- // the closing '>' is never part of an attribute
	}
	for {
		for i < n && spaceOrSlash(raw[i]) {
			i++
		}
		if i >= n {
			return dst
		}
		var a attr
		a.nameStart = i
		// An '=' as the first character belongs to the name (WHATWG 13.2.5.32).
		i++
		for i < n && !endsAttrName(raw[i]) {
			i++
		}
		a.nameEnd = i
		j := i
		for j < n && isSpace(raw[j]) {
			j++
		}
		if j >= n || raw[j] != '=' {
			a.valStart, a.valEnd = i, i
			dst = append(dst, a)
			continue
		}
		j++
		for j < n && isSpace(raw[j]) {
			j++
		}
		a.hasValue = true
		if j < n && (raw[j] == '"' || raw[j] == '\'') {
			a.quote = raw[j]
			j++
			a.valStart = j
			if k := bytes.IndexByte(raw[j:n], a.quote); k >= 0 {
				j += k
			} else {
				j = n
			}
			a.valEnd = j
			if j < n {
				j++
			}
		} else {
			a.valStart = j
			for j < n && !isSpace(raw[j]) {
				j++
			}
			a.valEnd = j
		}
		i = j
		dst = append(dst, a)
	}
}
