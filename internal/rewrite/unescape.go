package rewrite

import (
	"html"
	"strings"
)

// unescapeAttr decodes the character references of an attribute value as
// the HTML tokenizer does inside an attribute (WHATWG §13.2.5.73, "named
// character reference state"): a legacy reference written without ';'
// (&times, &copy, &not, ...) is left as it is when the next character is
// '=' or an ASCII letter or digit, so "?a=1&timestamp=2" keeps its
// "&timestamp". html.UnescapeString follows the rule for text instead,
// which would turn it into "×tamp".
//
// A CR or CR LF of the page is a LF, as input preprocessing reads it (WHATWG
// §13.2.3.5) and as the Tokenizer reports it: only a reference (&#13;)
// gives a CR.
func unescapeAttr(s string) string {
	if strings.IndexByte(s, '\r') >= 0 {
		s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	}
	if strings.IndexByte(s, '&') < 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '&' || !literalInAttr(s, i) {
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString("&amp;") // decodes back to the '&' itself
		last = i + 1
	}
	if last == 0 {
		return html.UnescapeString(s)
	}
	b.WriteString(s[last:])
	return html.UnescapeString(b.String())
}

// maxLegacyName is the length of the longest reference name that is valid
// without ';' (frac12, middot, curren, ...).
const maxLegacyName = 6

// literalInAttr reports whether the '&' at s[i] stays literal in an
// attribute value although html.UnescapeString would decode a legacy
// reference there.
func literalInAttr(s string, i int) bool {
	k := i + 1
	for k < len(s) && isAlnum(s[k]) {
		k++
	}
	run := s[i+1 : k]
	if run == "" {
		return false
	}
	if k < len(s) && s[k] == ';' {
		// A whole name with ';' wins when it is one.
		if ref := s[i : k+1]; !strings.HasSuffix(html.UnescapeString(ref), ";") {
			return false
		}
	}
	for n := min(len(run), maxLegacyName); n >= 2; n-- {
		if isLegacyName(run[:n]) {
			// The longest legacy name is run[:n]: it stays literal when
			// more of the run, or an '=', follows it.
			return n < len(run) || k < len(s) && s[k] == '='
		}
	}
	return false
}

// isLegacyName reports whether "&"+q, without ';', is a whole reference.
// html.UnescapeString decodes the longest legacy prefix and keeps the rest
// of q, so a decoding that still ends in q's last character matched less
// than q (legacy references decode to & < > " or non-ASCII characters).
func isLegacyName(q string) bool {
	ref := "&" + q
	u := html.UnescapeString(ref)
	return u != ref && !strings.HasSuffix(u, q[len(q)-1:])
}
