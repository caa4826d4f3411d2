package rewrite

// Inline text rules (Options.Inline; docs/behaviour.md, "URL rewriting"):
// origin references in meta content and style attributes and in the
// content of style elements and of JavaScript and JSON scripts. The
// scanner already knows where an element's raw text starts and ends; its
// bytes pass through textRun on their way out, in flush, and textRun keeps
// back at most a tail of the length of one host reference, which stays in
// the read buffer (run compacts from the first byte not written).

import (
	"bytes"

	"golang.org/x/net/html/atom"
)

// inlineText is the raw-text element being rewritten, if any.
type inlineText struct {
	kind attrKind // 0 when none
	prev byte     // the input byte before the first one not written
	skip int      // textRun's skip for the bytes not written
	// attr: the attribute value the scanner checks (checkURLValue) is a
	// style or meta content value: kindContent's forms all put a '/'
	// right before the host.
	attr bool
}

// hasSlashHost reports whether v holds the origin name right after a '/',
// which every kindContent match has.
func (h *hostRewriter) hasSlashHost(v []byte) bool {
	f := newSlashFinder(v, h.hostB)
	return f.find(0) >= 0
}

// classifyInlineAttr is classifyAttr for the attributes of Options.Inline.
func classifyInlineAttr(name []byte) attrKind {
	switch {
	case bytes.EqualFold(name, []byte("content")):
		return kindContent
	case bytes.EqualFold(name, []byte("style")):
		return kindContent
	}
	return kindNone
}

// inlineAttrName is urlAttrName for the attributes of classifyInlineAttr.
func inlineAttrName(b []byte) bool {
	end := len(b)
	for end > 0 && isSpace(b[end-1]) {
		end--
	}
	if end == 0 {
		return false
	}
	switch b[end-1] | 0x20 {
	case 't':
		return hasSuffixFold(b[:end], "content")
	case 'e':
		return hasSuffixFold(b[:end], "style")
	}
	return false
}

// startInline is called for a complete style or script start tag that
// makes the scanner enter the element's raw text at end.
func (rw *rewriter) startInline(raw []byte, end int, a atom.Atom) {
	if !rw.opts.Inline || len(rw.hosts.hostB) == 0 {
		return
	}
	if a == atom.Script && !rw.scriptHasText(raw) {
		return
	}
	rw.flush(end) // the start tag goes out as it is
	rw.inl = inlineText{kind: kindContent, prev: '>'}
}

// scriptHasText reports whether a script's type attribute makes its
// content JavaScript or JSON (WHATWG HTML §4.12.1.1 "prepare the script
// element"): JavaScript when it is absent, empty, a JavaScript MIME type
// or "module"; JSON for "importmap", "speculationrules" and data blocks of
// a JSON type (application/ld+json, application/json). Other data blocks
// (templates) are left alone.
func (rw *rewriter) scriptHasText(raw []byte) bool {
	rw.attrs = scanAttrs(raw, rw.attrs[:0])
	for _, at := range rw.attrs {
		if !bytes.EqualFold(raw[at.nameStart:at.nameEnd], []byte("type")) {
			continue
		}
		t := bytes.Trim(raw[at.valStart:at.valEnd], " \t\n\f\r")
		mt, _, _ := bytes.Cut(t, []byte(";"))
		mt = bytes.TrimRight(mt, " \t\n\f\r")
		return len(t) == 0 || bytes.EqualFold(t, []byte("module")) || isJavaScriptMIME(t) ||
			bytes.EqualFold(t, []byte("importmap")) || bytes.EqualFold(t, []byte("speculationrules")) ||
			hasSuffixFold(mt, "json")
	}
	return true
}

// isJavaScriptMIME is the WHATWG MIME Sniffing list of JavaScript MIME
// type essences (§4.6), which the type attribute must match exactly.
func isJavaScriptMIME(t []byte) bool {
	for _, m := range javaScriptMIMEs {
		if bytes.EqualFold(t, []byte(m)) {
			return true
		}
	}
	return false
}

var javaScriptMIMEs = [...]string{
	"text/javascript", "application/javascript", "application/ecmascript", "application/x-ecmascript",
	"application/x-javascript", "text/ecmascript", "text/javascript1.0",
	"text/javascript1.1", "text/javascript1.2", "text/javascript1.3", "text/javascript1.4",
	"text/javascript1.5", "text/jscript", "text/livescript", "text/x-ecmascript", "text/x-javascript",
}

// flushInline writes buf[done:end] of the element's raw text through the
// text rules; final when end is where the element ends.
func (rw *rewriter) flushInline(end int, final bool) {
	v := rw.buf[rw.done:end]
	used, skip, changed := rw.hosts.textRun(rw, v, rw.inl.kind, rw.inl.prev, rw.inl.skip, final)
	rw.inl.skip = skip
	rw.stats.InlineRewritten += changed
	if used > 0 {
		rw.inl.prev = v[used-1]
	}
	rw.done += used
}

// endInline ends the element's text rules at end, where its end tag (or
// the page) begins.
func (rw *rewriter) endInline(end int) {
	if rw.inl.kind == kindNone {
		return
	}
	if end > rw.done {
		rw.flushInline(end, true)
	}
	rw.inl.kind = kindNone
}
