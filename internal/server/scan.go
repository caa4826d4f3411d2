package server

import "bytes"

// scanner follows an HTTP/1.x request stream the way net/http frames it:
// a header block (the request line, then field lines, each ending in LF
// with an optional CR before it, up to a blank line), then as many body
// bytes as its Content-Length says, or none (RFC 9112 §6.3 item 6: a
// request without Content-Length or Transfer-Encoding has no body). It
// reads field names and Content-Length values byte by byte, so it keeps no
// line and works however the stream is split into reads.
//
// Where it finds a fault it stops: the request it is in is refused and the
// connection closed, so what follows is never read as a request. Where it
// finds none, it frames the stream exactly as net/http does
// (FuzzScannerAgreesWithNetHTTP): a Transfer-Encoding, the one framing it
// does not follow, is itself a fault, and a Content-Length it cannot read
// is one that net/http refuses too.
type scanner struct {
	limit    int64 // header bytes allowed per request
	requests int64 // header blocks finished: the ordinal of the current one
	state    scanState
	line     int   // the current line's number in its block; 0 is the request line
	block    int64 // bytes of the current header block so far
	name     int   // bytes of the current field name so far
	te, cl   bool  // the name read so far is a prefix of Transfer-Encoding / Content-Length
	value    int64 // the Content-Length value being read
	length   int64 // the block's Content-Length; -1 while it has none
	body     int64 // body bytes still to skip
}

type scanState uint8

const (
	sLineStart scanState = iota // at the start of a line of a header block
	sCR                         // after a CR at the start of a line
	sName                       // in a field name
	sRest                       // in the rest of a line, which needs no reading
	sCLSpace                    // in a Content-Length value, before the digits
	sCLDigits                   // in its digits
	sCLTrail                    // in the whitespace after them
	sCLCR                       // after a CR that ends it
	sBody                       // in a body
)

const (
	teName   = "transfer-encoding"
	clName   = "content-length"
	maxInt63 = 1<<63 - 1
)

func newScanner(limit int64) scanner { return scanner{limit: limit, length: -1} }

// feed scans the next bytes of the stream and returns the first fault in
// them, after which it must not be called again.
func (s *scanner) feed(p []byte) framingFault {
	for i := 0; i < len(p); {
		if s.state == sBody {
			n := min(int64(len(p)-i), s.body)
			i += int(n)
			if s.body -= n; s.body == 0 {
				s.startBlock()
			}
			continue
		}
		if s.state == sRest {
			// Most header bytes: skip to the line end at once.
			n := bytes.IndexByte(p[i:], '\n')
			if n < 0 {
				n = len(p) - i
			}
			if s.block += int64(n); s.block > s.limit {
				return faultTooLarge
			}
			if i += n; i == len(p) {
				break
			}
		}
		if s.block++; s.block > s.limit {
			return faultTooLarge
		}
		if f := s.step(p[i]); f != faultNone {
			return f
		}
		i++
	}
	return faultNone
}

// step reads one byte of a header block.
func (s *scanner) step(b byte) framingFault {
	switch s.state {
	case sLineStart:
		return s.lineStart(b)
	case sCR:
		if b == '\n' {
			s.endBlock()
		} else {
			s.state = sRest // net/http refuses a line starting with CR
		}
	case sName:
		return s.nameByte(b)
	case sRest:
		if b == '\n' {
			s.endLine()
		}
	default:
		return s.lengthByte(b)
	}
	return faultNone
}

func (s *scanner) lineStart(b byte) framingFault {
	switch {
	case b == '\n':
		s.endBlock()
	case b == '\r':
		s.state = sCR
	case s.line == 0:
		s.state = sRest // the request line
	case b == ' ' || b == '\t':
		return faultObsFold
	default:
		s.state, s.name, s.te, s.cl = sName, 0, true, true
		return s.nameByte(b)
	}
	return faultNone
}

// nameByte reads a byte of a field name, which net/http ends at the
// first colon (RFC 9112 §5.1: no whitespace before it).
func (s *scanner) nameByte(b byte) framingFault {
	isTE := s.te && s.name == len(teName)
	isCL := s.cl && s.name == len(clName)
	switch b {
	case ':':
		switch {
		case isTE:
			return faultTransferEncoding
		case isCL:
			s.state, s.value = sCLSpace, 0
		default:
			s.state = sRest
		}
	case ' ', '\t', '\r', '\n':
		// net/http refuses a name followed by whitespace; a
		// Transfer-Encoding spelled so is refused here whatever happens
		// to it elsewhere.
		switch {
		case isTE:
			return faultTransferEncoding
		case isCL:
			return faultContentLength
		case b == '\n':
			s.endLine()
		default:
			s.state = sRest
		}
	default:
		c := lower(b)
		s.te = s.te && s.name < len(teName) && c == teName[s.name]
		s.cl = s.cl && s.name < len(clName) && c == clName[s.name]
		s.name++
	}
	return faultNone
}

// lengthByte reads a byte of a Content-Length value: optional whitespace,
// decimal digits that fit 63 bits, optional whitespace, the line end; what
// net/http's parseContentLength accepts once it has trimmed the value.
func (s *scanner) lengthByte(b byte) framingFault {
	isDigit := '0' <= b && b <= '9'
	switch {
	case (s.state == sCLSpace || s.state == sCLDigits) && isDigit:
		d := int64(b - '0')
		if s.value > (maxInt63-d)/10 {
			return faultContentLength
		}
		s.value, s.state = s.value*10+d, sCLDigits
	case s.state == sCLSpace && (b == ' ' || b == '\t'):
	case s.state == sCLSpace: // no digits
		return faultContentLength
	case s.state == sCLCR && b != '\n':
		return faultContentLength
	case b == ' ' || b == '\t':
		s.state = sCLTrail
	case b == '\r':
		s.state = sCLCR
	case b == '\n':
		if s.length >= 0 && s.length != s.value {
			return faultContentLength // RFC 9112 §6.3 item 5
		}
		s.length = s.value
		s.endLine()
	default:
		return faultContentLength
	}
	return faultNone
}

func (s *scanner) endLine() {
	s.line++
	s.state = sLineStart
}

func (s *scanner) endBlock() {
	s.requests++
	if s.length > 0 {
		s.state, s.body = sBody, s.length
		return
	}
	s.startBlock()
}

func (s *scanner) startBlock() {
	s.state, s.line, s.block, s.length = sLineStart, 0, 0, -1
}

func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}
