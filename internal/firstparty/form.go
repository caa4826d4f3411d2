package firstparty

import (
	"strings"
	"unicode/utf8"
)

// Pair is one key=value pair of a query string, in order.
type Pair struct{ Key, Value string }

// formEncode serializes pairs as application/x-www-form-urlencoded, byte for
// byte as the url crate's form_urlencoded::Serializer upstream signs with
// (core/creative.rs:164-168, core/proxy.rs:2121-2160): only ALPHA, DIGIT and
// "*-._" stay, space becomes "+", every other byte is %XX in upper case
// (WHATWG URL §5.2 urlencoded serializer). net/url differs on '*' and '~', so
// it cannot be used here: the bytes are signed.
func formEncode(pairs []Pair) string {
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		formEscape(&b, p.Key)
		b.WriteByte('=')
		formEscape(&b, p.Value)
	}
	return b.String()
}

func formEscape(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '*', c == '-', c == '.', c == '_':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
}

// formParse splits a query string into ordered pairs as the url crate's
// form_urlencoded::parse does (WHATWG URL §5.1): empty pieces are skipped, a
// piece without "=" has an empty value, "+" is a space, a "%" not followed by
// two hex digits stays literal, and bytes that are not UTF-8 decode lossily.
// Upstream verifies the re-serialization of exactly these pairs, so a lenient
// parse here is what keeps tokens equal.
func formParse(q string) []Pair {
	var out []Pair
	for _, piece := range strings.Split(q, "&") {
		if piece == "" {
			continue
		}
		k, v, _ := strings.Cut(piece, "=")
		out = append(out, Pair{formUnescape(k), formUnescape(v)})
	}
	return out
}

func formUnescape(s string) string {
	if !strings.ContainsAny(s, "+%") && utf8.ValidString(s) {
		return s
	}
	buf := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+':
			buf = append(buf, ' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			buf = append(buf, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			buf = append(buf, c)
		}
	}
	return lossyUTF8(buf)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// lossyUTF8 is Rust's String::from_utf8_lossy: each maximal ill-formed
// subsequence becomes one U+FFFD (Unicode §3.9, "U+FFFD substitution of
// maximal subparts"), which is not what strings.ToValidUTF8 does.
func lossyUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var out strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r != utf8.RuneError || n > 1 {
			out.Write(b[:n])
			b = b[n:]
			continue
		}
		out.WriteRune(utf8.RuneError)
		b = b[maximalSubpart(b):]
	}
	return out.String()
}

// maximalSubpart is the length of the ill-formed prefix of b that one U+FFFD
// replaces: a lead byte and the continuation bytes that could still have
// completed it (Unicode Table 3-7), at least one byte.
func maximalSubpart(b []byte) int {
	lo, hi, need := byte(0x80), byte(0xBF), 0
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		lo, need = 0xA0, 2
	case c == 0xED:
		hi, need = 0x9F, 2
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		lo, need = 0x90, 3
	case c == 0xF4:
		hi, need = 0x8F, 3
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(b); n++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}
