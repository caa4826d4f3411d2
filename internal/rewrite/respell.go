package rewrite

import "bytes"

// Other spellings of an IPv4 origin's host in URL attributes (href, src,
// action, srcset, imagesrcset; docs/behaviour.md, "URL rewriting"): the
// URL parser percent-decodes a host and reads one that ends in a number as
// an IPv4 address (authority.go), so that "//127.1/", "//0x7f.0.0.1/" and
// "//127%2e0%2e0%2e1/" name the origin as much as its own spelling does. They are found by the authorities of the value, after
// the rules for the name as written (rewriteNames) have run.

// mayRespell reports whether a value of an attribute of kind may name
// the origin in another spelling: a URL attribute, where an IPv4 origin
// may be written in any of its forms. A domain origin's host
// percent-encoded is not looked for: that would cost every tag a search
// for '%' (a tenth of the page rewrite on the corpus), and no page writes
// its own links so.
func (h *hostRewriter) mayRespell(kind attrKind) bool {
	return h.isV4 && !isTextKind(kind) && kind != kindNone
}

// rewriteSpellings rewrites, in v, every authority after two or more
// slashes whose host is the origin's in a spelling other than the name as
// written (which rewriteNames has decided), by the forms, port and end
// rules of the name. The result is appended to dst; when nothing changes,
// dst is returned as it was.
func (h *hostRewriter) rewriteSpellings(dst, v []byte) ([]byte, bool) {
	start, last, changed := len(dst), 0, false
	for i := 0; i+1 < len(v); i++ {
		if !isSlash(v[i]) || !isSlash(v[i+1]) {
			continue
		}
		sep := i + 2
		for sep < len(v) && isSlash(v[sep]) {
			sep++
		}
		i = sep - 1
		end := sep
		for end < len(v) && !endsAuthority(v[end]) {
			end++
		}
		at := sep
		if k := bytes.LastIndexByte(v[sep:end], '@'); k >= 0 {
			at = sep + k + 1
		}
		he := at
		for he < end && v[he] != ':' && v[he] != ',' {
			he++
		}
		if he-at == len(h.hostB) && equalFoldLower(v[at:he], h.hostB) || !h.hostIs(v[at:he]) {
			continue // the name as written was decided by rewriteNames
		}
		f, from, keep, ok := sepForm(v, last, sep, &escapings[escPlain])
		if !ok {
			continue
		}
		to, ok, _ := h.refEnd(v, he, f, refScan{kind: kindURL, esc: &escapings[escPlain], final: true})
		if !ok {
			continue
		}
		m := refMatch{from: from, keep: keep, sep: sep, to: to, scheme: f == formHTTPS || f == formHTTP}
		dst = h.appendMatch(append(dst, v[last:from]...), v, m, h.repl[h.bareAt:])
		last, i, changed = to, to-1, true
	}
	if !changed {
		return dst[:start], false
	}
	return append(dst, v[last:]...), true
}

// maxHostBytes bounds a host that may be the origin's address once
// decoded: "255.255.255.255" with a few leading zeros, percent-encoded.
const maxHostBytes = 3 * 256

// hostIs reports whether the raw host (without userinfo or port) is the
// IPv4 origin's address as the URL parser reads it: percent-decoded, ASCII
// lower-cased ("0X7F") and read by the IPv4 parser.
func (h *hostRewriter) hostIs(raw []byte) bool {
	if len(raw) == 0 || len(raw) > maxHostBytes {
		return false
	}
	var buf [maxHostBytes]byte
	n := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '%' && i+2 < len(raw) && hexDigit(raw[i+1]) >= 0 && hexDigit(raw[i+2]) >= 0 {
			c = byte(hexDigit(raw[i+1])<<4 | hexDigit(raw[i+2]))
			i += 2
		}
		buf[n], n = lower(c), n+1
	}
	a, ok := parseIPv4(buf[:n])
	return ok && h.isV4 && a == h.v4
}
