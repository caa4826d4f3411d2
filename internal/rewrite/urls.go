package rewrite

import (
	"bytes"
	"html"
	"strings"
)

// attrKind says which of the spec §4.1 rules apply to an attribute.
type attrKind int

const (
	kindNone        attrKind = iota
	kindURL                  // href, src, action: scheme, protocol-relative and leading bare host
	kindSrcset               // srcset: as kindURL plus a bare host anywhere
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
type hostRewriter struct {
	originHost  string // host[:port] of the origin, lower case
	hostB       []byte // originHost, for matching raw bytes
	requestHost string // client-facing host[:port]
	scheme      string // client-facing scheme
}

// endsHost reports whether the byte after a host match ends the authority.
// A host followed by more host characters ("origin.example.evil.com") or a
// port (a different origin) is not the origin host, so it is left alone.
func endsHost(v string, i int) bool {
	if i >= len(v) {
		return true
	}
	switch c := v[i]; c {
	case '/', '?', '#', ',', '\\':
		return true
	default:
		return isSpace(c)
	}
}

// startsBare reports whether a bare host at i starts a srcset candidate.
func startsBare(v string, i int) bool {
	return i == 0 || isSpace(v[i-1]) || v[i-1] == ','
}

// rewrite applies the §4.1 rules to a decoded attribute value. It returns the
// new value and whether anything changed.
func (h *hostRewriter) rewrite(v string, kind attrKind) (string, bool) {
	oh := h.originHost
	if !strings.Contains(v, oh) {
		return v, false
	}
	var b strings.Builder
	last, changed := 0, false
	for i := 0; i < len(v); {
		j := strings.Index(v[i:], oh)
		if j < 0 {
			break
		}
		at := i + j
		end := at + len(oh)
		i = end
		if !endsHost(v, end) {
			continue
		}
		prefix := v[last:at]
		var repl string
		switch {
		case strings.HasSuffix(prefix, "https://"):
			at -= len("https://")
			repl = h.scheme + "://" + h.requestHost
		case strings.HasSuffix(prefix, "http://"):
			at -= len("http://")
			repl = h.scheme + "://" + h.requestHost
		case strings.HasSuffix(prefix, "//"):
			at -= len("//")
			repl = "//" + h.requestHost
		case kind == kindURL && at == 0, kind == kindSrcset && startsBare(v, at):
			repl = h.requestHost
		default:
			continue
		}
		b.WriteString(v[last:at])
		b.WriteString(repl)
		last, changed = end, true
	}
	if !changed {
		return v, false
	}
	b.WriteString(v[last:])
	return b.String(), true
}

// rewriteRawValue rewrites one raw (possibly entity-encoded) attribute value.
// Matching happens on the decoded value (spec §4.1). When the raw bytes hold
// no character references the rewrite is done on them directly, so that
// unchanged parts stay byte-identical; otherwise the new decoded value is
// re-encoded for its quoting context.
func (h *hostRewriter) rewriteRawValue(raw []byte, quote byte, kind attrKind) ([]byte, bool) {
	if bytes.IndexByte(raw, '&') < 0 {
		if !bytes.Contains(raw, h.hostB) {
			return nil, false // the common case, without allocating
		}
		// Host names introduce no character that needs escaping.
		out, changed := h.rewrite(string(raw), kind)
		if !changed {
			return nil, false
		}
		return []byte(out), true
	}
	rawStr := string(raw)
	decoded := html.UnescapeString(rawStr)
	out, changed := h.rewrite(decoded, kind)
	if !changed {
		return nil, false
	}
	// Prefer the same substitution on the raw text when it decodes to the
	// same result: the host names involved never contain '&', so this keeps
	// the page's own entity spelling.
	if direct, ok := h.rewrite(rawStr, kind); ok && html.UnescapeString(direct) == out {
		return []byte(direct), true
	}
	return []byte(encodeAttr(out, quote)), true
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
