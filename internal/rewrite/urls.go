package rewrite

import (
	"bytes"
	"encoding/binary"
	"strings"

	"github.com/ssatd/ssatd/internal/hostport"
)

// attrKind says which of the "URL rewriting" (docs/behaviour.md) rules apply to an attribute.
type attrKind int

const (
	kindNone        attrKind = iota
	kindURL                  // href, src, action: scheme, protocol-relative and leading bare host
	kindSrcset               // srcset: as kindURL plus a bare host anywhere at a host boundary
	kindImageSrcset          // imagesrcset: scheme and protocol-relative forms only
)

func classifyAttr(name []byte) attrKind {
	switch len(name) {
	case 3:
		if bytes.EqualFold(name, []byte("src")) {
			return kindURL
		}
	case 4:
		if bytes.EqualFold(name, []byte("href")) {
			return kindURL
		}
	case 6:
		if bytes.EqualFold(name, []byte("action")) {
			return kindURL
		}
		if bytes.EqualFold(name, []byte("srcset")) {
			return kindSrcset
		}
	case 11:
		if bytes.EqualFold(name, []byte("imagesrcset")) {
			return kindImageSrcset
		}
	}
	return kindNone
}

// hostRewriter rewrites occurrences of the origin host in URL attribute values.
// Host names compare case-insensitively (RFC 3986 §3.2.2), so a link written
// "http://ORIGIN.example/" is the origin as much as the lower-case one.
// It lives in the pooled rewriter, and matches on the value's own bytes with
// ASCII case folding, so that a value is neither copied nor lower-cased to
// be tested or rewritten: a page in steady state allocates nothing for its
// URLs unless a character reference may spell part of the origin host.
type hostRewriter struct {
	name string // origin host name (or bracketed IPv6 literal), lower case
	// port is the origin's port when it is not the default of its scheme;
	// empty means the origin is on its scheme's default port, and a link
	// naming that default port explicitly is the same origin (see portOK).
	port  string
	hostB []byte // name, for matching on raw bytes
	// repl is scheme://requestHost; repl[relAt:] is //requestHost and
	// repl[bareAt:] the bare requestHost.
	repl          []byte
	relAt, bareAt int
	// esc is the JSON-escaped scheme:\/\/requestHost of the text rules
	// (text.go); esc[relAt:] is \/\/requestHost.
	esc  []byte
	enc  encRules   // the escaped forms of Options.Inline (encoded.go)
	enc2 []byte     // scratch: their rewrite of a value
	rare int        // rarestByte of name (finders.go)
	pair pairFind   // the pair search for name (pairfind.go)
	sink appendSink // rewriteTextValue's output, kept to spare an allocation
	// plainName: every byte of name is an ASCII host character, so no
	// character reference without a semicolon (which decode to U+00A0–U+00FF
	// or to & < > ") can produce part of it (see refsMayMakeHost).
	plainName bool
	val       []byte // scratch: the rewritten value of rewriteRawValue
	// v4 is the origin's IPv4 address when isV4, whose other spellings
	// (127.1, 0x7f.0.0.1, 127%2e0%2e0%2e1) a URL attribute may use
	// (respell.go).
	v4   uint32
	isV4 bool
	alt  []byte // scratch: rewriteSpellings' output
}

// reset prepares the host rules for one page, reusing the buffers.
func (h *hostRewriter) reset(originHost, requestHost, scheme string) {
	// config.Validate drops a default port from OriginHost: a port of 80
	// or 443 is not known to be the default of the origin's scheme here,
	// so a bare host means "the scheme's default" (portOK).
	h.name, h.port = hostport.Split(asciiLower(originHost))
	h.hostB = append(h.hostB[:0], h.name...)
	h.repl = append(append(append(h.repl[:0], scheme...), "://"...), requestHost...)
	h.relAt, h.bareAt = len(scheme)+1, len(scheme)+3
	h.rare = rarestByte(h.hostB)
	h.pair = pairFind{}
	if len(h.hostB) > 0 {
		h.pair = newPairFind(h.hostB, h.rare)
	}
	h.esc = append(append(append(h.esc[:0], scheme...), `:\/\/`...), requestHost...)
	h.v4, h.isV4 = parseIPv4(h.hostB)
	h.plainName = true
	for i := 0; i < len(h.name); i++ {
		if c := h.name[i]; !isHostChar(c) && c != ':' && c != '[' && c != ']' {
			h.plainName = false
		}
	}
}

// endsWithFold reports whether s ends with the lower-case ASCII suffix in
// any letter case.
func endsWithFold(s []byte, suffix string) bool {
	if len(s) < len(suffix) {
		return false
	}
	s = s[len(s)-len(suffix):]
	for i := 0; i < len(suffix); i++ {
		if lower(s[i]) != suffix[i] {
			return false
		}
	}
	return true
}

// appendMatch appends the replacement of m, with host as the request host.
func (h *hostRewriter) appendMatch(dst, v []byte, m refMatch, host []byte) []byte {
	if m.scheme {
		dst = append(dst, h.repl[:h.relAt-1]...)
	}
	dst = append(dst, v[m.keep:m.sep]...)
	return append(dst, host...)
}

// rewrite applies the URL rules (docs/behaviour.md, "URL rewriting") to a
// decoded attribute value, appending the result to dst. It reports whether
// anything changed; when nothing did, dst is returned as it was.
func (h *hostRewriter) rewrite(dst, v []byte, kind attrKind) ([]byte, bool) {
	return h.rewriteAt(dst, v, kind, nil)
}

// rewriteAt is rewrite for a v in which the caller knows already where the
// origin's name begins, in any letter case (names: every such offset, in
// order), as rewriteAttrs does from the read buffer's search; with names
// nil or empty it searches v.
func (h *hostRewriter) rewriteAt(dst, v []byte, kind attrKind, names []int) ([]byte, bool) {
	if len(h.hostB) == 0 {
		return dst, false
	}
	start := len(dst)
	out, changed := h.rewriteForms(dst, v, kind, names)
	if !h.enc.on {
		return out, changed
	}
	src := v
	if changed {
		src = out[start:]
	}
	enc, encChanged := h.rewriteEncodedValue(h.enc2[:0], src)
	h.enc2 = enc
	if !encChanged {
		return out, changed
	}
	return append(out[:start], enc...), true
}

// rewriteForms is rewriteAt without the escaped forms.
func (h *hostRewriter) rewriteForms(dst, v []byte, kind attrKind, names []int) ([]byte, bool) {
	if isTextKind(kind) {
		return h.rewriteTextValue(dst, v, kind, names)
	}
	start := len(dst)
	out, changed := h.rewriteNames(dst, v, kind, names)
	if !h.mayRespell(kind) {
		return out, changed
	}
	src := v
	if changed {
		src = out[start:]
	}
	alt, altChanged := h.rewriteSpellings(h.alt[:0], src)
	h.alt = alt
	if !altChanged {
		return out, changed
	}
	return append(out[:start], alt...), true
}

// rewriteNames is rewriteForms for the origin's name as it is written in
// the origin's URL, in any letter case.
func (h *hostRewriter) rewriteNames(dst, v []byte, kind attrKind, names []int) ([]byte, bool) {
	start, last, changed := len(dst), 0, false
	listed := len(names) > 0
	for i := 0; i < len(v); {
		var at int
		if listed {
			for len(names) > 0 && names[0] < i {
				names = names[1:] // inside a host already replaced or passed
			}
			if len(names) == 0 {
				break
			}
			at, names = names[0], names[1:]
		} else if j := indexFold(v[i:], h.hostB); j >= 0 {
			at = i + j
		} else {
			break
		}
		i = at + len(h.hostB)
		m, ok, _ := h.matchRef(v, last, at, refScan{kind: kind, esc: &escapings[escPlain], final: true})
		if !ok {
			continue
		}
		dst = h.appendMatch(append(dst, v[last:m.from]...), v, m, h.repl[h.bareAt:])
		last, i, changed = m.to, m.to, true
	}
	if !changed {
		return dst[:start], false
	}
	return append(dst, v[last:]...), true
}

// rewriteString is rewrite for a string value, such as a response header.
func (h *hostRewriter) rewriteString(v string, kind attrKind) (string, bool) {
	out, changed := h.rewrite(nil, []byte(v), kind)
	if !changed {
		return v, false
	}
	return string(out), true
}

// rewriteRawValue rewrites one raw (possibly entity-encoded) attribute value.
// Matching happens on the decoded value (docs/behaviour.md, "URL rewriting").
// When the raw bytes hold no character references the rewrite is done on
// them directly, so that unchanged parts stay byte-identical; otherwise the
// new decoded value is re-encoded for its quoting context. The result is
// valid until the next call.
func (h *hostRewriter) rewriteRawValue(raw []byte, quote byte, kind attrKind) ([]byte, bool) {
	hasHost := containsFold(raw, h.hostB) || h.mayRespell(kind)
	if bytes.IndexByte(raw, '&') < 0 {
		if !hasHost {
			return nil, false // the common case, without allocating
		}
		return h.rewritePlainValue(raw, kind, nil)
	}
	// A value with '&' whose raw bytes do not name the host can name it
	// once decoded only through a character reference that produces part
	// of the name: query strings ("?a=1&amp;b=2") are not decoded for it.
	if !hasHost && !h.refsMayMakeHost(raw) {
		return nil, false
	}
	if h.simpleRefs(raw) {
		// &amp; &lt; &gt; &quot; decode to characters that no rule looks
		// at (none is a host character, part of a scheme, a port or the end
		// of a host), so every decision on the raw bytes is the one on the
		// decoded value, and the rewritten raw bytes decode to the
		// rewritten value: they are what the general path below returns.
		out, changed := h.rewrite(h.val[:0], raw, kind)
		h.val = out
		return out, changed
	}
	rawStr := string(raw)
	decoded := unescapeAttr(rawStr)
	out, changed := h.rewriteString(decoded, kind)
	if !changed {
		return nil, false
	}
	// Prefer the same substitution on the raw text when it decodes to the
	// same result: the host names involved never contain '&', so this keeps
	// the page's own entity spelling.
	if direct, ok := h.rewriteString(rawStr, kind); ok && unescapeAttr(direct) == out {
		return []byte(direct), true
	}
	return []byte(encodeAttr(out, quote)), true
}

// rewritePlainValue is rewriteRawValue for a raw value without '&': its
// bytes are its decoded value, and host names introduce no character that
// needs escaping.
func (h *hostRewriter) rewritePlainValue(raw []byte, kind attrKind, names []int) ([]byte, bool) {
	out, changed := h.rewriteAt(h.val[:0], raw, kind, names)
	h.val = out
	return out, changed
}

// refsMayMakeHost reports whether a character reference in raw may decode
// (unescapeAttr) to a byte of the origin name. A plain host name is ASCII
// and holds none of & < > ", so only a reference that decodes to another
// ASCII character may: a numeric one of 1 to 0x7F (0, 0x80-0x9F and
// anything past U+10FFFF decode to other characters, WHATWG HTML
// §13.2.5.80), or a named one that isASCIIRef accepts, ended by ';'.
// Without the ';' only the legacy names decode (to U+00A0-U+00FF or
// & < > "). An '&' that starts no reference stays as it is. So &nbsp;,
// &#160; and the like, common in text, cost no decoding.
func (h *hostRewriter) refsMayMakeHost(raw []byte) bool {
	if !h.plainName {
		return true
	}
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '&')
		if j < 0 {
			return false
		}
		i += j + 1
		if i < len(raw) && raw[i] == '#' {
			v, k := numericRef(raw, i+1)
			if v >= 1 && v <= 0x7f {
				return true
			}
			i = k
			continue
		}
		if len(raw)-i >= 4 {
			// &amp; and &quot; are most of the references in tags
			// (query strings, JSON in data attributes), and neither can.
			if w := binary.LittleEndian.Uint32(raw[i:]); w == ampWord || w == quotWord && len(raw)-i > 4 && raw[i+4] == ';' {
				i += 4
				continue
			}
		}
		k := i
		for k < len(raw) && isAlnum(raw[k]) {
			k++
		}
		if k > i && k < len(raw) && raw[k] == ';' && isASCIIRef(raw[i:k]) {
			return true
		}
		i = k
	}
	return false
}

// ampWord and quotWord are "amp;" and "quot" read as little-endian words.
const (
	ampWord  = uint32('a') | uint32('m')<<8 | uint32('p')<<16 | uint32(';')<<24
	quotWord = uint32('q') | uint32('u')<<8 | uint32('o')<<16 | uint32('t')<<24
)

// numericRef reads the digits of a numeric character reference from
// raw[i:] (after "&#"): its value, saturated past U+10FFFF, or -1 when no
// digit follows, and where the digits end.
func numericRef(raw []byte, i int) (v, end int) {
	hex := i < len(raw) && raw[i]|0x20 == 'x'
	base := 10
	if hex {
		base, i = 16, i+1
	}
	start := i
	for ; i < len(raw); i++ {
		c, d := raw[i], -1
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case hex && c|0x20 >= 'a' && c|0x20 <= 'f':
			d = int(c|0x20-'a') + 10
		}
		if d < 0 {
			break
		}
		if v <= 0x10ffff {
			v = v*base + d
		}
	}
	if i == start {
		return -1, i
	}
	return v, i
}

// isASCIIRef reports whether name is a named character reference (without
// its ';') that decodes to an ASCII character other than & < > ": one of
// Go's html entity table, which unescapeAttr uses
// (TestASCIIRefsAreTheTables checks it against every name of the table).
// A switch, not a map: most names asked about are amp, nbsp and the like,
// and a switch on the string answers them without hashing.
func isASCIIRef(name []byte) bool {
	switch string(name) {
	case "DiacriticalGrave", "Hat", "NewLine", "Tab", "UnderBar",
		"VerticalLine", "apos", "ast", "bne", "bsol", "colon",
		"comma", "commat", "dollar", "equals", "excl", "fjlig",
		"grave", "lbrace", "lbrack", "lcub", "lowbar", "lpar",
		"lsqb", "midast", "num", "percnt", "period", "plus",
		"quest", "rbrace", "rbrack", "rcub", "rpar", "rsqb",
		"semi", "sol", "verbar", "vert":
		return true
	}
	return false
}

// simpleRefs reports whether every '&' in raw starts &amp;, &lt;, &gt; or
// &quot;, and the replacement text has no '&' that could start another.
func (h *hostRewriter) simpleRefs(raw []byte) bool {
	if bytes.IndexByte(h.repl, '&') >= 0 {
		return false
	}
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '&')
		if j < 0 {
			return true
		}
		i += j + 1
		switch {
		case bytes.HasPrefix(raw[i:], []byte("amp;")), bytes.HasPrefix(raw[i:], []byte("quot;")),
			bytes.HasPrefix(raw[i:], []byte("lt;")), bytes.HasPrefix(raw[i:], []byte("gt;")):
		default:
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// encodeAttr escapes a decoded value for the given quote context.
func encodeAttr(v string, quote byte) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '&':
			b.WriteString("&amp;")
		case '"':
			if quote == '"' || quote == 0 {
				b.WriteString("&quot;")
			} else {
				b.WriteByte(c)
			}
		case '\'':
			if quote == '\'' || quote == 0 {
				b.WriteString("&#39;")
			} else {
				b.WriteByte(c)
			}
		case '<', '>', '`', '=':
			if quote == 0 {
				b.WriteString("&#" + itoa(int(c)) + ";")
			} else {
				b.WriteByte(c)
			}
		case '\r':
			// Written as it is, a CR is read as a LF (WHATWG §13.2.3.5).
			b.WriteString("&#13;")
		default:
			if quote == 0 && isSpace(c) {
				b.WriteString("&#" + itoa(int(c)) + ";")
			} else {
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
