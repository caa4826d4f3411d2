package rewrite

import (
	"fmt"
	"net"
	"strings"

	"golang.org/x/net/html"
)

// The URL rules of docs/behaviour.md, "URL rewriting", written from that
// text on strings, as the oracle of the reference rewriter
// (reference_test.go) and of TestURLRulesMatchOracle. Attribute values are
// decoded by x/net/html's Tokenizer (TagAttr), which follows the attribute
// rule for character references (WHATWG §13.2.5.73: "&timestamp" stays as
// written; html.UnescapeString applies the text rule and would not), and
// escaped by refEscape below. Nothing here comes from the scanner
// (independence_test.go).

// refRules are the URL rules for one origin and one client-facing host.
type refRules struct {
	host    string // the origin's host name, ASCII lower case; an IPv6 literal keeps its brackets
	port    string // the origin's port, "" when it is its scheme's default
	scheme  string // request_scheme
	reqHost string // request_host
}

func newRefRules(originHost, requestHost, scheme string) refRules {
	host, port, err := net.SplitHostPort(refLower(originHost))
	if err != nil {
		host, port = refLower(originHost), "" // no port
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return refRules{host: host, port: port, scheme: scheme, reqHost: requestHost}
}

// refKind names the rule set of an attribute ("href" for href, src and
// action), or "" for attributes that are not rewritten. name is lower case,
// as the Tokenizer gives it.
func refKind(name string) string {
	switch name {
	case "href", "src", "action":
		return "href"
	case "srcset", "imagesrcset":
		return name
	}
	return ""
}

// refLower lower-cases ASCII letters only: host names and schemes compare
// in ASCII case (RFC 3986 §3.2.2), and every byte offset stays valid.
func refLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// rewrite applies the rules to a decoded value: every occurrence of the
// origin that qualifies is replaced.
func (r refRules) rewrite(v, kind string) (string, bool) {
	if r.host == "" || kind == "" {
		return v, false
	}
	lv := refLower(v)
	var out strings.Builder
	done, changed := 0, false // v[:done] is decided
	for from := 0; ; {
		i := strings.Index(lv[from:], r.host)
		if i < 0 {
			break
		}
		at := from + i
		start, end, repl, ok := r.occurrence(lv, done, at, kind)
		if !ok {
			from = at + len(r.host)
			continue
		}
		out.WriteString(v[done:start])
		out.WriteString(repl)
		done, from, changed = end, end, true
	}
	if changed {
		out.WriteString(v[done:])
		v = out.String()
	}
	// Other spellings of an IPv4 origin's host, in the URL attributes.
	if alt, ok := r.refRespell(v); ok {
		return alt, true
	}
	return v, changed
}

// occurrence decides the origin host name found at lv[at:]: whether it is
// written after a scheme and slashes or backslashes, after slashes alone
// (refSeparators; with a userinfo between them and the host, which is
// dropped) or bare (the scheme part lying after lv[:done], which is
// already rewritten), whether its port keeps it the origin, and whether
// it ends the host. It returns the text to replace, lv[start:end], and
// its replacement: the separators as written, after request_scheme when
// they have a scheme, and request_host.
func (r refRules) occurrence(lv string, done, at int, kind string) (start, end int, repl string, ok bool) {
	sep := at
	if at > done && lv[at-1] == '@' {
		sep = done + strings.LastIndexAny(lv[done:at-1], "/\\?# \t\n\r\f") + 1
	}
	form, start, keep, found := refSeparators(lv, done, sep)
	switch {
	case found:
		repl = r.refReplacement(form, lv[keep:sep])
	case sep == at && (kind == "href" && at == 0 ||
		kind == "srcset" && (at == 0 || !strings.ContainsRune("abcdefghijklmnopqrstuvwxyz0123456789-._", rune(lv[at-1])))):
		form, start, repl = "bare", at, r.reqHost
	default:
		return 0, 0, "", false
	}
	end = at + len(r.host)
	if strings.HasPrefix(lv[end:], ":") {
		digits := lv[end+1:]
		if k := strings.IndexFunc(digits, func(c rune) bool { return c < '0' || c > '9' }); k >= 0 {
			digits = digits[:k]
		}
		if !r.portKeepsOrigin(digits, form) {
			return 0, 0, "", false
		}
		end += 1 + len(digits)
	} else if r.port != "" {
		return 0, 0, "", false
	}
	if end < len(lv) && !strings.ContainsRune("/?#\\, \t\n\r\f", rune(lv[end])) {
		return 0, 0, "", false // a longer host name, or a port of another origin
	}
	return start, end, repl, true
}

// portKeepsOrigin: an origin on a port of its own matches only that port;
// one on its scheme's default port also matches the default written out,
// :443 after https://, :80 after http://, either after // or bare.
func (r refRules) portKeepsOrigin(digits, form string) bool {
	p, ok := refPortNumber(digits)
	switch {
	case !ok:
		return false
	case r.port != "":
		return p == r.port
	case form == "https":
		return p == "443"
	case form == "http":
		return p == "80"
	}
	return p == "443" || p == "80"
}

// rewriteRaw rewrites an attribute's raw value, as written between its
// quotes (quote is a double or single quote, or 0 when unquoted), and returns the
// raw text that replaces it. The rules apply to the decoded value; the
// page's own spelling is kept when the same replacement on the raw text
// decodes to the rewritten value, and otherwise the rewritten value is
// escaped for the value's quotes.
func (r refRules) rewriteRaw(raw string, quote byte, kind string) (string, bool) {
	want, changed := r.rewrite(refDecode(raw, quote), kind)
	if !changed {
		return "", false
	}
	if direct, ok := r.rewrite(raw, kind); ok && refDecode(direct, quote) == want {
		return direct, true
	}
	return refEscape(want, quote), true
}

// refDecode decodes a raw attribute value written in its quotes, as the
// Tokenizer does, except that a NUL byte of the page stays a NUL: it is
// the page's own spelling of U+FFFD in an attribute (WHATWG §13.2.5.36–38),
// which no character reference decodes to (&#0; is U+FFFD itself), and a
// value rewritten from it keeps it. A CR of the page is a LF, as input
// preprocessing makes it (WHATWG §13.2.3.5); &#13; is a CR.
func refDecode(raw string, quote byte) string {
	parts := strings.Split(raw, "\x00") // a NUL ends any reference before it
	for i, p := range parts {
		parts[i] = refTokenizerDecode(p, quote)
	}
	return strings.Join(parts, "\x00")
}

func refTokenizerDecode(raw string, quote byte) string {
	// An unquoted value is read after an "x", which no reference takes
	// in, so that a part after a NUL starting with a quote stays unquoted.
	q, x := "", "x"
	if quote != 0 {
		q, x = string(quote), ""
	}
	z := html.NewTokenizer(strings.NewReader("<a v=" + q + x + raw + q + ">"))
	if tt := z.Next(); tt != html.StartTagToken {
		panic(fmt.Sprintf("refDecode: %q in quotes %q is no attribute value (%v)", raw, q, tt))
	}
	key, val, more := z.TagAttr()
	if string(key) != "v" || more {
		panic(fmt.Sprintf("refDecode: %q in quotes %q is more than one value", raw, q))
	}
	return strings.TrimPrefix(string(val), x)
}

// refEscapers escape a decoded value for each quoting context (WHATWG
// §13.2.5.36–38): in quotes only '&' and that quote are special; unquoted,
// white space and '>' end the value, and " ' < = ` are errors in it. A CR
// is always a reference: written as it is, it would be read as a LF.
var refEscapers = map[byte]*strings.Replacer{
	'"':  strings.NewReplacer("&", "&amp;", `"`, "&quot;", "\r", "&#13;"),
	'\'': strings.NewReplacer("&", "&amp;", "'", "&#39;", "\r", "&#13;"),
	0: strings.NewReplacer("&", "&amp;", `"`, "&quot;", "'", "&#39;", "<", "&#60;", ">", "&#62;", "`", "&#96;", "=", "&#61;",
		" ", "&#32;", "\t", "&#9;", "\n", "&#10;", "\r", "&#13;", "\f", "&#12;"),
}

func refEscape(v string, quote byte) string { return refEscapers[quote].Replace(v) }

// refNeedsQuotes reports whether a raw value written unquoted would be a
// parse error or end early (WHATWG §13.2.5.38).
func refNeedsQuotes(v string) bool { return strings.ContainsAny(v, " \t\n\r\f>\"'<=`") }
