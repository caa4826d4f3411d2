package rewrite

// The JSON strings of Next.js's pushes (flight.go): what each escape
// stands for in the Flight stream, which counts UTF-8 bytes (RFC 8259 §7;
// the WHATWG Encoding standard's UTF-8 encoder for the stream's bytes).

import (
	"strconv"
	"unicode/utf8"
)

// flightByte decodes the stream byte at s[i] of a JSON string: c is the
// byte when the escape stands for one byte (0 otherwise), w the escape's
// width in s.
func flightByte(s []byte, i int) (c byte, w int, ok bool) {
	if s[i] != '\\' {
		return s[i], 1, true
	}
	n, w, ok := escapeLen(s, i)
	if !ok {
		return 0, 0, false
	}
	if n != 1 {
		return 0, w, true
	}
	switch e := s[i+1]; e {
	case 'n':
		return '\n', w, true
	case 'u':
		v, _ := strconv.ParseUint(string(s[i+2:i+6]), 16, 16)
		return byte(v), w, true
	case 'b':
		return '\b', w, true
	case 'f':
		return '\f', w, true
	case 'r':
		return '\r', w, true
	case 't':
		return '\t', w, true
	default: // '"', '\\', '/'
		return e, w, true
	}
}

// escapeLen reads the JSON escape at s[i]: n is how many UTF-8 bytes it
// stands for in the stream (TextEncoder's: a lone surrogate becomes
// U+FFFD), w its width in s. Only JSON's escapes are read: JSON.stringify
// writes no other.
func escapeLen(s []byte, i int) (n, w int, ok bool) {
	if i+1 >= len(s) {
		return 0, 0, false
	}
	switch s[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 1, 2, true
	case 'u':
	default:
		return 0, 0, false
	}
	u, ok := hex4(s, i+2)
	if !ok {
		return 0, 0, false
	}
	switch {
	case u >= 0xd800 && u < 0xdc00:
		if lo, ok := hex4(s, i+8); ok && i+7 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' && lo >= 0xdc00 && lo < 0xe000 {
			return 4, 12, true
		}
		return 3, 6, true
	case u >= 0xdc00 && u < 0xe000:
		return 3, 6, true
	}
	return utf8.RuneLen(rune(u)), 6, true
}

func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var u rune
	for _, c := range s[i : i+4] {
		d := hexDigit(c)
		if d < 0 {
			return 0, false
		}
		u = u<<4 | rune(d)
	}
	return u, true
}

// hexDigit is the value of a hexadecimal digit, or -1.
func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c|0x20 >= 'a' && c|0x20 <= 'f':
		return int(c|0x20-'a') + 10
	}
	return -1
}

// flightLen is the UTF-8 length in the stream of a JSON string's content
// p, whose escapes flightChunk has already read.
func flightLen(p []byte) uint64 {
	var n uint64
	for i := 0; i < len(p); {
		if p[i] != '\\' {
			n++
			i++
			continue
		}
		k, w, _ := escapeLen(p, i)
		n += uint64(k)
		i += w
	}
	return n
}
