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
	"strings"

	"golang.org/x/net/html/atom"
)

// inlineText is the raw-text element being rewritten, if any.
type inlineText struct {
	kind attrKind // 0 when none
	prev byte     // the input byte before the first one not written
	skip int      // textRun's skip for the bytes not written
}

// classifyInlineAttr is classifyAttr for the attributes of Options.Inline.
func classifyInlineAttr(name []byte) attrKind {
	switch {
	case bytes.EqualFold(name, []byte("content")):
		return kindContent
	case bytes.EqualFold(name, []byte("style")):
		return kindCSS
	}
	return kindNone
}

// inlineAttrName is urlAttrName for the attributes of classifyInlineAttr.
func inlineAttrName(b []byte) bool {
	b = bytes.TrimRight(b, " \t\n\f\r")
	return hasSuffixFold(b, "content") || hasSuffixFold(b, "style")
}

// startInline is called for a complete style or script start tag that
// makes the scanner enter the element's raw text at end.
func (rw *rewriter) startInline(raw []byte, end int, a atom.Atom) {
	if !rw.opts.Inline || len(rw.hosts.hostB) == 0 {
		return
	}
	kind := kindCSS
	if a == atom.Script {
		kind = rw.scriptKind(raw)
	}
	if kind == kindNone {
		return
	}
	rw.flush(end) // the start tag goes out as it is
	rw.inl = inlineText{kind: kind, prev: '>'}
}

// scriptKind is how a script's type attribute makes its content read
// (WHATWG HTML §4.12.1.1 "prepare the script element"): JavaScript when it
// is absent, empty, a JavaScript MIME type or "module"; JSON for
// "importmap", "speculationrules" and data blocks of a JSON type
// (application/ld+json, application/json); otherwise a data block the
// rules do not know (templates), left alone.
func (rw *rewriter) scriptKind(raw []byte) attrKind {
	rw.attrs = scanAttrs(raw, rw.attrs[:0])
	for _, at := range rw.attrs {
		if !bytes.EqualFold(raw[at.nameStart:at.nameEnd], []byte("type")) {
			continue
		}
		t := strings.ToLower(strings.Trim(string(raw[at.valStart:at.valEnd]), " \t\n\f\r"))
		mt, _, _ := strings.Cut(t, ";")
		switch {
		case t == "", t == "module", isJavaScriptMIME(t):
			return kindScript
		case t == "importmap", t == "speculationrules", strings.HasSuffix(mt, "json"):
			return kindCSS
		}
		return kindNone
	}
	return kindScript
}

// isJavaScriptMIME is the WHATWG MIME Sniffing list of JavaScript MIME
// type essences (§4.6), which the type attribute must match exactly.
func isJavaScriptMIME(t string) bool {
	switch t {
	case "application/ecmascript", "application/javascript", "application/x-ecmascript",
		"application/x-javascript", "text/ecmascript", "text/javascript", "text/javascript1.0",
		"text/javascript1.1", "text/javascript1.2", "text/javascript1.3", "text/javascript1.4",
		"text/javascript1.5", "text/jscript", "text/livescript", "text/x-ecmascript", "text/x-javascript":
		return true
	}
	return false
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
