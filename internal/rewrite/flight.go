package rewrite

// React Server Components ("Flight") data in a Next.js App Router page
// (docs/behaviour.md, "URL rewriting", Next.js Flight data). Next.js writes
// the stream into the page as scripts self.__next_f.push([1,"chunk"]), the
// chunk a JSON string (next.js, packages/next/src/server/app-render/
// use-flight-response.tsx; Trusted Server's docs/guide/rsc-hydration.md).
// The stream is rows: "<hex id>:" then a tag; a length row ("T" text, and
// React's binary rows) gives its content's length in UTF-8 bytes, in
// lower-case hex before a ",", and has no end of its own; every other row
// ends at a newline (react, packages/react-client/src/ReactFlightClient.js,
// processBinaryChunk). A host of another length inside a text row makes its
// length false, and the browser then misreads every row after it.
//
// So a push script is not put through the text rules as it streams. It is
// collected whole (at most maxTok bytes), its string is read row by row,
// and the text rules run on each piece: at once on the pieces outside
// length rows, and for a text row at its end, when its new length is
// written in place of the old one. A text row that goes on in later push
// scripts holds all output from its length on until it ends (at most
// maxTok bytes held). A binary row, or a text row longer than maxTok, is
// copied as it is. Where the stream cannot be read as rows (a push that is
// not Next.js's, a chunk too long to collect, an escape ssatd does not
// count), that push and every one after it in the page are copied as they
// are: a host left in the page is a smaller harm than a page that no
// longer hydrates.

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"unicode/utf8"
)

// The states of a script region under the Flight rules (rewriter.flight).
const (
	flightOff   uint8 = iota // not a script, or not a push script
	flightMaybe              // a script whose first bytes have not told yet
	flightOn                 // a push script, being collected in fl.src
	flightRaw                // a push script too long to collect: copied as it is
)

// The row states of the Flight stream (ReactFlightClient.js's ROW_ID,
// ROW_TAG, ROW_LENGTH, ROW_CHUNK_BY_NEWLINE, ROW_CHUNK_BY_LENGTH).
const (
	rowID uint8 = iota
	rowTag
	rowLength
	rowLine
	rowBody
)

// flightPage is the Flight stream's state across a page's push scripts.
type flightPage struct {
	src  []byte // the push script being collected
	lost bool   // the stream can no longer be read as rows
	row  uint8  // the row state
	tag  byte   // the length row's tag
	// either: the tag is a length row's in some React versions and a
	// newline row's in others (eitherTag)
	either bool
	n      uint64 // the length being read, then the bytes left of the row
	// The open text row whose content is rewritten at its end: from its
	// length on, all output is held (holding); its hex length is
	// held[:hexEnd] and its content the pieces segs of held.
	holding     bool
	rewriteBody bool // the open length row's content gets the text rules
	held        []byte
	hexEnd      int // held starts with the text row's length, held[:hexEnd]
	segs        []span
	// carry is the end of a push's string that may begin a reference
	// (flightRun) and waits for the next push, in which it goes on; gap:
	// held is the output after it, not a text row.
	carry   []byte
	gap     bool
	joined  []byte // scratch: carry and a push's string
	piece   []byte // scratch: a text row's piece at its release
	scratch []byte
}

type span struct{ from, to int }

func (fl *flightPage) reset() {
	*fl = flightPage{src: fl.src[:0], held: fl.held[:0], segs: fl.segs[:0], carry: fl.carry[:0],
		joined: fl.joined[:0], piece: fl.piece[:0], scratch: fl.scratch[:0]}
}

// flightMaxLead is how much white space may come before a push; Next.js
// writes none.
const flightMaxLead = 64

var flightPrefixes = [...]string{"self.__next_f.push(", "(self.__next_f=self.__next_f||[]).push("}

// pushPrefix tells whether a script's content v begins a push: yes, no,
// or neither while v is too short to tell.
func pushPrefix(v []byte) (yes, no bool) {
	i := 0
	for i < len(v) && i <= flightMaxLead && isJSSpace(v[i]) {
		i++
	}
	if i > flightMaxLead {
		return false, true
	}
	rest, undecided := v[i:], false
	if len(rest) > 0 && rest[0] != 's' && rest[0] != '(' {
		return false, true // most scripts
	}
	for _, p := range flightPrefixes {
		if bytes.HasPrefix(rest, []byte(p)) {
			return true, false
		}
		if len(rest) < len(p) && p[:len(rest)] == string(rest) {
			undecided = true
		}
	}
	return false, !undecided
}

func isJSSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '\v':
		return true
	}
	return false
}

// flightFlush is flushInline for a script region under the Flight rules;
// false hands the region back to the text rules (not a push script).
func (rw *rewriter) flightFlush(end int, final bool) bool {
	if rw.flight == flightMaybe {
		// Most scripts tell at once, and go back to the text rules with
		// nothing written.
		yes, no := pushPrefix(rw.buf[max(rw.done, rw.inl.start):end])
		switch {
		case no:
			rw.flight = flightOff
			return false
		case yes:
			rw.flight = flightOn
		case final:
			rw.flight = flightRaw // a script that ends inside a push's name
		}
	}
	if rw.inl.start > rw.done {
		rw.write(rw.buf[rw.done:rw.inl.start]) // the script's start tag
		rw.done = rw.inl.start
	}
	if rw.flight == flightMaybe {
		return true // the start waits in the read buffer
	}
	v := rw.buf[rw.done:end]
	fl := &rw.fl
	rw.done = end
	switch rw.flight {
	case flightRaw:
		rw.write(v)
	case flightOn:
		fl.src = append(fl.src, v...)
		if len(fl.src) > rw.maxTok {
			rw.flightLose()
			rw.write(fl.src)
			fl.src, rw.flight = fl.src[:0], flightRaw
		}
	}
	if final {
		if rw.flight == flightOn {
			rw.flightScript(fl.src)
			fl.src = fl.src[:0]
		}
		rw.flight, rw.inl.kind, rw.encs.skip = flightOff, kindNone, 0
	}
	return true
}

// flightScript writes a whole push script's content.
func (rw *rewriter) flightScript(src []byte) {
	fl := &rw.fl
	kind, q0, q1 := parsePush(src)
	switch {
	case fl.lost || kind == pushOther:
		rw.write(src)
		return
	case kind == pushBad:
		rw.flightLose()
		rw.write(src)
		return
	}
	rw.write(src[:q0])
	s := src[q0:q1]
	if kind == pushBinary {
		// [3,"base64"]: bytes of the stream (next.js, app-index.tsx), read
		// for the framing only.
		if fl.holding {
			rw.flightRelease(false) // its bytes would not be counted
		}
		b, err := base64.StdEncoding.DecodeString(string(s))
		if err != nil {
			rw.flightLose()
		} else {
			fl.walkBytes(b)
		}
		rw.write(s)
	} else {
		rw.flightChunk(s)
	}
	rw.write(src[q1:])
}

// flightLose gives up on the stream: an open text row goes out as it came.
func (rw *rewriter) flightLose() {
	rw.fl.lost = true
	if rw.fl.holding {
		rw.flightRelease(false)
	}
}

// The kinds of script parsePush reads.
const (
	pushOther  = iota // a push of no stream data ([0], [2,...])
	pushData          // [1,"chunk"]
	pushBinary        // [3,"base64"]
	pushBad           // not a push ssatd can read
)

// parsePush reads a push script's content: its kind and, for data, where
// the string's content is (src[q0:q1], between the quotes).
func parsePush(src []byte) (kind, q0, q1 int) {
	i := 0
	for i < len(src) && isJSSpace(src[i]) {
		i++
	}
	for _, p := range flightPrefixes {
		if bytes.HasPrefix(src[i:], []byte(p)) {
			i += len(p)
			break
		}
	}
	if i+2 >= len(src) || src[i] != '[' {
		return pushBad, 0, 0
	}
	switch t := src[i+1]; {
	case t == '0' || t == '2':
		return pushOther, 0, 0
	case (t == '1' || t == '3') && src[i+2] == ',' && i+3 < len(src) && src[i+3] == '"':
		q0 = i + 4
		if t == '1' {
			kind = pushData
		} else {
			kind = pushBinary
		}
	default:
		return pushBad, 0, 0
	}
	for q1 = q0; q1 < len(src) && src[q1] != '"'; q1++ {
		if src[q1] == '\\' {
			q1++
		}
	}
	rest := bytes.TrimRight(src[min(q1+1, len(src)):], " \t\n\r\f\v;")
	if q1 >= len(src) || string(rest) != "])" || !utf8.Valid(src[q0:q1]) {
		return pushBad, 0, 0
	}
	return kind, q0, q1
}

// flightChunk writes the string content s of a data push, under the
// Flight rules.
func (rw *rewriter) flightChunk(str []byte) {
	fl := &rw.fl
	s, i := str, 0
	if len(fl.carry) > 0 {
		// The last push's tail that may begin a reference starts this one:
		// what was held after it (that push's end, the page up to here)
		// goes out first.
		fl.joined = append(append(fl.joined[:0], fl.carry...), str...)
		s, i = fl.joined, len(fl.carry)
		fl.carry = fl.carry[:0]
		fl.holding, fl.gap = false, false
		rw.emit(fl.held)
		fl.held = fl.held[:0]
	}
	plain := 0 // the start of the piece not written yet
	for i < len(s) {
		if fl.lost {
			if fl.holding {
				rw.flightRelease(false)
			}
			rw.write(s[plain:])
			return
		}
		if fl.row == rowBody {
			j, ok := fl.body(s, i)
			if !ok {
				rw.flightLose()
				continue
			}
			if fl.holding && len(fl.held)+j-plain > rw.maxTok {
				rw.flightRelease(false) // the hold stays within maxTok
			}
			if fl.holding {
				fl.segs = append(fl.segs, span{len(fl.held), len(fl.held) + j - plain})
				fl.held = append(fl.held, s[plain:j]...)
			} else {
				rw.write(s[plain:j])
			}
			if i, plain = j, j; fl.row != rowBody && fl.holding {
				rw.flightRelease(true)
			}
			continue
		}
		c, w, ok := flightByte(s, i)
		if !ok {
			rw.flightLose()
			continue
		}
		if fl.row == rowLine {
			i = fl.line(s, i)
			continue
		}
		prevRow := fl.row
		fl.step(c)
		i += w
		switch {
		case prevRow == rowTag && fl.row == rowLength:
			// The length begins after the tag: the piece before goes out.
			rw.flightPlain(s[plain:i])
			plain = i
			if fl.tag == 'T' {
				rw.endCharsetHold()
				fl.holding, fl.held, fl.segs = true, fl.held[:0], fl.segs[:0]
			}
		case prevRow == rowLength && c == ',':
			plain = rw.flightLengthEnd(s, plain, i, w)
		}
	}
	rw.flightChunkEnd(s, plain)
}

// flightLengthEnd writes a length row's length, s[plain:i-w], and the ","
// that ends it, and returns where the row's content starts.
func (rw *rewriter) flightLengthEnd(s []byte, plain, i, w int) int {
	fl := &rw.fl
	if fl.holding {
		fl.held = append(fl.held, s[plain:i-w]...)
		fl.hexEnd = len(fl.held)
		fl.held = append(fl.held, ',')
	} else {
		rw.write(s[plain:i])
	}
	fl.rewriteBody = fl.tag == 'T' && fl.holding && fl.n <= uint64(rw.maxTok)
	if !fl.rewriteBody && fl.holding {
		rw.flightRelease(false) // too long to hold: copied as it is
	} else if fl.row != rowBody && fl.holding {
		rw.flightRelease(true) // an empty text row
	}
	return i
}

// flightChunkEnd writes what is left of a push's string, s[plain:].
func (rw *rewriter) flightChunkEnd(s []byte, plain int) {
	fl := &rw.fl
	switch fl.row {
	case rowBody: // written or held already
	case rowLength:
		// The length's digits go on in the next push, past other output:
		// this row is copied as it is.
		if fl.holding {
			fl.held = append(fl.held, s[plain:]...)
			rw.flightRelease(false)
		} else {
			rw.write(s[plain:])
		}
	case rowLine:
		if !fl.lost {
			rw.endCharsetHold()
			// The row goes on in the next push: a tail that may begin a
			// reference waits for it, and the output after it is held.
			out, carry, n := rw.flightRun(rw.fl.scratch[:0], s[plain:], false)
			rw.stats.InlineRewritten += n
			rw.write(out)
			fl.scratch = out[:0]
			if len(carry) > 0 {
				fl.carry = append(fl.carry[:0], carry...)
				fl.holding, fl.gap, fl.held = true, true, fl.held[:0]
			}
			return
		}
		fallthrough
	default:
		rw.flightPlain(s[plain:])
	}
}

// endCharsetHold ends the charset hold (charset.go) where the Flight rules
// need a hold of their own, as the end of the prescan window would: the two
// never overlap, and where the Flight rules act does not depend on reads.
func (rw *rewriter) endCharsetHold() {
	if rw.holding {
		rw.releaseHead(false)
	}
}

// flightPlain writes a piece of the stream outside length rows that ends
// where its row does or a text row begins, with the text rules applied.
func (rw *rewriter) flightPlain(p []byte) {
	if len(p) == 0 {
		return
	}
	out, _, n := rw.flightRun(rw.fl.scratch[:0], p, true)
	rw.fl.scratch = out[:0]
	rw.stats.InlineRewritten += n
	rw.write(out)
}

// flightRun appends p to dst with the text rules of script text applied,
// and counts the references it replaced. Unless final (p ends its text),
// it keeps back the tail that more text may make part of a reference, and
// returns it: the text goes on in the next push, and only the bytes of a
// reference cut by the push's end move there.
func (rw *rewriter) flightRun(dst, p []byte, final bool) (out, tail []byte, n int) {
	sink := appendSink{b: dst}
	used, _, n := rw.hosts.textRun(&sink, p, kindContent, 0, 0, final)
	if final {
		return sink.b, nil, n
	}
	// textRun keeps back more than a reference's start (its look-behind),
	// copied as it is: the bytes before the reference's start go out, up to
	// the start of an escape or a UTF-8 sequence.
	c := flightCharStart(p, max(used, rw.flightTail(p)))
	if c <= used {
		return sink.b[:len(sink.b)-(used-c)], p[c:], n
	}
	return append(sink.b, p[used:c]...), p[c:], n
}

// flightTail is where a reference may begin in p that the bytes after p
// decide: the form before a name that ends near p's end, or a proper
// prefix of a form and the name.
func (rw *rewriter) flightTail(p []byte) int {
	h := &rw.hosts
	tail := h.holdFrom(p, max(0, len(p)-len(h.hostB)+1-textLookbehind))
	const near = 16 // a port, or a '.' or '-' that would make a longer name
	for k := max(0, len(p)-len(h.hostB)-near); k+len(h.hostB) <= len(p); k++ {
		if !nameFoldAt(p[k:], h.hostB) || !allHostBytes(p[k+len(h.hostB):]) {
			continue
		}
		if _, from, _, ok := sepForm(p, 0, k, &escapings[escPlain]); ok {
			tail = min(tail, from)
		}
		break
	}
	return tail
}

// allHostBytes reports whether every byte of t could go on a host name
// or its port, so that the bytes after t decide a name before it.
func allHostBytes(t []byte) bool {
	for _, c := range t {
		if !(isAlpha(c) || c >= '0' && c <= '9' || c == '.' || c == '-' || c == ':' || c == '_') {
			return false
		}
	}
	return true
}

// nameFoldAt reports whether t begins with the lower-case name in any
// ASCII letter case.
func nameFoldAt(t, name []byte) bool {
	for i, c := range name {
		if lower(t[i]) != c {
			return false
		}
	}
	return true
}

// flightCharStart moves c back to the start of the escape or the UTF-8
// sequence it falls in, so that each push's string stays whole.
func flightCharStart(p []byte, c int) int {
	e := 0
	for e < c {
		w := 1
		if p[e] == '\\' {
			_, w, _ = escapeLen(p, e)
		}
		if e+w > c {
			break
		}
		e += w
	}
	for e > 0 && e < len(p) && p[e]&0xc0 == 0x80 {
		e--
	}
	return e
}

// flightRelease ends a hold. A text row that is done (complete) gets the
// text rules over its pieces, as one text, and its length becomes their
// new length in UTF-8 bytes; otherwise the held output goes out as it is,
// after the tail that waited for the next push, if any.
func (rw *rewriter) flightRelease(done bool) {
	fl := &rw.fl
	fl.holding = false
	if fl.gap || !done || !fl.rewriteBody {
		rw.emit(fl.carry)
		rw.emit(fl.held)
		fl.held, fl.carry, fl.gap = fl.held[:0], fl.carry[:0], false
		return
	}
	// out is the held output after the length; piece is a piece of the
	// row with the tail of the one before that may begin a reference, a
	// buffer of its own (flightChunk may be reading fl.joined). carry
	// points into piece: the append moves it to the front first.
	out, piece := fl.scratch[:0], fl.piece[:0]
	last, length, changed := fl.hexEnd, uint64(0), 0
	var carry []byte
	for k, sg := range fl.segs {
		out = append(out, fl.held[last:sg.from]...)
		piece = append(append(piece[:0], carry...), fl.held[sg.from:sg.to]...)
		from := len(out)
		var n int
		out, carry, n = rw.flightRun(out, piece, k == len(fl.segs)-1)
		changed += n
		length += flightLen(out[from:])
		last = sg.to
	}
	out = append(out, fl.held[last:]...)
	if changed > 0 {
		var hex [16]byte
		rw.emit(strconv.AppendUint(hex[:0], length, 16))
		rw.stats.InlineRewritten += changed
	} else {
		rw.emit(fl.held[:fl.hexEnd])
	}
	rw.emit(out)
	fl.scratch, fl.piece, fl.held, fl.segs = out[:0], piece[:0], fl.held[:0], fl.segs[:0]
}
