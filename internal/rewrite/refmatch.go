package rewrite

// One matcher decides every origin reference of the rules (docs/behaviour.md,
// "URL rewriting"): in URL attributes (urls.go), in text (text.go) and in
// escaped forms (encoded.go). Each decision is made here once: which schemes
// (refSchemes), what may stand between them and the host (sepForm,
// userinfoStart), which port keeps a host the origin and in how many digits
// (portOK, maxPortDigits), and what ends a host (endsRef). Letter case never
// matters in a scheme (RFC 3986 §3.1) or a host (§3.2.2), and an escape's
// hex digits may be in either case (§2.1), but the 'u' of a JavaScript
// escape may not (prefixFold). What differs between the callers is only
// the escaping of the separators (escaping) and the context (refScan.kind:
// a URL attribute or text, which decides bare hosts and the host's end).

// escaping is one spelling of a reference's separators: as written (every
// URL attribute and text), or percent-encoded once or twice, or with
// JavaScript's \u escapes (encoded.go).
type escaping struct {
	// slash is one '/' in this escape, lower case; "" is a '/' or a '\'
	// as written, which the URL parser reads alike (authority.go).
	slash string
	// colon is the ':' in this escape, lower case; a ':' as written is
	// always one too. "" for the plain spelling.
	colon string
	// run is the most slashes after a scheme that sepForm reads: the
	// escaped forms are matched as share links and string literals write
	// them, with two slashes exactly; after three, the last two are read
	// as a protocol-relative form, and the scheme stays as written.
	run int
	// hostColon, lb and rb are ':', '[' and ']' of the request host as
	// this escape writes them (encRules).
	hostColon, lb, rb string
}

// escPlain is the index of the plain spelling in escapings; the others are
// the escaped forms of encoded.go, each found by the slash before the host.
const escPlain = 0

var escapings = [...]escaping{
	escPlain: {run: maxSlashRun},
	{slash: "%2f", colon: "%3a", run: 2, hostColon: "%3A", lb: "%5B", rb: "%5D"},
	{slash: "%252f", colon: "%253a", run: 2, hostColon: "%253A", lb: "%255B", rb: "%255D"},
	{slash: `\u002f`, colon: `\u003a`, run: 2, hostColon: ":", lb: "[", rb: "]"},
}

// refSchemes are the schemes of an origin reference, lower case: the
// special schemes of the origin's own URLs (WHATWG URL, "special scheme").
// "https" is first so that a prefix test sees the longer one.
var refSchemes = [...]struct {
	name string
	form urlForm
}{{"https", formHTTPS}, {"http", formHTTP}}

const (
	// maxPortDigits: a port written with this many digits is no port of
	// the rules (portOK compares with at most five, RFC 3986 §3.2.3 and
	// the WHATWG port state's 65535), so the decision never needs more of
	// the text.
	maxPortDigits = 6
)

// urlForm is how a host match is introduced.
type urlForm int

const (
	formHTTPS    urlForm = iota // https://host
	formHTTP                    // http://host
	formRelative                // //host
	formBare                    // host
)

// refMatch is one origin reference in a value: v[from:to] is replaced by
// request_scheme (when scheme), the separators v[keep:sep] as written,
// and the request host. A userinfo between sep and the host is dropped.
type refMatch struct {
	from, keep, sep, to int
	scheme              bool
}

// refScan is what a match is decided in: the kind of value or text (a
// URL attribute kind or a text kind), the escaping of the separators, the
// byte before v[0] (0 at the start of a text), and whether v ends the
// text (a URL attribute's value always does). The escaped forms are read
// by kindContent's rules wherever they run: they have no bare host (an
// escape needs its slashes), and a NUL next to one leaves it alone.
type refScan struct {
	kind  attrKind
	esc   *escaping
	prev  byte
	final bool
}

// matchRef decides whether the origin name found at at (in any letter
// case) is a rewritable origin reference in v, whose bytes from last on
// are not written yet, and where it starts and ends. more reports that v
// ends before the match can be decided; it is never set when s.final.
func (h *hostRewriter) matchRef(v []byte, last, at int, s refScan) (m refMatch, ok, more bool) {
	m.sep = at
	if !isTextKind(s.kind) && at > last && v[at-1] == '@' {
		m.sep = userinfoStart(v, last, at)
	}
	f, from, keep, found := sepForm(v, last, m.sep, s.esc)
	if !found {
		if m.sep != at || !bareOK(v, at, s) {
			return m, false, false
		}
		f, from, keep = formBare, at, at
	}
	if s.kind == kindContent && f == formRelative && nulBefore(v, from, nulWindow) {
		return m, false, false
	}
	m.from, m.keep, m.scheme = from, keep, f == formHTTPS || f == formHTTP
	m.to, ok, more = h.refEnd(v, at+len(h.hostB), f, s)
	return m, ok, more
}

// refEnd decides what follows a host of v that ends at to: a port, in
// fewer than maxPortDigits digits, that keeps it the origin (portOK), and
// a byte that ends the host (endsRef). It returns where the reference
// ends.
func (h *hostRewriter) refEnd(v []byte, to int, f urlForm, s refScan) (end int, ok, more bool) {
	if to == len(v) && !s.final {
		return 0, false, true // a port may follow, or a host character
	}
	n, partial := s.esc.portColon(v[to:])
	if partial {
		if !s.final {
			return 0, false, true
		}
		n = 0 // the text ends in part of an escaped ':'
	}
	if n > 0 {
		p := to + n
		for p < len(v) && p-to-n < maxPortDigits && v[p] >= '0' && v[p] <= '9' {
			p++
		}
		if p == len(v) && !s.final {
			return 0, false, true
		}
		if p-to-n == maxPortDigits || !h.portOK(v[to+n:p], f) {
			return 0, false, false
		}
		to = p
	} else if h.port != "" {
		return 0, false, false
	}
	return to, to == len(v) || endsRef(v[to], s.kind), false
}

// portColon reports whether t starts with the ':' before a port, as ':'
// or in e's escape, and its length. A t that ends inside the escape gives
// partial: more text decides.
func (e *escaping) portColon(t []byte) (n int, partial bool) {
	switch {
	case len(t) > 0 && t[0] == ':':
		return 1, false
	case e.colon == "":
		return 0, false
	case len(t) >= len(e.colon):
		if prefixFold(t[:len(e.colon)], e.colon) {
			return len(e.colon), false
		}
		return 0, false
	}
	return 0, len(t) > 0 && prefixFold(t, e.colon)
}

// portOK reports whether the explicit port p (without its colon) after a
// match of the origin name keeps it the origin. An origin on a non-default
// port matches only that port. An origin on its default port also matches
// the default port written out: 443 after https://, 80 after http://, and
// either after // or a bare host, whose scheme is the page's.
func (h *hostRewriter) portOK(p []byte, f urlForm) bool {
	p = portValue(p)
	if h.port != "" {
		return string(p) == h.port
	}
	switch f {
	case formHTTPS:
		return string(p) == "443"
	case formHTTP:
		return string(p) == "80"
	}
	return string(p) == "443" || string(p) == "80"
}

// endsRef reports whether c, right after a host and its port, ends the
// reference. In a URL attribute it must end the authority, as the WHATWG
// URL parser's host and port states end it for a special URL ('/', '\\',
// '?', '#'), or end a candidate of srcset (white space, ','; WHATWG HTML
// "parse a srcset attribute"): a host followed by more host characters
// ("origin.example.evil.com") or by anything else the parser would read
// as part of the host is not the origin host. In text anything that
// cannot continue a host name does (a quote, ')', '<', '\\', '/', white
// space...), but inside a page not a NUL (see nulBefore).
func endsRef(c byte, kind attrKind) bool {
	if !isTextKind(kind) {
		switch c {
		case '/', '?', '#', ',', '\\':
			return true
		}
		return isSpace(c)
	}
	return !isHostChar(c) && c != ':' && (c != 0 || kind != kindContent)
}

// bareOK reports whether a host at at without separators before it may be
// rewritten. In href, src and action only at the start of the value; in
// srcset anywhere at a host boundary, which covers image CDNs that carry
// the origin in the path ("https://i0.wp.com/origin.example/a.png") as
// well as candidate starts; in imagesrcset and inside a page never. In CSS
// and other text after a byte that cannot continue a name: after a host
// character or ':' it is part of a longer name or an authority
// ("cdn.origin.example", "a:origin.example"), after '@' a mail address's
// domain. In JavaScript, where a bare host at a boundary may be code
// ("x/example.com" divides by a member chain), only right after a quote,
// which starts a string or template literal.
func bareOK(v []byte, at int, s refScan) bool {
	b := s.prev
	if at > 0 {
		b = v[at-1]
	}
	switch s.kind {
	case kindURL:
		return at == 0
	case kindSrcset:
		return at == 0 || !isHostChar(b)
	case kindCSS:
		return !isHostChar(b) && b != ':' && b != '@'
	case kindScript:
		return b == '"' || b == '\'' || b == '`'
	}
	return false
}

// isHostChar reports bytes that can continue a host name, so a match right
// after one ("img.origin.example") is part of a longer, different host.
func isHostChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_'
}

// sepForm finds the separators before v[sep:], that is before a host or a
// userinfo, in the escaping e, looking no further back than lo: a scheme
// (refSchemes, in any letter case), its ':' and two to e.run slashes, or
// two or more slashes alone. The reference from then on starts at from;
// v[keep:sep] is written as it is (the ':' and the slashes), after
// request_scheme when the form has a scheme.
func sepForm(v []byte, lo, sep int, e *escaping) (f urlForm, from, keep int, ok bool) {
	keep = sep
	r := 0
	for ; r < e.run && keep > lo; r++ {
		n := e.slashBefore(v[lo:keep])
		if n == 0 {
			break
		}
		keep -= n
	}
	if r < 2 {
		return 0, 0, 0, false
	}
	c := keep - 1 // the colon's last byte
	n := 0
	switch {
	case c >= lo && v[c] == ':':
		n = 1
	case e.colon != "" && endsWithEsc(v[lo:keep], e.colon):
		n = len(e.colon)
	}
	if n > 0 {
		for _, s := range refSchemes {
			if endsWithFold(v[lo:keep-n], s.name) {
				return s.form, keep - n - len(s.name), keep - n, true
			}
		}
	}
	return formRelative, keep, keep, true
}

// slashBefore is the length of the slash that t ends with in e, or 0.
func (e *escaping) slashBefore(t []byte) int {
	if e.slash == "" {
		if len(t) > 0 && isSlash(t[len(t)-1]) {
			return 1
		}
		return 0
	}
	if endsWithEsc(t, e.slash) {
		return len(e.slash)
	}
	return 0
}

// escapingAt is the escaped form (an index of escapings) whose slash ends
// v[lo:at], or -1 for none.
func escapingAt(v []byte, lo, at int) int {
	if at == 0 || lower(v[at-1]) != 'f' {
		return -1 // every escaped slash ends with "2f"
	}
	for k := escPlain + 1; k < len(escapings); k++ {
		if endsWithEsc(v[lo:at], escapings[k].slash) {
			return k
		}
	}
	return -1
}
