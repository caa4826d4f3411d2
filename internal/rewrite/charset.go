package rewrite

// The head injection and the page's charset declaration. A browser looks
// for <meta charset> (or <meta http-equiv="content-type" content="...;
// charset=...">) in the first 1024 bytes of a page only (HTML Living
// Standard §13.2.3.2, "prescan a byte stream to determine its encoding").
// When the page declares its charset there, the output must too: the head
// injection goes right after <head>, unless that would push the
// declaration past byte 1024; then it goes right after the declaration.
//
// To tell, the output after <head> is held until the declaration is
// found, the head ends (</head> or <body>), the input passes byte 1024, or
// the page ends: at most about 1 KiB plus one rewritten tag. Each of these
// is decided on the bytes seen so far, so the output does not depend on how
// the page is split into reads; and since the head of a page that flushes
// early ends with </head>, what the origin has sent still reaches the
// client before the rewriter waits for more.

import "bytes"

// prescanBytes is the window of the encoding prescan.
const prescanBytes = 1024

// inputOffset is the offset in the page of buf[i].
func (rw *rewriter) inputOffset(i int) int64 { return rw.stats.InBytes - int64(rw.n-i) }

// headDone writes the head injection after the <head> start tag that ends
// at end, or starts holding the output when a charset declaration may
// still come within the prescan window.
func (rw *rewriter) headDone(end int) {
	rw.stats.HeadFound = true
	rw.flush(end)
	// A Flight hold open here (Next.js data before <head>) keeps going:
	// the two holds never overlap (flight.go), and this one waits for no
	// charset declaration.
	if rw.charsetSeen || len(rw.opts.HeadPrepend) == 0 || rw.inputOffset(end) >= prescanBytes || rw.fl.holding {
		rw.write(rw.injected(rw.opts.HeadPrepend))
		return
	}
	rw.held = rw.held[:0]
	rw.holding = true
}

// metaDone acts on a complete <meta> start tag, buf[tokStart:end], that
// may be the page's charset declaration.
func (rw *rewriter) metaDone(raw []byte, end int) {
	if rw.charsetSeen || rw.inputOffset(end) > prescanBytes || !rw.declaresCharset(raw) {
		return
	}
	rw.charsetSeen = true
	if !rw.holding {
		return // before <head>: the injection cannot move it
	}
	rw.flush(end)
	// The output offset where the declaration ends, with the injection
	// before it.
	after := rw.stats.OutBytes + int64(len(rw.held)) + int64(len(rw.injected(rw.opts.HeadPrepend)))
	rw.releaseHead(after > prescanBytes)
}

// releaseHead stops holding: it writes the held output and the head
// injection, the injection first unless afterHeld.
func (rw *rewriter) releaseHead(afterHeld bool) {
	rw.holding = false
	if afterHeld {
		rw.write(rw.held)
		rw.write(rw.injected(rw.opts.HeadPrepend))
	} else {
		rw.write(rw.injected(rw.opts.HeadPrepend))
		rw.write(rw.held)
	}
	rw.held = rw.held[:0]
}

// declaresCharset reports whether a raw <meta> start tag declares a charset
// as the prescan reads it: a non-empty charset attribute, or http-equiv
// "content-type" with a content that names a charset. Of attributes with
// the same name, the first counts.
func (rw *rewriter) declaresCharset(raw []byte) bool {
	rw.attrs = scanAttrs(raw, rw.attrs[:0])
	var seen [3]bool // charset, http-equiv, content
	var charset, pragma, content bool
	for _, a := range rw.attrs {
		name, val := raw[a.nameStart:a.nameEnd], raw[a.valStart:a.valEnd]
		k := -1
		switch {
		case foldEq(name, "charset"):
			k = 0
		case foldEq(name, "http-equiv"):
			k = 1
		case foldEq(name, "content"):
			k = 2
		}
		if k < 0 || seen[k] {
			continue
		}
		seen[k] = true
		switch k {
		case 0:
			charset = len(bytes.TrimSpace(val)) > 0
		case 1:
			pragma = foldEq(bytes.TrimSpace(val), "content-type")
		case 2:
			content = namesCharset(val)
		}
	}
	return charset || (pragma && content)
}

// namesCharset reports whether a content value holds "charset" followed,
// after optional white space, by '=' (§2.5.6 "extracting a character
// encoding from a meta element").
func namesCharset(v []byte) bool {
	for {
		i := indexFold(v, []byte("charset"))
		if i < 0 {
			return false
		}
		v = bytes.TrimLeft(v[i+len("charset"):], " \t\n\f\r")
		if len(v) > 0 && v[0] == '=' {
			return true
		}
	}
}
