package rewrite

// A React Server Components payload (text/x-component) as a text response
// (docs/behaviour.md, "Text responses"): the Flight stream of flight.go,
// as bytes. Each row is rewritten whole, so the output does not depend on
// reads: a newline row with the text rules; a text row with them and its
// length made new, as upstream's RscFlightUrlRewriter does
// (trusted-server-core, rsc_flight.rs). A binary row, a row longer than
// DefaultMaxTokenBytes, and everything after a row that cannot be read
// (a row id or length that is not lower-case hex) are copied as they are.

import (
	"bytes"
	"io"
	"strconv"
)

// flightStream is the state of one payload's rewrite.
type flightStream struct {
	t    *textRewriter
	fl   flightPage // the row state; its other fields stay unused
	row  []byte     // the row so far, while it is rewritten whole
	body int        // where a text row's content begins in row
	pass bool       // the row goes out as it comes
	out  []byte
	max  int
}

// RewriteFlight streams a text/x-component payload from src to dst, each
// row with the text rules of a text response that is not JavaScript. It
// holds at most one row (DefaultMaxTokenBytes), and returns errors as
// RewriteText does; a source that fails leaves its last row unwritten.
func RewriteFlight(dst io.Writer, src io.Reader, opts *TextOptions) (TextStats, error) {
	t := textPool.Get().(*textRewriter)
	defer textPool.Put(t)
	t.dst, t.stats, t.err = dst, TextStats{}, nil
	t.hosts.reset(opts.OriginHost, opts.RequestHost, opts.RequestScheme)
	f := flightStream{t: t, max: DefaultMaxTokenBytes, pass: len(t.hosts.hostB) == 0}
	f.fl.lost = f.pass
	for {
		m, rerr := readSome(src, t.buf)
		t.stats.InBytes += int64(m)
		f.feed(t.buf[:m])
		if t.err != nil {
			return t.stats, t.err
		}
		if rerr == io.EOF {
			t.write(f.row) // a last row without its end, as it came
			t.dst = nil
			return t.stats, t.err
		}
		if rerr != nil {
			t.dst = nil
			return t.stats, rerr
		}
	}
}

// feed takes the payload's next bytes.
func (f *flightStream) feed(p []byte) {
	fl := &f.fl
	for len(p) > 0 {
		if fl.lost {
			f.t.write(f.row)
			f.t.write(p)
			f.row = f.row[:0]
			return
		}
		switch fl.row {
		case rowBody:
			k := int(min(fl.n, uint64(len(p))))
			f.take(p[:k])
			p, fl.n = p[k:], fl.n-uint64(k)
			if fl.n == 0 {
				f.endRow(true)
			}
		case rowLine:
			j := bytes.IndexByte(p, '\n')
			if j < 0 {
				f.take(p)
				return
			}
			f.take(p[:j+1])
			p = p[j+1:]
			f.endRow(false)
		default:
			prev, c := fl.row, p[0]
			fl.step(c)
			f.take(p[:1])
			p = p[1:]
			switch {
			case fl.lost:
			case fl.row == rowID && c == '\n': // an empty row
				f.endRow(false)
			case prev == rowLength && c == ',':
				f.body = len(f.row)
				if fl.tag != 'T' || fl.n > uint64(f.max) {
					f.passRow() // binary, or too long to hold
				}
				if fl.row == rowID {
					f.endRow(true) // an empty text row
				}
			}
		}
	}
}

// take adds row bytes: held while the row is rewritten whole, written
// when it passes, or once it grows past the limit.
func (f *flightStream) take(p []byte) {
	if !f.pass && len(f.row)+len(p) > f.max {
		f.passRow()
	}
	if f.pass {
		f.t.write(p)
		return
	}
	f.row = append(f.row, p...)
}

func (f *flightStream) passRow() {
	f.t.write(f.row)
	f.row, f.pass = f.row[:0], true
}

// endRow writes the row that has just ended: a text row (length) with the
// new length of its rewritten content.
func (f *flightStream) endRow(length bool) {
	f.fl.row = rowID
	if f.pass {
		f.pass = false
		return
	}
	h := &f.t.hosts
	sink := appendSink{b: f.out[:0]}
	if !length {
		_, _, n := h.textRun(&sink, f.row, kindCSS, 0, 0, true)
		f.t.stats.Rewritten += n
		f.t.write(sink.b)
	} else {
		content := f.row[f.body:]
		_, _, n := h.textRun(&sink, content, kindCSS, 0, 0, true)
		f.t.stats.Rewritten += n
		if n == 0 {
			f.t.write(f.row)
		} else {
			// row is "<id>:T<hex>,": the header up to the hex digits.
			hexAt := bytes.LastIndexByte(f.row[:f.body-1], 'T') + 1
			f.t.write(f.row[:hexAt])
			var hex [17]byte
			f.t.write(append(strconv.AppendUint(hex[:0], uint64(len(sink.b)), 16), ','))
			f.t.write(sink.b)
		}
	}
	f.out, f.row = sink.b[:0], f.row[:0]
}
