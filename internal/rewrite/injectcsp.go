package rewrite

// ssatd's injections under a page's Content Security Policy
// (docs/behaviour.md, "Content Security Policy"; internal/csp): the
// scripts carry the page's nonce, and where a policy would block an inline
// one, its data goes as a JSON data block read by the constant loader
// script, whose hash the policy was given.

import (
	"bytes"

	"github.com/ssatd/ssatd/internal/csp"
)

// dressInjection appends to dst the injection b (HeadPrepend, or BodyEnd's
// result: BundleTag, AdSlotsScript and BidsScript output, nothing else)
// with nonce on each script start tag, and, with loader, the ad-slots and
// bids scripts in their data block and loader form. The scripts' data is
// escaped (escapeJSString), so "<script" occurs in b only where a tag
// starts.
func dressInjection(dst, b []byte, nonce string, loader bool) []byte {
	const tag = "<script"
	for len(b) > 0 {
		i := bytes.Index(b, []byte(tag))
		if i < 0 {
			return append(dst, b...)
		}
		dst = append(dst, b[:i]...)
		b = b[i:]
		if loader {
			if data, rest, ok := injectedData(b, adSlotsOpen, adSlotsClose); ok {
				dst = appendLoaderForm(dst, "adSlots", data, nonce)
				b = rest
				continue
			}
			if data, rest, ok := injectedData(b, bidsOpen, bidsClose); ok {
				dst = appendLoaderForm(dst, "bids", data, nonce)
				b = rest
				continue
			}
		}
		dst = append(dst, tag...)
		dst = appendNonce(dst, nonce)
		b = b[len(tag):]
	}
	return dst
}

// injectedData returns the data of the script that b starts with when it is
// open's, and what follows the script.
func injectedData(b []byte, open, close string) (data, rest []byte, ok bool) {
	if !bytes.HasPrefix(b, []byte(open)) {
		return nil, nil, false
	}
	end := bytes.Index(b[len(open):], []byte(close))
	if end < 0 {
		return nil, nil, false
	}
	return b[len(open) : len(open)+end], b[len(open)+end+len(close):], true
}

// appendLoaderForm appends the data block and the loader. The data is a
// JavaScript string's body made of JSON's own escapes (\\, \", \n, \r,
// \uXXXX), so that in quotes it is a JSON string, which the loader parses
// to the JSON text it parses again; it holds no '<', so the block cannot
// end early.
func appendLoaderForm(dst []byte, kind string, data []byte, nonce string) []byte {
	dst = append(dst, `<script type="application/json" data-tsjs="`...)
	dst = append(dst, kind...)
	dst = append(dst, `">"`...)
	dst = append(dst, data...)
	dst = append(dst, `"</script><script`...)
	dst = appendNonce(dst, nonce)
	dst = append(dst, '>')
	dst = append(dst, csp.LoaderJS...)
	return append(dst, "</script>"...)
}

// appendNonce appends the nonce attribute; the nonce is a base64-value
// (csp.Page.Nonce), which needs no escaping in double quotes.
func appendNonce(dst []byte, nonce string) []byte {
	if nonce == "" {
		return dst
	}
	dst = append(dst, ` nonce="`...)
	dst = append(dst, nonce...)
	return append(dst, '"')
}

// injected returns the injection b as the page's policies so far need it.
func (rw *rewriter) injected(b []byte) []byte {
	if !rw.cspOn || len(b) == 0 || (rw.csp.Nonce == "" && !rw.csp.Loader) {
		return b
	}
	rw.injBuf = dressInjection(rw.injBuf[:0], b, rw.csp.Nonce, rw.csp.Loader)
	return rw.injBuf
}

// keptByPolicy reports whether the raw text the scanner has entered is an
// inline script or style that a policy allows by hash: it is then written
// as it came, with no text rule and no Flight rule applied.
func (rw *rewriter) keptByPolicy() bool {
	if rw.mode == inScript && rw.keepScript ||
		rw.mode == inRawText && rw.rawName == "style" && rw.keep&csp.KeepStyles != 0 {
		rw.stats.CSPKept++
		return true
	}
	return false
}

// scriptRuns reports whether the <script> start tag raw makes a script
// the browser runs, and so one a policy governs: a data block (a type that
// is no JavaScript MIME type, "module", "importmap" or "speculationrules",
// HTML §4.12.1.1 "prepare the script element") is never run nor
// checked against a policy, so JSON-LD keeps the inline rules. The type is
// compared whole, without parameters, as the standard does.
func (rw *rewriter) scriptRuns(raw []byte) bool {
	rw.attrs = scanAttrs(raw, rw.attrs[:0])
	for _, a := range rw.attrs {
		if !foldEq(raw[a.nameStart:a.nameEnd], "type") {
			continue
		}
		t := bytes.Trim(raw[a.valStart:a.valEnd], " \t\n\f\r")
		if len(t) == 0 || bytes.IndexByte(t, '&') >= 0 {
			return true // no type, or one spelled with references: taken to run
		}
		for _, js := range runningTypes {
			if foldEq(t, js) {
				return true
			}
		}
		return false
	}
	return true
}

// runningTypes are the script types a browser runs: the JavaScript MIME
// type essences (MIME Sniffing §4.6) and the three non-MIME types.
var runningTypes = []string{"application/ecmascript", "application/javascript", "application/x-ecmascript",
	"application/x-javascript", "text/ecmascript", "text/javascript", "text/javascript1.0",
	"text/javascript1.1", "text/javascript1.2", "text/javascript1.3", "text/javascript1.4",
	"text/javascript1.5", "text/jscript", "text/livescript", "text/x-ecmascript",
	"text/x-javascript", "module", "importmap", "speculationrules"}

// keptAttr reports whether an attribute, under the text rules, is an
// event handler or a style attribute that a policy allows by hash
// ('unsafe-hashes'), and so is left as it is.
func (rw *rewriter) keptAttr(name []byte) bool {
	if rw.keep&csp.KeepHandlers != 0 && len(name) > 2 && name[0]|0x20 == 'o' && name[1]|0x20 == 'n' ||
		rw.keep&csp.KeepStyleAttrs != 0 && foldEq(name, "style") {
		rw.stats.CSPKept++
		return true
	}
	return false
}

// cspMetaDone reads a <meta> start tag, raw, that ends at end, as a
// policy when it is one (HTML §4.2.5.3: http-equiv "content-security-policy",
// in any ASCII case, and a content attribute; the first of each counts;
// both values as the tokenizer decodes their character references).
// A policy found anywhere is read, not only in <head> where a browser
// enforces it: keeping more content byte for byte is safe, giving a policy
// the loader's hash harmless. When the policy needs the loader's hash, the
// tag is written here with it, and cspMetaDone reports true.
func (rw *rewriter) cspMetaDone(raw []byte, end int) bool {
	// The value may spell the name with character references
	// ("content-security&#45;policy"), which the browser decodes.
	if indexFold(raw, []byte("security-policy")) < 0 && bytes.IndexByte(raw, '&') < 0 {
		return false
	}
	rw.attrs = scanAttrs(raw, rw.attrs[:0])
	equiv, content := -1, -1
	for i, a := range rw.attrs {
		name := raw[a.nameStart:a.nameEnd]
		switch {
		case equiv < 0 && foldEq(name, "http-equiv"):
			equiv = i
		case content < 0 && foldEq(name, "content"):
			content = i
		}
	}
	if equiv < 0 || content < 0 {
		return false
	}
	if a := rw.attrs[equiv]; !foldEq(bytes.TrimSpace([]byte(unescapeAttr(string(raw[a.valStart:a.valEnd])))), "content-security-policy") {
		return false
	}
	a := rw.attrs[content]
	val := unescapeAttr(string(raw[a.valStart:a.valEnd]))
	var pend csp.Pending
	if !rw.stats.HeadFound || rw.holding {
		pend |= headPending(rw.opts.HeadPrepend)
	}
	if !rw.bodyEndDone {
		pend |= csp.PendingInline
	}
	out := rw.csp.ReadMeta(val, pend)
	rw.keep = rw.csp.Keep
	if out == val {
		return false
	}
	rw.stats.CSPMetaChanged++
	q := a.quote
	if q == 0 {
		q = '"'
	}
	v := appendAttrEscaped(nil, out, q)
	if rw.opts.Inline && len(rw.hosts.hostB) > 0 {
		// The value takes the inline rules, as any attribute's does.
		if nv, ok := rw.hosts.rewriteRawValue(v, q, kindContent); ok {
			v = append(v[:0:0], nv...)
			rw.stats.URLsRewritten++
		}
	}
	b := append(rw.out[:0], raw[:a.valStart]...)
	if a.quote == 0 {
		b = append(b, q)
	}
	b = append(b, v...)
	if a.quote == 0 {
		b = append(b, q)
	}
	b = append(b, raw[a.valEnd:]...)
	rw.out = b
	rw.flush(rw.tokStart)
	rw.write(b)
	rw.done = end
	return true
}

// appendAttrEscaped appends v escaped for an attribute value in quotes
// q: '&' and q as character references.
func appendAttrEscaped(dst []byte, v string, q byte) []byte {
	for i := range len(v) {
		switch c := v[i]; {
		case c == '&':
			dst = append(dst, "&amp;"...)
		case c == q && q == '"':
			dst = append(dst, "&quot;"...)
		case c == q:
			dst = append(dst, "&#39;"...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// headPending is what the head injection b, not yet written, holds: an
// ad-slots script only on an eligible page, the bundle tag on every page.
// A policy read before it is given the loader's hash only for an inline
// script it holds, so that an ad-free page's policy is left as it is.
func headPending(b []byte) csp.Pending {
	var p csp.Pending
	if bytes.Contains(b, []byte(adSlotsOpen)) {
		p |= csp.PendingInline
	}
	if bytes.Contains(b, []byte(bundleOpen)) {
		p |= csp.PendingBundle
	}
	return p
}
