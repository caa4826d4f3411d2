// Package forwarded reads the Forwarded header (RFC 7239): the one parser
// of it in ssatd, for the client's address, the host and scheme links
// point at, and the copy of a trusted proxy's header that goes on to the
// origin.
//
// A value is a token or a quoted-string (RFC 7239 §4, with the
// quoted-string of RFC 7230 §3.2.6), and a quoted-string may hold ',', ';'
// and '=' (an IPv6 node, "[2001:db8::1]:4711", must be quoted), so the
// header is cut into elements and pairs by a scanner that knows quotes,
// never by strings.Split.
package forwarded

import "strings"

// Pair is one forwarded-pair: its name lower-cased (names are
// case-insensitive, RFC 7239 §4), its value, and the pair as it was sent
// (without surrounding whitespace), for passing it on.
//
// A quoted value is unquoted, its quoted-pairs undone. A value that is
// neither a token nor one whole quoted-string (for="192.0.2.1"x, or a
// quote left open) is kept as sent, quotes and all: no address, host or
// scheme has a '"', so whatever reads it finds nothing usable, and a
// for= hop that cannot be read still ends a walk along the chain.
type Pair struct {
	Name, Value, Raw string
}

// Element is one forwarded-element: the pairs one proxy added. Pairs
// without '=' or whose name is no token are kept with an empty Name, so a
// copy that is passed on drops nothing it was not asked to.
type Element []Pair

// Get is the value of the first pair named name (lower case).
func (e Element) Get(name string) (string, bool) {
	for _, p := range e {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// String writes the element as it came, without the pairs named drop.
func (e Element) String(drop string) string {
	var b strings.Builder
	for _, p := range e {
		if p.Name == drop && drop != "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		b.WriteString(p.Raw)
	}
	return b.String()
}

// Parse reads the elements of a Forwarded header's field lines, which are
// one list (RFC 9110 §5.3), first hop first.
func Parse(lines []string) []Element {
	var out []Element
	for _, line := range lines {
		out = append(out, ParseLine(line)...)
	}
	return out
}

// ParseLine reads the elements of one field line. It is lenient where
// proxies are seen to be: whitespace around ',' and ';' is skipped, and a
// value that is not quoted runs to the next ';' or ',' (so the RFC's
// for="192.0.2.43:47011" also reads unquoted). It is strict where leniency
// would read one value as another: ',' and ';' inside a quoted-string
// split nothing, and a quoted-string left open runs to the end of the
// line. Empty elements and pairs are dropped.
func ParseLine(s string) []Element {
	var out []Element
	var elem Element
	for s != "" {
		raw, rest, delim := cut(s)
		if raw = strings.Trim(raw, " \t"); raw != "" {
			elem = append(elem, pair(raw))
		}
		if delim != ';' && len(elem) > 0 {
			out = append(out, elem)
			elem = nil
		}
		s = rest
	}
	return out
}

// cut splits s at its first ';' or ',' outside a quoted-string: raw is the
// pair before it, rest what follows, delim the delimiter (0 at the end).
func cut(s string) (raw, rest string, delim byte) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++ // a quoted-pair: the next byte is text
		case c == '"':
			quoted = !quoted
		case !quoted && (c == ';' || c == ','):
			return s[:i], s[i+1:], c
		}
	}
	return s, "", 0
}

// pair reads one trimmed, non-empty forwarded-pair: token "=" value.
func pair(raw string) Pair {
	name, value, ok := strings.Cut(raw, "=")
	if !ok || !isToken(name) {
		return Pair{Raw: raw}
	}
	p := Pair{Name: strings.ToLower(name), Value: value, Raw: raw}
	if v, ok := unquote(value); ok {
		p.Value = v
	}
	return p
}

// unquote reads s as exactly one quoted-string (RFC 7230 §3.2.6: DQUOTE
// *( qdtext / quoted-pair ) DQUOTE, a quoted-pair being '\' and the byte
// it stands for) and returns its text.
func unquote(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), i == len(s)-1
		case '\\':
			if i++; i == len(s) {
				return "", false
			}
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}

// isToken reports whether s is a token (RFC 9110 §5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
