package rewrite

import (
	"bytes"
	"strings"
)

// The URL rules as they were before they were made allocation-free, kept
// as the oracle of the reference rewriter (reference_test.go): the
// differential tests and FuzzDifferential then check that the serving
// rules give byte-identical output.

// oracleHostRewriter rewrites occurrences of the origin host in URL attribute values.
// Host names compare case-insensitively (RFC 3986 §3.2.2), so a link written
// "http://ORIGIN.example/" is the origin as much as the lower-case one.
type oracleHostRewriter struct {
	name string // origin host name (or bracketed IPv6 literal), lower case
	// port is the origin's port when it is not the default of its scheme;
	// empty means the origin is on its scheme's default port, and a link
	// naming that default port explicitly is the same origin (see portOK).
	port        string
	hostB       []byte // name, for the quick test on raw bytes
	requestHost string // client-facing host[:port]
	scheme      string // client-facing scheme
}

// newOracleHostRewriter prepares the host rules for one page; hostB's bytes are
// appended to buf, so that a pooled rewriter reuses its buffer.
func newOracleHostRewriter(originHost, requestHost, scheme string, buf []byte) oracleHostRewriter {
	name, port := splitOriginHost(asciiLower(originHost))
	return oracleHostRewriter{name: name, port: port, hostB: append(buf, name...), requestHost: requestHost, scheme: scheme}
}

// portOK reports whether the explicit port p (without its colon) after a
// match of the origin name keeps it the origin. An origin on a non-default
// port matches only that port. An origin on its default port also matches
// the default port written out: 443 after https://, 80 after http://, and
// either after // or a bare host, whose scheme is the page's.
func (h *oracleHostRewriter) portOK(p string, f urlForm) bool {
	if h.port != "" {
		return p == h.port
	}
	switch f {
	case formHTTPS:
		return p == "443"
	case formHTTP:
		return p == "80"
	}
	return p == "443" || p == "80"
}

// endsHost reports whether the byte after a host match ends the authority.
// A host followed by more host characters ("origin.example.evil.com") or a
// port (a different origin) is not the origin host, so it is left alone.
func oracleEndsHost(v string, i int) bool {
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

// startsBare reports whether a bare host at i may be rewritten: for href,
// src and action only at the start of the value; in srcset anywhere at a
// host boundary, which covers image CDNs that carry the origin in the path
// ("https://i0.wp.com/origin.example/a.png") as well as candidate starts
// (docs/behaviour.md, "URL rewriting").
func oracleStartsBare(v string, i int, kind attrKind) bool {
	switch kind {
	case kindURL:
		return i == 0
	case kindSrcset:
		return i == 0 || !isHostChar(v[i-1])
	}
	return false
}

// match reports whether the origin name found at at is a rewritable origin
// reference in lv (the lower-cased value), and if so where the replaced text
// starts and ends and what replaces it. last is where the unconsumed part of
// the value begins, so a scheme already consumed is never matched twice.
func (h *oracleHostRewriter) match(lv string, last, at int, kind attrKind) (from, to int, repl string, ok bool) {
	prefix := lv[last:at]
	var f urlForm
	switch {
	case strings.HasSuffix(prefix, "https://"):
		f, from, repl = formHTTPS, at-len("https://"), h.scheme+"://"+h.requestHost
	case strings.HasSuffix(prefix, "http://"):
		f, from, repl = formHTTP, at-len("http://"), h.scheme+"://"+h.requestHost
	case strings.HasSuffix(prefix, "//"):
		f, from, repl = formRelative, at-len("//"), "//"+h.requestHost
	case oracleStartsBare(lv, at, kind):
		f, from, repl = formBare, at, h.requestHost
	default:
		return 0, 0, "", false
	}
	if kind == kindImageSrcset && f == formBare {
		return 0, 0, "", false
	}
	to = at + len(h.name)
	if to < len(lv) && lv[to] == ':' {
		p := to + 1
		for p < len(lv) && lv[p] >= '0' && lv[p] <= '9' {
			p++
		}
		if !h.portOK(lv[to+1:p], f) {
			return 0, 0, "", false
		}
		to = p
	} else if h.port != "" {
		return 0, 0, "", false
	}
	return from, to, repl, oracleEndsHost(lv, to)
}

// rewrite applies the URL rules (docs/behaviour.md, "URL rewriting") to a
// decoded attribute value. It returns the new value and whether anything
// changed.
func (h *oracleHostRewriter) rewrite(v string, kind attrKind) (string, bool) {
	// Matching runs on an ASCII-lower-cased copy; lower-casing ASCII keeps
	// every byte offset, so the offsets apply to v unchanged.
	lv := asciiLower(v)
	if !strings.Contains(lv, h.name) {
		return v, false
	}
	var b strings.Builder
	last, changed := 0, false
	for i := 0; i < len(lv); {
		j := strings.Index(lv[i:], h.name)
		if j < 0 {
			break
		}
		at := i + j
		i = at + len(h.name)
		from, to, repl, ok := h.match(lv, last, at, kind)
		if !ok {
			continue
		}
		b.WriteString(v[last:from])
		b.WriteString(repl)
		last, i, changed = to, to, true
	}
	if !changed {
		return v, false
	}
	b.WriteString(v[last:])
	return b.String(), true
}

// rewriteRawValue rewrites one raw (possibly entity-encoded) attribute value.
// Matching happens on the decoded value (docs/behaviour.md, "URL rewriting"). When the raw bytes hold
// no character references the rewrite is done on them directly, so that
// unchanged parts stay byte-identical; otherwise the new decoded value is
// re-encoded for its quoting context.
func (h *oracleHostRewriter) rewriteRawValue(raw []byte, quote byte, kind attrKind) ([]byte, bool) {
	if bytes.IndexByte(raw, '&') < 0 {
		if !containsFold(raw, h.hostB) {
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
	decoded := unescapeAttr(rawStr)
	out, changed := h.rewrite(decoded, kind)
	if !changed {
		return nil, false
	}
	// Prefer the same substitution on the raw text when it decodes to the
	// same result: the host names involved never contain '&', so this keeps
	// the page's own entity spelling.
	if direct, ok := h.rewrite(rawStr, kind); ok && unescapeAttr(direct) == out {
		return []byte(direct), true
	}
	return []byte(oracleEncodeAttr(out, quote)), true
}

// encodeAttr escapes a decoded value for the given quote context.
func oracleEncodeAttr(v string, quote byte) string {
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
				b.WriteString("&#" + oracleItoa(int(c)) + ";")
			} else {
				b.WriteByte(c)
			}
		default:
			if quote == 0 && isSpace(c) {
				b.WriteString("&#" + oracleItoa(int(c)) + ";")
			} else {
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

func oracleItoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return oracleItoa(n/10) + string(rune('0'+n%10))
}
