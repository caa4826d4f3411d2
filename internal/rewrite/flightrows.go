package rewrite

// The Flight stream's rows (flight.go): the row states React's client
// reads them in (react, packages/react-client/src/ReactFlightClient.js,
// processBinaryChunk), over a push's JSON string or over bytes.

import "bytes"

// step moves the row state on by one decoded byte c outside a row's
// content (rowID, rowTag, rowLength).
func (fl *flightPage) step(c byte) {
	switch fl.row {
	case rowID:
		switch {
		case c == ':':
			fl.row = rowTag
		case !isLowerHex(c):
			fl.lost = true
		}
	case rowTag:
		switch {
		case isLengthTag(c):
			fl.row, fl.tag, fl.n = rowLength, c, 0
			fl.either = eitherTag(c)
		case c == '\n':
			fl.row = rowID // an empty row
		default:
			// A capital letter and some others are a tag of a row that
			// ends at a newline; anything else is already its content.
			fl.row = rowLine
		}
	case rowLength:
		switch {
		case c == ',':
			fl.row = rowBody
			if fl.n == 0 {
				fl.row = rowID
			}
		case isLowerHex(c) && fl.n < 1<<40:
			fl.n = fl.n<<4 | uint64(hexVal(c))
		case fl.either && c == '\n':
			fl.row = rowID // a newline row after all, and an empty one
		case fl.either:
			fl.row = rowLine
		default:
			fl.lost = true
		}
	}
}

// line skips a newline row's content from s[i:]: to the next escape, and
// past it; at an escaped newline the row ends.
func (fl *flightPage) line(s []byte, i int) int {
	j := bytes.IndexByte(s[i:], '\\')
	if j < 0 {
		return len(s)
	}
	i += j
	c, w, ok := flightByte(s, i)
	if !ok {
		fl.lost = true
		return i
	}
	if c == '\n' {
		fl.row = rowID
	}
	return i + w
}

// body consumes a length row's content from s[i:] and returns where it
// stopped: at the row's end (fl.row moves on) or at the end of s. ok is
// false where an escape straddles the row's end or cannot be read.
func (fl *flightPage) body(s []byte, i int) (int, bool) {
	for i < len(s) && fl.n > 0 {
		if s[i] != '\\' {
			lim := len(s)
			if uint64(lim-i) > fl.n {
				lim = i + int(fl.n)
			}
			j := bytes.IndexByte(s[i:lim], '\\')
			if j < 0 {
				j = lim - i
			}
			i += j
			fl.n -= uint64(j)
			continue
		}
		n, w, ok := escapeLen(s, i)
		if !ok || uint64(n) > fl.n {
			return i, false
		}
		i += w
		fl.n -= uint64(n)
	}
	if fl.n == 0 {
		fl.row = rowID
	}
	return i, true
}

// walkBytes moves the row state over stream bytes that are not rewritten
// (a binary push).
func (fl *flightPage) walkBytes(b []byte) {
	for i := 0; i < len(b) && !fl.lost; {
		switch fl.row {
		case rowBody:
			k := int(min(fl.n, uint64(len(b)-i)))
			i += k
			if fl.n -= uint64(k); fl.n == 0 {
				fl.row = rowID
			}
		case rowLine:
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				return
			}
			i += j + 1
			fl.row = rowID
		default:
			fl.step(b[i])
			i++
		}
	}
}

func isLowerHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func hexVal(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// isLengthTag reports the tags of rows that give their length: "T" and
// React's binary rows, of every React version that has them
// (ReactFlightClient.js, processBinaryChunk). Those of eitherTag are
// newline rows in other versions (React 19.1: "C" ends a stream, "D" is
// debug information): such a row gives its length only if hex digits and
// a "," follow the tag.
func isLengthTag(c byte) bool {
	switch c {
	case 'T', 'A', 'O', 'o', 'U', 'S', 's', 'L', 'l', 'G', 'g', 'M', 'm', 'V', 'C', 'c', 'F', 'D', 'N':
		return true
	}
	return false
}

func eitherTag(c byte) bool {
	switch c {
	case 'C', 'c', 'F', 'D', 'N':
		return true
	}
	return false
}
