package rewrite

// Text rules (docs/behaviour.md, "URL rewriting", "Text responses"): the
// origin host in CSS, JavaScript, JSON, XML and other text, in text
// responses and, inside HTML, in style and meta content attributes and in
// the content of style and script elements. They are the attribute rules
// with a host anywhere in the text, the JSON-escaped forms (https:\/\/host,
// \/\/host) and a host-name boundary after the host instead of a URL
// delimiter. Upstream rewrites every processable text response
// (trusted-server-core publisher.rs, is_processable_content_type;
// streaming_replacer.rs, create_url_replacer) and bare hosts only at
// host-name boundaries (host_rewrite.rs, rewrite_bare_host_at_boundaries).

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

const (
	// kindContent: inside a page (Options.Inline): the scheme-qualified,
	// protocol-relative and JSON-escaped forms anywhere (an og:image URL,
	// a URL list, "0; url=..." of refresh, a URL in a style, a script or
	// JSON-LD), never a bare host. There, a host without "//" before it is
	// prose (a description naming the site) or a relative path
	// (url(origin.example/a.png) in CSS, fetch("origin.example/x") in a
	// script), not the origin; and leaving it out lets the search take
	// only a host right after '/' (hostFinder's pre).
	kindContent attrKind = 16 + iota
	// kindCSS: style attributes and elements, CSS, JSON, XML and other
	// text: also a bare host at a host-name boundary.
	kindCSS
	// kindScript: JavaScript, where a bare host at a boundary may be code
	// ("x/example.com" divides by a member chain): a bare host only right
	// after a quote, which starts a string or template literal.
	kindScript
)

const (
	// textLookbehind is the longest form before the host, "https:\/\/":
	// a match starts at most this many bytes before the host name.
	textLookbehind = len(`https:\/\/`)
	// nulWindow is the bytes before a relative reference where a NUL
	// leaves it as it is (nulBefore): a scheme and its colon, the longest
	// "https\u003a". Every tail kept for a reference not decided yet
	// holds them.
	nulWindow = len(`https\u003a`)
	// maxPortDigits: a port written with this many digits is no port of
	// the rules (portOK compares with at most five), so the decision never
	// needs more of the text.
	maxPortDigits = 6
)

func isTextKind(k attrKind) bool { return k >= kindContent }

// textLookahead is how many bytes after a host's first byte decide it: the
// name, ':', the port digits and the byte after them.
func (h *hostRewriter) textLookahead() int { return len(h.hostB) + 1 + maxPortDigits + 1 }

// bareAllowed reports whether a bare host after the byte b (0 at the start
// of a text) may be rewritten. After a host character or ':' it is part of
// a longer name or an authority ("cdn.origin.example", "a:origin.example");
// after '@' it is a mail address's domain, not a URL.
func bareAllowed(b byte, kind attrKind) bool {
	switch kind {
	case kindCSS:
		return !isHostChar(b) && b != ':' && b != '@'
	case kindScript:
		return b == '"' || b == '\'' || b == '`'
	}
	return false
}

// endsText reports whether c ends a host in text: anything that cannot
// continue a host name (a quote, ')', '<', '\\', '/', white space...).
func endsText(c byte) bool { return !isHostChar(c) && c != ':' }

// matchText is match for the text kinds: the forms of sepForm, without a
// userinfo, or a bare host where bareAllowed. prev is the byte before
// v[0] (0 at the start of a text). more reports that v ends before the
// match can be decided; it is never set when final.
func (h *hostRewriter) matchText(v []byte, last, at int, kind attrKind, prev byte, final bool) (m refMatch, ok, more bool) {
	f, from, keep, found := sepForm(v, last, at)
	if !found {
		b := prev
		if at > 0 {
			b = v[at-1]
		}
		if !bareAllowed(b, kind) {
			return m, false, false
		}
		f, from, keep = formBare, at, at
	}
	if kind == kindContent && f == formRelative && nulBefore(v, from, nulWindow) {
		return m, false, false
	}
	m = refMatch{from: from, keep: keep, sep: at, scheme: f == formHTTPS || f == formHTTP}
	to := at + len(h.hostB)
	if to < len(v) && v[to] == ':' {
		p := to + 1
		for p < len(v) && p-to-1 < maxPortDigits && v[p] >= '0' && v[p] <= '9' {
			p++
		}
		if p == len(v) && !final {
			return m, false, true
		}
		if p-to-1 == maxPortDigits || !h.portOK(v[to+1:p], f) {
			return m, false, false
		}
		to = p
	} else if to == len(v) && !final {
		return m, false, true
	} else if h.port != "" {
		return m, false, false
	}
	m.to = to
	if to == len(v) {
		if !final {
			return m, false, true
		}
		return m, true, false
	}
	if kind == kindContent && v[to] == 0 {
		return m, false, false // see nulBefore
	}
	return m, endsText(v[to]), false
}

// writeMatch writes the replacement of m to sink.
func (h *hostRewriter) writeMatch(sink textSink, v []byte, m refMatch) {
	if m.scheme {
		sink.write(h.repl[:h.relAt-1])
	}
	sink.write(v[m.keep:m.sep])
	sink.write(h.repl[h.bareAt:])
}

// nulBefore reports a NUL among the n bytes of v before i. Inside a page
// the tree builder drops a NUL from text, and a comment, raw text or an
// attribute value gets U+FFFD for it (WHATWG HTML §13.2.5, §13.2.6.4.7),
// so that the visitor's DOM may join what the bytes keep apart:
// "//origin.example\x00y" is the host origin.exampley there, and
// "http:\x00//origin.example" a URL with a scheme. A reference with a NUL
// right after it, or a relative one with a NUL among the nulWindow bytes
// where a scheme would be, is left as it is.
func nulBefore(v []byte, i, n int) bool {
	return bytes.IndexByte(v[max(0, i-n):i], 0) >= 0
}

// textSink takes the output of textRun.
type textSink interface{ write(p []byte) }

// textRun applies the text rules to v, which continues a text whose byte
// before v[0] is prev and which is not written yet, and writes the result
// to sink. Hosts starting before skip were decided by the previous call.
// Unless final (v ends the text), it keeps back a tail that a later byte
// may make part of a match, and returns how much of v it consumed and the
// skip of the next call: the caller passes v[consumed:] again, followed by
// more text. The tail is shorter than textLookbehind+textLookahead (and,
// inside a page, nulWindow more), and it starts either where a replacement
// ended or at least textLookbehind bytes before any host not yet decided
// (inside a page, before any form that may begin one, nulWindow more), so
// that no form before a host is cut in two, nor the bytes nulBefore reads.
func (h *hostRewriter) textRun(sink textSink, v []byte, kind attrKind, prev byte, skip int, final bool) (consumed, nextSkip, changed int) {
	find := newHostFinderPair(v, h.hostB, h.rare, h.pair, textPre(kind))
	return h.textRunWith(&find, sink, v, kind, prev, skip, final)
}

// textPre is what the host must follow for textRun's rules: kindContent
// rewrites no bare host.
func textPre(kind attrKind) string {
	if kind == kindContent {
		return "/"
	}
	return ""
}

// textRunWith is textRun with the finder of the host in v given.
func (h *hostRewriter) textRunWith(find *hostFinder, sink textSink, v []byte, kind attrKind, prev byte, skip int, final bool) (consumed, nextSkip, changed int) {
	last, pending := 0, -1
	i := skip
	for i < len(v) {
		at := find.find(i)
		if at < 0 {
			// No host starts in v[i:len(v)-len(name)+1].
			i = max(i, len(v)-len(h.hostB)+1)
			break
		}
		m, ok, more := h.matchText(v, last, at, kind, prev, final)
		if more {
			pending, i = at, at
			break
		}
		i = at + len(h.hostB)
		if !ok {
			continue
		}
		sink.write(v[last:m.from])
		h.writeMatch(sink, v, m)
		last, i = m.to, m.to
		changed++
	}
	if final {
		sink.write(v[last:])
		return len(v), 0, changed
	}
	var cut int
	if pending >= 0 {
		cut = pending - textLookbehind
	} else {
		// A host not found yet starts at len(v)-len(name)+1 or later, and
		// its match at most textLookbehind bytes before that. Only a tail
		// that may begin one is kept, so that a text that names no origin
		// streams as it arrives.
		cut = h.holdFrom(v, len(v)-len(h.hostB)+1-textLookbehind)
		if kind == kindContent {
			cut -= nulWindow // the bytes nulBefore reads
		}
	}
	consumed, nextSkip = keepTail(sink, v, last, i, cut)
	return consumed, nextSkip, changed
}

// keepTail ends a run of textRun or encRun that is not final: it writes
// v[last:cut], cut moved to at least last (the end of the last
// replacement) and at most len(v), keeps the rest, and gives the skip of
// the next run for the first host not decided, at i.
func keepTail(sink textSink, v []byte, last, i, cut int) (consumed, nextSkip int) {
	cut = min(max(cut, last), len(v))
	sink.write(v[last:cut])
	return cut, max(0, i-cut)
}

// holdFrom is the first k from start on where v[k:] may begin a match
// that continues after v (mayBeginRef). It is len(v) when there is none.
func (h *hostRewriter) holdFrom(v []byte, start int) int {
	for k := max(start, 0); k < len(v); k++ {
		c := lower(v[k])
		if c != 'h' && !isSlash(c) && c != h.hostB[0] {
			continue
		}
		if h.mayBeginRef(v[k:]) {
			return k
		}
	}
	return len(v)
}

// mayBeginRef reports whether t is, in any letter case, a proper prefix
// of a form of the text rules followed by the host name: "http:" or
// "https:" and up to maxSlashRun slashes, or slashes alone, and then the
// name (after two slashes at least), or the name alone.
func (h *hostRewriter) mayBeginRef(t []byte) bool {
	if prefixOfName(t, h.hostB) {
		return true
	}
	rest, slashes := t, -1 // -1: no scheme
	for _, sch := range [...]string{"https:", "http:"} {
		n := min(len(t), len(sch))
		if prefixFold(t[:n], sch) {
			if n < len(sch) {
				return true // inside the scheme
			}
			rest, slashes = t[n:], maxSlashRun
			break
		}
	}
	r := 0
	for r < len(rest) && isSlash(rest[r]) && (slashes < 0 || r < slashes) {
		r++
	}
	if r == len(rest) {
		return r > 0 || slashes >= 0
	}
	return r >= 2 && prefixOfName(rest[r:], h.hostB)
}

// prefixOfName reports whether t is a proper prefix of name in any letter
// case.
func prefixOfName(t, name []byte) bool {
	return len(t) < len(name) && equalFoldLower(t, name[:len(t)])
}

// appendSink collects textRun's output in a slice.
type appendSink struct{ b []byte }

func (s *appendSink) write(p []byte) { s.b = append(s.b, p...) }

// rewriteTextValue is rewrite for the text kinds: a whole attribute value,
// in which the origin's name begins at names when the caller knows
// (rewriteAt).
func (h *hostRewriter) rewriteTextValue(dst, v []byte, kind attrKind, names []int) ([]byte, bool) {
	h.sink.b = dst
	start := len(dst)
	var n int
	if len(names) > 0 {
		find := listHostFinder(v, names, textPre(kind))
		_, _, n = h.textRunWith(&find, &h.sink, v, kind, 0, 0, true)
	} else {
		_, _, n = h.textRun(&h.sink, v, kind, 0, 0, true)
	}
	out := h.sink.b
	h.sink.b = nil
	if n == 0 {
		return out[:start], false
	}
	return out, true
}

// byteRarity ranks the bytes of host names by how seldom the name search
// meets them, rarest last: foldFinder looks for a host by its rarest byte
// (and, with pairFind, the next rarest too), so that a long script costs
// few false candidates ("w" of "www." is in every "window"). The order is their count in the script and style text of the
// 65 corpus pages, both letter cases of a letter together and 7,000 added
// for the second IndexByte pass a letter costs (about what one pass over
// that text costs in candidates). In that text, '/' (28,612) is rarer than
// every letter but 'j', 'q' and 'z'; '.' (98,095) is rarer than 'u' or 'p'.
var byteRarity = func() (r [256]uint8) {
	for i, c := range []byte("etaniorlsmd-cp:u0g.2hyfb14w35v89x7k_6zjq[]") {
		r[c] = uint8(10 + i)
		if c >= 'a' && c <= 'z' {
			r[c-('a'-'A')] = uint8(10 + i)
		}
	}
	return r
}()

// rarestByte is the offset in name of its rarest byte (byteRarity).
func rarestByte(name []byte) int {
	best := 0
	for i, c := range name {
		if byteRarity[c] > byteRarity[name[best]] {
			best = i
		}
	}
	return best
}

// hostFinder finds the next place the host name begins in a text, right
// after pre (lower case, "" for anywhere). With a vector unit it is the
// name search (foldFinder) with pre checked at each name it finds: that
// search stops about only at the name. Without one, a name after a
// prefix is found by the prefix's first byte (slashFinder), which has no
// letter case and is rarer than most of a name's bytes. The fields are
// concrete types, so that it costs no allocation.
type hostFinder struct {
	slash bool
	sf    slashFinder
	// sb finds the name after a '\\' where pre is "/": a backslash is a
	// slash to the URL parser (authority.go). nextS and nextB are the next
	// answers of sf and sb, -2 when not asked yet.
	sb           slashFinder
	nextS, nextB int
	ff           foldFinder
	pre          string
	// listed: the names in the text are known (listHostFinder): at holds
	// where each begins, in order, and s is the text.
	listed bool
	at     []int
	s      []byte
}

// listHostFinder is hostFinder for a text s whose names begin at the
// offsets at, in order: those the read buffer's search found (nameAt).
func listHostFinder(s []byte, at []int, pre string) hostFinder {
	return hostFinder{listed: true, at: at, s: s, pre: pre}
}

func newHostFinder(s, name []byte, rare int, pre string) hostFinder {
	return newHostFinderPair(s, name, rare, newPairFind(name, rare), pre)
}

// newHostFinderPair is newHostFinder with the name's pairFind made already
// (hostRewriter.pair): most values and regions searched are short, and
// picking the pair would cost more than searching them.
func newHostFinderPair(s, name []byte, rare int, pair pairFind, pre string) hostFinder {
	if pre != "" && !havePairVector {
		f := hostFinder{slash: true, sf: newPrefixFinder(s, name, pre), nextS: -2, nextB: -1}
		if pre == "/" {
			f.sb, f.nextB = newPrefixFinder(s, name, `\`), -2
		}
		return f
	}
	return hostFinder{ff: newFoldFinderPair(s, name, rare, pair), pre: pre}
}

func (f *hostFinder) find(from int) int {
	if f.slash {
		return f.findSlash(from)
	}
	if f.listed {
		for ; len(f.at) > 0; f.at = f.at[1:] {
			if at := f.at[0]; at >= from && endsWithPre(f.s[:at], f.pre) {
				return at
			}
		}
		return -1
	}
	for {
		at := f.ff.find(from)
		if at < 0 || endsWithPre(f.ff.s[:at], f.pre) {
			return at
		}
		from = at + 1
	}
}

// findSlash is find by the prefix finders: the first name after either.
func (f *hostFinder) findSlash(from int) int {
	if f.nextS == -2 || f.nextS >= 0 && f.nextS < from {
		f.nextS = f.sf.find(from)
	}
	if f.nextB == -2 || f.nextB >= 0 && f.nextB < from {
		f.nextB = f.sb.find(from)
	}
	switch {
	case f.nextS < 0:
		return f.nextB
	case f.nextB < 0:
		return f.nextS
	}
	return min(f.nextS, f.nextB)
}

// endsWithPre reports whether s ends with pre, compared as endsWithFold
// does but for a '/' of pre, which a '\\' matches too.
func endsWithPre(s []byte, pre string) bool {
	if len(s) < len(pre) {
		return false
	}
	s = s[len(s)-len(pre):]
	for i := 0; i < len(pre); i++ {
		if c := lower(s[i]); c != pre[i] && !(pre[i] == '/' && c == '\\') {
			return false
		}
	}
	return true
}

// slashFinder finds the host name only right after a '/': every form of
// kindContent ("https://", "//", "\/\/"...) ends with one. '/' has no
// letter case and is among the rarest bytes of scripts and styles, so one
// IndexByte pass over the text finds every candidate; a search for the
// name's first byte would need a pass per letter case and meet it far more
// often. What a '/' costs is the IndexByte call it ends, and in URLs they
// come in runs ("https://a/b/c", "\/\/"): from a '/' on, slashFinder reads
// eight bytes at a time, checking every '/' in them against the name's
// first byte (case-folded) at once, until a word holds no '/'.
// newPrefixFinder is the same search after other bytes.
type slashFinder struct {
	s, sub []byte
	// pre is what comes right before the name: its first byte, which has
	// no letter case and is the one IndexByte looks for, then lower-case
	// bytes compared case-folded. At most maxPre bytes.
	pre string
}

// maxPre is the longest pre of a slashFinder.
const maxPre = 2

func newSlashFinder(s, sub []byte) slashFinder { return newPrefixFinder(s, sub, "/") }

// newPrefixFinder finds sub, in any letter case, right after pre (see
// slashFinder.pre).
func newPrefixFinder(s, sub []byte, pre string) slashFinder {
	return slashFinder{s: s, sub: sub, pre: pre}
}

const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
)

// zeroBytes has the high bit set in exactly the bytes of x that are 0.
func zeroBytes(x uint64) uint64 {
	const lows = ^uint64(swarHighs)
	return ^((x&lows + lows) | x | lows)
}

// foldWord is what to OR into a word so that its bytes equal c's in eight
// copies where they are c in either letter case, and c in eight copies.
func foldWord(c byte) (or, want uint64) {
	if c >= 'a' && c <= 'z' {
		return 0x20 * swarOnes, uint64(c) * swarOnes
	}
	return 0, uint64(c) * swarOnes
}

// find is the first match beginning at or after from, or -1.
func (f *slashFinder) find(from int) int {
	s, sub, pre := f.s, f.sub, f.pre
	n, k := len(sub), len(pre)
	// A match at i has pre at i-k and ends at i+n <= len(s): every such
	// pre starts in s[:end].
	end := len(s) - n - k + 1
	lead := uint64(pre[0]) * swarOnes
	var or, want [maxPre]uint64 // for pre[1:] and sub[0], at offsets 1..k
	for t := 1; t <= k; t++ {
		c := sub[0]
		if t < k {
			c = pre[t]
		}
		or[t-1], want[t-1] = foldWord(c)
	}
	j := max(from-k, 0)
	for j < end {
		q := bytes.IndexByte(s[j:end], pre[0])
		if q < 0 {
			return -1
		}
		j += q
		// s[j:j+8] holds a lead byte; s[j+t:j+t+8] the bytes t after each.
		for ; j+8+k <= len(s); j += 8 {
			m := zeroBytes(binary.LittleEndian.Uint64(s[j:]) ^ lead)
			if m == 0 {
				break // no lead byte in this word: back to IndexByte
			}
			for t := 1; t <= k; t++ {
				m &= zeroBytes((binary.LittleEndian.Uint64(s[j+t:]) | or[t-1]) ^ want[t-1])
			}
			for ; m != 0; m &= m - 1 {
				p := j + bits.TrailingZeros64(m)/8
				if p >= end {
					return -1
				}
				if equalFoldLower(s[p+k:p+k+n], sub) {
					return p + k
				}
			}
		}
		if j+8+k > len(s) { // fewer bytes left than the words need: byte by byte
			for ; j < end; j++ {
				if s[j] == pre[0] && restFold(s[j:], pre) && equalFoldLower(s[j+k:j+k+n], sub) {
					return j + k
				}
			}
			return -1
		}
	}
	return -1
}

// restFold reports whether s continues with pre[1:], case-folded.
func restFold(s []byte, pre string) bool {
	for t := 1; t < len(pre); t++ {
		if lower(s[t]) != pre[t] {
			return false
		}
	}
	return true
}

// foldFinder finds the lower-case ASCII sub in s in any letter case, from
// left to right. With a vector unit it looks for two of sub's bytes at once
// (pairFind); otherwise for candidates for its byte at r (rarestByte) by
// IndexByte, keeping the next position of each letter case between calls,
// so that s is scanned once per case however many candidates fail.
type foldFinder struct {
	s, sub         []byte
	r              int
	lo, up         byte
	nextLo, nextUp int // -1: none left; otherwise, when below from, stale
	pair           pairFind
}

func newFoldFinder(s, sub []byte, r int) foldFinder {
	return newFoldFinderPair(s, sub, r, newPairFind(sub, r))
}

// newFoldFinderPair is newFoldFinder with sub's pairFind made already.
func newFoldFinderPair(s, sub []byte, r int, pair pairFind) foldFinder {
	lo := sub[r]
	up := lo
	if lo >= 'a' && lo <= 'z' {
		up = lo - ('a' - 'A')
	}
	f := foldFinder{s: s, sub: sub, r: r, lo: lo, up: up, nextLo: -1, nextUp: -1}
	if len(s) >= len(sub) {
		f.nextLo, f.nextUp = 0, 0
		if up == lo {
			f.nextUp = -1
		}
		f.pair = pair
		f.pair.disabled = !havePairVector
	}
	return f
}

// find is the first match at or after from, or -1.
func (f *foldFinder) find(from int) int {
	if f.nextLo < 0 && f.nextUp < 0 {
		return -1
	}
	if !f.pair.disabled {
		return f.findPair(from)
	}
	// window[i] is the byte at r of a match that begins at i.
	window := f.s[f.r : len(f.s)-len(f.sub)+f.r+1]
	for {
		if f.nextLo >= 0 && f.nextLo < from {
			f.nextLo = nextIndex(window, from, f.lo)
		}
		if f.nextUp >= 0 && f.nextUp < from {
			f.nextUp = nextIndex(window, from, f.up)
		}
		i := f.nextLo
		if i < 0 || (f.nextUp >= 0 && f.nextUp < i) {
			i = f.nextUp
		}
		if i < 0 {
			return -1
		}
		if equalFoldLower(f.s[i:i+len(f.sub)], f.sub) {
			return i
		}
		from = i + 1
	}
}

// findPair is find by pairFind. The next candidate is kept, as find keeps
// its IndexByte positions, for callers that ask again from before it.
func (f *foldFinder) findPair(from int) int {
	n := len(f.s) - len(f.sub) + 1 // where a match can begin
	if f.nextLo > from {
		from = f.nextLo // nothing matched between the last from and it
	}
	for {
		i := f.pair.index(f.s, from, n)
		if i < 0 {
			f.nextLo, f.nextUp = -1, -1 // none left: find answers at once from now on
			return -1
		}
		if equalFoldLower(f.s[i:i+len(f.sub)], f.sub) {
			f.nextLo = i
			return i
		}
		from = i + 1
	}
}
